"""The builder's routing and grouping by owner rank (dbfs.ops.owner_groups): the NumPy twins against brute
force (every entry's owner, local column and row by dbfs.grid.Grid one vertex at a time, self-loops
left out of the counts; groups filled from their starts over several calls, one word or an interleaved
pair per entry, nothing written outside the buffer), and the CUDA kernels (kernels/owner_groups.cu)
against the twins, groups compared as multisets (their order is unspecified), for owners in shared
memory and beyond it; the counting by owner and local column where the entries are produced."""

import numpy as np
import pytest

from dbfs.backend import Backend
from dbfs.grid import Grid
from dbfs.ops.owner_groups import count_by_owner, group_by_owner, group_tuples, local_entries, route_entries

pytestmark = pytest.mark.one_rank

CPU = Backend("cpu")


def random_routing(rng, ranks, n):
    """Owners in [0, ranks) with some left out (ranks itself and -1), distinct-ish columns and rows."""
    owner = rng.integers(0, ranks, n).astype(np.int32)
    owner[rng.random(n) < 0.1] = ranks
    owner[rng.random(n) < 0.02] = -1
    return owner, rng.integers(0, 1 << 30, n).astype(np.int32), rng.integers(0, 1 << 30, n).astype(np.int32)


def grouped(owner, cols, rows, ranks):
    """The twins' result from zero: (groups' offsets, the words)."""
    kept = (owner >= 0) & (owner < ranks)
    starts = np.concatenate(([0], np.cumsum(np.bincount(owner[kept], minlength=ranks))))
    cursor = starts[:-1].copy()
    out = np.full((1 if rows is None else 2) * int(starts[-1]), -7, np.int32)
    group_by_owner(CPU, owner, cols, rows, cursor, out)
    assert np.array_equal(cursor, starts[1:]), "cursors finish at the groups' ends"
    return starts, out


def groups_as_sets(starts, out, width):
    entries = out.reshape(-1, width)
    return [sorted(map(tuple, entries[starts[p]:starts[p + 1]].tolist())) for p in range(len(starts) - 1)]


def random_tuples(rng, grid, n):
    """Tuples over the grid's vertices, one in ten a self-loop."""
    src = rng.integers(0, grid.n_vertices, n).astype(np.int64)
    dst = rng.integers(0, grid.n_vertices, n).astype(np.int64)
    loops = rng.random(n) < 0.1
    dst[loops] = src[loops]
    return src, dst


GRIDS = [(1, 2, 1000), (2, 1, 1000), (2, 2, 777), (3, 5, 100_003), (100, 50, 400_000)]


@pytest.mark.parametrize("R, C, n_vertices", GRIDS)
def test_twin_routes_every_entry_by_the_grid(R, C, n_vertices):
    grid = Grid(R, C, n_vertices)
    src, dst = random_tuples(np.random.default_rng(R * C), grid, 300)
    for both_ways in (True, False):
        counts = np.full(grid.size, 5, np.int64)
        owner, cols, rows = route_entries(CPU, grid, src, dst, both_ways, True, counts)
        pairs = list(zip(src.tolist(), dst.tolist()))
        entries = pairs + ([(v, u) for u, v in pairs] if both_ways else [])
        expected = [(grid.size if u == v else grid.rank(grid.owner(v)[0], grid.col_block(u)),
                     grid.to_local_col(u), grid.to_local_row(v)) for u, v in entries]
        assert list(zip(owner.tolist(), cols.tolist(), rows.tolist())) == expected
        owners = [o for o, _, _ in expected if o < grid.size]
        assert counts.tolist() == (5 + np.bincount(owners, minlength=grid.size)).tolist()
        assert route_entries(CPU, grid, src, dst, both_ways, False, counts)[2] is None


@pytest.mark.parametrize("R, C, n_vertices", GRIDS[:4])
def test_twin_counts_every_entry_by_owner_and_column(R, C, n_vertices):
    """The counting pass without the exchange: every kept entry once, in its owner's block of columns."""
    grid = Grid(R, C, n_vertices)
    src, dst = random_tuples(np.random.default_rng(R + 7 * C), grid, 500)
    for both_ways in (True, False):
        counts = np.full(grid.size * grid.cols_per_rank, 2, np.uint32)
        count_by_owner(CPU, grid, src, dst, both_ways, counts)
        pairs = list(zip(src.tolist(), dst.tolist()))
        entries = pairs + ([(v, u) for u, v in pairs] if both_ways else [])
        expected = np.full(counts.shape[0], 2, np.uint32)
        for u, v in entries:
            if u != v:
                owner = grid.rank(grid.owner(v)[0], grid.col_block(u))
                expected[owner * grid.cols_per_rank + grid.to_local_col(u)] += 1
        assert np.array_equal(counts, expected)


@pytest.mark.parametrize("R, C, n_vertices", GRIDS[:4])
def test_twin_counts_each_chunks_owners_and_groups_it_in_one_pass(R, C, n_vertices):
    """The counting pass's totals are route_entries' counts, and with them the tuples grouped in one pass
    are route_entries' entries grouped by owner."""
    grid = Grid(R, C, n_vertices)
    src, dst = random_tuples(np.random.default_rng(R + 11 * C), grid, 700)
    for both_ways in (True, False):
        totals, expected = np.zeros(grid.size, np.int64), np.zeros(grid.size, np.int64)
        count_by_owner(CPU, grid, src, dst, both_ways, np.zeros(grid.size * grid.cols_per_rank, np.uint32), totals)
        owner, cols, rows = route_entries(CPU, grid, src, dst, both_ways, True, expected)
        assert np.array_equal(totals, expected)
        for with_rows in (True, False):
            starts, out = grouped(owner, cols, rows if with_rows else None, grid.size)
            cursor = starts[:-1].copy()
            fused = np.full(out.shape[0], -7, np.int32)
            group_tuples(CPU, grid, src, dst, both_ways, with_rows, cursor, fused)
            assert np.array_equal(cursor, starts[1:]) and np.array_equal(fused, out)


def test_twin_places_one_ranks_entries_and_marks_self_loops():
    grid = Grid(1, 1, 1000)
    src, dst = random_tuples(np.random.default_rng(3), grid, 300)
    cols, rows = local_entries(CPU, grid, src, dst, True)
    loops = src == dst
    assert np.array_equal(cols, np.where(loops, -1, src)) and np.array_equal(rows, np.where(loops, -1, dst))
    assert local_entries(CPU, grid, src, dst, False)[1] is None


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
@pytest.mark.parametrize("R, C, n_vertices", GRIDS + [(1, 1, 1 << 20), (2, 2, 3 << 30)])
def test_gpu_routing_equals_the_twin(R, C, n_vertices):
    """Every entry's owner, column and row in index order, and the counts (5,000 ranks: owners past the
    shared-memory counts; 3 x 2^30 vertices: ids and ranges past 2^31)."""
    import cupy
    gpu = Backend("gpu", 0)
    grid = Grid(R, C, n_vertices)
    src, dst = random_tuples(np.random.default_rng(R + C), grid, 1_000_003)
    for both_ways in (True, False):
        for with_rows in (True, False):
            host_counts = np.arange(grid.size, dtype=np.int64)
            expected = route_entries(CPU, grid, src, dst, both_ways, with_rows, host_counts)
            counts = cupy.arange(grid.size, dtype=cupy.int64)
            got = route_entries(gpu, grid, cupy.asarray(src), cupy.asarray(dst), both_ways, with_rows, counts)
            for want, have in zip(expected, got):
                assert (want is None) == (have is None)
                assert want is None or np.array_equal(want, have.get())
            assert np.array_equal(counts.get(), host_counts)


@pytest.mark.gpu
@pytest.mark.parametrize("R, C, n_vertices", GRIDS[:4] + [(2, 1, 1 << 22)])
def test_gpu_counts_by_owner_equal_the_twin(R, C, n_vertices):
    """The histogram over every rank's local columns (uint32 atomics), both ways and one way."""
    import cupy
    gpu = Backend("gpu", 0)
    grid = Grid(R, C, n_vertices)
    src, dst = random_tuples(np.random.default_rng(3 * R + C), grid, 1_000_003)
    for both_ways in (True, False):
        expected = np.zeros(grid.size * grid.cols_per_rank, np.uint32)
        count_by_owner(CPU, grid, src, dst, both_ways, expected)
        counts = cupy.zeros(expected.shape[0], cupy.uint32)
        count_by_owner(gpu, grid, cupy.asarray(src), cupy.asarray(dst), both_ways, counts)
        assert np.array_equal(counts.get(), expected)


@pytest.mark.gpu
@pytest.mark.parametrize("n_vertices", [1000, (1 << 31) - 100])   # ids near the 32-bit limit
def test_gpu_one_rank_entries_equal_the_twin(n_vertices):
    import cupy
    gpu = Backend("gpu", 0)
    grid = Grid(1, 1, n_vertices)
    src, dst = random_tuples(np.random.default_rng(7), grid, 1_000_003)
    for with_rows in (True, False):
        expected = local_entries(CPU, grid, src, dst, with_rows)
        got = local_entries(gpu, grid, cupy.asarray(src), cupy.asarray(dst), with_rows)
        assert np.array_equal(expected[0], got[0].get())
        assert (got[1] is None) if not with_rows else np.array_equal(expected[1], got[1].get())


@pytest.mark.gpu
@pytest.mark.parametrize("ranks", [2, 7, 5000])               # 5000: owners past the shared-memory counts
def test_gpu_grouping_equals_the_twin(ranks):
    import cupy
    gpu = Backend("gpu", 0)
    rng = np.random.default_rng(ranks)
    owner, cols, rows = random_routing(rng, ranks, 1_000_003)
    for with_rows in (True, False):
        host_starts, host_out = grouped(owner, cols, rows if with_rows else None, ranks)
        cursor = cupy.asarray(host_starts[:-1])
        device_out = cupy.empty(host_out.shape[0], cupy.int32)
        group_by_owner(gpu, cupy.asarray(owner), cupy.asarray(cols), cupy.asarray(rows) if with_rows else None,
                       cursor, device_out)
        assert np.array_equal(cursor.get(), host_starts[1:])
        width = 2 if with_rows else 1
        assert groups_as_sets(host_starts, device_out.get(), width) == groups_as_sets(host_starts, host_out, width)


@pytest.mark.gpu
@pytest.mark.parametrize("R, C, n_vertices", GRIDS + [(2, 2, 3 << 30)])
def test_gpu_one_pass_grouping_and_chunk_totals_equal_the_twins(R, C, n_vertices):
    """The counting pass's totals of a chunk, then its tuples routed and grouped in one kernel with them:
    the same groups as the twins' (100 x 50: owners past the tile's shared runs; 3 x 2^30 vertices: ids
    and ranges past 2^31)."""
    import cupy
    gpu = Backend("gpu", 0)
    grid = Grid(R, C, n_vertices)
    src, dst = random_tuples(np.random.default_rng(5 * R + C), grid, 1_000_003)
    histogram = cupy.zeros(grid.size * grid.cols_per_rank if n_vertices < 1 << 24 else 1, cupy.uint32)
    for both_ways in (True, False):
        host_totals = np.zeros(grid.size, np.int64)
        owner, cols, rows = route_entries(CPU, grid, src, dst, both_ways, True, host_totals)
        if histogram.shape[0] > 1:
            totals = cupy.zeros(grid.size, cupy.int64)
            count_by_owner(gpu, grid, cupy.asarray(src), cupy.asarray(dst), both_ways, histogram, totals)
            assert np.array_equal(totals.get(), host_totals)
        for with_rows in (True, False):
            starts, host_out = grouped(owner, cols, rows if with_rows else None, grid.size)
            cursor = cupy.asarray(starts[:-1])
            device_out = cupy.empty(host_out.shape[0], cupy.int32)
            group_tuples(gpu, grid, cupy.asarray(src), cupy.asarray(dst), both_ways, with_rows, cursor, device_out)
            assert np.array_equal(cursor.get(), starts[1:])
            width = 2 if with_rows else 1
            assert groups_as_sets(starts, device_out.get(), width) == groups_as_sets(starts, host_out, width)
