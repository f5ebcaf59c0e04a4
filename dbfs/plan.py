"""`python -m dbfs plan`: what a main-mode run of a Graph500 scale needs per rank, without running it.

Prints the per-rank device memory of the GPU backend by part and by phase (dbfs.memory: the estimate
a run prints once its build has counted a block's entries and non-empty columns, the columns here
those a Graph500 block is expected to hold, memory.graph500_columns), whether it fits in --memory per
rank, the largest scale that fits with the same ranks and grid, and the search time and TEPS the scale
model predicts (dbfs.scale_model: per-GPU costs measured on H100s, each term of a search named, the
largest the limit). A grid whose local index ranges pass the 32-bit local ids does not fit either: it
has no estimate (the JSON's bytes_per_rank, parts, phases and symmetric_heap are null) and the report
names the grid or rank count that holds the scale. One process, no GPU needed.
"""

from __future__ import annotations

import argparse

from dbfs import memory, outputs, runtime, scale_model
from dbfs.errors import DbfsError
from dbfs.grid import Grid, default_grid, fitting_grid, grid_advice, parse_grid, rank_advice
from dbfs.json_output import write_json_atomically
from dbfs.options import ROW_COPY, ROW_COPY_APPLIES, ROW_COPY_HELP, refuse_inapplicable
from dbfs.transport import TRANSPORTS
from graph500.generator import MAX_SCALE


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scale", type=int, required=True, help=f"Graph500 scale (1..{MAX_SCALE})")
    parser.add_argument("--edgefactor", type=int, default=16, help="tuples per vertex")
    parser.add_argument("--ranks", type=int, required=True, help="MPI ranks (one GPU each)")
    parser.add_argument("--grid", metavar="RxC", help="process grid (default: squarest with R >= C; the main "
                        "command on one node with a GPU per rank takes Px1 where that fits)")
    parser.add_argument("--memory", metavar="SIZE", required=True,
                        help="device memory per rank, with its unit: e.g. 80GiB, 141GB, 512MiB")
    parser.add_argument("--gpus-per-node", type=int, default=8,
                        help="GPUs a node for the scale model: grid lines within a node use NVLink")
    parser.add_argument("--direction", choices=("auto", "topdown"), default="auto",
                        help="auto adds the bottom-up search's state and, where kept, the row-major copy")
    parser.add_argument("--row-copy", choices=ROW_COPY, default="auto", help=ROW_COPY_HELP)
    parser.add_argument("--comm", choices=("auto", *TRANSPORTS), default="nccl",
                        help="the transport whose buffers are counted (nvshmem: also the symmetric heap a PE "
                             "needs, for NVSHMEM_SYMMETRIC_SIZE; auto: those of nccl, as the main command sizes "
                             "an auto run before it picks the transport)")
    parser.add_argument("--json", metavar="FILE",
                        help="also write the figures as JSON; its exceeds says why the run does not fit (memory "
                             "or local_ids; null when it fits), and with local_ids, which leave no estimate, its "
                             "bytes_per_rank, parts, phases and symmetric_heap are null")


def _grid_shape(args) -> tuple[int, int]:
    if args.ranks < 1:
        raise DbfsError(f"--ranks must be >= 1, got {args.ranks}", collective=True)
    try:
        shape = parse_grid(args.grid) if args.grid else default_grid(args.ranks)
    except ValueError as e:
        raise DbfsError(str(e), collective=True) from None
    if shape[0] * shape[1] != args.ranks:
        raise DbfsError(f"grid {shape[0]}x{shape[1]} needs {shape[0] * shape[1]} ranks, --ranks is "
                        f"{args.ranks}", collective=True)
    return shape


def _largest_reason(args, largest: int | None, R: int, C: int, comm: str, columns, limit: int) -> str:
    """What stops the next scale: the memory, or the 32-bit local ids (then the ranks that lift it)."""
    if largest is None or largest >= MAX_SCALE:
        return ""
    try:
        Grid(R, C, 1 << (largest + 1))
    except ValueError:
        ranks = (_ranks_for_ids_and_memory(args, largest + 1, R, C, comm, columns, limit)
                 or rank_advice(1 << (largest + 1), R, C))
        return f" (set by the 32-bit local ids, not the memory: {ranks} for scale {largest + 1})"
    return " (set by the memory)"


def _ranks_for_ids_and_memory(args, scale: int, R: int, C: int, comm: str, columns, limit: int) -> str | None:
    """Where an R x C grid's local ids cannot hold `scale`: the fewest ranks that hold it within both the
    ids and the memory, where the grid that lifts the ids alone (rank_advice) is short of memory."""
    n = 1 << scale
    shape = fitting_grid(n, R * C)
    if shape is None:
        return None
    _, plan = _estimate(args, Grid(*shape, n), comm, columns, limit)
    if plan.fits:
        return None
    fewest = memory.fewest_ranks(plan)
    if fewest is None:
        return f"no grid of up to {memory.MOST_RANKS} ranks holds it in this memory"
    shape = default_grid(fewest)
    return f"use at least {fewest} ranks (e.g. --grid {shape[0]}x{shape[1]}: its ids and memory hold it)"


def _estimate(args, grid: Grid, comm: str, columns, limit: int) -> tuple[bool, memory.Estimate]:
    """(row copy, estimate) of args's run on `grid` (its vertex count sets the scale)."""
    n_edges = args.edgefactor * grid.n_vertices
    row_copy = memory.resolve_row_copy(args.row_copy, grid, n_edges, True, args.direction, comm, limit=limit,
                                       columns=columns)
    # a GPU a rank: the build goes over NCCL whatever the search's transport (transport.bulk_transport)
    return row_copy, memory.estimate(grid, n_edges, True, args.direction, comm, limit=limit, row_copy=row_copy,
                                     columns=columns, build_transport="nccl")


def _figures(plan: memory.Estimate, limit: int, heap: int | None) -> list[str]:
    """The report's lines of an estimate: bytes per rank by part and by phase, the peak against `limit`
    (with what would fit instead), and the symmetric heap a PE needs (`heap`, for nvshmem)."""
    unit, size_of_unit = memory.unit_of(plan.peak)
    lines = [f"  {'per rank':<26}{unit:>10}", f"  {'graph (resident)':<26}{plan.resident / size_of_unit:>10.2f}"]
    lines += [f"  {('  ' if name in memory.GRAPH_ARRAYS else '') + name:<26}{size / size_of_unit:>10.2f}"
              for name, size in plan.parts.items()]
    lines.append("  phases (alive together):")
    lines += [f"  {name:<26}{size / size_of_unit:>10.2f}" for name, size in plan.phases.items()]
    lines.append(f"peak per rank: {memory.readable(plan.peak)} ({plan.peak_phase}); {memory.readable(limit)} "
                 f"available: {'fits' if plan.fits else 'does not fit: ' + memory.fit_advice(plan)}")
    if heap is not None:
        lines.append(f"NVSHMEM symmetric heap per PE: {memory.readable(heap)} (construction's landing, or later "
                     f"the search's buffers and the finders' records, counted in the search state above), beside "
                     f"NVSHMEM's own (NVSHMEM_SYMMETRIC_SIZE, 1 GiB unless set, must hold it)")
    return lines


def main(args: argparse.Namespace) -> int:
    """The plan of args's run, on stdout (and --json); returns 0 when it fits, 1 when it does not (by its
    memory, or by a grid whose local index ranges pass the 32-bit local ids: then without an estimate)."""
    if not 1 <= args.scale <= MAX_SCALE:
        raise DbfsError(f"--scale must be in 1..{MAX_SCALE}, got {args.scale}", collective=True)
    if args.edgefactor < 1:
        raise DbfsError(f"--edgefactor must be >= 1, got {args.edgefactor}", collective=True)
    if args.gpus_per_node < 1:
        raise DbfsError(f"--gpus-per-node must be >= 1, got {args.gpus_per_node}", collective=True)
    refuse_inapplicable(args, [("--row-copy", args.direction == "auto", ROW_COPY_APPLIES)])
    R, C = _grid_shape(args)
    limit = memory.parse_size(args.memory)
    outputs.check([outputs.Target("--json", args.json)])
    if args.json == outputs.STDOUT:
        runtime.take_stdout()
    comm = memory.sized_transport(args.comm)
    columns = memory.EXPECTED_COLUMNS
    largest = memory.largest_scale(R, C, args.edgefactor, limit, args.direction, comm, row_copy=args.row_copy,
                                   columns=columns)
    n_edges = args.edgefactor << args.scale
    try:
        grid = Grid(R, C, 1 << args.scale)
    except ValueError:                          # no run on this grid, so no estimate
        plan = heap = None
        row_copy = args.row_copy == "on"        # auto keeps the copy only where the run fits with it
    else:
        row_copy, plan = _estimate(args, grid, comm, columns, limit)
        heap = (memory.symmetric_heap_bytes(grid, n_edges, True, args.direction, row_copy=row_copy,
                                            build_transport="nccl", columns=columns) if comm == "nvshmem" else None)
    exceeds = "local_ids" if plan is None else None if plan.fits else "memory"
    copy = (f", row copy {'on' if row_copy else 'off'} (--row-copy {args.row_copy})"
            if args.direction == "auto" and args.ranks > 1 else "")
    sized = f" (sized as {comm})" if comm != args.comm else ""
    lines = [f"plan: SCALE {args.scale}, edgefactor {args.edgefactor}, {runtime.count(args.ranks, 'rank')} "
             f"(grid {R}x{C}), direction {args.direction}{copy}, comm {args.comm}{sized}, GPU backend"]
    if plan is None:
        ranks = _ranks_for_ids_and_memory(args, args.scale, R, C, comm, columns, limit)
        lines.append("does not fit (no per-rank figures): " + grid_advice(1 << args.scale, R, C, largest or 0, ranks))
    else:
        lines += _figures(plan, limit, heap)
        if not args.grid and C > 1 and args.ranks <= args.gpus_per_node:
            lines.append(f"on one node with a GPU per rank the main command takes grid {args.ranks}x1 where it "
                         f"fits (the faster search there): plan it with --grid {args.ranks}x1")
    lines.append("largest scale that fits with these ranks: "
                 + (str(largest) if largest is not None else "none")
                 + _largest_reason(args, largest, R, C, comm, columns, limit))
    prediction = scale_model.predict(args.scale, args.edgefactor, R, C, args.gpus_per_node, row_copy)
    if args.direction == "auto":
        lines.append(("" if exceeds is None else "if it fit: ") + scale_model.summary(prediction))
    else:
        lines.append("no predicted TEPS: the scale model is measured with --direction auto")
    runtime.out("\n".join(lines))
    if args.json is not None and runtime.rank() == 0:
        doc = {"scale": args.scale, "edgefactor": args.edgefactor, "ranks": args.ranks, "grid": [R, C],
               "direction": args.direction, "row_copy": args.direction == "auto" and row_copy, "memory": limit,
               "fits": exceeds is None, "exceeds": exceeds, "largest_scale": largest, "comm": comm,
               **({"bytes_per_rank": plan.peak, "parts": plan.parts, "phases": plan.phases} if plan is not None
                  else dict.fromkeys(("bytes_per_rank", "parts", "phases")))}
        if comm == "nvshmem":
            doc["symmetric_heap"] = heap
        if args.direction == "auto":
            doc["prediction"] = prediction
        write_json_atomically(args.json, doc)
    return 0 if exceeds is None else 1
