"""dbfs's bottom-up search kernel alone (not part of dbfs): the same total rows split over the processes
sharing the GPU under MPS (each its own arrays), all timed together. argv: total rows, columns, mean
degree. PROBE_GRID_MULT scales the grid."""
import os, sys
import numpy as np
import cupy as cp
from mpi4py import MPI
from dbfs.backend import Backend
from dbfs.kernels import STAT_WORDS
from dbfs.ops.bottom_up import search_segment
from mps_bench import timed_together
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
total_rows, ncols, mean_degree = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
sharing = size
backend = Backend("gpu", 0, sharing=sharing)
mult = int(os.environ.get("PROBE_GRID_MULT", "1"))
if mult != 1:
    orig = Backend.resident_blocks
    Backend.resident_blocks = lambda self, k, t: orig(self, k, t) * mult
rows = total_rows // size
rng = cp.random.default_rng(rank + 1)
deg = rng.exponential(mean_degree, rows).astype(cp.int64)
deg[rng.random(rows) < 0.4] = 0                      # isolated rows, as in a Kronecker graph
row_ptr = cp.zeros(rows + 1, cp.int64)
cp.cumsum(deg, out=row_ptr[1:])
nnz = int(row_ptr[-1])
col_idx = rng.integers(0, ncols, nnz, dtype=cp.int64).astype(cp.int32)
bits = rng.random(ncols) < float(os.environ.get("PROBE_FRONTIER", "0.02"))
frontier = cp.packbits(bits, bitorder='little').view(cp.uint32)
visited = rng.random(rows) < 0.45
state_in = cp.packbits(visited, bitorder='little').view(cp.uint32)
state_out = cp.empty_like(state_in)
pred_row = cp.full(rows, -1, cp.int32)
stats = cp.zeros(STAT_WORDS, cp.int64)
for _ in range(3):
    search_segment(backend, row_ptr, col_idx, 0, frontier, state_in, state_out, pred_row, stats)
cp.cuda.Device().synchronize()
dev, wall = timed_together(comm, lambda: search_segment(backend, row_ptr, col_idx, 0, frontier, state_in, state_out,
                                                          pred_row, stats))
devs = comm.gather(dev, root=0)
if rank == 0:
    step = backend.kernel("bottom_up", "bottom_up_step")
    print(f"bottom_up_step: {size} procs x {rows} rows, {nnz} entries a proc, grid {backend.resident_blocks(step, 256)}, "
          f"frontier {os.environ.get('PROBE_FRONTIER', '0.02')}: kernel us median {np.median(devs):.1f} (max {max(devs):.1f}), wall all {wall:.1f}", flush=True)
