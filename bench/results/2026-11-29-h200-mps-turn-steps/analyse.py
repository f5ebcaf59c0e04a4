"""Turn checkpoints per rank -> transition medians, turn totals, max over ranks per turn; GC in searches."""
import glob, json, sys
from collections import defaultdict
import numpy as np

d = sys.argv[1]
ranks = [json.load(open(p)) for p in sorted(glob.glob(f"{d}/rank*.json"), key=lambda p: int(p.split("rank")[-1][:-5]))]
trans = defaultdict(list)
turns = defaultdict(dict)          # (search, k) -> rank -> flag->run< ns
for r, doc in enumerate(ranks):
    search, prev, k, start = -1, None, 0, None
    for tag, t in doc["T"]:
        if tag == "search<":
            search, prev, k, start = search + 1, None, 0, None
            continue
        if tag == "flag>":
            start = t
            prev = (tag, t)
            continue
        if prev is not None:
            trans[(prev[0], tag)].append(t - prev[1])
            prev = (tag, t)
        if tag in ("run<", "run_marked<") and start is not None:
            turns[(search, k)][r] = t - start
            k += 1
            start, prev = None, None
print("transitions (p50 us, p90 us, n):")
for key, v in sorted(trans.items(), key=lambda kv: -np.median(kv[1]) * len(kv[1])):
    print(f"  {key[0]:>14} -> {key[1]:<14} {np.median(v)/1e3:7.2f} {np.percentile(v, 90)/1e3:7.2f} {len(v)}")
tot = [t for by in turns.values() for t in by.values()]
mx = [max(by.values()) for by in turns.values() if len(by) == len(ranks)]
if tot:
    print(f"flag->launch call per rank: p50 {np.median(tot)/1e3:.1f} p90 {np.percentile(tot, 90)/1e3:.1f} us; "
          f"max over ranks per turn: p50 {np.median(mx)/1e3:.1f} p90 {np.percentile(mx, 90)/1e3:.1f} us; turns {len(mx)}")
for r, doc in enumerate(ranks):
    if doc["GC"]:
        print(f"rank {r} gc in searches: " + ", ".join(f"g{g} {t/1e3:.0f}us" for g, t, _ in doc["GC"]))

wall, cpu, vol, invol = [], [], [], []
for doc in ranks:
    c = doc.get("CPU", [])
    for (w0, c0, s0), (w1, c1, s1) in zip(c[::2], c[1::2]):
        wall.append(w1 - w0); cpu.append(c1 - c0); vol.append(s1[0] - s0[0]); invol.append(s1[1] - s0[1])
if wall:
    print(f"searches (all ranks): wall p50 {np.median(wall)/1e3:.0f} us, thread cpu p50 {np.median(cpu)/1e3:.0f} us, "
          f"cpu/wall {np.sum(cpu)/np.sum(wall):.3f}; ctx switches a search: voluntary p50 {np.median(vol):.0f} "
          f"max {max(vol)}, involuntary p50 {np.median(invol):.0f} max {max(invol)}")
    print("threads a rank:", sorted({doc.get("threads") for doc in ranks}))
