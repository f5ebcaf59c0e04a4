"""Construction time of the streaming build (dbfs.build, Graph500 kernel 1) alone, per grid and transport.

  mpirun -n P python3 scripts/bench_build.py --case 28:1x2:nccl --case 28:2x1:nccl --case 25:2x1:mpi

Each case (SCALE:RxC:COMM, COMM mpi or nccl) builds the generated Kronecker graph of SCALE (edgefactor
16, the row-major copy as the main mode's --direction auto builds it) REPEATS times on the job's ranks,
after the kernels are compiled and warmed (dbfs.warmup). Rank 0 prints per build the slowest rank's
construction_time with its route, exchange and place steps, the tuple production, the chunk size, and
the largest rank's measured device peak during the build next to the planner's construction estimate
(dbfs.memory).
"""

from __future__ import annotations

import argparse

from dbfs import memory, runtime
from dbfs.backend import select
from dbfs.build import build
from dbfs.graph import GridComms
from dbfs.grid import Grid, parse_grid
from dbfs.source import GraphSource
from dbfs.warmup import warm_up
from graph500.generator import DEFAULT_SEED


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", required=True, help="SCALE:RxC:COMM (repeatable)")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    backend = select("auto")
    warm_up(backend)
    peak = memory.DevicePeak(backend)
    world = runtime.WORLD
    for case in args.case:
        scale, shape, comm = case.split(":")
        scale, (R, C) = int(scale), parse_grid(shape)
        n, m = 1 << scale, 16 << scale
        source = GraphSource(n, m, scale, 16, True, None, DEFAULT_SEED)
        grid = Grid(R, C, n)
        comms = GridComms.create(grid)
        plan = memory.estimate(grid, m, True, "auto", comm, backend.name)
        for _ in range(args.repeats):
            peak.restart()
            graph, report = build(comms, backend, source, row_major=True, transport=comm)
            used = peak.largest(world)
            if world.Get_rank() == 0:
                measured = "" if used is None else f", device peak {used / 2**30:.2f} GiB"
                steps = ", ".join(f"{k} {v:.3f} s" for k, v in report.phases.items())
                print(f"scale {scale} grid {shape} comm {comm}: construction {report.construction_time:.3f} s "
                      f"({steps}), tuples {report.producer_time:.3f} s, chunk {report.chunk_edges}{measured}, "
                      f"estimated construction {plan.phases['construction'] / 2**30:.2f} GiB", flush=True)
            del graph
        comms.free()


if __name__ == "__main__":
    main()
