"""Offset sets as lists or bitmaps: the two message encodings of paper 004 section 5 and the two
frontier forms of the direction-optimizing BFS (top-down lists, bottom-up bitmaps), and the visited
bit tests of the NumPy twins.

A set of offsets in [0, nbits) is either an int32 list or a uint32 bitmap of ceil(nbits/32) words
(bit o of word o // 32 for offset o). GPU: kernels/bitmap.cu (atomicOr scatter; block-wide unpack);
NumPy twins below with the same contract. A list's length may live on the device, and the search's
control block may gate the conversions (dbfs.ops.arrays).
"""

from __future__ import annotations

import numpy as np

from dbfs.kernels import BLOCK_THREADS
from dbfs.ops.arrays import (NULL, gate_args, gate_open, host_length, length_args, require_array, require_offsets,
                             wave_blocks)


def pack(backend, offsets, length, words, control=None, steps: int = 0, form: int = -1) -> None:
    """words := the bitmap of offsets[:length].

      offsets  int32 [>= n]     read   offsets, each < 32 * len(words); duplicates allowed
      length   int or int32 [1] read   n, on the host or on the device
      words    uint32 [w]       write  all w words (zeroed first)
      control  the search's control block (None: always runs), with the steps (a bit mask of STEP
               values) and frontier form under which the conversion runs
    GPU: two kernels on the current stream (zero, scatter), no host synchronisation.
    """
    if backend.is_gpu:
        require_array("offsets", offsets, np.int32)
        require_array("words", words, np.uint32)
        gate = gate_args(control, steps, form)
        nwords = int(words.shape[0])
        zero, scatter = backend.kernel("bitmap", "zero_words"), backend.kernel("bitmap", "pack_offsets")
        zero((wave_blocks(backend, zero, nwords),), (BLOCK_THREADS,), (words, np.int32(nwords), *gate))
        scatter((wave_blocks(backend, scatter, offsets.shape[0]),), (BLOCK_THREADS,),
                (offsets, *length_args(length), words, *gate))
        return
    if not gate_open(control, steps, form):
        return
    words[:] = words_of(offsets[:host_length(length)], 32 * words.shape[0])


def unpack(backend, words, out, counter, control=None, steps: int = 0, form: int = -1, col_ptr=None,
           columns=None) -> None:
    """out[:k] := the k offsets whose bits are set in `words` (with col_ptr, only those of columns with
    an entry in that CSC block); counter[0] := k.

      words    uint32 [w]      read
      col_ptr  int32/int64 [32w+1] or None  read   offsets; or, where the Positions `columns` of the
                                                   block's non-empty columns hold them, theirs (unread:
                                                   the columns' words are the filter)
      out      int32 [>= k]    write  order unspecified (NumPy: ascending)
      counter  int32 [1]       write  k (a device array: read it only when k is not already known);
                                      without a control block it is zeroed here, with one the caller
                                      leaves it 0 (a gated launch cannot clear it)
    GPU: queued on the current stream, no host synchronisation.
    """
    nwords = int(words.shape[0])
    if backend.is_gpu:
        require_array("words", words, np.uint32)
        require_array("out", out, np.int32)
        offsets = require_offsets("col_ptr", col_ptr) if col_ptr is not None else None
        if control is None:
            counter.fill(0)
        dense = col_ptr is not None and columns is None
        gather = backend.kernel("bitmap", "unpack_bitmap", offsets)
        gather((wave_blocks(backend, gather, nwords),), (BLOCK_THREADS,),
               (words, np.int32(nwords), col_ptr if dense else NULL, NULL if columns is None else columns.words, out,
                counter, *gate_args(control, steps, form)))
        return
    if not gate_open(control, steps, form):
        return
    found = offsets_of(words if columns is None else words & columns.words)
    if col_ptr is not None and columns is None:
        found = found[col_ptr[found + 1] != col_ptr[found]]
    out[:found.shape[0]] = found
    counter[0] = found.shape[0]


def words_of(offsets, nbits: int) -> np.ndarray:
    """NumPy: the uint32 bitmap of `offsets` (each < nbits, a multiple of 32)."""
    bits = np.zeros(nbits, bool)
    bits[offsets] = True
    return np.packbits(bits, bitorder="little").view(np.uint32)


def offsets_of(words: np.ndarray) -> np.ndarray:
    """NumPy: the offsets whose bits are set in the uint32 bitmap `words`, ascending (int64)."""
    return np.flatnonzero(np.unpackbits(words.view(np.uint8), bitorder="little"))


def visited(bitmap: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Bool per row: its bit in the uint32 bitmap is set (NumPy)."""
    return ((bitmap[rows >> 5] >> (rows & 31).astype(np.uint32)) & np.uint32(1)).astype(bool)


def set_visited(bitmap: np.ndarray, rows: np.ndarray) -> None:
    """Set the bits of `rows` (sorted ascending, unique) in the uint32 bitmap (NumPy)."""
    words = rows >> 5
    masks = np.left_shift(np.uint32(1), (rows & 31).astype(np.uint32))
    word_ids, word_starts = np.unique(words, return_index=True)
    bitmap[word_ids] |= np.bitwise_or.reduceat(masks, word_starts)
