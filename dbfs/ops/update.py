"""Frontier update of one BFS level on rank (i, j): the owned vertices received in the fold.

Paper 004, section 3.5. Each received offset o names the owned row j*b + o; if its visited bit is
clear, exactly one of its copies claims it, sets its level and its delayed predecessor (the grid
column of the sender, which kept the real predecessor in its pred_row) and appends o to the next
frontier, group j of dst, after whatever the expansion put there (Algorithm 2, line 18).

GPU method: kernels/update.cu, one thread per received offset, atomicOr on the bitmap and atomicAdd
on the group counter. NumPy method: np.unique keeps the first copy (lowest sender) of every fresh row.
"""

from __future__ import annotations

import numpy as np

from dbfs.kernels import BLOCK_THREADS
from dbfs.ops.arrays import require_array
from dbfs.ops.bitmap import set_visited, visited
from dbfs.ops.expand import append_grouped

_seg_buffers: dict = {}


def update(backend, grid, j, recv, seg, bitmap, level, pred_col, lvl, dst, dst_cnt) -> None:
    """Mark the unvisited received owned vertices; append them to the next frontier dst[j*b ...].

      recv      int32 [n]         read   offsets (0 <= o < b) in the own block; recv[seg[m]:seg[m+1]]
                                         came from grid column m; duplicates (within or across
                                         senders) are allowed
      seg       int32 [C+1]       read   segment bounds, seg[0] = 0, seg[C] = n = len(recv); a device
                                         array (no copy) or a host array/sequence (copied to the device
                                         on a GPU backend)
      bitmap    uint32 [>= ceil(C*b/32)]  read/write  local-row visited bits (row = j*b + o)
      level     int32 [b]         write  lvl for each newly visited offset
      pred_col  int32 [b]         write  sender grid column m for each newly visited offset
      dst       int32 [C*b]       write  new offsets go to dst[j*b + dst_cnt[j] ...]
      dst_cnt   int32 [C]         read/write  only dst_cnt[j] changes
    grid: the dbfs.grid.Grid; lvl, j: Python ints. Device arrays are 1-D and C-contiguous on the
    backend's device.

    Guarantees: each received offset whose bit was clear is visited exactly once; when several senders
    sent it, pred_col names one of them (GPU: whichever atomic won; NumPy: the lowest column). New
    entries follow the existing dst[j*b : j*b + dst_cnt[j]] in unspecified order (NumPy: ascending).
    GPU: one kernel on CuPy's current stream, no host synchronisation; nothing is launched for n = 0.
    A host seg is copied into a device buffer reused by later calls, in order on the current stream.
    """
    n = recv.shape[0]
    if n == 0:
        return
    if backend.is_gpu:
        _update_gpu(backend, grid, j, recv, seg, bitmap, level, pred_col, lvl, dst, dst_cnt)
    else:
        _update_numpy(grid, j, recv, seg, bitmap, level, pred_col, lvl, dst, dst_cnt)


def _device_seg(backend, seg, n):
    """seg as an int32 device array; host segments go through one reused buffer per (device, C)."""
    xp = backend.xp
    if isinstance(seg, xp.ndarray):
        require_array("seg", seg, np.int32)
        return seg
    host = np.ascontiguousarray(seg, dtype=np.int32)
    _check_bounds(host, n)
    key = (backend.device, host.shape[0])
    buffer = _seg_buffers.get(key)
    if buffer is None:
        buffer = _seg_buffers[key] = xp.empty(host.shape[0], dtype=xp.int32)
    buffer.set(host)
    return buffer


def _check_bounds(seg, n):
    if seg.ndim != 1 or seg.shape[0] < 2 or seg[0] != 0 or seg[-1] != n:
        raise ValueError(f"seg must be [C+1] bounds running from 0 to len(recv) = {n}, got {seg}")


def _update_gpu(backend, grid, j, recv, seg, bitmap, level, pred_col, lvl, dst, dst_cnt):
    for name, array, dtype in (("recv", recv, np.int32), ("bitmap", bitmap, np.uint32),
                               ("level", level, np.int32), ("pred_col", pred_col, np.int32),
                               ("dst", dst, np.int32), ("dst_cnt", dst_cnt, np.int32)):
        require_array(name, array, dtype)
    seg = _device_seg(backend, seg, recv.shape[0])
    n = recv.shape[0]
    backend.kernel("update", "update_frontier")(
        (-(-n // BLOCK_THREADS),), (BLOCK_THREADS,),
        (recv, np.int32(n), seg, np.int32(seg.shape[0] - 1), bitmap, level, pred_col, np.int32(lvl),
         np.int32(j), np.int32(grid.block), dst, dst_cnt))


def _update_numpy(grid, j, recv, seg, bitmap, level, pred_col, lvl, dst, dst_cnt):
    seg = np.asarray(seg, dtype=np.int64)
    _check_bounds(seg, recv.shape[0])
    senders = np.repeat(np.arange(seg.shape[0] - 1, dtype=np.int32), np.diff(seg))
    rows = grid.owned_row(j, recv.astype(np.int64))
    fresh = ~visited(bitmap, rows)
    new_rows, first = np.unique(rows[fresh], return_index=True)
    if new_rows.size == 0:
        return
    set_visited(bitmap, new_rows)
    offsets = grid.row_offset(new_rows)
    level[offsets] = lvl
    pred_col[offsets] = senders[fresh][first]
    append_grouped(grid.block, dst, dst_cnt, np.full(offsets.shape[0], j, dtype=np.int64), offsets)
