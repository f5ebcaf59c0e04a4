"""The figures of a new frontier list (kernels/frontier.cu) and its NumPy twin: size, degree sum and
largest degree into the level's counters, for termination and the direction rule (m_f), optionally
copying the list on the way (the one-GPU loop's queue 1 -> queue 0); and at a level's end the counters
handed to the host and cleared (publish_figures)."""

from __future__ import annotations

import numpy as np

from dbfs.kernels import BLOCK_THREADS, STAT, STEP
from dbfs.ops.arrays import NULL, gate_args, gate_open, host_length, length_args, require_array, wave_blocks


def frontier_figures(backend, frontier, length, degree, stats, copy_to=None, control=None) -> None:
    """stats[COUNT] += n, stats[DEGREES] += sum and stats[MAX_DEGREE] max= max of degree[frontier[:n]];
    copy_to[:n] = frontier[:n] when given.

      frontier  int32 [>= n]      read   offsets of owned vertices
      length    int or int32 [1]  read   n, on the host or on the device
      degree    int32 [b]         read   degrees of the owned vertices
      stats     int64 [STAT_WORDS] read/write
      copy_to   int32 [>= n] or None  write
      control   the search's control block (None: always runs; else only after a bulk top-down level)
    GPU: one kernel on the current stream, no host synchronisation.
    """
    if backend.is_gpu:
        for name, array, dtype in (("frontier", frontier, np.int32), ("degree", degree, np.int32),
                                   ("stats", stats, np.int64)):
            require_array(name, array, dtype)
        figures = backend.kernel("frontier", "frontier_figures")
        figures(
            (wave_blocks(backend, figures, frontier.shape[0]),), (BLOCK_THREADS,),
            (frontier, *length_args(length), degree, stats, copy_to if copy_to is not None else NULL,
             gate_args(control)[0]))
        return
    if not gate_open(control, 1 << STEP.TOPDOWN):
        return
    n = host_length(length)
    if copy_to is not None:
        copy_to[:n] = frontier[:n]
    add_discoveries(stats, degree[frontier[:n]])


def add_discoveries(stats, degrees) -> None:
    """NumPy twin of common.cuh add_discoveries for new vertices of these degrees: COUNT += their
    number, DEGREES += their sum, MAX_DEGREE max= the largest."""
    if degrees.size:
        stats[STAT.COUNT] += degrees.size
        stats[STAT.DEGREES] += int(degrees.sum(dtype=np.int64))
        stats[STAT.MAX_DEGREE] = max(int(stats[STAT.MAX_DEGREE]), int(degrees.max()))


def publish_figures(backend, stats, status) -> None:
    """status[:] = stats; stats[:] = 0 (a level's counters handed to the host, cleared for the next level).

      stats   int64 [STAT_WORDS]              read/write
      status  int64 [STAT_WORDS], pinned host write
    GPU: one block on the current stream, writing `status` through its mapped address (one kernel node
    in a captured level where a copy and a memset were two).
    """
    if backend.is_gpu:
        require_array("stats", stats, np.int64)
        backend.kernel("frontier", "publish_figures")((1,), (32,), (stats, np.uint64(status.ctypes.data)))
        return
    status[:] = stats
    stats[:] = 0
