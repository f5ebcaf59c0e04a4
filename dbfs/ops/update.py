"""Frontier update of one BFS level on rank (i, j): the owned vertices received in the fold.

Paper 004, section 3.5. Each offset o of a fold message names the owned row j*b + o; if its visited
bit is clear, exactly one of its copies claims it, sets its level and its delayed predecessor (the grid
column of the sender, which kept the real predecessor in its pred_row) and appends o to the next
frontier, the own group, after whatever the expansion put there (Algorithm 2, line 18).

GPU method: kernels/update.cu reads the messages in place (lists or bitmaps, dbfs.ops.message), one
thread per item, atomicOr on the bitmap and one atomicAdd per block on the group counter. NumPy method:
np.unique keeps the first copy (lowest sender) of every fresh row.
"""

from __future__ import annotations

import numpy as np

from dbfs.kernels import BLOCK_THREADS, CTL
from dbfs.ops.arrays import NULL, blocks_for, require_array
from dbfs.ops.bitmap import set_visited, visited
from dbfs.ops.expand import append_grouped
from dbfs.ops.message import items


def update(backend, grid, j, sources, bitmap, level, pred_col, lvl, own, dst_cnt, control=None) -> None:
    """Mark the unvisited owned vertices named by the fold messages; append them to the own group.

      sources   dbfs.ops.message.SourceTable  message m came from grid column m (None: no message,
                                         the own column); duplicates within or across messages allowed
      bitmap    uint32 [>= ceil(C*b/32)]  read/write  local-row visited bits (row = j*b + o)
      level     int32 [b]         write  lvl for each newly visited offset
      pred_col  int16 [b]         write  sender grid column m for each newly visited offset
      own       int32 [s]         write  the next frontier (group j of a queue: s slots, at least the
                                         vertices it can receive, dbfs.graph.LocalGraph.group_slots); new
                                         offsets go to own[dst_cnt[j] ...]
      dst_cnt   int32 [C]         read/write  only dst_cnt[j] changes
      control   int64 [CTL_WORDS] or None: lvl is then its CTL_LEVEL (read on the device)
    grid: the dbfs.grid.Grid; lvl, j: Python ints.

    Guarantees: each received offset whose bit was clear is visited exactly once; when several senders
    sent it, pred_col names one of them (GPU: whichever atomic won; NumPy: the lowest column). New
    entries follow the existing own[:dst_cnt[j]] in unspecified order (NumPy: ascending).
    GPU: one kernel on CuPy's current stream, no host synchronisation; the messages' sizes are read on
    the device.
    """
    if backend.is_gpu:
        for name, array, dtype in (("bitmap", bitmap, np.uint32), ("level", level, np.int32),
                                   ("pred_col", pred_col, np.int16), ("own", own, np.int32),
                                   ("dst_cnt", dst_cnt, np.int32)):
            require_array(name, array, dtype)
        kernel = backend.kernel("update", "update_from_messages")
        kernel((min(blocks_for(grid.block), backend.resident_blocks(kernel, BLOCK_THREADS)), len(sources)),
               (BLOCK_THREADS,),
               (sources.pointers, np.int32(j), np.int32(grid.block), bitmap, level, pred_col, np.int32(lvl), own,
                dst_cnt, control if control is not None else NULL))
        return
    if control is not None:
        lvl = int(control[CTL.LEVEL])
    received = [(m, items(message, grid.block)) for m, message in enumerate(sources.messages)
                if message is not None]
    if not received:
        return
    senders = np.concatenate([np.full(offsets.shape[0], m, np.int32) for m, offsets in received])
    update_from_offsets(grid, j, senders, np.concatenate([offsets for _, offsets in received]), bitmap, level,
                        pred_col, lvl, own, dst_cnt)


def update_from_offsets(grid, j, senders, offsets, bitmap, level, pred_col, lvl, own, dst_cnt) -> None:
    """NumPy: the update of the owned offsets received (offsets[k] from grid column senders[k]), with
    update's contract; the first copy of a fresh row in the arrays' order claims it."""
    rows = grid.owned_row(j, offsets)
    fresh = ~visited(bitmap, rows)
    new_rows, first = np.unique(rows[fresh], return_index=True)
    if new_rows.size == 0:
        return
    set_visited(bitmap, new_rows)
    offsets = grid.row_offset(new_rows)
    level[offsets] = lvl
    pred_col[offsets] = senders[fresh][first]
    append_grouped(own.shape[0], own, dst_cnt[j:j + 1], np.zeros(offsets.shape[0], np.int64), offsets)
