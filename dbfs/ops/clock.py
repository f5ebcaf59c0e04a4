"""Launch wrapper of kernels/clock.cu: a phase mark, the GPU's nanosecond timer written into a slot of
a device array, for rounds replayed as CUDA graphs (dbfs.timing.GraphMarks), with its NumPy twin."""

from __future__ import annotations

import time

import numpy as np

from dbfs.ops.arrays import require_array


def stamp(backend, marks, k: int) -> None:
    """marks[k] := now, in nanoseconds (the GPU's global timer once the work queued before it on the
    current stream has run; the host's perf_counter on the CPU backend).

      marks  int64 [> k]  write  slot k
    GPU: one thread on the current stream (allowed under graph capture), no host synchronisation.
    """
    require_array("marks", marks, np.int64)
    if not 0 <= k < marks.shape[0]:
        raise IndexError(f"mark {k} outside the {marks.shape[0]} slots")
    if backend.is_gpu:
        backend.kernel("clock", "stamp")((1,), (1,), (marks, np.int32(k)))
        return
    marks[k] = time.perf_counter_ns()
