"""Medians of the JSON files of scripts/ab_ws.py given on the command line, per program, exchange and tree
(bench/NOTES.md, 2026-11-23: the VR outbox written into the hub)."""
import json
import statistics as st
import sys

rows = [r for f in sys.argv[1:] for r in json.load(open(f))]
TREES = ("old", "new", "zc")


def label(tree: str) -> str:
    """old = before (.ab/old), zc = new plus the vr inbox applied from the hub (.ab/zc), new = the change."""
    return tree.rsplit("/", 1)[1] if "/.ab/" in tree else "new"


print("2 partitions sharing one GPU, scale 24, WS method; median over runs (ms); old = before, new = vr outbox in the hub")
print(f"{'algo':<5}{'exchange':<9}{'tree':<5}{'runs':>5}{'time':>10}{'exchange':>10}{'compute':>10}{'iters':>6}")
summary = {}
for algo in ("bfs", "pr"):
    for exchange in ("vr", "all", "ms", "peer"):
        for tree in TREES:
            rs = [r for r in rows if r["algo"] == algo and r["exchange"] == exchange and label(r["tree"]) == tree]
            if not rs:
                continue
            assert all(r["converged"] for r in rs)
            t, e, c = (1e3 * st.median(r[k] for r in rs) for k in ("time", "exchange_time", "compute_time"))
            summary[algo, exchange, tree] = t
            print(f"{algo:<5}{exchange:<9}{tree:<5}{len(rs):>5}{t:>10.2f}{e:>10.2f}{c:>10.2f}{rs[0]['iterations']:>6}")
for algo in ("bfs", "pr"):
    for tree in (t for t in TREES if (algo, "vr", t) in summary):
        print(f"{algo} {tree}: vr over all {summary[algo, 'all', tree] / summary[algo, 'vr', tree]:.3f}x, "
              f"vr over ms {summary[algo, 'ms', tree] / summary[algo, 'vr', tree]:.3f}x, "
              f"vr over peer {summary[algo, 'peer', tree] / summary[algo, 'vr', tree]:.3f}x")
