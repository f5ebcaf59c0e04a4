"""Offset sets as lists or bitmaps: the two message encodings of paper 004 section 5 and the two
frontier forms of the direction-optimizing BFS (top-down lists, bottom-up bitmaps).

A set of offsets in [0, nbits) is either an int32 list or a uint32 bitmap of ceil(nbits/32) words
(bit o of word o // 32 for offset o). GPU: kernels/bitmap.cu (atomicOr scatter; warp-centric unpack);
NumPy twins below with the same contract.
"""

from __future__ import annotations

import numpy as np

from dbfs.ops.expand import require_array

BITMAP_THREADS = 256          # BITMAP_THREADS in kernels/bitmap.cu
MAX_BLOCKS = 4096


def words_for(nbits: int) -> int:
    return -(-nbits // 32)


def pack(backend, offsets, words) -> None:
    """words := the bitmap of `offsets`.

      offsets  int32 [n]       read   offsets, each < 32 * len(words); duplicates allowed
      words    uint32 [w]      write  all w words (zeroed first)
    GPU: queued on the current stream (a memset and one kernel), no host synchronisation.
    """
    n = int(offsets.shape[0])
    if backend.is_gpu:
        require_array("offsets", offsets, np.int32)
        require_array("words", words, np.uint32)
        words.fill(0)
        if n:
            blocks = min(MAX_BLOCKS, -(-n // BITMAP_THREADS))
            backend.kernel("bitmap", "pack_offsets")((blocks,), (BITMAP_THREADS,),
                                                     (offsets, np.int32(n), words))
        return
    bits = np.zeros(32 * words.shape[0], bool)
    bits[offsets] = True
    words[:] = np.packbits(bits, bitorder="little").view(np.uint32)


def unpack(backend, words, out, counter) -> None:
    """out[:k] := the k offsets whose bits are set in `words`; counter[0] := k.

      words    uint32 [w]      read
      out      int32 [>= k]    write  order unspecified (NumPy: ascending)
      counter  int32 [1]       write  k (a device array: read it only when k is not already known)
    GPU: queued on the current stream (a memset and one kernel), no host synchronisation.
    """
    nwords = int(words.shape[0])
    if backend.is_gpu:
        require_array("words", words, np.uint32)
        require_array("out", out, np.int32)
        counter.fill(0)
        if nwords:
            blocks = min(MAX_BLOCKS, -(-nwords // BITMAP_THREADS))
            backend.kernel("bitmap", "unpack_bitmap")((blocks,), (BITMAP_THREADS,),
                                                      (words, np.int32(nwords), out, counter))
        return
    found = np.flatnonzero(np.unpackbits(words.view(np.uint8), bitorder="little"))
    out[:found.shape[0]] = found
    counter[0] = found.shape[0]
