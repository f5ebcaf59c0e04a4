"""A/B of the ws engine's exchanges between source trees: the dbfs tree in argv[1] (old or new), 2
partitions sharing GPU 0, Kronecker scale argv[3], WS method, bfs and pr, each exchange 3 times after one
untimed run; the runs go to the JSON file argv[2]. Needs CuPy and a GPU.

    python scripts/ab_ws.py TREE OUT.json SCALE

scripts/ab_ws_run.sh runs it over several trees and scripts/ab_ws_summary.py takes the medians
(bench/results/2026-11-23-h100-ws-exchange-ab, method in bench/NOTES.md)."""
import json
import sys

tree, out, scale = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.path.insert(0, tree)
import cupy  # noqa: E402
import dbfs  # noqa: E402
from dbfs.ws import programs  # noqa: E402,F401
from dbfs.ws.engine import Engine, Layout  # noqa: E402
from dbfs.ws.graph import build_csr  # noqa: E402
from dbfs.ws.program import PROGRAMS  # noqa: E402
from graph500.generator import DEFAULT_SEED, edge_count, generate_edges  # noqa: E402
from graph500.roots import sample_roots  # noqa: E402

assert dbfs.__file__.startswith(tree), dbfs.__file__
src, dst, w = generate_edges(scale, 16, 0, edge_count(scale, 16), DEFAULT_SEED, weights=True, xp=cupy)
csr = build_csr(cupy, 1 << scale, src, dst, w)
del src, dst, w
layout = Layout(csr, 2, [0, 0])
del csr
degree = cupy.asnumpy(layout.degree)
source = int(sample_roots(1 << scale, 1, lambda c: degree[c] > 0, seed=DEFAULT_SEED)[0])
rows = []
for algo in ("bfs", "pr"):
    program = PROGRAMS[algo]
    engine = Engine(layout, program)
    s = source if program.needs_source else None
    reference = engine.run("ws", "vr", s, max_iterations=500).values.astype("float64")
    for exchange in ("vr", "all", "ms", "peer"):
        for rep in range(3):
            r = engine.run("ws", exchange, s, max_iterations=500)
            distance = float(abs(r.values.astype("float64") - reference).sum() / abs(reference).sum())
            assert distance == 0 if program.exact else distance < 1e-4, (algo, exchange, distance)
            row = dict(tree=tree, algo=algo, exchange=exchange, rep=rep, source=s, time=r.time,
                       compute_time=r.compute_time, exchange_time=r.exchange_time, iterations=r.iterations,
                       sent_bytes=r.sent_bytes, converged=r.converged)
            rows.append(row)
            print(json.dumps(row), flush=True)
json.dump(rows, open(out, "w"), indent=1)
