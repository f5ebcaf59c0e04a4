"""`python -m dbfs generate`: write the Graph500 Kronecker edge list of a SCALE to an HDF5 file.

Every rank generates its balanced share of the edges (graph500.generator, on the GPU when the backend
has one) chunk by chunk and writes it in place into the shared file (dbfs.edgelist); the result is
identical for any number of ranks and to the reference generator 3.0.0 with the same seeds.
`--lattice` writes a 2D or 3D lattice instead (dbfs.families).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time

import numpy as np

from dbfs import edgelist, families, outputs, runtime
from dbfs.backend import select
from dbfs.options import parse_seed, refuse_inapplicable
from dbfs.progress import Progress
from graph500.generator import (DEFAULT_SEED, GENERATOR_NAME, MAX_SCALE, check_parameters, edge_count,
                                generate_edges)

GPU_CHUNK_EDGES = 1 << 25          # 640 MiB of device arrays with weights
CPU_CHUNK_EDGES = 1 << 20


def add_arguments(parser: argparse.ArgumentParser) -> None:
    graph = parser.add_mutually_exclusive_group(required=True)
    graph.add_argument("--scale", type=int, help=f"log2 of the number of vertices (1..{MAX_SCALE})")
    families.add_arguments(parser, graph)
    parser.add_argument("--edgefactor", type=int, default=16,
                        help="edges per vertex: the file holds edgefactor * 2^scale tuples (default: 16)")
    parser.add_argument("--seed", default=",".join(map(str, DEFAULT_SEED)),
                        help="the two unsigned 64-bit generator seeds A,B (default: the reference's 2,3)")
    parser.add_argument("--weights", action="store_true",
                        help="also write the float32 SSSP weight of every edge")
    parser.add_argument("--out", required=True, metavar="FILE.h5", help="output HDF5 file")
    parser.add_argument("--force", action="store_true", help="replace FILE.h5 if it exists")
    parser.add_argument("--backend", choices=("auto", "gpu", "cpu"), default="auto",
                        help="generate on the GPU (auto: when every rank has one) or with NumPy")


def main(args: argparse.Namespace) -> int:
    seed = parse_seed(args.seed)
    refuse_inapplicable(args, [("--edgefactor", args.lattice is None, "to --scale graphs, not to --lattice")])
    if args.lattice is not None:
        return families.generate_lattice(args, seed)
    families.reject_lattice_options(args)
    check_parameters(args.scale, args.edgefactor, seed)
    n_edges = edge_count(args.scale, args.edgefactor)
    outputs.check([outputs.Target("--out", args.out, args.force)])
    backend = select(args.backend)
    nranks = runtime.size()
    runtime.log(f"generate: SCALE {args.scale}, edgefactor {args.edgefactor}, seed {seed[0]},{seed[1]}: "
                f"{n_edges} edges{' with weights' if args.weights else ''} on {nranks} rank"
                f"{'s' if nranks > 1 else ''} ({backend.describe()}) -> {args.out}")
    progress = Progress("generate", -(-n_edges // nranks), "M edges (rank 0)")

    def produce(lo: int, hi: int):
        arrays = generate_edges(args.scale, args.edgefactor, lo, hi, seed, weights=args.weights,
                                xp=backend.xp)
        arrays = tuple(backend.asnumpy(a) for a in arrays)
        progress.advance(hi - lo)
        return arrays

    params = {"generator": GENERATOR_NAME, "scale": args.scale, "edgefactor": args.edgefactor, "seed": list(seed)}
    # the content hash of a generated graph: a digest of the parameters, which determine every edge
    digest = hashlib.blake2b(json.dumps(params, sort_keys=True).encode(), digest_size=20).hexdigest()
    attrs = {"scale": args.scale, "edgefactor": args.edgefactor, "seed": np.array(seed, np.uint64),
             "n_vertices": 1 << args.scale, "n_edges": n_edges, "directed": False, "content_hash": digest,
             "generator": GENERATOR_NAME}
    started = time.perf_counter()
    edgelist.write_edge_list(args.out, n_edges, attrs, produce, runtime.WORLD, force=args.force,
                             weights=args.weights,
                             chunk_edges=GPU_CHUNK_EDGES if backend.is_gpu else CPU_CHUNK_EDGES)
    seconds = time.perf_counter() - started
    runtime.log(f"generate: wrote {n_edges} edges in {seconds:.2f} s")
    runtime.out(f"{args.out}: SCALE {args.scale}, edgefactor {args.edgefactor}, {n_edges} edges"
                f"{', weights' if args.weights else ''}")
    return 0
