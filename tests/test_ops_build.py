"""The builder's counting-sort steps (dbfs.ops.csc_build): NumPy twins against brute force, and the CUDA
kernels (kernels/csc_build.cu) against the twins: counts with left-out keys, the in-place scan over
one and many tiles (more than one block's worth of tile totals), the scatter filling segments from
their ends (segments compared as multisets: their order is unspecified), segment lengths, the
non-empty segments, the row-major copy and whole segments appended below their cursors (in order, a
long segment among short ones, empty ones, a start past 0); and the same steps by the positions of
the keys present (a hypersparse block's non-empty columns): the keys marked, counted and placed at
their positions, the lengths and the row-major copy read through them."""

import numpy as np
import pytest

from dbfs.backend import Backend
from dbfs.ops import csc_build
from dbfs.ops.csc_build import (APPEND_SEGMENTS, SCAN_ITEMS, THREADS, add_counts, append_segments, count_keys,
                                count_nonempty, csr_from_csc, inclusive_scan, keep_keys, scatter_values,
                                segment_lengths)
from dbfs.ops.sparse import Positions, word_starts

pytestmark = pytest.mark.one_rank

CPU = Backend("cpu")


def random_entries(rng, nkeys, n, left_out=0.1):
    keys = rng.integers(0, nkeys, n).astype(np.int32)
    keys[rng.random(n) < left_out] = -1
    return keys, rng.integers(0, 1 << 30, n).astype(np.int32)


def segments_as_sets(ptr, values):
    return [sorted(values[ptr[k]:ptr[k + 1]].tolist()) for k in range(len(ptr) - 1)]


@pytest.mark.parametrize("nkeys, n", [(10, 1000), (100_000, 50)])     # bincount and unique branches
def test_count_twin(nkeys, n):
    rng = np.random.default_rng(1)
    keys, _ = random_entries(rng, nkeys, n)
    counts = np.full(nkeys, 3, np.int64)
    count_keys(CPU, keys, counts)
    assert np.array_equal(counts, 3 + np.bincount(keys[keys >= 0], minlength=nkeys))


def test_scatter_twin_fills_segments_from_their_ends():
    rng = np.random.default_rng(2)
    keys, values = random_entries(rng, 40, 3000)
    counts = np.zeros(41, np.int64)
    count_keys(CPU, keys, counts[:-1])
    inclusive_scan(CPU, counts[:-1])
    counts[-1] = counts[-2]
    ends = counts.copy()
    out = np.full(int(counts[-1]), -5, np.int32)
    for lo in range(0, 3000, 700):                            # several calls, like the chunks
        scatter_values(CPU, keys[lo:lo + 700], values[lo:lo + 700], counts[:-1], out)
    assert counts[0] == 0 and np.array_equal(counts[1:-1], ends[:-2]), "cursors finish at the starts"
    kept = keys >= 0
    expected = [sorted(values[kept][keys[kept] == k].tolist()) for k in range(40)]
    assert segments_as_sets(counts, out) == expected


def interleaved(keys, values):
    """(key, value) pairs in one array, as the builder's exchange delivers them."""
    return np.stack((keys, values), axis=1).ravel()


def test_twins_read_interleaved_pairs_in_place():
    """Stride 2 over (key, value) pairs counts and places what the arrays of their own do, either way
    round (the row-major copy's scatter takes the rows as keys)."""
    rng = np.random.default_rng(3)
    keys, values = random_entries(rng, 50, 2001)
    values = np.where(values % 3 == 0, -1, values % 50).astype(np.int32)
    pairs = interleaved(keys, values)
    for k, v, strided in ((keys, values, (pairs, pairs[1:])), (values, keys, (pairs[1:], pairs))):
        counts, from_pairs = np.zeros(51, np.int64), np.zeros(51, np.int64)
        count_keys(CPU, k, counts[:-1])
        count_keys(CPU, strided[0], from_pairs[:-1], stride=2)
        assert np.array_equal(counts, from_pairs)
        inclusive_scan(CPU, counts[:-1])
        counts[-1] = counts[-2]
        from_pairs = counts.copy()
        out, out_pairs = np.full(int(counts[-1]), -5, np.int32), np.full(int(counts[-1]), -5, np.int32)
        scatter_values(CPU, k, v, counts[:-1], out)
        scatter_values(CPU, *strided, from_pairs[:-1], out_pairs, stride=2)
        assert np.array_equal(counts, from_pairs) and np.array_equal(out, out_pairs)


def test_scatter_twin_never_writes_outside_the_output():
    out = np.zeros(2, np.int32)
    cursor = np.array([3, 0], np.int64)                        # one slot past the end, one before it
    scatter_values(CPU, np.array([0, 1], np.int32), np.array([7, 8], np.int32), cursor, out)
    assert out.tolist() == [0, 0]
    scatter_values(CPU, np.array([0], np.int32), np.array([9], np.int32), cursor, out)
    assert out.tolist() == [0, 9]


def test_row_major_twin_and_lengths():
    rng = np.random.default_rng(3)
    ncols, nrows = 30, 45
    col_ptr = np.concatenate(([0], np.cumsum(rng.integers(0, 9, ncols)))).astype(np.int64)
    row_idx = rng.integers(0, nrows, int(col_ptr[-1])).astype(np.int32)
    lengths = np.empty(ncols, np.int32)
    segment_lengths(CPU, col_ptr, lengths)
    assert np.array_equal(lengths, np.diff(col_ptr))
    assert count_nonempty(CPU, col_ptr) == int((lengths > 0).sum()) < ncols
    cursor = np.cumsum(np.bincount(row_idx, minlength=nrows)).astype(np.int64)
    col_idx = np.empty_like(row_idx)
    csr_from_csc(CPU, col_ptr, row_idx, cursor, col_idx)
    row_ptr = np.concatenate((cursor, [col_ptr[-1]]))
    columns = np.repeat(np.arange(ncols), np.diff(col_ptr))
    assert segments_as_sets(row_ptr, col_idx) == [sorted(columns[row_idx == r].tolist()) for r in range(nrows)]


def held_keys(backend, keys, nkeys: int, stride: int = 1) -> Positions:
    """The Positions of the keys present (keep_keys, in two calls, then the words' starts); the keys kept
    are the keys read."""
    xp = backend.xp
    words = xp.zeros(-(-nkeys // 32), xp.uint32)
    n = -(-keys.shape[0] // stride)
    kept = xp.full(n, -7, xp.int32)
    half = stride * (n // 2)
    keep_keys(backend, keys[:half], kept[:n // 2], words, stride)
    keep_keys(backend, keys[half:], kept[n // 2:], words, stride)
    assert (kept == keys[::stride]).all()
    starts = xp.empty(words.shape[0] + 1, xp.int32)
    return Positions(words, starts, word_starts(backend, words, starts))


def test_held_twins_count_and_place_by_position():
    """Keys over a range mostly empty: counted and placed at their positions, the segments those of the
    dense build at the present keys; their lengths (from any first segment) and the row-major copy read
    through the positions alike."""
    rng = np.random.default_rng(6)
    nkeys, nrows = 32 * 40, 50
    present = rng.choice(nkeys, 90, replace=False)
    keys = present[rng.integers(0, 90, 2000)].astype(np.int32)
    keys[::13] = -1
    values = rng.integers(0, nrows, 2000).astype(np.int32)
    held = held_keys(CPU, interleaved(keys, values), nkeys, stride=2)
    members = np.unique(keys[keys >= 0])
    assert held.count == members.shape[0] and np.array_equal(held.member(np.arange(held.count)), members)
    dense, counts = np.zeros(nkeys + 1, np.int64), np.zeros(held.count + 1, np.int64)
    count_keys(CPU, keys, dense[:-1])
    count_keys(CPU, interleaved(keys, values), counts[:-1], stride=2, positions=held)
    assert np.array_equal(counts[:-1], dense[members])
    for ptr in (dense, counts):
        inclusive_scan(CPU, ptr[:-1])
        ptr[-1:] = ptr[-2:-1]
    dense_out, held_out = np.empty(int(dense[-1]), np.int32), np.empty(int(counts[-1]), np.int32)
    scatter_values(CPU, keys, values, dense[:-1], dense_out)
    scatter_values(CPU, keys, values, counts[:-1], held_out, positions=held)
    assert segments_as_sets(counts, held_out) == [segment for k, segment in
                                                  enumerate(segments_as_sets(dense, dense_out)) if k in set(members)]
    for first, n in ((0, nkeys), (37, 500)):
        from_dense, from_held = np.empty(n, np.int32), np.empty(n, np.int32)
        segment_lengths(CPU, dense, from_dense, first=first)
        segment_lengths(CPU, counts, from_held, held, first)
        assert np.array_equal(from_held, from_dense) and np.array_equal(from_dense, np.diff(dense)[first:first + n])
    cursors = [np.cumsum(np.bincount(out, minlength=nrows)).astype(np.int64) for out in (dense_out, held_out)]
    by_rows = [np.empty_like(dense_out), np.empty_like(held_out)]
    csr_from_csc(CPU, dense, dense_out, cursors[0], by_rows[0])
    csr_from_csc(CPU, counts, held_out, cursors[1], by_rows[1], held)
    row_ptr = np.concatenate((cursors[0], [dense_out.shape[0]]))
    assert segments_as_sets(row_ptr, by_rows[0]) == segments_as_sets(row_ptr, by_rows[1])


def appended_case(rng, n=3 * APPEND_SEGMENTS + 7):
    """Segment starts (from 5, some empty, one of 20,000 values), values, and cursors at the ends of
    room for twice each segment."""
    lengths = rng.integers(0, 12, n)
    lengths[rng.random(n) < 0.3] = 0
    lengths[THREADS + 3] = 20_000
    starts = (5 + np.concatenate(([0], np.cumsum(lengths)))).astype(np.int64)
    values = rng.integers(0, 1 << 20, int(starts[-1])).astype(np.int32)
    cursor = np.cumsum(2 * lengths).astype(np.int64)
    return starts, values, cursor


def test_append_twin_places_whole_segments_below_their_cursors():
    starts, values, cursor = appended_case(np.random.default_rng(4))
    ends = cursor.copy()
    out = np.full(int(cursor[-1]), -1, np.int32)
    append_segments(CPU, starts, values, 1000, cursor, out)
    lengths = np.diff(starts)
    assert np.array_equal(cursor, ends - lengths)
    for k in range(len(lengths)):
        assert np.array_equal(out[cursor[k]:ends[k]], values[starts[k]:starts[k + 1]] + 1000)
    assert np.count_nonzero(out >= 0) == lengths.sum()
    cursor = np.array([1, 9], np.int64)                        # a segment reaching below slot 0, one past the end
    out = np.zeros(4, np.int32)
    append_segments(CPU, np.array([0, 3, 4], np.int64), np.arange(1, 5, dtype=np.int32), 0, cursor, out)
    assert out.tolist() == [3, 0, 0, 0] and cursor.tolist() == [-2, 8]


def test_append_twin_steps_change_nothing(monkeypatch):
    """The twin's steps of TWIN_ITEMS segments, their values TWIN_CHUNK at a time, bound its temporaries only:
    steps of 7 segments and 5 values (the long segment in many) place what one step does, at either width."""
    for width in (np.int64, np.int32):
        starts, values, ends = appended_case(np.random.default_rng(5))
        starts, ends = starts.astype(width), ends.astype(width)
        results = []
        for items, chunk in ((1 << 15, 1 << 20), (7, 5)):
            monkeypatch.setattr(csc_build, "TWIN_ITEMS", items)
            monkeypatch.setattr(csc_build, "TWIN_CHUNK", chunk)
            cursor, out = ends.copy(), np.full(int(ends[-1]), -1, np.int32)
            append_segments(CPU, starts, values, 1000, cursor, out)
            results.append((cursor, out))
        assert np.array_equal(results[0][0], results[1][0]) and np.array_equal(results[0][1], results[1][1])
        assert results[0][0].dtype == width


def test_add_counts_twin():
    totals = np.array([5, 0, 1 << 40], np.int64)
    add_counts(CPU, np.array([1, 2, (1 << 32) - 1], np.uint32), totals)
    assert totals.tolist() == [6, 2, (1 << 40) + (1 << 32) - 1]


def placed_both_ways(gpu, keys, values, nkeys: int, stride: int = 1, offsets=np.int64, held=(None, None)):
    """The entries counted, scanned and placed by the twins and by the kernels (counts and cursors of
    dtype `offsets`; by the positions of the keys present where `held` gives their host and device
    Positions), which must agree; returns (host counts, device counts, host placed values)."""
    import cupy
    slots = nkeys if held[0] is None else held[0].count
    host_counts, device_counts = np.zeros(slots + 1, offsets), cupy.zeros(slots + 1, offsets)
    count_keys(CPU, keys, host_counts[:-1], stride, held[0])
    count_keys(gpu, cupy.asarray(keys), device_counts[:-1], stride, held[1])
    assert np.array_equal(host_counts, device_counts.get())
    for counts, backend in ((host_counts, CPU), (device_counts, gpu)):
        inclusive_scan(backend, counts[:-1])
        counts[-1:] = counts[-2:-1]
    host_out = np.empty(int(host_counts[-1]), np.int32)
    device_out = cupy.empty(host_out.shape[0], cupy.int32)
    scatter_values(CPU, keys, values, host_counts[:-1], host_out, stride, held[0])
    scatter_values(gpu, cupy.asarray(keys), cupy.asarray(values), device_counts[:-1], device_out, stride, held[1])
    assert np.array_equal(host_counts, device_counts.get())
    assert segments_as_sets(host_counts, host_out) == segments_as_sets(host_counts, device_out.get())
    return host_counts, device_counts, host_out


@pytest.mark.gpu
@pytest.mark.parametrize("offsets", [np.int64, np.int32])
def test_gpu_kernels_equal_the_twins(offsets):
    """Counts, scans, cursors and offsets at either width (the kernels compiled for each)."""
    import cupy
    gpu = Backend("gpu", 0)
    rng = np.random.default_rng(5)
    tile = THREADS * SCAN_ITEMS
    for n in (0, 1, tile - 1, tile, tile + 1, tile * tile + 3 * tile + 5):
        values = rng.integers(-5, 100, n).astype(offsets)
        device = cupy.asarray(values)
        inclusive_scan(gpu, device)
        assert np.array_equal(device.get(), np.cumsum(values)), n
    nkeys = 70_000
    keys, values = random_entries(rng, nkeys, 1_000_003)
    host_counts, device_counts, host_out = placed_both_ways(gpu, keys, values, nkeys, offsets=offsets)
    lengths = cupy.empty(nkeys, cupy.int32)
    segment_lengths(gpu, device_counts, lengths)
    assert np.array_equal(lengths.get(), np.diff(host_counts))
    assert count_nonempty(gpu, device_counts) == count_nonempty(CPU, host_counts) < nkeys
    summed = rng.integers(0, 1 << (32 if offsets == np.int64 else 12), nkeys, dtype=np.uint64).astype(np.uint32)
    host_totals, device_totals = host_counts.copy(), device_counts.copy()
    add_counts(CPU, summed, host_totals[:-1])
    add_counts(gpu, cupy.asarray(summed), device_totals[:-1])
    assert np.array_equal(host_totals, device_totals.get())
    assert count_nonempty(gpu, cupy.zeros(1, offsets)) == 0
    nrows = 5000
    row_idx = (host_out % nrows).astype(np.int32)
    cursor = np.cumsum(np.bincount(row_idx, minlength=nrows)).astype(offsets)
    host_cols, device_cursor = np.empty_like(row_idx), cupy.asarray(cursor)
    csr_from_csc(CPU, host_counts, row_idx, cursor, host_cols)
    device_cols = cupy.empty(row_idx.shape[0], cupy.int32)
    csr_from_csc(gpu, device_counts, cupy.asarray(row_idx), device_cursor, device_cols)
    assert np.array_equal(cursor, device_cursor.get())
    row_ptr = np.concatenate((cursor, [row_idx.shape[0]]))
    assert segments_as_sets(row_ptr, host_cols) == segments_as_sets(row_ptr, device_cols.get())
    pairs = interleaved(keys, (values % nkeys).astype(np.int32))      # either half a valid key
    for stride_keys, stride_values in ((pairs, pairs[1:]), (pairs[1:], pairs)):
        placed_both_ways(gpu, stride_keys, stride_values, nkeys, stride=2, offsets=offsets)
    starts, values, cursor = (a.astype(offsets) if a.dtype == np.int64 else a for a in appended_case(rng))
    host_out, device_out = np.full(int(cursor[-1]), -1, np.int32), cupy.full(int(cursor[-1]), -1, cupy.int32)
    device_cursor = cupy.asarray(cursor)
    append_segments(CPU, starts, values, 7, cursor, host_out)
    append_segments(gpu, cupy.asarray(starts), cupy.asarray(values), 7, device_cursor, device_out)
    assert np.array_equal(cursor, device_cursor.get()) and np.array_equal(host_out, device_out.get())


@pytest.mark.gpu
@pytest.mark.parametrize("offsets", [np.int64, np.int32])
def test_gpu_held_kernels_equal_the_twins(offsets):
    """The steps by the positions of the keys present (a million entries over 2^22 keys, one in 16
    present): the marks, counts, cursors, lengths and row-major copy of the kernels are the twins'."""
    import cupy
    gpu = Backend("gpu", 0)
    rng = np.random.default_rng(7)
    nkeys, nrows = 1 << 22, 5000
    present = rng.choice(nkeys, nkeys // 16, replace=False)
    keys = present[rng.integers(0, present.shape[0], 1_000_003)].astype(np.int32)
    keys[::11] = -1
    values = rng.integers(0, nrows, keys.shape[0]).astype(np.int32)
    pairs = interleaved(keys, values)
    host_held, device_held = held_keys(CPU, pairs, nkeys, stride=2), held_keys(gpu, cupy.asarray(pairs), nkeys, 2)
    assert host_held.count == device_held.count
    assert np.array_equal(host_held.words, device_held.words.get())
    assert np.array_equal(host_held.starts, device_held.starts.get())
    host_counts, device_counts, host_out = placed_both_ways(gpu, pairs, pairs[1:], nkeys, 2, offsets,
                                                           (host_held, device_held))
    for first, n in ((0, nkeys), (12345, 70_000)):
        host_lengths, device_lengths = np.empty(n, np.int32), cupy.empty(n, cupy.int32)
        segment_lengths(CPU, host_counts, host_lengths, host_held, first)
        segment_lengths(gpu, device_counts, device_lengths, device_held, first)
        assert np.array_equal(host_lengths, device_lengths.get())
    cursor = np.cumsum(np.bincount(host_out, minlength=nrows)).astype(offsets)
    device_cursor = cupy.asarray(cursor)
    host_cols, device_cols = np.empty_like(host_out), cupy.empty(host_out.shape[0], cupy.int32)
    csr_from_csc(CPU, host_counts, host_out, cursor, host_cols, host_held)
    csr_from_csc(gpu, device_counts, cupy.asarray(host_out), device_cursor, device_cols, device_held)
    assert np.array_equal(cursor, device_cursor.get())
    row_ptr = np.concatenate((cursor, [host_out.shape[0]]))
    assert segments_as_sets(row_ptr, host_cols) == segments_as_sets(row_ptr, device_cols.get())


@pytest.mark.gpu
def test_gpu_urgent_stream_outranks_a_plain_one():
    """The build's NCCL rounds run on a stream of the device's greatest priority (lower is greater)."""
    import cupy
    assert Backend("gpu", 0).urgent_stream().priority < cupy.cuda.Stream(non_blocking=True).priority
