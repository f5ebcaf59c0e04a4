"""Delayed-predecessor resolution (paper 004, section 3.5): owned vertices' discoverer columns and the
discoverers' local predecessor columns -> global parent ids. GPU: kernels/predecessors.cu; NumPy twin
below with the same contract."""

from __future__ import annotations

import numpy as np

THREADS = 256


def resolve_parents(backend, pred_col, gathered, b: int, cols_per_rank: int, parent) -> None:
    """parent[o] = pred_col[o] * cols_per_rank + gathered[pred_col[o] * b + o], or -1 when pred_col[o] < 0.

    pred_col  int32 [b]      read   grid column of the rank that discovered owned offset o (-1: none)
    gathered  int32 [C*b]    read   block c: grid column c's pred_row entries for this rank's block
    parent    int64 [b]      write  global parent ids
    Device arrays of the backend; on the GPU the call returns with the kernel queued on the stream.
    """
    if backend.is_gpu:
        if b:
            blocks = min(4096, -(-b // THREADS))
            backend.module("predecessors").get_function("resolve_parents")(
                (blocks,), (THREADS,), (pred_col, gathered, np.int32(b), np.int64(cols_per_rank), parent))
        return
    found = pred_col >= 0
    col = np.where(found, pred_col, 0).astype(np.int64)
    local = gathered[col * b + np.arange(b)]
    parent[:] = np.where(found, col * cols_per_rank + local, -1)
