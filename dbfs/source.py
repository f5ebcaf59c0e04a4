"""The graph of a main-mode run: a graph file (--graph, dbfs.edgelist layout) or the Graph500
generator (--scale). Knows the sizes before any edge is read (for the memory estimate and the partition
cache), streams this rank's balanced slice of the tuples (graph500.generator.edge_range) in chunks as
often as asked (the generator is deterministic by edge index, a file is read again), and translates
between the file's original vertex ids and the dense ids the search uses (--root, reports).
EdgeArrays offers the same streaming over tuples already in memory (tests, scripts).

Directed files are stored one way (u -> v) and traversed along out-edges unless --undirected asks
for both directions; generated graphs and undirected files are always stored both ways.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np
from mpi4py import MPI

from dbfs import edgelist, runtime
from dbfs.errors import DbfsError
from graph500.generator import GENERATOR_NAME, edge_range, generate_edges


def rank_io_threads() -> int:
    """Collective: reader threads for this rank: its CPUs when the launcher bound it to a subset,
    else the node's CPUs shared among the node's ranks."""
    per_node = runtime.local_rank()[1]
    bound = edgelist.usable_cpus() < (os.cpu_count() or 1)
    return edgelist.io_threads(1 if bound else per_node)


@dataclass
class GraphSource:
    n_vertices: int
    n_edges: int
    scale: int
    edgefactor: int
    symmetric: bool                        # store both directions of every tuple
    info: edgelist.GraphInfo | None        # None for a generated graph
    seed: tuple

    @classmethod
    def from_args(cls, args) -> "GraphSource":
        """Collective: the run's graph; DbfsError on every rank when the file is unusable."""
        if args.graph is None:
            n = 1 << args.scale
            return cls(n, args.edgefactor << args.scale, args.scale, args.edgefactor, True, None,
                       tuple(args.seed_pair))
        info, error = None, None
        try:
            info = edgelist.graph_info(args.graph)
        except DbfsError as e:
            error = str(e)
        runtime.agree(error)
        if args.undirected and not info.directed:
            raise DbfsError(f"--undirected applies to a directed --graph file; {args.graph} is undirected already",
                            collective=True)
        n, m = info.n_vertices, info.n_edges
        scale = int(info.attrs.get("scale", int(np.ceil(np.log2(max(n, 2))))))
        edgefactor = int(info.attrs.get("edgefactor", (2 * m + n) // (2 * n)))     # tuples / vertices, half up
        seed = tuple(args.seed_pair)
        if "seed" in info.attrs and "seed" not in getattr(args, "given", ()):   # `generate`'s: the same roots
            seed = tuple(int(s) for s in info.attrs["seed"])
        return cls(n, m, scale, edgefactor, not info.directed or args.undirected, info, seed)

    @property
    def sizes_derived(self) -> bool:
        """SCALE and edgefactor were derived from the file's sizes (it is no Graph500 graph of a scale)."""
        return self.info is not None and "scale" not in self.info.attrs

    @property
    def describe(self) -> str:
        if self.info is None:
            return f"Graph500 SCALE {self.scale}, edgefactor {self.edgefactor}"
        kind = "directed, traversed along out-edges" if not self.symmetric else (
            "directed, traversed both ways (--undirected)" if self.info.directed else "undirected")
        return f"{self.info.path} ({kind})"

    def chunk_rounds(self, comm, chunk_edges: int) -> int:
        """How many chunks tuple_chunks yields on every rank: the largest share in chunks."""
        largest_share = -(-self.n_edges // comm.Get_size())
        return max(1, -(-largest_share // chunk_edges))

    def tuple_chunks(self, backend, comm, chunk_edges: int):
        """Collective generator: this rank's balanced slice of the tuples as (src, dst) int64 arrays on
        the backend's device, at most chunk_edges at a time, chunk_rounds() chunks on every rank (the
        last ones may be empty). Generated tuples are made chunk by chunk on the device; a file's are
        read by edgelist.read_edge_slice (host memory: 16 bytes a tuple of the chunk, plus the weights
        when the file has them) and checked to lie in [0, n) before they are copied to the device
        (DbfsError on the rank that read them otherwise)."""
        lo, hi = edge_range(self.n_edges, comm.Get_rank(), comm.Get_size())
        threads = rank_io_threads() if self.info is not None else None
        for k in range(self.chunk_rounds(comm, chunk_edges)):
            a = min(lo + k * chunk_edges, hi)
            b = min(a + chunk_edges, hi)
            if self.info is None:
                yield generate_edges(self.scale, self.edgefactor, a, b, seed=self.seed, xp=backend.xp)[:2]
            elif a == b:
                yield backend.xp.empty(0, backend.xp.int64), backend.xp.empty(0, backend.xp.int64)
            else:
                src, dst = edgelist.read_edge_slice(self.info.path, a, b, threads)[:2]
                check_endpoints(src, dst, self.n_vertices, self.info.path, self.info.unsigned)
                yield backend.asarray(src), backend.asarray(dst)
                del src, dst                    # else held while the next chunk is read (the reader's peak)

    def dense_root(self, root: int, comm=runtime.WORLD) -> int:
        """Collective: the dense id of a --root given in the file's ids; DbfsError when it is no vertex."""
        if self.info is None:
            if not 0 <= root < self.n_vertices:
                raise DbfsError(f"--root {root} is not a vertex (0..{self.n_vertices - 1})", collective=True)
            return root
        dense = self.info.dense_id(root) if comm.Get_rank() == 0 else None
        dense = comm.bcast(dense, root=0)
        if dense is None:
            raise DbfsError(f"--root {root} is not a vertex of {self.info.path}", collective=True)
        return dense

    def original_ids(self, dense: np.ndarray) -> list[int]:
        """Original ids of a few dense ids (e.g. the roots), read by this rank."""
        if self.info is None or not self.info.has_ids:
            return [int(v) + (self.info.id_base if self.info else 0) for v in dense]
        return [int(self.info.original_ids(int(v), int(v) + 1)[0]) for v in dense]

    def content_key(self) -> str:
        """What the graph's content depends on (the partition cache's key; read by the calling rank).

        A converted file's content_hash attribute (a digest of the data written); for a generated
        graph (--scale, or a `generate` file) the generator parameters, which determine the data;
        otherwise a digest of the attributes, dataset shapes and sampled stretches of src and dst."""
        attrs = {} if self.info is None else self.info.attrs
        if "content_hash" in attrs:
            return f"hash:{attrs['content_hash']}"
        if self.info is None or "generator" in attrs:
            params = {"generator": attrs.get("generator", GENERATOR_NAME), "scale": self.scale,
                      "edgefactor": self.edgefactor,
                      "seed": list(attrs["seed"]) if "seed" in attrs else list(self.seed),
                      "n_vertices": self.n_vertices, "n_edges": self.n_edges}
            return "generated:" + json.dumps(params, sort_keys=True)
        return "sampled:" + edgelist.sampled_digest(self.info)

    def file_stamp(self) -> list | None:
        """(size, modification time in ns) of the graph file: a file rewritten in place is stale."""
        if self.info is None:
            return None
        st = os.stat(self.info.path)
        return [st.st_size, st.st_mtime_ns]


def check_endpoints(src, dst, n_vertices: int, where: str, unsigned: bool = False) -> None:
    """DbfsError (on the calling rank) when a tuple's endpoint lies outside [0, n_vertices); unsigned:
    the tuples were read from uint64 as int64, so a negative one stands for itself plus 2^64."""
    if src.shape[0] == 0:
        return
    low, high = int(min(src.min(), dst.min())), int(max(src.max(), dst.max()))
    if low < 0 or high >= n_vertices:
        endpoint = high if low >= 0 else low + 2**64 if unsigned else low
        raise DbfsError(f"{where}: edge endpoint {endpoint} is outside [0, {n_vertices})")


@dataclass
class EdgeArrays:
    """Tuples already in memory (host or device arrays), every rank holding its own share (any split
    among the ranks), streamed like a GraphSource: the builder's input in tests and scripts."""

    src: object
    dst: object
    n_vertices: int
    n_edges: int
    symmetric: bool
    info = None

    @classmethod
    def create(cls, src, dst, n_vertices: int, symmetric: bool = True, comm=runtime.WORLD) -> "EdgeArrays":
        """Collective: n_edges is the sum of the ranks' shares."""
        return cls(src, dst, n_vertices, comm.allreduce(len(src)), symmetric)

    def chunk_rounds(self, comm, chunk_edges: int) -> int:
        """Collective: the chunks of the largest share."""
        return max(1, comm.allreduce(-(-len(self.src) // chunk_edges), op=MPI.MAX))

    def tuple_chunks(self, backend, comm, chunk_edges: int):
        """Collective generator, as GraphSource.tuple_chunks, over this rank's arrays."""
        xp = backend.xp
        for k in range(self.chunk_rounds(comm, chunk_edges)):
            src = self.src[k * chunk_edges:(k + 1) * chunk_edges]
            dst = self.dst[k * chunk_edges:(k + 1) * chunk_edges]
            check_endpoints(src, dst, self.n_vertices, "edge list")
            yield backend.asarray(src, xp.int64), backend.asarray(dst, xp.int64)
