"""Counting-sort steps of the graph builder (Graph500 kernel 1; paper 004 section 3.1): per-key counts
(or counts summed elsewhere, added), an in-place inclusive scan that turns the counts into segment
ends, a scatter that fills every segment from its end (so the scanned counts finish as the segment
starts: the count array becomes the offsets array, with no second per-segment array), whole segments
appended below such cursors, segment lengths, the non-empty segments, and the row-major copy of a CSC
block.

GPU method: kernels/csc_build.cu (atomics on the counts and cursors; a three-launch tile scan whose
code does not depend on the array size). The counts, cursors and offsets are a graph's offsets
(dbfs.ops.arrays.OFFSETS: int32 or int64, one width in a launch). NumPy twins below, with the same
contracts; where the GPU order is unspecified the twin's is stated.
"""

from __future__ import annotations

import numpy as np

from dbfs.kernels import APPEND_SEGMENTS, SCAN_ITEMS
from dbfs.kernels import BLOCK_THREADS as THREADS
from dbfs.ops.arrays import BUILD_MAX_BLOCKS, OFFSETS, launch_checked, require_offsets

def strided_count(array, stride: int) -> int:
    """The entries of a 1-D array read at every `stride`-th element from its first."""
    return -(-int(array.shape[0]) // stride)


def count_keys(backend, keys, counts, stride: int = 1) -> None:
    """counts[k] += the number of entries with key k, for every key >= 0 (negative keys are skipped).

      keys    int32 [stride * (n - 1) + 1 or more]   read   entry e's key at keys[e * stride], each
                                                     < len(counts) or negative
      counts  offsets [m]   read/write
    stride 2 reads the keys of (key, value) pairs interleaved in one array in place.
    GPU: one kernel on the current stream, no host synchronisation.
    """
    n = strided_count(keys, stride)
    if backend.is_gpu:
        launch_checked(backend, "csc_build", "count_keys", n,
                       {"keys": (keys, np.int32), "counts": (counts, OFFSETS)},
                       (keys, np.int64(n), np.int32(stride), counts), BUILD_MAX_BLOCKS)
        return
    keys = keys[::stride]
    kept = keys[keys >= 0]
    if counts.shape[0] <= 4 * kept.shape[0]:
        counts += np.bincount(kept, minlength=counts.shape[0])
    else:                                   # few keys over a long array: no array of len(counts)
        present, times = np.unique(kept, return_counts=True)
        counts[present] += times


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


def scatter_values(backend, keys, values, cursor, out, stride: int = 1) -> None:
    """Every entry e with key k = keys[e * stride] >= 0 takes slot cursor[k] - 1 and decrements
    cursor[k]: out[slot] = values[e * stride]. With cursor = segment ends the segments fill from their
    ends.

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
                       (keys, values, np.int64(n), np.int32(stride), cursor, out, np.int64(out.shape[0])),
                       BUILD_MAX_BLOCKS)
        return
    keys, values = keys[::stride], values[::stride][:n]
    kept = keys >= 0
    keys, values = keys[kept], values[kept]
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
    synchronisation.
    """
    n = int(starts.shape[0]) - 1
    if backend.is_gpu:
        launch_checked(backend, "csc_build", "append_segments", n,
                       {"starts": (starts, OFFSETS), "values": (values, np.int32), "cursor": (cursor, OFFSETS),
                        "out": (out, np.int32)},
                       (starts, np.int64(n), values, np.int32(offset), cursor, out, np.int64(out.shape[0])),
                       BUILD_MAX_BLOCKS, per_block=APPEND_SEGMENTS)
        return
    lengths = np.diff(starts)
    segment = np.repeat(np.arange(n), lengths)
    at = np.arange(starts[0], starts[n]) if n else np.empty(0, np.int64)
    slots = cursor[segment] - (starts[segment + 1] - at)
    inside = (slots >= 0) & (slots < out.shape[0])
    out[slots[inside]] = values[at[inside]] + offset
    cursor -= lengths


def segment_lengths(backend, ptr, out) -> None:
    """out[k] := ptr[k + 1] - ptr[k] for k < len(out).

      ptr  int32/int64 [>= n + 1]  read   offsets
      out  int32 [n]               write
    GPU: one kernel on the current stream, no host synchronisation.
    """
    n = int(out.shape[0])
    if backend.is_gpu:
        launch_checked(backend, "csc_build", "segment_lengths", n,
                       {"ptr": (ptr, OFFSETS), "out": (out, np.int32)}, (ptr, np.int64(n), out), BUILD_MAX_BLOCKS)
        return
    np.subtract(ptr[1:n + 1], ptr[:n], out=out, casting="unsafe")


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


def csr_from_csc(backend, col_ptr, row_idx, cursor, col_idx) -> None:
    """The row-major copy of a CSC block: every entry (column c, row row_idx[e]) takes slot
    cursor[row] - 1 of col_idx, which receives c; cursor[row] is decremented.

      col_ptr  int32/int64 [ncols + 1]  read         offsets
      row_idx  int32 [nnz]              read
      cursor   offsets [nrows]          read/write   row ends in, row starts out (as wide as col_ptr)
      col_idx  int32 [nnz]        write
    The order inside a row is unspecified (NumPy: ascending columns). GPU: one kernel on the current
    stream, no host synchronisation.
    """
    nnz, ncols = int(row_idx.shape[0]), int(col_ptr.shape[0]) - 1
    if backend.is_gpu:
        launch_checked(backend, "csc_build", "csr_from_csc", nnz,
                       {"col_ptr": (col_ptr, OFFSETS), "row_idx": (row_idx, np.int32),
                        "cursor": (cursor, OFFSETS), "col_idx": (col_idx, np.int32)},
                       (col_ptr, np.int32(ncols), row_idx, np.int64(nnz), cursor, col_idx), BUILD_MAX_BLOCKS)
        return
    columns = np.repeat(np.arange(ncols, dtype=np.int32), np.diff(col_ptr))
    scatter_values(backend, row_idx, columns, cursor, col_idx)
