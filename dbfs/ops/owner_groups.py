"""The graph builder's entries routed and grouped by owner rank (Graph500 kernel 1), for its all-to-all:
each tuple's entries with their owner rank, local column and local row (dbfs.grid's ownership math)
and the per-owner counts, then a scatter of every entry into its owner's group of one send buffer (a
counting partition: the groups' starts are the exclusive scan of the counts, taken by the caller),
the column alone or the (column, row) pair interleaved, so that one message per peer carries every
array; and, for a counting pass that sends nothing, the entries counted by owner and local column
where they are produced, with each chunk's entries per owner (count_by_owner), which let the placing
pass route and group a chunk in one kernel and with no count read back (group_tuples).

GPU method: kernels/owner_groups.cu (one pass over the tuples for the routing and the counts, a
shared-memory histogram per block; slots claimed by one atomic per block tile and owner). NumPy twins
below, with the same contracts; where the GPU order is unspecified the twin's is stated.
"""

from __future__ import annotations

import numpy as np

from dbfs.kernels import BLOCK_THREADS, OWNER_TILE_ITEMS
from dbfs.ops.arrays import BUILD_MAX_BLOCKS, NULL, launch_checked


def route_entries(backend, grid, src, dst, both_ways: bool, with_rows: bool, counts):
    """The entries u -> v of one chunk's tuples (u, v) = (src[t], dst[t]) at index t, and with both_ways
    the entries v -> u at index n + t, as (owner rank, local column, local row or None), int32 arrays
    of grid `grid` (dbfs.grid.Grid: owner_rank by the owner of v's grid row and col_block(u),
    to_local_col(u), to_local_row(v)); a self-loop's entries (u == v) get owner grid.size, which no
    group takes. counts[o] += the entries with owner o.

      src, dst  int64 [n]                          read
      counts    int64 [grid.size]                  read/write
      returns   int32 [d n] x 2 (x 3 with_rows)    d = 2 with both_ways, else 1
    GPU: one kernel on the current stream, no host synchronisation.
    """
    xp, n, ranks = backend.xp, int(src.shape[0]), grid.size
    total = (2 if both_ways else 1) * n
    owner, cols = xp.empty(total, xp.int32), xp.empty(total, xp.int32)
    rows = xp.empty(total, xp.int32) if with_rows else None
    if backend.is_gpu:
        arrays = {"src": (src, np.int64), "dst": (dst, np.int64), "counts": (counts, np.int64)}
        launch_checked(backend, "owner_groups", "owner_entries", n, arrays,
                       (src, dst, np.int64(n), np.int32(both_ways), np.int64(grid.block), np.int32(grid.R),
                        np.int32(grid.C), owner, cols, NULL if rows is None else rows, counts), BUILD_MAX_BLOCKS)
        return owner, cols, rows
    drop = src == dst
    # each direction's int64 ownership math is cast into its part of the arrays as it is computed, so
    # its temporaries are one direction's
    for d, (u, v) in enumerate(((src, dst), (dst, src)) if both_ways else ((src, dst),)):
        part = slice(d * n, (d + 1) * n)
        owner[part] = grid.rank(grid.owner(v)[0], grid.col_block(u))
        np.copyto(owner[part], np.int32(ranks), where=drop)
        cols[part] = grid.to_local_col(u)
        if with_rows:
            rows[part] = grid.to_local_row(v)
    counts += np.bincount(owner[owner < ranks], minlength=ranks)
    return owner, cols, rows


def count_by_owner(backend, grid, src, dst, both_ways: bool, counts, totals=None) -> None:
    """counts[o * grid.cols_per_rank + c] += the entries of the tuples (src, dst) (with both_ways their
    reverses too; self-loops left out) that owner rank o holds in its local column c (the ownership math
    of route_entries): a chunk counted where it is produced, its entries not sent (dbfs.build); and
    totals[o] += the entries of owner o (route_entries' counts; None: not counted).

      src, dst  int64 [n]                               read
      counts    uint32 [grid.size * grid.cols_per_rank] read/write
      totals    int64 [grid.size] or None               read/write
    GPU: one kernel on the current stream (an atomic an entry), no host synchronisation.
    """
    n = int(src.shape[0])
    if backend.is_gpu:
        arrays = {"src": (src, np.int64), "dst": (dst, np.int64), "counts": (counts, np.uint32)}
        if totals is not None:
            arrays["totals"] = (totals, np.int64)
        launch_checked(backend, "owner_groups", "owner_column_counts", n, arrays,
                       (src, dst, np.int64(n), np.int32(both_ways), np.int64(grid.block), np.int32(grid.R),
                        np.int32(grid.C), np.int64(grid.cols_per_rank), counts, NULL if totals is None else totals),
                       BUILD_MAX_BLOCKS)
        return
    owner, cols, _ = route_entries(backend, grid, src, dst, both_ways, False,
                                   totals if totals is not None else np.zeros(grid.size, np.int64))
    kept = owner < grid.size
    counts += np.bincount(owner[kept].astype(np.int64) * grid.cols_per_rank + cols[kept],
                          minlength=counts.shape[0]).astype(np.uint32)


def local_entries(backend, grid, u, v, with_rows: bool):
    """One rank (its entries stay where they are): the entries u[t] -> v[t] of one chunk and direction
    as (local columns, local rows or None), int32 [n], with column and row -1 where u[t] == v[t] (a
    self-loop, which no count or scatter takes); the ownership math as in route_entries.

      u, v  int64 [n]  read
    GPU: one kernel on the current stream (route_entries' without owners), no host synchronisation.
    """
    xp, n = backend.xp, int(u.shape[0])
    cols = xp.empty(n, xp.int32)
    rows = xp.empty(n, xp.int32) if with_rows else None
    if backend.is_gpu:
        launch_checked(backend, "owner_groups", "owner_entries", n, {"u": (u, np.int64), "v": (v, np.int64)},
                       (u, v, np.int64(n), np.int32(0), np.int64(grid.block), np.int32(grid.R), np.int32(grid.C),
                        NULL, cols, NULL if rows is None else rows, NULL), BUILD_MAX_BLOCKS)
        return cols, rows
    drop = u == v
    cols[:] = grid.to_local_col(u)
    cols[drop] = -1
    if with_rows:
        rows[:] = grid.to_local_row(v)
        rows[drop] = -1
    return cols, rows


def group_by_owner(backend, owner, cols, rows, cursor, out) -> None:
    """Every entry e with owner o = owner[e] in [0, len(cursor)) takes slot s = cursor[o] and increments
    cursor[o]; out[s] = cols[e] without rows, out[2s], out[2s + 1] = cols[e], rows[e] with them.
    With cursor = the groups' starts the groups fill from their starts and the cursors finish at their
    ends.

      owner   int32 [n]                 read
      cols    int32 [n]                 read
      rows    int32 [n] or None         read
      cursor  int64 [ranks]             read/write
      out     int32 [width * capacity]  write   width 1 without rows, 2 with; slots outside
                                                [0, capacity) are not written
    The order inside a group is unspecified (NumPy: input order). GPU: one kernel on the current
    stream (a thread per OWNER_TILE_ITEMS entries), no host synchronisation.
    """
    n, ranks = int(owner.shape[0]), int(cursor.shape[0])
    width = 1 if rows is None else 2
    capacity = int(out.shape[0]) // width
    if backend.is_gpu:
        arrays = {"owner": (owner, np.int32), "cols": (cols, np.int32), "cursor": (cursor, np.int64),
                  "out": (out, np.int32)}
        if rows is not None:
            arrays["rows"] = (rows, np.int32)
        launch_checked(backend, "owner_groups", "owner_scatter", n, arrays,
                       (owner, cols, NULL if rows is None else rows, np.int64(n), np.int32(ranks), cursor, out,
                        np.int64(capacity)), BUILD_MAX_BLOCKS, per_block=BLOCK_THREADS * OWNER_TILE_ITEMS)
        return
    grouping = np.where((owner >= 0) & (owner < ranks), owner, np.int32(ranks))   # left out: a last group
    order = np.argsort(grouping, kind="stable")
    counts = np.bincount(grouping, minlength=ranks + 1)[:ranks]
    order = order[:int(counts.sum())]
    slots = np.arange(order.shape[0], dtype=np.int64)
    slots += np.repeat(cursor - (np.cumsum(counts) - counts), counts)   # cursor less the group's start
    inside = (slots >= 0) & (slots < capacity)
    slots, order = slots[inside], order[inside]
    if rows is None:
        out[slots] = cols[order]
    else:
        pairs = out[:2 * capacity].reshape(-1, 2)
        pairs[slots, 0], pairs[slots, 1] = cols[order], rows[order]
    cursor += counts


def group_tuples(backend, grid, src, dst, both_ways: bool, with_rows: bool, cursor, out) -> None:
    """route_entries and group_by_owner in one pass, for a chunk whose groups' sizes are known before (the
    counting pass's totals of the same tuples): every kept entry of the tuples (src, dst) (with both_ways
    their reverses too) takes slot s = cursor[o] of its owner o, which is incremented; out[s] = its local
    column without rows, out[2s], out[2s + 1] = its local column and row with them.

      src, dst  int64 [n]                read
      cursor    int64 [grid.size]        read/write   the groups' starts in, their ends out
      out       int32 [width * capacity] write   width 1 without rows, 2 with; slots outside
                                                 [0, capacity) are not written
    The order inside a group is unspecified (NumPy: group_by_owner's of route_entries' order). GPU: one
    kernel on the current stream (a thread per OWNER_TILE_ITEMS entries), no host synchronisation.
    """
    n = int(src.shape[0])
    width = 2 if with_rows else 1
    if backend.is_gpu:
        entries = (2 if both_ways else 1) * n
        launch_checked(backend, "owner_groups", "owner_tuple_scatter", entries,
                       {"src": (src, np.int64), "dst": (dst, np.int64), "cursor": (cursor, np.int64),
                        "out": (out, np.int32)},
                       (src, dst, np.int64(n), np.int32(both_ways), np.int64(grid.block), np.int32(grid.R),
                        np.int32(grid.C), np.int32(with_rows), cursor, out, np.int64(int(out.shape[0]) // width)),
                       BUILD_MAX_BLOCKS, per_block=BLOCK_THREADS * OWNER_TILE_ITEMS)
        return
    owner, cols, rows = route_entries(backend, grid, src, dst, both_ways, with_rows, np.zeros(grid.size, np.int64))
    group_by_owner(backend, owner, cols, rows, cursor, out)
