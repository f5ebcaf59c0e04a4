"""Launch wrapper of kernels/host_words.cu: a small copy between device memory and pinned host memory by a
kernel that reaches the host side through its mapped address (no copy engine), with its NumPy twin. Where
ranks share a GPU, Backend.copy makes its small host copies so (bench/NOTES.md, 2026-11-28, small host
copies by a kernel where ranks share a GPU)."""

from __future__ import annotations

import numpy as np

# The largest copy made by the kernel: a level's control block and timer stamps are a few hundred bytes;
# bulk transfers keep the copy engines.
KERNEL_COPY_BYTES = 4096
THREADS = 128


def fits(src) -> bool:
    """Whether copy_words takes a copy of `src`: at most KERNEL_COPY_BYTES of whole 32-bit words."""
    return src.nbytes <= KERNEL_COPY_BYTES and src.nbytes % 4 == 0


def copy_words(backend, dst, src, flag=None) -> None:
    """dst[:len(src)] := src, one side device memory, the other pinned host memory (on the GPU backend), of
    whole words (fits); then, where given, flag[0] := 1 (Backend.wait_flag).

      dst   device or pinned host array  write  its first src.nbytes bytes
      src   pinned host or device array  read
      flag  pinned int64 [1] or None     write  1 once dst, and what the stream wrote to pinned memory
                                                before, is visible to the host
    GPU: one block on the current stream (allowed under graph capture), no host synchronisation; the
    host side is read or written when the kernel runs, as a copy node's would be."""
    if not fits(src):
        raise ValueError(f"copy_words takes whole words of at most {KERNEL_COPY_BYTES} bytes between host "
                         f"and device, not {src.nbytes} bytes")
    if backend.is_gpu:
        address = [np.uint64(a.ctypes.data) if isinstance(a, np.ndarray) else a for a in (dst, src)]
        flag_address = np.uint64(0 if flag is None else flag.ctypes.data)
        backend.kernel("host_words", "copy_words")((1,), (THREADS,), (*address, np.int64(src.nbytes // 4),
                                                                    flag_address))
        return
    dst[:src.shape[0]] = src
    if flag is not None:
        flag[0] = 1
