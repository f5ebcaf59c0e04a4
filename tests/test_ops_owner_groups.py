"""The builder's grouping by owner rank (dbfs.ops.owner_groups): the NumPy twins against brute force
(counts with left-out owners, groups filled from their starts over several calls, one word or an
interleaved pair per entry, nothing written outside the buffer), and the CUDA kernels
(kernels/owner_groups.cu) against the twins, groups compared as multisets (their order is unspecified),
for owners in shared memory and beyond it."""

import numpy as np
import pytest

from dbfs.backend import Backend
from dbfs.ops.owner_groups import count_owners, group_by_owner

CPU = Backend("cpu")


def random_routing(rng, ranks, n):
    """Owners in [0, ranks) with some left out (ranks itself and -1), distinct-ish columns and rows."""
    owner = rng.integers(0, ranks, n).astype(np.int32)
    owner[rng.random(n) < 0.1] = ranks
    owner[rng.random(n) < 0.02] = -1
    return owner, rng.integers(0, 1 << 30, n).astype(np.int32), rng.integers(0, 1 << 30, n).astype(np.int32)


def grouped(owner, cols, rows, ranks):
    """The twins' result from zero: (groups' offsets, the words)."""
    counts = np.zeros(ranks, np.int64)
    count_owners(CPU, owner, counts)
    starts = np.concatenate(([0], np.cumsum(counts)))
    cursor = starts[:-1].copy()
    out = np.full((1 if rows is None else 2) * int(starts[-1]), -7, np.int32)
    group_by_owner(CPU, owner, cols, rows, cursor, out)
    assert np.array_equal(cursor, starts[1:]), "cursors finish at the groups' ends"
    return starts, out


def groups_as_sets(starts, out, width):
    entries = out.reshape(-1, width)
    return [sorted(map(tuple, entries[starts[p]:starts[p + 1]].tolist())) for p in range(len(starts) - 1)]


@pytest.mark.parametrize("with_rows", [True, False])
def test_twins_group_every_kept_entry_by_owner(with_rows):
    rng = np.random.default_rng(1)
    ranks = 5
    owner, cols, rows = random_routing(rng, ranks, 2000)
    starts, out = grouped(owner, cols, rows if with_rows else None, ranks)
    kept = (owner >= 0) & (owner < ranks)
    assert np.array_equal(np.diff(starts), np.bincount(owner[kept], minlength=ranks))
    width = 2 if with_rows else 1
    words = np.stack((cols, rows), axis=1) if with_rows else cols[:, None]
    expected = [sorted(map(tuple, words[owner == p].tolist())) for p in range(ranks)]
    assert groups_as_sets(starts, out, width) == expected


def test_twin_fills_groups_over_several_calls_in_input_order():
    owner = np.array([1, 0, 1, 1, 0], np.int32)
    cols, rows = np.arange(10, 15, dtype=np.int32), np.arange(20, 25, dtype=np.int32)
    cursor, out = np.array([0, 2], np.int64), np.zeros(10, np.int32)
    group_by_owner(CPU, owner[:2], cols[:2], rows[:2], cursor, out)
    group_by_owner(CPU, owner[2:], cols[2:], rows[2:], cursor, out)
    assert out.reshape(-1, 2).tolist() == [[11, 21], [14, 24], [10, 20], [12, 22], [13, 23]]
    assert cursor.tolist() == [2, 5]


def test_twin_never_writes_outside_the_buffer():
    out = np.zeros(2, np.int32)
    cursor = np.array([2, -1], np.int64)                      # one slot past the end, one before it
    group_by_owner(CPU, np.array([0, 1], np.int32), np.array([7, 8], np.int32), None, cursor, out)
    assert out.tolist() == [0, 0] and cursor.tolist() == [3, 0]
    group_by_owner(CPU, np.array([1], np.int32), np.array([9], np.int32), None, cursor, out)
    assert out.tolist() == [9, 0]


@pytest.mark.gpu
@pytest.mark.parametrize("ranks", [2, 7, 5000])               # 5000: owners past the shared-memory counts
def test_gpu_kernels_equal_the_twins(ranks):
    import cupy
    gpu = Backend("gpu", 0)
    rng = np.random.default_rng(ranks)
    owner, cols, rows = random_routing(rng, ranks, 1_000_003)
    for with_rows in (True, False):
        host_starts, host_out = grouped(owner, cols, rows if with_rows else None, ranks)
        counts = cupy.zeros(ranks, cupy.int64)
        count_owners(gpu, cupy.asarray(owner), counts)
        assert np.array_equal(counts.get(), np.diff(host_starts))
        cursor = cupy.asarray(host_starts[:-1])
        device_out = cupy.empty(host_out.shape[0], cupy.int32)
        group_by_owner(gpu, cupy.asarray(owner), cupy.asarray(cols), cupy.asarray(rows) if with_rows else None,
                       cursor, device_out)
        assert np.array_equal(cursor.get(), host_starts[1:])
        width = 2 if with_rows else 1
        assert groups_as_sets(host_starts, device_out.get(), width) == groups_as_sets(host_starts, host_out, width)
