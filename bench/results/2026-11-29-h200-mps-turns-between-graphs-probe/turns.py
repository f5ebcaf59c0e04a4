import json, sys, numpy as np
d = sys.argv[1]; P = 16
seg = {}
for r in range(P):
    e = json.load(open(f'{d}/rank{r}.json'))
    ins = False; last = None
    for x in e:
        if x['kind'] == 'search0': ins = True; last = None; continue
        if x['kind'] == 'search1': ins = False; continue
        if not ins or 't' not in x: continue
        if last is not None:
            seg.setdefault((last['kind'], x['kind']), []).append((x['t'] - last['t']) * 1e6)
        last = x
for k, v in sorted(seg.items(), key=lambda kv: -np.median(kv[1]) * len(kv[1])):
    v = np.array(v); print(f"{k[0]:>9s} -> {k[1]:9s} n {len(v):4d} p50 {np.median(v):7.1f} p90 {np.percentile(v, 90):7.1f} max {v.max():8.1f}")
