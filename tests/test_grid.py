"""dbfs.grid.Grid, the one home of the 2D ownership math: owner, local and global ids round-trip on odd
grids and padded sizes, every vertex has exactly one owner, and the local rows and columns of a rank
are exactly the vertices of its grid row and grid column (paper 004, section 2.2)."""

import numpy as np
import pytest

from dbfs.grid import Grid

pytestmark = pytest.mark.one_rank

GRIDS = [(1, 1, 1), (1, 1, 97), (1, 3, 100), (3, 1, 100), (2, 3, 1000), (3, 2, 999), (4, 4, 4096), (5, 3, 12345)]


@pytest.mark.parametrize("R, C, n", GRIDS)
def test_blocks_are_aligned_and_cover_the_padded_range(R, C, n):
    grid = Grid(R, C, n)
    assert grid.block % 32 == 0 and grid.n_padded == grid.block * R * C >= n
    assert grid.rows_per_rank == C * grid.block and grid.cols_per_rank == R * grid.block


@pytest.mark.parametrize("R, C, n", GRIDS)
def test_every_vertex_has_one_owner_and_its_offset_round_trips(R, C, n):
    grid = Grid(R, C, n)
    v = np.arange(grid.n_padded, dtype=np.int64)
    i, j = grid.owner(v)
    assert np.all((0 <= i) & (i < R) & (0 <= j) & (j < C))
    assert np.array_equal(grid.to_global_owned(i, j, grid.owned_offset(v)), v)
    counts = np.bincount(grid.owner_rank(v), minlength=R * C)
    assert np.all(counts == grid.block)
    for rank in range(R * C):
        ri, rj = grid.coords(rank)
        assert grid.rank(ri, rj) == rank
        lo, hi = grid.owned_range(ri, rj)
        owned = v[(grid.owner_rank(v) == rank) & (v < n)]
        assert (owned.size == 0 and lo == hi) or (owned.min() == lo and owned.max() == hi - 1)
        assert all(grid.owns(ri, rj, int(x)) for x in owned[:5])


@pytest.mark.parametrize("R, C, n", GRIDS)
def test_local_rows_and_columns_round_trip(R, C, n):
    grid = Grid(R, C, n)
    v = np.arange(grid.n_padded, dtype=np.int64)
    i, j = grid.owner(v)
    rows = grid.to_local_row(v)
    assert np.all((0 <= rows) & (rows < grid.rows_per_rank))
    assert np.array_equal(grid.to_global_row(i, rows), v)
    # the row's group is the owner's grid column and its offset the owned offset
    assert np.array_equal(grid.row_group(rows), j)
    assert np.array_equal(grid.row_offset(rows), grid.owned_offset(v))
    assert np.array_equal(grid.owned_row(j, grid.owned_offset(v)), rows)
    cols = grid.to_local_col(v)
    assert np.all((0 <= cols) & (cols < grid.cols_per_rank))
    assert np.array_equal(grid.col_block(v), j)
    assert np.array_equal(grid.to_global_col(j, cols), v)
    assert np.array_equal(grid.owned_col(i, grid.owned_offset(v)), cols)


@pytest.mark.parametrize("R, C, n", GRIDS)
def test_a_ranks_rows_and_columns_are_its_grid_row_and_column(R, C, n):
    grid = Grid(R, C, n)
    for i in range(R):
        rows = grid.to_global_row(i, np.arange(grid.rows_per_rank))
        assert set(np.asarray(grid.owner(rows)[0]).tolist()) == {i}
    for j in range(C):
        cols = grid.to_global_col(j, np.arange(grid.cols_per_rank))
        assert set(np.asarray(grid.owner(cols)[1]).tolist()) == {j}


@pytest.mark.parametrize("R, C, n", GRIDS)
def test_segment_maps_are_the_local_to_global_maps(R, C, n):
    from dbfs.ops.certificate import global_ids
    grid = Grid(R, C, n)
    for i in range(R):
        rows = np.arange(grid.rows_per_rank)
        assert np.array_equal(global_ids(rows, grid.global_row_segments(i)).view(np.int64),
                              grid.to_global_row(i, rows))
    for j in range(C):
        cols = np.arange(grid.cols_per_rank)
        assert np.array_equal(global_ids(cols, grid.global_col_segments(j)).view(np.int64),
                              grid.to_global_col(j, cols))


def test_local_index_ranges_over_32_bits_are_refused():
    with pytest.raises(ValueError, match="2\\^31"):
        Grid(1, 2, 1 << 33)
