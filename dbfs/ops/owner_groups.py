"""The graph builder's entries grouped by owner rank (Graph500 kernel 1), for its all-to-all: per-owner
counts, then a scatter of every entry into its owner's group of one send buffer (a counting
partition: the groups' starts are the exclusive scan of the counts, taken by the caller), the column
alone or the (column, row) pair interleaved, so that one message per peer carries every array.

GPU method: kernels/owner_groups.cu (a shared-memory histogram per block; slots claimed by one atomic
per warp and owner). NumPy twins below, with the same contracts; where the GPU order is unspecified
the twin's is stated.
"""

from __future__ import annotations

import numpy as np

from dbfs.ops.arrays import BUILD_MAX_BLOCKS, NULL, launch_checked


def count_owners(backend, owner, counts) -> None:
    """counts[o] += the number of entries with owner o, for every o in [0, len(counts)) (entries with
    any other owner are left out).

      owner   int32 [n]      read
      counts  int64 [ranks]  read/write
    GPU: one kernel on the current stream, no host synchronisation.
    """
    n, ranks = int(owner.shape[0]), int(counts.shape[0])
    if backend.is_gpu:
        launch_checked(backend, "owner_groups", "owner_counts", n,
                       {"owner": (owner, np.int32), "counts": (counts, np.int64)},
                       (owner, np.int64(n), np.int32(ranks), counts), BUILD_MAX_BLOCKS)
        return
    kept = owner[(owner >= 0) & (owner < ranks)]
    counts += np.bincount(kept, minlength=ranks)


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
    stream, no host synchronisation.
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
                        np.int64(capacity)), BUILD_MAX_BLOCKS)
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
