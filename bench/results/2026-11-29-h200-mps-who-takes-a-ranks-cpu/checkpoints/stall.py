"""Stalled searches (any rank's over LIMIT ms): every rank's gaps over GAP us between consecutive checkpoints,
on the node's shared clock, from the search's first start."""
import glob, json, sys
d, LIMIT, GAP = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 3.0, 300
ranks = [json.load(open(p)) for p in sorted(glob.glob(f"{d}/rank*.json"), key=lambda p: int(p.split("rank")[-1][:-5]))]
per = []                                   # per rank: list of searches, each a list of (tag, t)
for doc in ranks:
    searches, cur = [], None
    for tag, t in doc["T"]:
        if tag == "search<":
            cur = []                       # (from the first checkpoint after the barrier that starts a search)
        elif cur is not None:
            cur.append((tag, t))
            if tag == "search>":
                searches.append(cur)
                cur = None
    per.append(searches)
for k in range(min(len(s) for s in per)):
    longest = max((s[k][-1][1] - s[k][0][1]) / 1e6 for s in per)
    if longest < LIMIT:
        continue
    t0 = min(s[k][0][1] for s in per)
    print(f"search {k}: {longest:.2f} ms at the slowest rank; first checkpoints spread "
          f"{(max(s[k][0][1] for s in per) - t0) / 1e3:.0f} us")
    for r, s in enumerate(per):
        for (a, ta), (b, tb) in zip(s[k], s[k][1:]):
            if tb - ta > GAP * 1000:
                print(f"  rank {r:2d}: {a} -> {b} {(tb - ta) / 1e3:8.0f} us, from {(ta - t0) / 1e3:8.0f} us")
