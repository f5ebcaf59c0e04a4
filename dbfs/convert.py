"""`python -m dbfs convert`: import a SNAP, Matrix Market, METIS or Graph500 binary graph file into
the HDF5 graph store (layout in dbfs.edgelist), streaming, with bounded memory.

Method. The reading thread cuts the input into blocks (dbfs.formats); a thread pool parses them
(NumPy, GIL released in the array operations) and the reading thread accepts the results in file
order, so errors name the first bad line. Edges go to chunked, shuffled and deflated int64 datasets,
compressed by the same pool (dbfs.edgelist.ChunkStream).

Ids. `--ids keep` stores id - id_base (1-based formats become 0-based; n is the header's vertex count,
else the largest id + 1). `--ids renumber` (the default for SNAP, whose ids are often sparse 64-bit
numbers) maps the distinct ids, in increasing order, to 0 .. n-1 and stores the sorted originals as
dataset `ids`, in three passes with bounded memory:
  1. parse: the edges (original ids) are spilled to a temporary binary file and, every RUN_IDS ids,
     the sorted distinct ids of that stretch (sorted in a worker) to a file of sorted runs;
  2. merge: the runs are cut into key ranges of about RANGE_IDS ids by splitters sampled from the runs;
     each range's slices of all runs (found by binary search in the memory-mapped run file) are merged
     by sorting in a worker, and the ranges, in order, form the sorted id table;
  3. map: the spilled edges are read back in chunks and mapped by binary search in the memory-mapped
     id table (in the workers; the keys of a chunk are sorted first, for locality).
Memory: about (threads + 2) blocks in flight (4 MiB of text and their arrays each, or RANGE_IDS ids in
the merge), plus the id table, which is memory-mapped (8 bytes per distinct vertex, paged by the OS
when it does not fit). Temporary files (16 bytes per edge plus the runs) live beside the output and are
removed, with the unfinished output, whatever happens.
"""

from __future__ import annotations

import argparse
import errno
import gzip
import os
import time
import zlib
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import h5py
import numpy as np
from mpi4py import MPI

from dbfs import edgelist, outputs, runtime
from dbfs.arrays import sorted_unique
from dbfs.errors import DbfsError
from dbfs.formats import EXTENSIONS, FORMATS, GZIP_MAGIC, READERS, UTF8_BOM, detect_format, unread_compression
from dbfs.json_output import provenance, write_json_atomically
from dbfs.options import refuse_inapplicable
from dbfs.progress import Progress

RUN_IDS = 1 << 23            # ids per sorted run of pass 1
RANGE_IDS = 1 << 21          # ids per key range of the merge
MAP_EDGES = 1 << 21          # edges per chunk of pass 3
# kept ids over SPARSE_IDS_FACTOR times the vertices that can have an edge (and over SPARSE_IDS_MIN) warn
SPARSE_IDS_FACTOR = 32
SPARSE_IDS_MIN = 1 << 20


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", metavar="INPUT", help="graph file (a .gz file is decompressed on the fly)")
    p.add_argument("--out", required=True, metavar="G.h5", help="output HDF5 graph file")
    p.add_argument("--format", choices=FORMATS,
                   help="input format; without it the extension decides: "
                        + ", ".join(f"{e} {f}" for e, f in EXTENSIONS.items()))
    p.add_argument("--undirected", action="store_true",
                   help="read the tuples as undirected edges; otherwise as the format says (snap and "
                        "general mtx directed; symmetric mtx, metis and g500 undirected)")
    p.add_argument("--ids", choices=("auto", "keep", "renumber"), default="auto",
                   help="keep the file's ids (minus the 1 of 1-based formats) or renumber the distinct "
                        "ids densely, storing the originals; auto: renumber snap, keep the others")
    p.add_argument("--n-vertices", type=int, metavar="N",
                   help="with kept ids of a headerless format: the vertex count (e.g. 2^SCALE for a "
                        "Graph500 file, whose largest vertices may have no edge); default: largest id + 1")
    p.add_argument("--extra-columns", choices=("refuse", "ignore"), default="refuse",
                   help="snap lines with more than two columns (weights, timestamps): refuse them, or read "
                        "the first two of every line")
    p.add_argument("--force", action="store_true", help="replace G.h5 if it exists")
    p.add_argument("--threads", type=int, default=edgelist.io_threads(),
                   help="worker threads for parsing and compression")
    p.add_argument("--json", metavar="FILE", help="write the conversion's figures as JSON")


def _ordered(pool, function, items, depth: int):
    """function(item) for every item, run by the pool, yielded in order with at most depth in flight."""
    pending = deque()
    for item in items:
        pending.append(pool.submit(function, item))
        if len(pending) >= depth:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


class _Spill:
    """Temporary files of the renumbering passes (created by open), removed by close()."""

    def __init__(self, out: str):
        self.paths = {k: edgelist.temporary_name(f"{out}.{k}") for k in ("edges", "runs", "ids")}
        self.files = {}

    def open(self) -> None:
        for k, p in self.paths.items():
            self.files[k] = open(p, "wb")

    def close(self) -> None:
        for f in self.files.values():
            f.close()
        for p in self.paths.values():
            edgelist.remove_quietly(p)


def _read_runs(parsed, pool, spill: _Spill, depth: int):
    """Pass 1: spill the edges and the sorted runs of distinct ids; returns the run lengths."""
    lengths, pending, buffer, buffered = [], deque(), [], 0

    def flush_runs(keep: int):
        while len(pending) > keep:
            run = pending.popleft().result()
            spill.files["runs"].write(memoryview(run))
            lengths.append(len(run))

    for src, dst in parsed:
        spill.files["edges"].write(memoryview(np.stack((src, dst), axis=1)))
        buffer += [src, dst]
        buffered += 2 * len(src)
        if buffered >= RUN_IDS:
            pending.append(pool.submit(sorted_unique, buffer))
            buffer, buffered = [], 0
            flush_runs(depth)
    if buffer:
        pending.append(pool.submit(sorted_unique, buffer))
    flush_runs(0)
    for f in spill.files.values():
        f.flush()
    return lengths


def _merge_runs(spill: _Spill, lengths, pool, depth: int) -> int:
    """Pass 2: the sorted distinct ids of all runs into the `ids` spill file; returns their number."""
    total = int(sum(lengths))
    if total == 0:
        return 0
    table = np.memmap(spill.paths["runs"], np.int64, "r", shape=(total,))
    bounds = np.concatenate(([0], np.cumsum(lengths)))
    runs = [table[bounds[k]:bounds[k + 1]] for k in range(len(lengths))]
    parts = -(-total // RANGE_IDS)
    stride = max(1, total // (64 * parts))
    sample = np.sort(np.concatenate([run[::stride] for run in runs]))
    splitters = np.unique(sample[(np.arange(1, parts) * len(sample)) // parts])
    cuts = [np.concatenate(([0], np.searchsorted(run, splitters), [len(run)])) for run in runs]
    ranges = ([run[cut[r]:cut[r + 1]] for run, cut in zip(runs, cuts)] for r in range(len(splitters) + 1))
    n = 0
    for ids in _ordered(pool, sorted_unique, ranges, depth):
        spill.files["ids"].write(memoryview(ids))
        n += len(ids)
    spill.files["ids"].flush()
    del table, runs
    return n


def _lookup(table: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Positions of keys in the sorted table. The keys are searched in sorted order, which keeps the
    binary searches in cache (NumPy reuses the previous result as a bound): over ten times faster
    than searching them in file order."""
    flat = np.asarray(keys).ravel()
    order = np.argsort(flat)
    found = np.empty(len(flat), np.int64)
    found[order] = np.searchsorted(table, flat[order])
    return found.reshape(np.shape(keys))


def _map_edges(spill: _Spill, n_edges: int, n_ids: int, pool, depth: int, streams, progress):
    """Pass 3: the spilled edges as dense ids, appended to the src and dst streams."""
    ids = np.memmap(spill.paths["ids"], np.int64, "r", shape=(n_ids,))
    edges = np.memmap(spill.paths["edges"], np.int64, "r", shape=(n_edges, 2))
    chunks = (edges[k:k + MAP_EDGES] for k in range(0, n_edges, MAP_EDGES))
    done = 0
    for dense in _ordered(pool, lambda chunk: _lookup(ids, chunk), chunks, depth):
        streams[0].append(dense[:, 0])
        streams[1].append(dense[:, 1])
        done += len(dense)
        progress.update(done)


def _open_input(path: str):
    """(the file, the stream of its bytes: decompressed when it is named .gz or starts as gzip data)."""
    raw = open(path, "rb")
    gzipped = path.lower().endswith(".gz") or raw.peek(2)[:2] == GZIP_MAGIC
    return raw, gzip.GzipFile(fileobj=raw, mode="rb") if gzipped else raw


def _renumbers(args) -> bool:
    fmt = args.format or detect_format(args.input)
    return args.ids == "renumber" or (args.ids == "auto" and fmt == "snap")


def _input_problem(args) -> str | None:
    problem = outputs.check_input("INPUT", args.input)
    if problem:
        return problem
    compression = unread_compression(args.input)
    if compression:
        return (f"{args.input} is {compression}-compressed, which convert does not read: decompress it first "
                "(or compress it with gzip, which convert reads as it is)")
    if args.format is None and detect_format(args.input) is None:
        return (f"cannot tell the format of {args.input} from its extension; give --format "
                f"({'|'.join(FORMATS)})")
    if args.threads < 1:
        return f"--threads must be >= 1, got {args.threads}"
    if args.n_vertices is not None and (args.n_vertices < 1 or _renumbers(args)):
        return "--n-vertices needs kept ids (--ids keep) and a positive count"
    return None


def _sparse_ids_warning(path: str, fmt: str, n: int, n_edges: int) -> str | None:
    """Kept ids that leave almost every vertex without an edge (at most 2 per edge can have one): a
    wrong --format, or sparse ids that --ids renumber would store densely."""
    if n <= SPARSE_IDS_MIN or n <= SPARSE_IDS_FACTOR * 2 * n_edges:
        return None
    return (f"{path}: the largest id gives {n} vertices for {runtime.count(n_edges, 'edge')}, so at least "
            f"{n - 2 * n_edges} have no edge (is --format {fmt} right? --ids renumber keeps only the ids "
            "that occur)")


def _failure(e: OSError, args) -> str:
    """One line for an OSError while reading the input or writing the output and its temporaries."""
    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        reason = f"no space left on the file system of {os.path.dirname(os.path.abspath(args.out))}"
    else:
        reason = e.strerror or str(e)
    return (f"converting {args.input} to {args.out} failed: {reason} (the output and the temporary files, "
            "about 16 bytes per edge, are written beside it; nothing was left)")


def _check_nonempty(path: str, n_vertices: int) -> None:
    if n_vertices < 1:
        raise DbfsError(f"{path}: no edges found: nothing to convert", collective=True)


def convert(args) -> dict:
    """Convert on this process (see the module docstring); returns the figures for the report."""
    problem = _input_problem(args)
    if problem:
        raise DbfsError(problem, collective=True)
    fmt = args.format or detect_format(args.input)
    refuse_inapplicable(args, [("--extra-columns", fmt == "snap", "to snap edge lists")])
    out = outputs.final_path(args.out) if args.out else args.out   # '' names no file, not the folder
    outputs.check([outputs.Target("--out", out, args.force), outputs.Target("--json", args.json)],
                  inputs=[("INPUT", args.input)], comm=MPI.COMM_SELF)
    if args.json == outputs.STDOUT:
        runtime.take_stdout()
    started = time.perf_counter()
    raw, stream = _open_input(args.input)
    tmp, spill = edgelist.temporary_name(out), None
    size = os.path.getsize(args.input)
    try:
        reader = (READERS[fmt](args.input, stream, extra_columns=args.extra_columns == "ignore") if fmt == "snap"
                  else READERS[fmt](args.input, stream))
        if not reader.binary:
            if stream.peek(3)[:3] == UTF8_BOM:      # a text file's UTF-8 byte-order mark
                stream.read(3)
            reader.check_line_ends(stream.peek(1))      # what is buffered: a few KiB
        if reader.binary and stream is raw:
            reader.check_size(size)
        reader.read_header()
        if args.n_vertices is not None and reader.n_vertices is not None:
            raise DbfsError(f"--n-vertices {args.n_vertices}: the header of {args.input} says "
                            f"{reader.n_vertices} vertices", collective=True)
        renumber = _renumbers(args)
        directed = reader.directed and not args.undirected
        depth = args.threads + 2
        timings = {}
        with ThreadPoolExecutor(args.threads) as pool, h5py.File(tmp, "w") as f:
            streams = tuple(edgelist.ChunkStream(f, name, pool, in_flight=depth) for name in ("src", "dst"))
            reading = Progress("convert: reading", size, "MB", 1e6)

            def parsed_edges():
                for parsed in _ordered(pool, reader.parse_safely, reader.blocks(), depth):
                    yield reader.accept(parsed)
                    reading.update(raw.tell())
                reader.finish()
                reading.close()

            if renumber:
                spill = _Spill(out)
                spill.open()
                lengths = _read_runs(parsed_edges(), pool, spill, depth)
                timings["parse_seconds"] = time.perf_counter() - started
                n_edges = reader.edges
                n = _merge_runs(spill, lengths, pool, depth)
                _check_nonempty(args.input, n)
                timings["merge_seconds"] = time.perf_counter() - started - timings["parse_seconds"]
                mapping = Progress("convert: renumbering", n_edges, "M edges", 1e6)
                _map_edges(spill, n_edges, n, pool, depth, streams, mapping)
                mapping.close()
                ids = edgelist.ChunkStream(f, edgelist.IDS_DATASET, pool, in_flight=depth)
                table = np.memmap(spill.paths["ids"], np.int64, "r", shape=(n,))
                for k in range(0, n, edgelist.CHUNK_ELEMS):
                    ids.append(table[k:k + edgelist.CHUNK_ELEMS] + reader.id_base)
                ids.close()
                del table
            else:
                top = -1
                for src, dst in parsed_edges():
                    if len(src):
                        top = max(top, int(src.max()), int(dst.max()))
                    streams[0].append(src)
                    streams[1].append(dst)
                n_edges = reader.edges
                n = reader.n_vertices if reader.n_vertices is not None else top + 1
                if n > edgelist.MAX_ID:
                    raise DbfsError(f"{args.input}: the id {top} gives {n} vertices, past the 2^63 - 1 a graph "
                                    "file holds (--ids renumber stores only the ids that occur)", collective=True)
                if args.n_vertices is not None:
                    if top >= args.n_vertices:
                        raise DbfsError(f"--n-vertices {args.n_vertices}: {args.input} has vertex id {top}",
                                        collective=True)
                    n = args.n_vertices
                _check_nonempty(args.input, n)
                warning = _sparse_ids_warning(args.input, fmt, n, n_edges)
                if warning:
                    runtime.warn(warning)
            digests = streams[0].close() + streams[1].close()
            f.attrs.update({
                "n_vertices": n, "n_edges": n_edges, "directed": directed,
                "id_base": 0 if renumber else reader.id_base, "id_mapping": renumber,
                "source_format": fmt, "source_file": os.path.basename(args.input),
                "content_hash": edgelist.content_hash(n, n_edges, digests)})
        os.replace(tmp, out)
    except (EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise DbfsError(f"{args.input}: corrupt or truncated gzip data ({e})", collective=True) from None
    except OSError as e:
        raise DbfsError(_failure(e, args), collective=True) from None
    finally:
        raw.close()
        if spill is not None:
            spill.close()
        edgelist.remove_quietly(tmp)
    seconds = time.perf_counter() - started
    return {"input": args.input, "format": fmt, "output": args.out, "n_vertices": n, "n_edges": n_edges,
            "directed": directed, "renumbered": renumber, "input_bytes": size, "seconds": seconds,
            "edges_per_s": n_edges / seconds if seconds > 0 else 0.0,
            "input_mb_per_s": size / 1e6 / seconds if seconds > 0 else 0.0,
            "output_bytes": os.path.getsize(out), "threads": args.threads, **timings}


def main(args) -> int:
    world = runtime.WORLD
    figures, error = None, None
    if world.Get_rank() == 0:
        try:
            figures = convert(args)
        except DbfsError as e:
            error = str(e)
    runtime.agree(error)
    if world.Get_rank() == 0:
        runtime.out(f"{args.out}: {runtime.count(figures['n_vertices'], 'vertex', 'vertices')}, "
                    f"{runtime.count(figures['n_edges'], 'edge')} "
                    f"({'directed' if figures['directed'] else 'undirected'}"
                    f"{', ids renumbered' if figures['renumbered'] else ''}) from {args.input} "
                    f"({figures['format']}) in {figures['seconds']:.2f} s: "
                    f"{runtime.figure(figures['edges_per_s'] / 1e6)} M edges/s, "
                    f"{runtime.figure(figures['input_mb_per_s'])} MB/s")
        if args.json:
            write_json_atomically(args.json, {**provenance(), **figures})
    return 0
