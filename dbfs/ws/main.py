"""`python -m dbfs ws`: the single-node mode. One process runs vertex programs (bfs, sssp, sswp, cc, pr)
on the local GPUs with Warp Segmentation or VWC (paper 000, sections II-III) and, on two or more GPUs,
exchanges boundary vertices with Vertex Refinement or the ALL / MS / peer alternatives (section IV).

A run: generate the Graph500 Kronecker graph with its SSSP weights (or read an HDF5 edge list) ->
build the CSR on the first GPU (timed) -> cut it into edge-balanced partitions, one per GPU, and find
each partition's hubs (rows of more than --hub-degree neighbours, see dbfs.ws.graph) -> for
every program, source, method, exchange and repeat: one run to convergence, timed per iteration.
Runs of the same program and source must agree (exactly, or within 1e-4 relative L1 for PageRank),
else the command fails. Results: a table on stdout, progress on stderr, everything in --json. A run
that reaches --max-iterations before converging fails the command too, after the report (its row says
NOT CONVERGED): a truncated run's times and values are not the benchmark's.

The benchmark driver of the main mode (dbfs.harness) runs this loop: build is the CSR and its
partitions, a trial is one configuration (program, source, method, exchange, repeat), validation is
the agreement with the first run of the same program and source, the warm-up loads a program's
kernels; the report is the table and the speedups, not Graph500 statistics (no per-search TEPS
statistics are defined across different programs).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import time
from typing import NamedTuple

import numpy as np

from dbfs import edgelist, outputs, runtime
from dbfs.backend import describe_device, gpu_count, host_memory_limit, select
from dbfs.errors import DbfsError
from dbfs.harness import Benchmark, Run, drive
from dbfs.json_output import provenance, write_json_atomically
from dbfs.options import parse_seed, refuse_inapplicable
from dbfs.ws import approx, programs  # noqa: F401  (programs registers the five programs)
from dbfs.ws.engine import DEFAULT_MAX_ITERATIONS, EXCHANGES, METHODS, SHARD_MEMORY, Engine, Layout
from dbfs.ws.frontier import FILTERS, THRESHOLD
from dbfs.ws.graph import HUB_DEGREE, MAX_VERTICES, build_csr
from dbfs.ws.shards import SHARD_METHODS, WINDOW
from dbfs.ws.program import PROGRAMS, lookup
from graph500.generator import DEFAULT_SEED, edge_count, generate_edges
from graph500.roots import sample_roots, shortfall

PR_L1_TOLERANCE = 1e-4
# Peak bytes per input tuple while building the CSR: the tuples with weights (20), then per directed
# entry the packed key, the sort order and the sorted key (24), both weight copies (8) and nbrs (4).
BUILD_BYTES_PER_TUPLE = 20 + 2 * 36


def add_arguments(p: argparse.ArgumentParser) -> None:
    graph = p.add_argument_group("graph (one of)")
    graph.add_argument("--scale", type=int, help="Graph500 Kronecker graph of 2^SCALE vertices, with weights")
    graph.add_argument("--graph", metavar="FILE.h5", help="edge list in HDF5 (python -m dbfs generate)")
    p.add_argument("--edgefactor", type=int, default=16, help="edges per vertex for --scale")
    p.add_argument("--seed", default=",".join(map(str, DEFAULT_SEED)),
                   help="generator and root-sampling seeds A,B")
    p.add_argument("--algo", default="bfs", help=f"programs, comma-separated, or all ({', '.join(PROGRAMS)})")
    p.add_argument("--method", default="ws",
                   help=f"iteration kernels, comma-separated, or all ({', '.join(METHODS)}): Warp Segmentation, "
                        "virtual warps of 2..32 lanes, CuSha's G-Shards and Concatenated Windows")
    p.add_argument("--exchange", default="vr",
                   help=f"exchanges between GPUs, comma-separated, or all ({', '.join(EXCHANGES)})")
    p.add_argument("--gpus", type=int, help="GPUs to use (partitions on the CPU backend); "
                   "default: every visible GPU, 1 on the CPU")
    sources = p.add_mutually_exclusive_group()
    sources.add_argument("--source", type=int,
                         help="source vertex of bfs, sssp and sswp (for --graph: its id in the original file)")
    sources.add_argument("--roots", type=int, default=1,
                         help="without --source: Graph500-sampled sources for bfs, sssp and sswp")
    p.add_argument("--repeat", type=int, default=1, help="timed runs of every configuration")
    p.add_argument("--hub-degree", type=int, default=HUB_DEGREE,
                   help="--method ws: rows of more than this many neighbours are hubs, reduced in slices by "
                        "many warps before the warp-segmented pass (0: every non-empty row)")
    p.add_argument("--frontier", default="all",
                   help=f"active lists of --method ws and vwc, comma-separated ({', '.join(FILTERS)}): every "
                        "vertex, SIMD-X's online filter (thread bins), ballot filter (warp-ballot scan), or JIT "
                        "(online, ballot after a bin overflow); gs and cw always process every vertex")
    p.add_argument("--bin-threshold", type=int, default=THRESHOLD,
                   help="--frontier online, jit: entries per thread bin of the online filter before it overflows")
    p.add_argument("--approx", metavar="KINDS",
                   help=f"also run every configuration on approximate layouts of the graph, comma-separated "
                        f"({', '.join(approx.KINDS)}), and report their speedup and inaccuracy against the exact "
                        "run (default: none)")
    p.add_argument("--approx-threshold", type=int, default=approx.DEFAULTS["threshold"],
                   help="--approx coalesce: edges into a chunk a vertex needs to be replicated into its holes")
    p.add_argument("--approx-degree", type=int, default=approx.DEFAULTS["degree"],
                   help="--approx latency: largest degree of a vertex whose neighbourhood may become a clique")
    p.add_argument("--approx-fraction", type=float, default=approx.DEFAULTS["fraction"],
                   help="--approx latency: at most this fraction of the vertices get their neighbourhood completed")
    p.add_argument("--approx-tolerance", type=float, default=approx.DEFAULTS["tolerance"],
                   help="--approx divergence: relative distance from the warp's mean degree left alone")
    p.add_argument("--shard-window", type=int, default=WINDOW,
                   help="--method gs, cw: vertices per shard (a multiple of 32; their values stay in shared memory)")
    p.add_argument("--shard-memory", choices=SHARD_MEMORY, default="auto",
                   help="--method gs, cw: where the shards live; auto: pinned host memory when they would not "
                        "leave room on the GPU for the programs' copies")
    p.add_argument("--max-iterations", type=int, default=DEFAULT_MAX_ITERATIONS,
                   help="stop a run that has not converged after this many iterations; the command still "
                        "reports every run, then exits with status 2")
    p.add_argument("--backend", choices=("auto", "gpu", "cpu"), default="auto",
                   help="auto: the GPUs when CuPy sees one, else NumPy")
    p.add_argument("--json", metavar="FILE", help="write the graph, partitions and every run as JSON")
    p.add_argument("--load", metavar="FILE.py", action="append", default=[],
                   help="Python file that registers more vertex programs (dbfs.ws.program.register); "
                        "may be repeated (default: none)")


def _choices(text: str, known, what: str) -> list[str]:
    """The names of a comma-separated list, or every known one for `all` alone."""
    names = list(known) if text.strip() == "all" else [t.strip() for t in text.split(",") if t.strip()]
    if what == "exchange" and "all" in names:
        raise DbfsError("--exchange all alone runs every exchange; in a list, Medusa's whole-range exchange "
                        "is called medusa (it was called all)", collective=True)
    bad = [n for n in names if n not in known]
    if bad or not names:
        raise DbfsError(f"unknown {what} {', '.join(bad) or repr(text)} (known: {', '.join(known)}, or all)",
                        collective=True)
    return list(dict.fromkeys(names))


def _load_programs(path: str) -> None:
    """Run a user's Python file, which registers its programs (see README, "Single-node mode")."""
    if not os.path.isfile(path):
        raise DbfsError(f"--load {path}: " + ("it is a directory, not a Python file" if os.path.isdir(path)
                                              else "no such file"), collective=True)
    name = f"dbfs_ws_load_{abs(hash(path))}"
    spec = importlib.util.spec_from_loader(name, importlib.machinery.SourceFileLoader(name, path))
    try:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    except Exception as e:       # a broken user file is bad input: one line, not a traceback
        raise DbfsError(f"--load {path}: {type(e).__name__}: {e}", collective=True) from None


def _check_args(args) -> None:
    if runtime.size() > 1:
        raise DbfsError("the ws mode is one process driving all local GPUs: run it without mpirun",
                        collective=True)
    if (args.scale is None) == (args.graph is None):
        raise DbfsError("give exactly one of --scale S or --graph FILE.h5", collective=True)
    if args.scale is not None and not 1 <= args.scale <= 31:
        raise DbfsError(f"--scale must be in 1..31 in the ws mode, got {args.scale}", collective=True)
    for name in ("edgefactor", "roots", "repeat", "max_iterations"):
        if getattr(args, name) < 1:
            raise DbfsError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}", collective=True)
    if args.hub_degree < 0:
        raise DbfsError(f"--hub-degree must be >= 0, got {args.hub_degree}", collective=True)
    if args.gpus is not None and args.gpus < 1:
        raise DbfsError(f"--gpus must be >= 1, got {args.gpus}", collective=True)
    for path in args.load:
        _load_programs(path)
    args.algos = _choices(args.algo, PROGRAMS, "algorithm")
    args.methods = _choices(args.method, METHODS, "method")
    # ("all" is a filter here, the processing of every vertex, not the list of every choice)
    args.frontiers = list(dict.fromkeys(f.strip() for f in args.frontier.split(",") if f.strip()))
    bad = [f for f in args.frontiers if f not in FILTERS]
    if bad or not args.frontiers:
        raise DbfsError(f"unknown frontier filter {', '.join(bad) or repr(args.frontier)} (known: "
                        f"{', '.join(FILTERS)})", collective=True)
    args.approxes = _choices(args.approx, approx.KINDS, "approximation") if args.approx else []
    if args.approx_threshold < 1 or args.approx_degree < 2 or not 0 < args.approx_fraction <= 1 \
            or not 0 <= args.approx_tolerance < 1:
        raise DbfsError("--approx-threshold must be >= 1, --approx-degree >= 2, --approx-fraction in (0, 1] and "
                        "--approx-tolerance in [0, 1)", collective=True)
    if args.bin_threshold < 1:
        raise DbfsError(f"--bin-threshold must be >= 1, got {args.bin_threshold}", collective=True)
    if args.shard_window < 32 or args.shard_window % 32:
        raise DbfsError(f"--shard-window must be a positive multiple of 32, got {args.shard_window}",
                        collective=True)
    args.exchanges = _choices(args.exchange, EXCHANGES, "exchange")
    args.seed_pair = parse_seed(args.seed)
    sourced = any(PROGRAMS[a].needs_source for a in args.algos)
    sharded = any(m in SHARD_METHODS for m in args.methods)
    binned = any(f in ("online", "jit") for f in args.frontiers)
    no_source = f"to programs that start from a source; --algo {','.join(args.algos)} has none"
    refuse_inapplicable(args, [("--source", sourced, no_source), ("--roots", sourced, no_source),
                               ("--hub-degree", "ws" in args.methods, "to --method ws only"),
                               ("--edgefactor", args.graph is None, "to --scale graphs: a --graph file has its own sizes"),
                               ("--shard-window", sharded, "to --method gs and cw only"),
                               ("--shard-memory", sharded, "to --method gs and cw only"),
                               ("--frontier", any(m not in SHARD_METHODS for m in args.methods),
                                "to --method ws and vwc only (gs and cw process every vertex)"),
                               ("--bin-threshold", binned, "to --frontier online and jit only"),
                               ("--approx-threshold", "coalesce" in args.approxes, "to --approx coalesce only"),
                               ("--approx-degree", "latency" in args.approxes, "to --approx latency only"),
                               ("--approx-fraction", "latency" in args.approxes, "to --approx latency only"),
                               ("--approx-tolerance", "divergence" in args.approxes, "to --approx divergence only")])
    if args.graph is not None:
        runtime.agree(outputs.check_input("--graph", args.graph))
    outputs.check([outputs.Target("--json", args.json)],
                  inputs=[("--graph", args.graph)] + [("--load", path) for path in args.load])
    if args.json == outputs.STDOUT:
        runtime.take_stdout()


def _devices(args, backend) -> list[int] | None:
    if not backend.is_gpu:
        args.parts = args.gpus or 1
        return None
    visible = gpu_count()
    args.parts = args.gpus or visible
    if args.parts > visible:
        raise DbfsError(f"--gpus {args.parts} but only {visible} GPU{'s' if visible != 1 else ''} visible",
                        collective=True)
    return list(range(args.parts))


def _graph_file(args) -> edgelist.GraphInfo | None:
    """The --graph file, its layout checked and its id table strictly ascending (None for --scale)."""
    if args.graph is None:
        return None
    try:
        info = edgelist.graph_info(args.graph)
    except DbfsError as e:
        raise DbfsError(str(e), collective=True) from None
    if info.n_vertices > MAX_VERTICES:         # before any size is estimated or allocated from it
        raise DbfsError(f"{info.path} has {info.n_vertices} vertices; the ws mode's 32-bit ids allow at most "
                        f"2^31 ({MAX_VERTICES})", collective=True)
    bad = info.unordered_id(0, info.n_vertices)
    if bad is not None:
        raise DbfsError(f"{info.path} is not a dbfs graph: its 'ids' are not strictly ascending (dense vertex "
                        f"{bad} and the next); convert the file again", collective=True)
    if info.directed:
        runtime.warn(f"{info.path} is a directed graph; the ws mode searches it undirected (every edge both "
                     "ways), unlike the main command")
    return info


def _given_source(args, info) -> int | None:
    """The dense id of --source, given in the file's original ids (for --scale: a vertex 0..2^SCALE-1)."""
    if args.source is None:
        return None
    if info is None:
        n = 1 << args.scale
        if not 0 <= args.source < n:
            raise DbfsError(f"--source {args.source} is not a vertex (0..{n - 1})", collective=True)
        return args.source
    dense = info.dense_id(args.source)
    if dense is None:
        raise DbfsError(f"--source {args.source} is not a vertex of {info.path}", collective=True)
    return dense


def _load_edges(args, info, xp):
    """(src, dst, weights or None, n_vertices, description) of the input graph, arrays in xp."""
    if info is None:
        n_tuples = edge_count(args.scale, args.edgefactor)
        src, dst, weights = generate_edges(args.scale, args.edgefactor, 0, n_tuples, args.seed_pair,
                                           weights=True, xp=xp)
        return src, dst, weights, 1 << args.scale, {"kind": "kronecker", "scale": args.scale,
                                                    "edgefactor": args.edgefactor, "seed": list(args.seed_pair)}
    arrays = edgelist.read_edge_slice(info.path, 0, info.n_edges)
    src, dst = (xp.asarray(a) for a in arrays[:2])
    weights = xp.asarray(arrays[2]) if info.weights else None
    return src, dst, weights, info.n_vertices, {"kind": "file", "path": args.graph}


def _vertex_count(args, info) -> int:
    """The vertices of the --scale graph or of the --graph file (`info`)."""
    return (1 << args.scale) if info is None else info.n_vertices


def _check_partitions(args, info) -> None:
    """No more partitions (--gpus) than the graph has vertices: the extra ones would hold nothing but
    their copy of every vertex's value, and each costs a partition's exchanges every iteration."""
    n = _vertex_count(args, info)
    if args.parts > max(1, n):
        raise DbfsError(f"--gpus {args.parts} cuts a {n}-vertex graph into more partitions than it has vertices; "
                        f"use at most {max(1, n)}", collective=True)


def _check_memory(args, info, backend, devices) -> None:
    """The CSR build's peak plus the copy of every vertex's value that each partition holds (as many
    partitions as share one device), against the device's (the host's on the CPU) free memory."""
    tuples = edge_count(args.scale, args.edgefactor) if info is None else info.n_edges
    n = _vertex_count(args, info)
    sharing = -(-args.parts // len(devices)) if devices else args.parts
    values = sharing * n * max(PROGRAMS[a].vertex_dtype.itemsize for a in args.algos)
    need = BUILD_BYTES_PER_TUPLE * tuples + values
    limit = backend.memory_limit() if backend.is_gpu else host_memory_limit()
    runtime.log(f"ws: building and running need about {outputs.size_text(need)} (the vertex values of "
                f"{runtime.count(sharing, 'partition')}: {outputs.size_text(values)}; {outputs.size_text(limit)} "
                f"free on {backend.describe()})")
    if need > limit:
        raise DbfsError(f"the graph does not fit: building its CSR and {sharing} cop{'y' if sharing == 1 else 'ies'} of the "
                        f"vertex values need about {outputs.size_text(need)}, {outputs.size_text(limit)} are "
                        f"free on {backend.describe()}", collective=True)


def _check_weights(args, info) -> None:
    """Collective: every program that needs edge weights can have them (before any program runs)."""
    needing = [a for a in args.algos if PROGRAMS[a].weights]
    if needing and info is not None and not info.weights:
        raise DbfsError(f"--algo {','.join(needing)} needs edge weights and {info.path} has none (write them "
                        "with `python -m dbfs generate --weights`, or use --scale); no program was run",
                        collective=True)


def _weight_problem(args, src, dst, weights, name_vertex) -> str | None:
    """The first edge whose weight a selected program cannot take (NaN, infinite, or negative where the
    program needs non-negative weights), named by its vertices, or None."""
    if weights is None:
        return None
    needs = {PROGRAMS[a].weights for a in args.algos} - {None}
    if not needs:
        return None
    w = np.asarray(weights)
    bad = ~np.isfinite(w) | ((w < 0) if "nonnegative" in needs else False)
    if not bad.any():
        return None
    k = int(np.flatnonzero(bad)[0])
    finite = bool(np.isfinite(w[k]))
    refusing = [a for a in args.algos if PROGRAMS[a].weights == "nonnegative" or (PROGRAMS[a].weights and not finite)]
    need = "finite, non-negative" if any(PROGRAMS[a].weights == "nonnegative" for a in refusing) else "finite"
    return (f"edge {k} ({name_vertex(int(src[k]))} - {name_vertex(int(dst[k]))}) has weight {float(w[k])}: "
            f"{', '.join(refusing)} need{'s' if len(refusing) == 1 else ''} {need} weights; no program was run")


def _sources(args, source: int | None, n: int, degree: np.ndarray) -> list[int]:
    """Dense ids: the given source (dense already), or the Graph500-sampled roots."""
    if source is not None:
        return [source]
    roots = sample_roots(n, args.roots, lambda c: degree[c] > 0, seed=args.seed_pair)
    if roots.size == 0:
        raise DbfsError(shortfall(n, 0, args.roots, "--source V"), collective=True)
    if roots.size < args.roots:
        runtime.log(shortfall(n, roots.size, args.roots, "--source V"))
    return [int(r) for r in roots]


def _disagreement(program, reference: np.ndarray, values: np.ndarray) -> str | None:
    if program.exact:
        if np.array_equal(reference, values):
            return None
        v = int(np.flatnonzero(reference != values)[0])
        return f"vertex {v} has {values[v]} instead of {reference[v]}"
    distance = float(np.abs(values.astype(np.float64) - reference).sum() / max(np.abs(reference).sum(), 1e-300))
    return None if distance <= PR_L1_TOLERANCE else f"relative L1 distance {distance:.2e} > {PR_L1_TOLERANCE}"


def _run_record(program, algo, method, exchange, parts, source, repeat, result, degree, representation,
                frontier, approximation) -> dict:
    record = {"algo": algo, "method": method, "exchange": exchange, "gpus": parts, "source": source,
              "representation": representation, "frontier": frontier, "approx": approximation,
              "filters": result.filters,
              "active_groups": result.active_groups,
              "repeat": repeat, "iterations": result.iterations, "converged": result.converged,
              "time": result.time, "iteration_times": result.iteration_times,
              "compute_time": result.compute_time, "exchange_time": result.exchange_time,
              "sent_vertices": result.sent_vertices, "sent_bytes": result.sent_bytes}
    if program.reached is not None:
        reached = program.reached(result.values)
        nedge = int(degree[reached].sum()) // 2
        record.update(reached=int(reached.sum()), nedge=nedge,
                      teps=nedge / result.time if result.time > 0 else 0.0)
    return record


def method_label(record: dict) -> str:
    """The method of a run with its frontier filter when that is not `all` and its approximation:
    ws, ws+jit, vwc8+online, ws~coalesce."""
    frontier, approximation = record.get("frontier", "all"), record.get("approx")
    label = record["method"] if frontier == "all" else f"{record['method']}+{frontier}"
    return label if not approximation else f"{label}~{approximation['kind']}"


def median_times(runs: list[dict]) -> dict:
    """(algo, method label, exchange) -> median run time over sources and repeats."""
    groups: dict = {}
    for r in runs:
        groups.setdefault((r["algo"], method_label(r), r["exchange"]), []).append(r["time"])
    return {key: float(np.median(times)) for key, times in groups.items()}


def comparisons(runs: list[dict]) -> list[dict]:
    """Speedups the paper reports: WS over each and the best VWC size, WS over G-Shards and Concatenated
    Windows (time of the other / time of ws); VR over Medusa (the paper's ALL), MS and peer; each filter
    over processing all vertices, per method."""
    times = median_times(runs)
    out = []
    for algo, method, exchange in times:
        if "~" in method:
            base, kind = method.split("~")
            if (algo, base, exchange) in times:
                out.append({"algo": algo, "method": base, "exchange": exchange, "compare": f"{kind}_over_exact",
                            "other": "exact", "speedup": times[algo, base, exchange] / times[algo, method, exchange],
                            "inaccuracy": _mean_inaccuracy(runs, algo, method, exchange)})
            continue
        if "+" in method and (algo, method.split("+")[0], exchange) in times:
            base, filt = method.split("+")
            out.append({"algo": algo, "method": base, "exchange": exchange, "compare": f"{filt}_over_all",
                        "other": "all", "speedup": times[algo, base, exchange] / times[algo, method, exchange]})
        if method == "ws":
            for other in SHARD_METHODS:
                if (algo, other, exchange) in times:
                    out.append({"algo": algo, "exchange": exchange, "compare": f"ws_over_{other}", "other": other,
                                "speedup": times[algo, other, exchange] / times[algo, method, exchange]})
            vwc = {m: t for (a, m, e), t in times.items()
                   if a == algo and e == exchange and m.startswith("vwc") and "+" not in m}
            if vwc:
                best = min(vwc, key=vwc.get)
                out.append({"algo": algo, "exchange": exchange, "compare": "ws_over_best_vwc",
                            "other": best, "speedup": vwc[best] / times[algo, method, exchange],
                            "over_each": {m: t / times[algo, method, exchange] for m, t in vwc.items()}})
        if exchange == "vr":
            for other in ("medusa", "ms", "peer"):
                if (algo, method, other) in times:
                    # the key keeps the paper's name of Medusa's scheme, ALL
                    key = "vr_over_all" if other == "medusa" else f"vr_over_{other}"
                    out.append({"algo": algo, "method": method, "compare": key, "other": other,
                                "speedup": times[algo, method, other] / times[algo, method, exchange]})
    return out


def _mean_inaccuracy(runs: list[dict], algo: str, label: str, exchange) -> dict:
    """Mean over the runs of (algo, label, exchange) of their inaccuracy figures."""
    found = [r["approx"]["inaccuracy"] for r in runs
             if r["algo"] == algo and method_label(r) == label and r["exchange"] == exchange]
    return {key: float(np.mean([f[key] for f in found])) for key in ("differ_fraction", "mean_relative_error")}


TABLE_COLUMNS = ("algo", "method", "exchange", "gpus", "source", "iters", "time ms", "ms/iter", "compute",
                 "exch ms", "sent MB", "GTEPS")


def table(runs: list[dict]) -> str:
    """One row per run; every column as wide as its widest cell, two spaces apart (names and numbers
    of any length stay apart); the method with its frontier filter and approximation (method_label)."""
    rows = [TABLE_COLUMNS]
    for r in runs:
        rows.append((r["algo"], method_label(r), r["exchange"] or "-", str(r["gpus"]),
                     "-" if r["source"] is None else str(r["source"]), str(r["iterations"]),
                     f"{1e3 * r['time']:.2f}", f"{1e3 * r['time'] / r['iterations']:.3f}",
                     f"{1e3 * r['compute_time']:.2f}", f"{1e3 * r['exchange_time']:.2f}",
                     f"{r['sent_bytes'] / 1e6:.2f}", f"{r['teps'] / 1e9:.3f}" if "teps" in r else "-"))
    widths = [max(len(row[k]) for row in rows) for k in range(len(TABLE_COLUMNS))]
    lines = ["  ".join(cell.ljust(w) if k < 3 else cell.rjust(w) for k, (cell, w) in enumerate(zip(row, widths)))
             for row in rows]
    return "\n".join(line + ("" if i == 0 or runs[i - 1]["converged"] else "  NOT CONVERGED")
                     for i, line in enumerate(lines))


def _where(comparison: dict, *names: str) -> str:
    """' (a, b)': the comparison's fields `names` that it has (its method, its exchange), or ''."""
    named = [comparison[k] for k in names if comparison.get(k)]
    return f" ({', '.join(named)})" if named else ""


def comparison_lines(found: list[dict]) -> str:
    lines = []
    for c in found:
        at = _where(c, "method", "exchange")
        if c["compare"] == "ws_over_best_vwc":
            each = ", ".join(f"{m} {s:.2f}x" for m, s in c["over_each"].items())
            lines.append(f"{c['algo']}{_where(c, 'exchange')}: ws is {c['speedup']:.2f}x the best VWC "
                         f"({c['other']}); over each: {each}")
        elif c["compare"].startswith("vr_over_"):
            lines.append(f"{c['algo']}{at}: vr is {c['speedup']:.2f}x {c['other']}")
        elif c["compare"].endswith("_over_exact"):
            kind = c["compare"][:-len("_over_exact")]
            lines.append(f"{c['algo']}{at}: --approx {kind} is {c['speedup']:.2f}x the exact run; "
                         f"{c['inaccuracy']['differ_fraction']:.1%} of the vertices differ, mean relative error "
                         f"{c['inaccuracy']['mean_relative_error']:.3g}")
        elif c["compare"].endswith("_over_all"):
            filt = c["compare"][:-len("_over_all")]
            lines.append(f"{c['algo']}{at}: --frontier {filt} is {c['speedup']:.2f}x all")
        else:
            lines.append(f"{c['algo']}{_where(c, 'exchange')}: ws is {c['speedup']:.2f}x {c['other']}")
    return "\n".join(lines)


class _Config(NamedTuple):
    """One trial of the ws benchmark: a program from a source with a method, a frontier filter and an
    exchange, on the graph or on one of its approximate layouts."""

    algo: str
    approx: str | None
    source: int | None
    method: str
    frontier: str
    exchange: str | None
    repeat: int


class VertexPrograms(Benchmark):
    """The ws mode's hooks for the harness (dbfs.harness): build the CSR and its partitions (and those of
    the approximate layouts); a trial is one configuration; validation compares every run of a program
    from a source on one graph with its first run there; a run on an approximate layout is measured
    against the first exact run of the same program and source (dbfs.ws.approx.inaccuracy); each
    program's kernels are loaded (one iteration of every method) when the program first runs on a
    graph, before any of its runs is timed (the warm-up does so for the first program)."""

    def __init__(self, args, backend, devices, info, source: int | None):
        """info: the --graph file (None for --scale); source: the dense id of --source, or None."""
        self.args, self.backend, self.devices, self.info, self.source = args, backend, devices, info, source
        self.engine, self.reference = None, (None, None)
        self.approximations, self.exact = {}, {}

    def _layout(self, csr) -> Layout:
        args = self.args
        return Layout(csr, args.parts, self.devices, hub_degree=args.hub_degree,
                      shard_methods=[m for m in args.methods if m in SHARD_METHODS], shard_window=args.shard_window,
                      shard_memory=args.shard_memory, pinned_empty=self.backend.pinned_empty)

    def _approximate(self, n, src, dst, weights) -> None:
        """The approximate layouts of --approx, each built as the exact one (timed in the log)."""
        args, xp = self.args, self.backend.xp
        params = {"threshold": args.approx_threshold, "degree": args.approx_degree,
                  "fraction": args.approx_fraction, "tolerance": args.approx_tolerance}
        for kind in args.approxes:
            started = time.perf_counter()
            a = approx.approximate(kind, n, src, dst, weights, xp=xp, **params)
            layout = self._layout(build_csr(xp, a.n, a.src, a.dst, a.weights))
            self.backend.sync()
            info = {**a.describe(), "build_time": time.perf_counter() - started,
                    "representations": {m: dict(zip(("device_bytes", "host_bytes"), layout.representation_bytes(m)))
                                        for m in args.methods}}
            self.approximations[kind] = (layout, self.backend.asnumpy(a.position), info,
                                         self.backend.asnumpy(layout.degree))
            runtime.log(f"ws: --approx {kind}: {a.n} vertices, {info['tuples']} tuples (+{a.added}, -{a.removed}"
                        f"{f', {a.replicas} replicas' if a.replicas else ''}) in {info['build_time']:.2f} s")

    def build(self) -> dict:
        args, backend = self.args, self.backend
        started = time.perf_counter()
        src, dst, weights, n, self.graph_info = _load_edges(args, self.info, backend.xp)
        if weights is not None:
            name = (lambda v: v) if self.info is None else (lambda v: int(self.info.original_ids(v, v + 1)[0]))
            problem = _weight_problem(args, backend.asnumpy(src), backend.asnumpy(dst), backend.asnumpy(weights),
                                      name)
            if problem:
                raise DbfsError(problem, collective=True)
        backend.sync()
        generation_time = time.perf_counter() - started
        started = time.perf_counter()
        csr = build_csr(backend.xp, n, src, dst, weights, self.info and self.info.path)
        self.layout = self._layout(csr)
        backend.sync()
        build_time = time.perf_counter() - started
        self._approximate(n, src, dst, weights)
        del src, dst, weights
        self.graph_info.update(n_vertices=n, n_tuples=csr.n_tuples, csr_entries=csr.entries,
                               generation_time=generation_time, build_time=build_time,
                               hub_degree=args.hub_degree, representations={
                                   m: dict(zip(("device_bytes", "host_bytes"), self.layout.representation_bytes(m)))
                                   for m in args.methods})
        del csr
        self.degree = backend.asnumpy(self.layout.degree)
        self.partitions = self.layout.describe()
        runtime.log(f"ws: {n} vertices, {self.graph_info['csr_entries']} CSR entries; loaded in "
                    f"{generation_time:.2f} s, CSR and {args.parts} partition{'s' if args.parts > 1 else ''} in "
                    f"{build_time:.2f} s; {runtime.count(sum(p['hubs'] for p in self.partitions), 'hub')} (more than "
                    f"{args.hub_degree} neighbours) hold "
                    f"{sum(p['hub_entries'] for p in self.partitions) / max(self.graph_info['csr_entries'], 1):.0%}"
                    " of the entries")
        return {"generation_time": generation_time, "build_time": build_time}

    def trials(self) -> list[_Config]:
        args = self.args
        self.exchanges = args.exchanges if args.parts > 1 else [None]
        sourced = any(lookup(algo).needs_source for algo in args.algos)
        self.sources = _sources(args, self.source, self.layout.n, self.degree) if sourced else None
        # what the user sees and gives: the file's ids
        self.original = {None: None, **{v: v if self.info is None else int(self.info.original_ids(v, v + 1)[0])
                                        for v in self.sources or []}}
        return [_Config(algo, kind, source, method, frontier, exchange, repeat)
                for algo in args.algos for kind in [None] + args.approxes
                for source in (self.sources if lookup(algo).needs_source else [None])
                for method in args.methods
                for frontier in (["all"] if method in SHARD_METHODS else args.frontiers)
                for exchange in self.exchanges for repeat in range(args.repeat)]

    def _source(self, kind: str | None, source: int | None) -> int | None:
        """A source in the graph of approximation `kind` (an approximate layout may renumber the vertices)."""
        if source is None or kind is None:
            return source
        return int(self.approximations[kind][1][source])

    def _engine(self, algo: str, kind: str | None) -> Engine:
        """The engine of program `algo` on the graph (or its approximate layout `kind`), its kernels loaded
        (one iteration of every method)."""
        if self.engine is None or (self.engine.program.name, self.engine_kind) != (algo, kind):
            program = lookup(algo)
            self.engine = None
            layout = self.layout if kind is None else self.approximations[kind][0]
            self.engine, self.engine_kind = Engine(layout, program, self.backend), kind
            source = self._source(kind, self.sources[0]) if program.needs_source else None
            for method in self.args.methods:
                self.engine.run(method, self.exchanges[0], source, max_iterations=1)
        return self.engine

    def warm_up(self, trial: _Config) -> None:
        self._engine(trial.algo, trial.approx)

    def search(self, trial: _Config):
        return self._engine(trial.algo, trial.approx).run(trial.method, trial.exchange,
                                                          self._source(trial.approx, trial.source),
                                                          self.args.max_iterations, trial.frontier,
                                                          self.args.bin_threshold)

    def validate(self, trial: _Config, result) -> str | None:
        key, reference = self.reference
        if key != (trial.algo, trial.approx, trial.source):
            self.reference = ((trial.algo, trial.approx, trial.source), (trial, result.values))
            return None
        first, values = reference
        problem = _disagreement(self.engine.program, values, result.values)
        if problem is None:
            return None
        return f"disagrees with {first.method}/{first.frontier}/{first.exchange}: {problem}"

    def label(self, trial: _Config) -> str:
        where = "" if trial.source is None else f" from source {self.original[trial.source]}"
        on = f" on --approx {trial.approx}" if trial.approx else ""
        return (f"{trial.algo} {trial.method}/{trial.frontier}{'/' + trial.exchange if trial.exchange else ''}"
                f"{on}{where}")

    def record(self, trial: _Config, result) -> dict:
        program, approximation, degree = self.engine.program, None, self.degree
        if trial.approx is None:
            self.exact.setdefault((trial.algo, trial.source), result.values)
        else:
            _, position, info, degree = self.approximations[trial.approx]
            exact = self.exact[trial.algo, trial.source]
            approximation = {**{k: v for k, v in info.items() if k != "representations"},
                             "inaccuracy": approx.inaccuracy(program, exact, result.values, position)}
        return _run_record(program, trial.algo, trial.method, trial.exchange, self.args.parts,
                           self.original[trial.source], trial.repeat, result, degree,
                           self.engine.representation(trial.method), trial.frontier, approximation)

    def progress(self, index: int, count: int, trial: _Config, record: dict) -> str:
        source = "" if record["source"] is None else f" source {record['source']}"
        return (f"{trial.algo} {method_label(record)}{' ' + trial.exchange if trial.exchange else ''}{source}: "
                f"{record['iterations']} iterations, {1e3 * record['time']:.2f} ms"
                + ("" if record["converged"] else " (did NOT converge)"))

    def report(self, run: Run) -> None:
        found = comparisons(run.records)
        runtime.out(table(run.records))
        if found:
            runtime.out(comparison_lines(found))
        if self.args.json is not None:
            names = [describe_device(d) for d in self.devices] if self.devices else [self.backend.describe()]
            doc = {**provenance(), "mode": "ws", "backend": self.backend.name, "devices": names,
                   "gpus": self.args.parts, "graph": self.graph_info, "partitions": self.partitions,
                   "approximations": {k: info for k, (_, _, info, _) in self.approximations.items()},
                   "runs": run.records, "comparisons": found}
            write_json_atomically(self.args.json, doc)

    def close(self) -> None:
        self.engine, self.approximations = None, {}


def main(args: argparse.Namespace) -> int:
    _check_args(args)
    info = _graph_file(args)
    source = _given_source(args, info)
    backend = select(args.backend)
    devices = _devices(args, backend)
    _check_partitions(args, info)
    _check_weights(args, info)
    _check_memory(args, info, backend, devices)
    runtime.log(f"ws: {', '.join(args.algos)} with {', '.join(args.methods)} on {args.parts} "
                f"{'GPU' if devices else 'simulated partition'}{'s' if args.parts > 1 else ''}")
    runs = drive(VertexPrograms(args, backend, devices, info, source)).records
    stopped = sum(not r["converged"] for r in runs)
    if stopped:
        raise DbfsError(f"{stopped} of {runtime.count(len(runs), 'run')} stopped at --max-iterations "
                        f"{args.max_iterations} without converging (rows marked NOT CONVERGED)", collective=True)
    return 0
