"""Bottom-up search of one BFS level on rank (i, j) (direction-optimizing BFS: Beamer et al.; in 2D
with a rotation of row segments along the grid row, as in Ueno et al.).

search_segment: the unvisited rows of one segment of b local rows look for a parent in the frontier
(a bitmap over the local columns) through the block's row-major copy, stopping at the first parent.
commit: the owner turns its segment's final state into the level's new vertices. list_degrees: the
frontier degree sum of a top-down level (Beamer's m_f).

GPU method: kernels/bottom_up.cu (a warp per 32-row word: per-lane scan of the first entries, then
warp-cooperative search with ballot early exit). NumPy method: all entries of the unvisited rows are
tested at once and the first frontier entry of each row (in CSR order) is its parent.
"""

from __future__ import annotations

import numpy as np

from dbfs.ops.expand import require_array

BOTTOM_UP = -2                # pred_col of a vertex found bottom-up (BOTTOM_UP in kernels/bottom_up.cu)
THREADS = 256                 # BOTTOM_UP_THREADS in kernels/bottom_up.cu
MAX_BLOCKS = 8192
STAT_COUNT, STAT_DEGREES, STAT_CHECKED = 0, 1, 2


def search_segment(backend, row_ptr, col_idx, row_base: int, frontier, state, pred_row, stats) -> None:
    """Find a frontier parent for each row of the segment row_base .. row_base + 32*len(state) - 1
    whose bit in `state` is clear.

      row_ptr   int64 [nrows+1]   read   CSR offsets of the local rows
      col_idx   int32 [nnz]       read   local columns of each row's entries
      frontier  uint32 [ncols/32] read   frontier bit of every local column
      state     uint32 [w]        read/write  visited bit of the segment's rows; found rows get theirs
      pred_row  int32 [nrows]     write  pred_row[row] = the frontier column found, found rows only
      stats     int64 [3]         read/write  stats[STAT_CHECKED] += entries examined
    GPU: one kernel on the current stream, no host synchronisation. Which frontier neighbour is taken
    is unspecified on the GPU (the first in CSR order on each path; NumPy: the first in CSR order).
    """
    nwords = int(state.shape[0])
    if backend.is_gpu:
        for name, array, dtype in (("row_ptr", row_ptr, np.int64), ("col_idx", col_idx, np.int32),
                                   ("frontier", frontier, np.uint32), ("state", state, np.uint32),
                                   ("pred_row", pred_row, np.int32), ("stats", stats, np.int64)):
            require_array(name, array, dtype)
        if nwords:
            blocks = min(MAX_BLOCKS, -(-nwords * 32 // THREADS))
            backend.kernel("bottom_up", "bottom_up_step")(
                (blocks,), (THREADS,), (row_ptr, col_idx, np.int32(row_base), np.int32(nwords), frontier,
                                        state, pred_row, stats))
        return
    bits = np.unpackbits(state.view(np.uint8), bitorder="little").astype(bool)
    rows = row_base + np.flatnonzero(~bits)
    starts, ends = row_ptr[rows], row_ptr[rows + 1]
    lengths = ends - starts
    owner = np.repeat(np.arange(rows.shape[0]), lengths)
    entries = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(owner.shape[0])
    cols = col_idx[entries]
    hit = ((frontier[cols >> 5] >> (cols & 31).astype(np.uint32)) & np.uint32(1)).astype(bool)
    found_rows, first = np.unique(owner[hit], return_index=True)
    first_entry = entries[hit][first]
    checked = lengths.sum() - (ends[found_rows] - first_entry - 1).sum()
    stats[STAT_CHECKED] += int(checked)
    if found_rows.shape[0] == 0:
        return
    pred_row[rows[found_rows]] = cols[hit][first]
    bits[rows[found_rows] - row_base] = True
    state[:] = np.packbits(bits, bitorder="little").view(np.uint32)


def commit(backend, state, visited, next_frontier, level, pred_col, degree, lvl: int, stats) -> None:
    """The owned vertices set in `state` but not in `visited` were found this level.

      state          uint32 [w]   read   the owned segment after every rank of the grid row searched it
      visited        uint32 [w]   read/write  the owned rows' visited bits (w words of the row bitmap)
      next_frontier  uint32 [w]   write  exactly the new vertices
      level, pred_col int32 [b]   write  lvl and BOTTOM_UP for the new vertices
      degree         int32 [b]    read   owned vertices' degrees
      stats          int64 [3]    read/write  += count and degree sum of the new vertices
    GPU: one kernel on the current stream, no host synchronisation.
    """
    nwords = int(state.shape[0])
    if backend.is_gpu:
        if nwords:
            blocks = min(MAX_BLOCKS, -(-nwords * 32 // THREADS))
            backend.kernel("bottom_up", "bottom_up_commit")(
                (blocks,), (THREADS,), (state, visited, next_frontier, np.int32(nwords), level, pred_col,
                                        degree, np.int32(lvl), stats))
        return
    fresh = state & ~visited
    next_frontier[:] = fresh
    visited |= fresh
    new = np.flatnonzero(np.unpackbits(fresh.view(np.uint8), bitorder="little"))
    level[new] = lvl
    pred_col[new] = BOTTOM_UP
    stats[STAT_COUNT] += new.shape[0]
    stats[STAT_DEGREES] += int(degree[new].sum())


def list_degrees(backend, offsets, degree, stats) -> None:
    """stats[STAT_DEGREES] += the degree sum of a frontier list (int32 offsets into degree).
    GPU: one kernel on the current stream (no CuPy reduction: those compile per input size)."""
    n = int(offsets.shape[0])
    if backend.is_gpu:
        if n:
            blocks = min(MAX_BLOCKS, -(-n // THREADS))
            backend.kernel("bottom_up", "list_degrees")((blocks,), (THREADS,),
                                                        (offsets, np.int32(n), degree, stats))
        return
    stats[STAT_DEGREES] += int(degree[offsets].sum())
