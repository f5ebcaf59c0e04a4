"""Compilation before any clock starts (issue 17, "honest timing"): warm_up(backend) compiles every
CUDA module of the main mode and warms the generic CuPy kernels the streaming build and the
certificate launch, so that construction_time holds the construction alone.

Method: every kernels/*.cu module (dbfs.kernels.names(); the ws mode's *.cuh headers are that mode's),
for both widths of a graph's offsets where it reads them (dbfs.kernels.OFFSET_BITS), is compiled by
NVRTC into the process's module cache (CuPy also keeps the binaries on disk, so a
machine that compiled them once loads them); new kernel files are picked up without a list here.
Then the real build and certificate run on a tiny generated graph on this process alone (a 1x1 grid
over MPI.COMM_SELF, undirected and directed, with the row-major copy; counting in int32, as the tiny
graph's build does, and in int64, as a graph of 2^31 entries and more does, its narrowing at the end
included), and the owner routing of several
ranks runs on a tiny chunk, launching every generic CuPy kernel those paths use (elementwise ownership
math cast into int32 parts, copyto with a mask, the scan of the Positions' word starts that a hypersparse
block's counting pass makes, and the column sums that give several grid rows their
owned degrees and a grid of one column its row counts, the rounds of its row copy and their bounds, at
both widths of the offsets: without them the first several-rank run on a machine compiled those inside
construction_time, 0.3-0.45 s, bench/NOTES.md, 2026-11-26, the first several-rank run's construction,
and 2026-11-28, the build counting at 32 bits). CuPy compiles elementwise kernels per operand
types, not sizes, and the build and the certificate use no CuPy reduction (those compile per shape), so
the real run compiles nothing more. The search's generic calls are warmed by the
harness's untimed warm-up search. On the CPU backend there is nothing to compile. """

from __future__ import annotations

import time

import numpy as np
from mpi4py import MPI

from dbfs import kernels
from dbfs.build import build, pack_by_owner, sum_blocks
from dbfs.certificate import certify
from dbfs.graph import GridComms
from dbfs.grid import Grid
from dbfs.ops.sparse import word_starts
from dbfs.source import EdgeArrays, GraphSource
from graph500.generator import DEFAULT_SEED, generate_edges

_SCALE, _EDGEFACTOR = 6, 4


def warm_up(backend) -> float:
    """Compile and warm everything the build and the certificate use (see the module docstring);
    returns the seconds it took (0 on the CPU backend). Not collective."""
    if not backend.is_gpu:
        return 0.0
    started = time.perf_counter()
    for name in kernels.names():
        for offsets in ((np.int32, np.int64) if kernels.reads_offsets(name) else (np.int64,)):
            backend.module(name, offsets).compile()
    n, m = 1 << _SCALE, _EDGEFACTOR << _SCALE
    generated = GraphSource(n, m, _SCALE, _EDGEFACTOR, True, None, DEFAULT_SEED)
    src, dst = generate_edges(_SCALE, _EDGEFACTOR, 0, m, DEFAULT_SEED)
    directed = EdgeArrays(src, dst, n, m, symmetric=False)
    comms = GridComms.create(Grid(1, 1, n), MPI.COMM_SELF)
    for source in (generated, directed):
        for offsets in (None, np.int64):        # the tiny graph's width, and a larger graph's
            graph, _ = build(comms, backend, source, row_major=True, offsets=offsets)
            certify(graph, source)
    comms.free()
    grid, xp = Grid(2, 2, n), backend.xp
    u, v = xp.asarray(src), xp.asarray(dst)
    pack_by_owner(backend, grid, u, v, both_ways=True, with_rows=True)
    words = xp.zeros(2, xp.uint32)                              # a hypersparse block's Positions, as several
    word_starts(backend, words, xp.empty(3, xp.int32))          # ranks' counting pass makes them
    lengths = xp.zeros(9, xp.int64)[:-1].astype(xp.int32)       # column lengths summed over two grid rows,
    for width in (xp.int32, xp.int64):                          # as a grid of one column's row counts, its
        row_ends = xp.zeros(5, width)                           # row copy's rounds and their bounds
        row_ends[:-1] = sum_blocks(lengths, 2, 4)
        xp.searchsorted(row_ends[:-1], xp.arange(1, 3), side="right")
        row_ends[xp.arange(2)]
    backend.sync()
    return time.perf_counter() - started
