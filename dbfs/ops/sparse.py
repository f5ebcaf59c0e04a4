"""Sparse int32 blocks as (presence bitmap, present values in offset order).

An entry < 0 means "none". Paper 004, section 3.5: after a search each rank sends the discoverers it
recorded for another grid column's block to that block's owner; fewer than half of the entries are
set on any one rank, so the bitmap (1 bit per entry) plus the present values (4 bytes each) is
usually well under the dense block's 4 bytes per entry.

GPU method: kernels/sparse.cu (a ballot per warp builds the bitmap, popcounts plus one scan place
each word's entries, a thread per entry gathers or scatters). NumPy twins with the same contract.
"""

from __future__ import annotations

import numpy as np

from dbfs.kernels import BLOCK_THREADS
from dbfs.ops.arrays import blocks_for, require_array


def pack_present(backend, values, words, starts, packed) -> int:
    """Encode `values`; return k, the number of present entries (a host synchronisation on the GPU).

      values  int32 [n]         read   n a multiple of 32
      words   uint32 [n/32]     write  bit o set iff values[o] >= 0
      starts  int32 [n/32 + 1]  write  scratch: exclusive prefix of the words' popcounts, then k
      packed  int32 [>= k]      write  the present values in offset order
    """
    n = _check(values, words, starts, "values")
    if backend.is_gpu:
        require_array("packed", packed, np.int32)
        _launch(backend, "presence_words", n, (values, np.int64(n), words))
        total = _word_starts(backend, words, starts)
        if total:
            _launch(backend, "move_present", n, (values, packed, words, starts, np.int64(n), np.int32(1)))
        return total
    present = values >= 0
    words[:] = np.packbits(present, bitorder="little").view(np.uint32)
    total = int(np.count_nonzero(present))
    starts[-1] = total
    packed[:total] = values[present]
    return total


def unpack_present(backend, words, packed, starts, out) -> None:
    """Decode: out[o] := the packed value of entry o where its bit is set, else -1.

      words   uint32 [n/32]     read
      packed  int32 [k]         read   k = the number of set bits
      starts  int32 [n/32 + 1]  write  scratch as in pack_present
      out     int32 [n]         write
    GPU: queued on the current stream after one host synchronisation (the scan's total).
    """
    n = _check(out, words, starts, "out")
    if backend.is_gpu:
        require_array("packed", packed, np.int32)
        _word_starts(backend, words, starts)
        _launch(backend, "move_present", n, (out, packed, words, starts, np.int64(n), np.int32(0)))
        return
    present = np.unpackbits(words.view(np.uint8), bitorder="little").astype(bool)
    out[:] = -1
    out[present] = packed[:int(np.count_nonzero(present))]


def _check(block, words, starts, name) -> int:
    for label, array, dtype in ((name, block, np.int32), ("words", words, np.uint32),
                                ("starts", starts, np.int32)):
        require_array(label, array, dtype)
    n = int(block.shape[0])
    if n % 32 or words.shape[0] != n // 32 or starts.shape[0] != n // 32 + 1:
        raise ValueError(f"{name} must hold a multiple of 32 entries with words [n/32] and starts "
                         f"[n/32 + 1], got {n}, {words.shape[0]}, {starts.shape[0]}")
    return n


def _launch(backend, name, n, args) -> None:
    backend.kernel("sparse", name)((blocks_for(n),), (BLOCK_THREADS,), args)


def _word_starts(backend, words, starts) -> int:
    """starts[w] := set bits in words[:w], starts[-1] := their total (returned)."""
    xp, nwords = backend.xp, int(words.shape[0])
    _launch(backend, "word_popcounts", nwords, (words, np.int64(nwords), starts[1:]))
    starts[1:] = xp.cumsum(starts[1:])
    starts[0] = 0
    return int(starts[-1])
