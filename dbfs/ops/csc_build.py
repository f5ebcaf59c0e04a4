"""Counting-sort steps of the graph builder (Graph500 kernel 1; paper 004 section 3.1): per-key counts
(or counts summed elsewhere, added), an in-place inclusive scan that turns the counts into segment
ends, a scatter that fills every segment from its end (so the scanned counts finish as the segment
starts: the count array becomes the offsets array, with no second per-segment array), whole segments
appended below such cursors, segment lengths, the non-empty segments, and the row-major copy of a CSC
block. Where a hypersparse block's offsets are built held by the positions of its non-empty columns
(dbfs.build), the keys are first kept and marked into a bitmap (keep_keys: the Positions' words), and the
counts, cursors and offsets are those of the held columns: a key's at its position
(dbfs.ops.sparse.Positions).

GPU method: kernels/csc_build.cu (atomics on the counts and cursors; a three-launch tile scan whose
code does not depend on the array size). The counts, cursors and offsets are a graph's offsets
(dbfs.ops.arrays.OFFSETS: int32 or int64, one width in a launch). NumPy twins below, with the same
contracts; where the GPU order is unspecified the twin's is stated.
"""

from __future__ import annotations

import numpy as np

from dbfs.kernels import APPEND_SEGMENTS, SCAN_ITEMS
from dbfs.kernels import BLOCK_THREADS as THREADS
from dbfs.ops.arrays import BUILD_MAX_BLOCKS, OFFSETS, TWIN_CHUNK, TWIN_ITEMS, launch_checked, require_offsets
from dbfs.ops.sparse import column_starts, held_args

def strided_count(array, stride: int) -> int:
    """The entries of a 1-D array read at every `stride`-th element from its first."""
    return -(-int(array.shape[0]) // stride)


def count_keys(backend, keys, counts, stride: int = 1, positions=None) -> None:
    """counts[k] += the number of entries with key k, for every key >= 0 (negative keys are skipped); with
    `positions` (dbfs.ops.sparse.Positions holding every key), counts[position of k].

      keys    int32 [stride * (n - 1) + 1 or more]   read   entry e's key at keys[e * stride], each
                                                     < len(counts) (or held) or negative
      counts  offsets [m]   read/write
    stride 2 reads the keys of (key, value) pairs interleaved in one array in place.
    GPU: one kernel on the current stream, no host synchronisation.
    """
    n = strided_count(keys, stride)
    if backend.is_gpu:
        launch_checked(backend, "csc_build", "count_keys", n,
                       {"keys": (keys, np.int32), "counts": (counts, OFFSETS)},
                       (keys, np.int64(n), np.int32(stride), counts, *held_args(positions)), BUILD_MAX_BLOCKS)
        return
    keys = keys[::stride]
    kept = keys[keys >= 0]
    if positions is not None:
        kept = positions.at(kept)
    if counts.shape[0] <= 4 * kept.shape[0]:
        counts += np.bincount(kept, minlength=counts.shape[0])
    else:                                   # few keys over a long array: no array of len(counts)
        present, times = np.unique(kept, return_counts=True)
        counts[present] += times


def keep_keys(backend, keys, kept, words, stride: int = 1) -> None:
    """kept[e] := keys[e * stride], and bit k of `words` set for every key k >= 0 kept (the words of the
    keys' Positions, zeroed before the first call).

      keys   int32 [stride * (n - 1) + 1 or more]  read   entry e's key at keys[e * stride]
      kept   int32 [n]                              write
      words  uint32 [m]                             read/write   m * 32 > every key
    GPU: one kernel on the current stream (a key's bit tested before it is set: one atomic a key, not an
    entry), no host synchronisation.
    """
    n = strided_count(keys, stride)
    if backend.is_gpu:
        launch_checked(backend, "csc_build", "keep_keys", n,
                       {"keys": (keys, np.int32), "kept": (kept, np.int32), "words": (words, np.uint32)},
                       (keys, np.int64(n), np.int32(stride), kept, words), BUILD_MAX_BLOCKS)
        return
    kept[:] = keys[::stride][:n]
    present = kept[kept >= 0]
    np.bitwise_or.at(words, present >> 5, np.uint32(1) << (present & 31).astype(np.uint32))


def add_counts(backend, counts, totals) -> None:
    """totals[k] += counts[k] (column counts summed elsewhere, added to the column pointers' counts).

      counts  uint32 [n]   read
      totals  offsets [n]  read/write
    GPU: one kernel on the current stream, no host synchronisation.
    """
    n = int(counts.shape[0])
    if backend.is_gpu:
        launch_checked(backend, "csc_build", "add_counts", n,
                       {"counts": (counts, np.uint32), "totals": (totals, OFFSETS)}, (counts, np.int64(n), totals),
                       BUILD_MAX_BLOCKS)
        return
    totals += counts


def inclusive_scan(backend, values) -> None:
    """values[k] := values[0] + ... + values[k], in place.

      values  offsets [n]   read/write   (the sums fit their width)
    GPU: three kernels on the current stream (tile totals, their scan by one block, the tiles), with a
    scratch array of one int64 per tile of THREADS * SCAN_ITEMS values; no host synchronisation.
    """
    n = int(values.shape[0])
    if not backend.is_gpu:
        np.cumsum(values, out=values)
        return
    offsets = require_offsets("values", values)
    if n == 0:
        return
    tiles = -(-n // (THREADS * SCAN_ITEMS))
    totals = backend.xp.empty(tiles, backend.xp.int64)
    items = np.int32(SCAN_ITEMS)
    backend.kernel("csc_build", "tile_totals", offsets)((tiles,), (THREADS,), (values, np.int64(n), items, totals))
    backend.kernel("csc_build", "scan_totals")((1,), (THREADS,), (totals, np.int64(tiles), items))
    backend.kernel("csc_build", "scan_tiles", offsets)((tiles,), (THREADS,), (values, np.int64(n), items, totals))


def scatter_values(backend, keys, values, cursor, out, stride: int = 1, positions=None) -> None:
    """Every entry e with key k = keys[e * stride] >= 0 takes slot cursor[k] - 1 and decrements
    cursor[k]: out[slot] = values[e * stride]. With cursor = segment ends the segments fill from their
    ends. With `positions` (holding every key), cursor[position of k].

      keys    int32 [stride * (n - 1) + 1 or more]  read   each key < len(cursor) or negative (left out)
      values  int32 [as keys]   read
      cursor  offsets [m]       read/write   finishes lowered by each key's count
      out     int32 [capacity]  write  slots outside [0, capacity) are not written
    stride 2 reads (key, value) pairs interleaved in one array in place: keys = pairs, values =
    pairs[1:]. The order inside a segment is unspecified (NumPy: the entries of one call in input
    order, placed before those of earlier calls). GPU: one kernel on the current stream, no host
    synchronisation.
    """
    n = strided_count(keys, stride)
    if backend.is_gpu:
        launch_checked(backend, "csc_build", "scatter_values", n,
                       {"keys": (keys, np.int32), "values": (values, np.int32), "cursor": (cursor, OFFSETS),
                        "out": (out, np.int32)},
                       (keys, values, np.int64(n), np.int32(stride), cursor, out, np.int64(out.shape[0]),
                        *held_args(positions)), BUILD_MAX_BLOCKS)
        return
    keys, values = keys[::stride], values[::stride][:n]
    kept = keys >= 0
    keys, values = keys[kept], values[kept]
    if positions is not None:                   # as narrow as the keys: the sort below holds several copies
        keys = positions.at(keys).astype(np.int32)
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    present, first, times = np.unique(sorted_keys, return_index=True, return_counts=True)
    run = np.repeat(np.arange(present.shape[0]), times)
    slots = cursor[sorted_keys] - times[run] + (np.arange(sorted_keys.shape[0]) - first[run])
    inside = (slots >= 0) & (slots < out.shape[0])
    out[slots[inside]] = values[order][inside]
    cursor[present] -= times


def append_segments(backend, starts, values, offset: int, cursor, out) -> None:
    """Segment k of `values` (values[starts[k]:starts[k + 1]]), each value plus `offset`, into the slots
    just below cursor[k], in order; cursor[k] is lowered by the segment's length. With cursor = segment
    ends the segments fill from their ends, as scatter_values fills them an entry at a time.

      starts  offsets [n + 1]       read   ascending offsets into values (starts[0] need not be 0)
      values  int32 [>= starts[n]]  read
      cursor  offsets [n]           read/write   (as wide as starts)
      out     int32 [capacity]      write  slots outside [0, capacity) are not written
    GPU: one kernel on the current stream (a block takes APPEND_SEGMENTS segments at a time, each value's
    segment found by a binary search of their starts in shared memory; no atomics), no host
    synchronisation. NumPy: TWIN_ITEMS segments a step, their entries TWIN_CHUNK at a time.
    """
    n = int(starts.shape[0]) - 1
    if backend.is_gpu:
        launch_checked(backend, "csc_build", "append_segments", n,
                       {"starts": (starts, OFFSETS), "values": (values, np.int32), "cursor": (cursor, OFFSETS),
                        "out": (out, np.int32)},
                       (starts, np.int64(n), values, np.int32(offset), cursor, out, np.int64(out.shape[0])),
                       BUILD_MAX_BLOCKS, per_block=APPEND_SEGMENTS)
        return
    for first in range(0, n, TWIN_ITEMS):
        stop = min(n, first + TWIN_ITEMS)
        lows, highs = starts[first:stop], starts[first + 1:stop + 1]
        below = cursor[first:stop] - highs                      # a segment's slot of value v: below + v
        for lo in range(int(lows[0]), int(highs[-1]), TWIN_CHUNK):
            hi = min(int(highs[-1]), lo + TWIN_CHUNK)
            held = np.minimum(highs, hi) - np.maximum(lows, lo)     # each segment's values in the step, or < 0
            slots = np.repeat(below, np.maximum(held, 0))
            slots += np.arange(lo, hi)
            inside = (slots >= 0) & (slots < out.shape[0])
            out[slots[inside]] = values[lo:hi][inside] + offset
    cursor -= starts[1:]
    cursor += starts[:-1]


def segment_lengths(backend, ptr, out, columns=None, first: int = 0) -> None:
    """out[k] := the length of segment first + k for k < len(out): ptr[first + k + 1] - ptr[first + k], or
    through the Positions `columns` by which ptr holds the non-empty segments' offsets (column_starts).

      ptr  int32/int64 [>= first + n + 1, or the held segments' + 1]  read   offsets
      out  int32 [n]               write
    GPU: one kernel on the current stream, no host synchronisation.
    """
    n = int(out.shape[0])
    if backend.is_gpu:
        launch_checked(backend, "csc_build", "segment_lengths", n,
                       {"ptr": (ptr, OFFSETS), "out": (out, np.int32)},
                       (ptr, *held_args(columns), np.int64(first), np.int64(n), out), BUILD_MAX_BLOCKS)
        return
    if columns is None:
        np.subtract(ptr[first + 1:first + n + 1], ptr[first:first + n], out=out, casting="unsafe")
        return
    for lo in range(0, n, TWIN_CHUNK):
        hi = min(n, lo + TWIN_CHUNK)
        out[lo:hi] = np.diff(column_starts(ptr, columns, np.arange(first + lo, first + hi + 1, dtype=np.int64)))


def count_nonempty(backend, ptr) -> int:
    """The segments of offsets `ptr` (int32 or int64 [n + 1]) that hold an entry: ptr[k + 1] > ptr[k].
    GPU: one kernel and a read-back of the count (one host synchronisation)."""
    n = int(ptr.shape[0]) - 1
    if backend.is_gpu:
        count = backend.xp.zeros(1, backend.xp.uint64)
        launch_checked(backend, "csc_build", "count_nonempty", n, {"ptr": (ptr, OFFSETS)}, (ptr, np.int64(n), count),
                       BUILD_MAX_BLOCKS)
        return int(count[0])
    return int(np.count_nonzero(ptr[1:] != ptr[:-1]))


def csr_from_csc(backend, col_ptr, row_idx, cursor, col_idx, columns=None) -> None:
    """The row-major copy of a CSC block: every entry (column c, row row_idx[e]) takes slot
    cursor[row] - 1 of col_idx, which receives c; cursor[row] is decremented.

      col_ptr  int32/int64 [ncols + 1]  read         offsets (of the columns held by the Positions
                                                     `columns`, where given: their members are the c)
      row_idx  int32 [nnz]              read
      cursor   offsets [nrows]          read/write   row ends in, row starts out (as wide as col_ptr)
      col_idx  int32 [nnz]        write
    The order inside a row is unspecified (NumPy: ascending columns). GPU: one kernel on the current
    stream, no host synchronisation.
    """
    nnz, ncols = int(row_idx.shape[0]), int(col_ptr.shape[0]) - 1
    if backend.is_gpu:
        nwords = 0 if columns is None else int(columns.words.shape[0])
        launch_checked(backend, "csc_build", "csr_from_csc", nnz,
                       {"col_ptr": (col_ptr, OFFSETS), "row_idx": (row_idx, np.int32),
                        "cursor": (cursor, OFFSETS), "col_idx": (col_idx, np.int32)},
                       (col_ptr, np.int64(ncols), *held_args(columns), np.int64(nwords), row_idx, np.int64(nnz),
                        cursor, col_idx), BUILD_MAX_BLOCKS)
        return
    members = np.arange(ncols) if columns is None else columns.member(np.arange(ncols))
    entry_columns = np.repeat(members.astype(np.int32), np.diff(col_ptr))
    scatter_values(backend, row_idx, entry_columns, cursor, col_idx)
