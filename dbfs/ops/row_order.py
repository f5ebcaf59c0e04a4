"""The order of the entries inside each row of a block's row-major copy: the entries of the longest
columns first (direction-optimizing BFS, Beamer et al.: a bottom-up row stops at its first frontier
neighbour; a Kronecker graph's hubs join the frontier early, so testing a row's hub neighbours first
finds most parents at the first test; bench/NOTES.md, 2026-11-28, the rows' hub entries first).

GPU method: kernels/row_order.cu (a warp per 32 rows; a lane per row of at most 32 entries, the whole
warp on a longer one). NumPy method: the same selection, THREAD_EDGES rounds of a per-row maximum over
a group of whole rows at a time (at most TWIN_ITEMS rows, their entries grouped by
dbfs.ops.arrays.twin_groups), then the same swaps.
"""

from __future__ import annotations

import numpy as np

from dbfs.kernels import THREAD_EDGES
from dbfs.ops.arrays import BUILD_MAX_BLOCKS, OFFSETS, TWIN_ITEMS, launch_checked, twin_groups
from dbfs.ops.sparse import column_starts, held_args

_POSITION_BITS = np.uint64(32)
_POSITION_MASK = np.uint64(0xFFFFFFFF)


def longest_columns_first(backend, row_ptr, col_idx, col_ptr, columns=None) -> None:
    """Reorder every row's entries in place: the THREAD_EDGES entries whose columns are the longest
    (col_ptr[c + 1] - col_ptr[c]; ties: the earlier entry) are chosen, longest first, and for k = 0, 1,
    ... the k-th chosen entry trades places with the entry at the row's position k. The rest keep their
    places but for those trades.

      row_ptr  int32/int64 [nrows + 1]  read   offsets (as wide as col_ptr)
      col_idx  int32 [nnz]        read/write   each row's entries, reordered
      col_ptr  int32/int64 [ncols + 1]  read         the block's column offsets (may be row_ptr itself: a
                                               1x1 grid of an undirected graph, col_idx its row_idx), or
                                               those of the columns held by the Positions `columns`
    The same order on both paths. GPU: one kernel on the current stream, no host synchronisation.
    """
    nrows = int(row_ptr.shape[0]) - 1
    if backend.is_gpu:
        launch_checked(backend, "row_order", "longest_columns_first", max(nrows, 0),
                       {"row_ptr": (row_ptr, OFFSETS), "col_idx": (col_idx, np.int32),
                        "col_ptr": (col_ptr, OFFSETS)},
                       (row_ptr, col_idx, np.int64(nrows), col_ptr, *held_args(columns)), BUILD_MAX_BLOCKS)
        return
    for first in range(0, nrows, TWIN_ITEMS):
        for group in twin_groups(np.diff(row_ptr[first:first + TWIN_ITEMS + 1])):
            if group.shape[0]:
                _order_rows(row_ptr, col_idx, col_ptr, columns, first + int(group[0]), first + int(group[-1]) + 1)


def _order_rows(row_ptr, col_idx, col_ptr, columns, lo: int, hi: int) -> None:
    """longest_columns_first's NumPy twin on the rows lo .. hi - 1."""
    first, last = int(row_ptr[lo]), int(row_ptr[hi])
    starts = row_ptr[lo:hi] - first
    lengths = np.diff(row_ptr[lo:hi + 1])
    entries = col_idx[first:last]                                   # a view: reordered in place
    owner = np.repeat(np.arange(hi - lo), lengths)
    position = np.arange(last - first) - starts[owner]
    column_length = np.minimum((column_starts(col_ptr, columns, entries.astype(np.int64) + 1)
                                - column_starts(col_ptr, columns, entries)).astype(np.int64), 0xFFFFFFFF)
    packed = (column_length.astype(np.uint64) << _POSITION_BITS) | (_POSITION_MASK - position.astype(np.uint64))
    nonempty = np.flatnonzero(lengths > 0)
    among = np.flatnonzero(lengths[nonempty] > 1)           # the rows to order, among the nonempty ones
    if not among.shape[0]:
        return
    ordered = nonempty[among]
    chosen = np.full((THREAD_EDGES, ordered.shape[0]), -1, np.int64)
    for k in range(THREAD_EDGES):
        best = np.maximum.reduceat(packed, starts[nonempty])[among]
        has = lengths[ordered] > k
        chosen[k, has] = (_POSITION_MASK - (best[has] & _POSITION_MASK)).astype(np.int64)
        packed[starts[ordered[has]] + chosen[k, has]] = 0
    for k in range(THREAD_EDGES):
        has = np.flatnonzero(lengths[ordered] > k)
        here, there = starts[ordered[has]] + k, starts[ordered[has]] + chosen[k, has]
        entries[here], entries[there] = entries[there], entries[here].copy()
        for j in range(k + 1, THREAD_EDGES):
            moved = has[chosen[j, has] == k]
            chosen[j, moved] = chosen[k, moved]
