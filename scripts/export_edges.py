"""Write a graph file of the HDF5 graph store (dbfs.edgelist layout: `generate`, `convert`) as a plain
text edge list, one line "u<TAB>v" per stored tuple, in the dense ids dbfs searches (for a generated
lattice or Kronecker graph, the file's own ids), so that another BFS code reads exactly the same edges.
For the GAP Benchmark Suite:

    python scripts/export_edges.py lattice.h5 lattice.el
    bfs -f lattice.el -s -n 16            # gapbs: the .el suffix, -s symmetrizes (undirected files)

Leave out -s for a directed file (its tuples are u -> v). gapbs's default NodeID is 32-bit: ids must
stay below 2^31 (a note on stderr says when they do not). gapbs takes the largest id + 1 as its vertex
count, so trailing isolated vertices are not counted there; the edges are the same.

Method: the tuples are read in chunks with the graph store's slice reader; a thread pool formats the
chunks (make_edge_files.snap_text: all digits of a chunk at once with NumPy, one pass per digit
position, no Python loop per edge) and they are written in order. The output goes to a temporary file
beside the target, renamed into place at the end: an error or an interruption leaves nothing behind.
Bad input is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from mpi4py import MPI

from dbfs import edgelist, outputs
from dbfs.errors import DbfsError
from make_edge_files import snap_text

CHUNK_EDGES = 1 << 20
PROGRESS_AFTER_S = 2.0
GAPBS_MAX_ID = 2**31 - 1


def export(path: str, out: str, force: bool = False, threads: int = 1, chunk_edges: int = CHUNK_EDGES) -> int:
    """Write the edge list of graph file `path` to `out` as text; returns the number of lines."""
    info = edgelist.graph_info(path)
    outputs.check([outputs.Target("OUT.el", out, force)], [("GRAPH.h5", path)], comm=MPI.COMM_SELF)
    if info.n_vertices - 1 > GAPBS_MAX_ID:
        print(f"export_edges: note: ids reach {info.n_vertices - 1}, beyond gapbs's 32-bit NodeID",
              file=sys.stderr)
    m = info.n_edges
    started = time.perf_counter()
    tmp = edgelist.temporary_name(out)
    try:
        with open(tmp, "wb") as f, ThreadPoolExecutor(threads) as pool:
            batch = chunk_edges * threads
            for lo in range(0, m, batch):
                chunks = [edgelist.read_edge_slice(path, a, min(a + chunk_edges, m), threads)[:2]
                          for a in range(lo, min(lo + batch, m), chunk_edges)]
                for text in pool.map(lambda edges: snap_text(*edges), chunks):
                    f.write(text)
                seconds = time.perf_counter() - started
                if seconds > PROGRESS_AFTER_S:
                    done = min(lo + batch, m)
                    print(f"export_edges: {done / m:.0%} ({done / seconds / 1e6:.1f} M edges/s)",
                          file=sys.stderr, flush=True)
        os.replace(tmp, out)
    except BaseException:
        edgelist.remove_quietly(tmp)
        raise
    return m


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("graph", metavar="GRAPH.h5", help="graph file (dbfs graph store)")
    p.add_argument("out", metavar="OUT.el", help="text edge list to write")
    p.add_argument("--force", action="store_true", help="replace OUT.el if it exists")
    p.add_argument("--threads", type=int, default=edgelist.io_threads(),
                   help="formatting and reading threads")
    p.add_argument("--chunk-edges", type=int, default=CHUNK_EDGES, help="edges formatted at once")
    args = p.parse_args(argv)
    if args.threads < 1 or args.chunk_edges < 1:
        p.error("--threads and --chunk-edges must be at least 1")
    started = time.perf_counter()
    try:
        lines = export(args.graph, args.out, args.force, args.threads, args.chunk_edges)
    except DbfsError as e:
        print(f"export_edges: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"export_edges: error: cannot write {args.out}: {e.strerror or e}", file=sys.stderr)
        return 1
    print(f"{args.out}: {lines} edges in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
