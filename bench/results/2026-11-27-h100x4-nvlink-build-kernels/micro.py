"""Throughput of the builder's kernels on one GPU, on a real Kronecker graph's blocks: the row copy's
segment appends against a plain copy of the same bytes, and the placing atomics over cursor arrays of
one GPU's and of a pair's rank's size."""
import sys
import cupy as cp
import numpy as np
from dbfs.backend import Backend
from dbfs.build import build
from dbfs.graph import GridComms
from dbfs.grid import Grid
from dbfs.source import GraphSource
from dbfs.ops.csc_build import append_segments, scatter_values, count_keys

scale = int(sys.argv[1])
B = Backend("gpu", 0)
n = 1 << scale
comms = GridComms.create(Grid(1, 1, n))
source = GraphSource(n, 16 << scale, scale, 16, True, None, (2, 3))
graph, report = build(comms, B, source)
print("built", scale, "entries", graph.nnz, "construction", round(report.construction_time, 3), report.phases, flush=True)


def timed(f, reps=3):
    f()
    cp.cuda.Device().synchronize()
    best = 1e9
    for _ in range(reps):
        s, e = cp.cuda.Event(), cp.cuda.Event()
        s.record(); f(); e.record(); e.synchronize()
        best = min(best, cp.cuda.get_elapsed_time(s, e))
    return best


col_ptr, row_idx = graph.col_ptr, graph.row_idx
nnz = graph.nnz
out = cp.empty(nnz, cp.int32)
ends = col_ptr[1:].copy()
cursor = cp.empty_like(ends)


def append_all():
    cursor[:] = ends
    append_segments(B, col_ptr, row_idx, 0, cursor, out)


reset = timed(lambda: cursor.__setitem__(slice(None), ends))
t = timed(append_all) - reset
gb = (2 * 4 * nnz + 8 * 2 * n) / 1e9
print(f"append_segments: {nnz} values, {n} segments: {t:.2f} ms, {gb / t * 1e3:.0f} GB/s", flush=True)
t = timed(lambda: cp.copyto(out, row_idx))
print(f"copy of the values: {t:.2f} ms, {2 * 4 * nnz / 1e9 / t * 1e3:.0f} GB/s", flush=True)
del out
m = 1 << 28
vals = cp.random.randint(0, n, m, dtype=cp.int32)
for span in (n // 2, n, 2 * n):
    keys = cp.random.randint(0, span, m, dtype=cp.int32)
    counts = cp.zeros(span, cp.int64)
    t = timed(lambda: count_keys(B, keys, counts))
    counts[:] = 0
    count_keys(B, keys, counts)
    ends_k = cp.cumsum(counts)
    sink = cp.empty(m, cp.int32)
    cur = cp.empty_like(counts)
    def scat():
        cur[:] = ends_k
        scatter_values(B, keys, vals, cur, sink)
    t2 = timed(scat) - timed(lambda: cur.__setitem__(slice(None), ends_k))
    print(f"span {span} ({8 * span / 2**30:.2f} GiB of int64): count_keys {m} keys {t:.2f} ms, scatter {t2:.2f} ms", flush=True)
    del sink, cur, counts, ends_k, keys
