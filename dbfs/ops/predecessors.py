"""Delayed-predecessor resolution (paper 004, section 3.5): owned vertices' discoverer columns and the
discoverers' local predecessor columns -> global parent ids. A vertex found bottom-up was found by one
rank of the grid row, whose gathered entry is the only one set. GPU: kernels/predecessors.cu; NumPy
twin below with the same contract."""

from __future__ import annotations

import numpy as np

from dbfs.ops.bottom_up import BOTTOM_UP

THREADS = 256


def resolve_parents(backend, pred_col, gathered, b: int, cols_per_rank: int, parent) -> None:
    """parent[o] = c * cols_per_rank + gathered[c * b + o] with c = pred_col[o], or -1 when c == -1;
    for c == BOTTOM_UP, c is the lowest column whose gathered entry for o is set.

    pred_col  int32 [b]      read   grid column of the rank that discovered owned offset o (-1: none,
                                    BOTTOM_UP: found by the bottom-up search)
    gathered  int32 [C*b]    read   block c: grid column c's pred_row entries for this rank's block
    parent    int64 [b]      write  global parent ids
    Device arrays of the backend; on the GPU the call returns with the kernel queued on the stream.
    """
    C = int(gathered.shape[0]) // b if b else 1
    if backend.is_gpu:
        if b:
            blocks = min(4096, -(-b // THREADS))
            backend.kernel("predecessors", "resolve_parents")(
                (blocks,), (THREADS,), (pred_col, gathered, np.int32(b), np.int32(C), np.int64(cols_per_rank),
                                        parent))
        return
    bottom_up = pred_col == BOTTOM_UP
    finder = np.argmax(gathered.reshape(C, b) >= 0, axis=0)
    pred_col = np.where(bottom_up, finder, pred_col)
    found = pred_col >= 0
    col = np.where(found, pred_col, 0).astype(np.int64)
    local = gathered[col * b + np.arange(b)]
    parent[:] = np.where(found, col * cols_per_rank + local, -1)
