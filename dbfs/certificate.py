"""Construction certificate (issue 16; design.md "Validation"): once per run, after construction, proof
that the distributed CSC blocks hold exactly the input tuples, so that a construction bug cannot hide
behind a validator that reads the same CSC.

Method: a keyed multiset hash (dbfs.ops.certificate: entry count and two independent keyed 64-bit mixes
of (global u, global v) summed modulo 2^64, 128 bits of hash) of the entries the tuples stand for
(self-loops aside; both directions of an undirected tuple, one for a directed graph; duplicates kept) is
compared with the same hash of every rank's CSC entries, whose global ids come from dbfs.grid.Grid's
local-to-global maps of the block's columns and rows (global_col_segments, global_row_segments), applied
per entry: no table as long as the block's ranges. The four keys are drawn after construction
(os.urandom on rank 0, broadcast), so no construction step can be tuned to them; the tuples stream again
from the source in chunks (generated or read, as in the build). Sums are independent of the order of the
entries and of their distribution, hence of the ranks and the grid: each rank hashes its own share of
the tuples and its own block, and one allgather adds them up. A dropped, altered or added entry, or two
duplicates merged into one, changes the count or a sum (for an altered entry: with probability
1 - 2^-128 over the keys).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import numpy as np
from mpi4py import MPI

from dbfs import memory
from dbfs.ops.certificate import hash_entries, hash_tuples
from dbfs.progress import Progress

MASK64 = (1 << 64) - 1


@dataclass(frozen=True)
class Certificate:
    passed: bool              # identical on every rank
    time: float               # seconds, slowest rank (tuples produced again, both hashes, the sums)
    tuples: int               # input tuples hashed (the whole graph)
    message: str | None       # what differs, when not passed

    def as_json(self) -> dict:
        return {"passed": self.passed, "time": self.time, "tuples": self.tuples}


def draw_keys(comm) -> tuple[int, int, int, int]:
    """Collective: four 64-bit keys from os.urandom on rank 0."""
    keys = tuple(int.from_bytes(os.urandom(8), "little") for _ in range(4)) if comm.Get_rank() == 0 else None
    return comm.bcast(keys, root=0)


def tuple_sums(source, backend, comm, keys, chunk_edges: int) -> np.ndarray:
    """Collective: the hash (count, first sum, second sum; uint64) of this rank's share of the tuples."""
    acc = backend.xp.zeros(3, backend.xp.uint64)
    progress = Progress("certificate, hashing the input tuples", source.chunk_rounds(comm, chunk_edges),
                        "chunks", 1)
    for src, dst in source.tuple_chunks(backend, comm, chunk_edges):
        hash_tuples(backend, src, dst, source.symmetric, keys, acc)
        del src, dst
        progress.advance(1)
    progress.close()
    return backend.asnumpy(acc)


def entry_sums(graph, keys) -> np.ndarray:
    """The hash (count, first sum, second sum; uint64) of this rank's CSC entries (its column offsets held
    by position or not)."""
    grid = graph.grid
    acc = graph.backend.xp.zeros(3, graph.backend.xp.uint64)
    hash_entries(graph.backend, graph.col_ptr, graph.row_idx, grid.global_col_segments(graph.j),
                 grid.global_row_segments(graph.i), keys, acc, graph.columns)
    return graph.backend.asnumpy(acc)


def total(local: np.ndarray, comm) -> tuple[int, int, int]:
    """Collective: every rank's (count, first sum, second sum) added up modulo 2^64."""
    return tuple(sum(column) & MASK64 for column in zip(*comm.allgather([int(x) for x in local])))


def certify(graph, source, chunk_edges: int | None = None, keys=None) -> Certificate:
    """Collective over graph.comms.world: does the CSC hold exactly the entries of source's tuples?
    `source` streams the tuples the graph was built from (GraphSource or EdgeArrays); keys default to
    fresh random ones (draw_keys)."""
    comm, backend, grid = graph.comms.world, graph.backend, graph.grid
    if chunk_edges is None:
        chunk_edges = memory.chunk_edges(grid, source.n_edges, source.symmetric, False, backend.name)
    comm.Barrier()
    started = time.perf_counter()
    keys = draw_keys(comm) if keys is None else keys
    expected = total(tuple_sums(source, backend, comm, keys, chunk_edges), comm)
    found = total(entry_sums(graph, keys), comm)
    seconds = comm.allreduce(time.perf_counter() - started, op=MPI.MAX)
    message = None
    if expected[0] != found[0]:
        message = (f"the CSC does not hold the input tuples: they stand for {expected[0]} entries, the "
                   f"CSC blocks hold {found[0]}")
    elif expected != found:
        message = (f"the CSC does not hold the input tuples: {found[0]} entries as expected, but their "
                   f"keyed hash differs (an entry altered)")
    return Certificate(message is None, seconds, source.n_edges, message)
