import json, sys, numpy as np
d = sys.argv[1]; P = int(sys.argv[2]) if len(sys.argv) > 2 else 16
ranks = [json.load(open(f'{d}/rank{r}.json')) for r in range(P)]
def searches(e):
    out, cur = [], None
    for x in e:
        if x['kind'] == 'search0': cur = []
        elif x['kind'] == 'search1': out.append((cur, x)); cur = None
        elif cur is not None: cur.append(x)
    return out
S = [searches(e) for e in ranks]
ns = len(S[0])
for k in range(ns - int(sys.argv[3]) if len(sys.argv) > 3 else 0, ns):
    per = [S[r][k][0] for r in range(P)]
    # graph list per rank: (key, host launch t0, host launch t1, wait0, wait1, marks)
    G = []
    for r in range(P):
        g, cur = [], None
        for x in per[r]:
            if x['kind'] == 'mlaunch0': cur = {'key': x['key'], 'h0': x['t']}
            elif x['kind'] == 'mlaunch1': cur['h1'] = x['t']
            elif x['kind'] == 'wait0' and cur is not None and 'w0' not in cur: cur['w0'] = x['t']
            elif x['kind'] == 'wait1' and cur is not None and 'w1' not in cur: cur['w1'] = x['t']
            elif x['kind'] == 'marks' and cur is not None: cur['m'] = x; g.append(cur); cur = None
            elif x['kind'] == 'launch0' and 'resolve' in x['key']: g.append({'key': x['key'], 'h0': x['t']})
        G.append(g)
    hbase = min(g[0]['h0'] for g in G)
    gbase = min(g[0]['m']['stamps'][0] for g in G)
    print(f"search {k}: time {S[0][k][1]['time']*1e3:.3f} ms; graphs {[len(g) for g in G][:4]}")
    for n in range(len(G[0])):
        if 'm' not in G[0][n]:
            h = np.array([(g[n]['h0'] - hbase) * 1e6 for g in G]); print(f"  {G[0][n]['key'][:30]:30s} host launch {h.min():7.1f}-{h.max():7.1f}"); continue
        h0 = np.array([(g[n]['h0'] - hbase) * 1e6 for g in G]); w1 = np.array([(g[n]['w1'] - hbase) * 1e6 for g in G])
        st = np.array([(g[n]['m']['stamps'][0] - gbase) / 1e3 for g in G]); en = np.array([(g[n]['m']['stamps'][-1] - gbase) / 1e3 for g in G])
        ph = G[0][n]['m']['phases']
        durs = np.array([np.diff(g[n]['m']['stamps']) / 1e3 for g in G])   # P x phases
        print(f"  {G[0][n]['key'][:34]:34s} host launch {h0.min():7.1f}-{h0.max():7.1f} (slowest r{h0.argmax()}) wake {w1.min():7.1f}-{w1.max():7.1f} | gpu start {st.min():7.1f}-{st.max():7.1f} (r{st.argmax()}) end {en.min():7.1f}-{en.max():7.1f} (r{en.argmax()})")
        print("      phases " + " ".join(f"{p}:{durs[:,i].min():.0f}-{durs[:,i].max():.0f}(r{durs[:,i].argmax()})" for i, p in enumerate(ph[:-1])))
