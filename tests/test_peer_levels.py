"""The device-driven levels' default capacity (dbfs.peer_levels.default_capacity): the global frontier
edges up to which a grid's top-down levels run in the ranks' kernels grow with the ranks (each rank's
share stays PEER_EDGES_PER_RANK), within the one-GPU loop's small-level limit and the landings' bytes,
never below one rank's share; the landings it sizes are what symmetric_bytes counts."""

import pytest

from dbfs.grid import Grid
from dbfs.device_loop import DEFAULT_SMALL_EDGES
from dbfs.peer_levels import PEER_EDGES_PER_RANK, PEER_LANDING_BYTES, default_capacity, symmetric_bytes

pytestmark = pytest.mark.one_rank


@pytest.mark.parametrize("R,C,expected", [
    (2, 1, 2 * PEER_EDGES_PER_RANK),
    (2, 2, 4 * PEER_EDGES_PER_RANK),
    (4, 4, DEFAULT_SMALL_EDGES),               # 16 ranks: the one-GPU loop's limit
    (8, 8, PEER_LANDING_BYTES // (4 * 24)),    # the landings' bytes
    (128, 64, PEER_EDGES_PER_RANK),            # never below one rank's share
])
def test_capacity_grows_with_the_ranks_within_its_bounds(R, C, expected):
    grid = Grid(R, C, 1 << 30)
    assert default_capacity(grid) == expected
    landings = 4 * default_capacity(grid) * (2 * R + C)
    assert landings <= max(PEER_LANDING_BYTES, 4 * PEER_EDGES_PER_RANK * (2 * R + C))
    assert symmetric_bytes(grid, default_capacity(grid)) >= landings
