"""Write the Graph500 Kronecker graph of a SCALE as input files for `dbfs convert` benchmarks:
a Graph500 binary edge file (int64 pairs) and/or a SNAP text edge list, with timings as JSON.

    python scripts/make_edge_files.py --scale 23 --g500 g.g500 --snap g.txt --json make.json

The edges come from graph500.generator (on the GPU when there is one) in chunks. In the SNAP file vertex
v is written as SNAP_ID_SCALE * v + SNAP_ID_OFFSET, sparse ids above 2^32, so that converting it
exercises 64-bit id renumbering; its header says the graph is directed (convert reads it so). Text is
formatted with NumPy, all digits of a chunk at once (one pass per digit position), by a thread pool.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import socket
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from dbfs import edgelist, outputs
from dbfs.backend import select
from dbfs.json_output import write_json_atomically
from graph500.generator import edge_count, generate_edges

SNAP_ID_SCALE = 1_000_003
SNAP_ID_OFFSET = 1 << 32
CHUNK_EDGES = 1 << 22
_POWERS = 10 ** np.arange(1, 19, dtype=np.int64)


def snap_text(src: np.ndarray, dst: np.ndarray) -> bytes:
    """Lines 'src<TAB>dst<LF>' of non-negative int64 ids."""
    values = np.stack((src, dst), axis=1).ravel()
    digits = np.searchsorted(_POWERS, values, side="right") + 1
    ends = np.cumsum(digits + 1)
    out = np.empty(int(ends[-1]) if len(ends) else 0, np.uint8)
    out[ends[0::2] - 1] = ord("\t")
    out[ends[1::2] - 1] = ord("\n")
    rest, last = values.copy(), ends - 2
    shortest = int(digits.min()) if len(digits) else 0
    for k in range(shortest):                      # digit positions every value has
        rest, digit = np.divmod(rest, 10)
        out[last - k] = digit + 48
    for k in range(shortest, int(digits.max()) if len(digits) else 0):
        live = np.flatnonzero(digits > k)
        rest[live], digit = np.divmod(rest[live], 10)
        out[last[live] - k] = digit + 48
    return out.tobytes()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--scale", type=int, required=True)
    p.add_argument("--edgefactor", type=int, default=16)
    p.add_argument("--g500", metavar="FILE", help="Graph500 binary edge file to write")
    p.add_argument("--snap", metavar="FILE", help="SNAP text edge list to write")
    p.add_argument("--backend", choices=("auto", "gpu", "cpu"), default="auto")
    p.add_argument("--threads", type=int, default=min(16, os.cpu_count() or 1))
    p.add_argument("--json", metavar="FILE", help="write the timings as JSON (- for stdout)")
    p.add_argument("--force", action="store_true", help="replace the --g500 and --snap files if they exist")
    args = p.parse_args()
    outputs.check_or_exit("make_edge_files.py", [outputs.Target("--g500", args.g500, args.force),
                                                 outputs.Target("--snap", args.snap, args.force),
                                                 outputs.Target("--json", args.json)])
    backend = select(args.backend)
    m = edge_count(args.scale, args.edgefactor)
    seconds = {"generate": 0.0, "g500": 0.0, "snap": 0.0}
    started = time.perf_counter()
    targets = {k: path for k, path in (("g500", args.g500), ("snap", args.snap)) if path}
    temporary = {k: edgelist.temporary_name(path) for k, path in targets.items()}
    files = {k: open(path, "wb") for k, path in temporary.items()}
    try:
        write(args, backend, m, files, seconds)
    except BaseException:
        for k, f in files.items():
            f.close()
            edgelist.remove_quietly(temporary[k])
        raise
    for k, f in files.items():
        f.close()
        os.replace(temporary[k], targets[k])
    doc = {"date": datetime.datetime.now().isoformat(timespec="seconds"), "host": socket.gethostname(),
           "command": " ".join(sys.argv), "scale": args.scale, "edgefactor": args.edgefactor, "edges": m,
           "backend": backend.name, "seconds": time.perf_counter() - started, "phases": seconds,
           "bytes": {k: os.path.getsize(path) for k, path in targets.items()}}
    print(json.dumps(doc))
    if args.json:
        write_json_atomically(args.json, doc)
    return 0


def write(args, backend, m: int, files: dict, seconds: dict) -> None:
    """Generate the edges chunk by chunk and write them to the open files (g500 and/or snap)."""
    with ThreadPoolExecutor(args.threads) as pool:
        for lo in range(0, m, CHUNK_EDGES * args.threads):
            t0 = time.perf_counter()
            parts = []
            for start in range(lo, min(m, lo + CHUNK_EDGES * args.threads), CHUNK_EDGES):
                src, dst = generate_edges(args.scale, args.edgefactor, start, min(m, start + CHUNK_EDGES),
                                          xp=backend.xp)[:2]
                parts.append((backend.asnumpy(src), backend.asnumpy(dst)))
            seconds["generate"] += time.perf_counter() - t0
            if "g500" in files:
                t0 = time.perf_counter()
                for src, dst in parts:
                    files["g500"].write(memoryview(np.stack((src, dst), axis=1).astype("<i8")))
                seconds["g500"] += time.perf_counter() - t0
            if "snap" in files:
                t0 = time.perf_counter()
                texts = pool.map(lambda sd: snap_text(sd[0] * SNAP_ID_SCALE + SNAP_ID_OFFSET,
                                                      sd[1] * SNAP_ID_SCALE + SNAP_ID_OFFSET), parts)
                if lo == 0:
                    files["snap"].write(f"# Directed graph: Graph500 SCALE {args.scale}, edgefactor "
                                        f"{args.edgefactor}, vertex v written as {SNAP_ID_SCALE} * v + "
                                        f"{SNAP_ID_OFFSET}\n# FromNodeId\tToNodeId\n".encode())
                for text in texts:
                    files["snap"].write(text)
                seconds["snap"] += time.perf_counter() - t0
            print(f"[make_edge_files] {min(m, lo + CHUNK_EDGES * args.threads) / m:.0%}", file=sys.stderr,
                  flush=True)


if __name__ == "__main__":
    sys.exit(main())
