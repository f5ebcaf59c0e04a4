"""The device-driven levels' default capacity (dbfs.peer_levels.default_capacity): the global frontier
edges up to which a grid's top-down levels run in the ranks' kernels grow with the ranks (each rank's
share stays PEER_EDGES_PER_RANK), within the one-GPU loop's small-level limit and the landings' bytes,
never below one rank's share; the landings it sizes are what symmetric_bytes counts, and where the
frontier queues would take no more room, there are none: the queues move to the symmetric heap and
the lists are read in place, and the levels' edges are bounded by no buffer (PEER_IN_PLACE_EDGES)."""

import pytest

from dbfs.grid import Grid
from dbfs.device_loop import DEFAULT_SMALL_EDGES
from dbfs.peer_levels import (PEER_EDGES_PER_RANK, PEER_IN_PLACE_EDGES, PEER_LANDING_BYTES, default_capacity,
                              landing_bytes, lists_in_place, queue_bytes, symmetric_bytes)

pytestmark = pytest.mark.one_rank


@pytest.mark.parametrize("R,C,expected", [
    (2, 1, 2 * PEER_EDGES_PER_RANK),
    (2, 2, 4 * PEER_EDGES_PER_RANK),
    (4, 4, DEFAULT_SMALL_EDGES),               # 16 ranks: the one-GPU loop's limit
    (8, 8, PEER_LANDING_BYTES // (4 * 24)),    # the landings' bytes
    (128, 64, PEER_IN_PLACE_EDGES),            # one rank's share, 2^16: the lists read in place
])
def test_capacity_grows_with_the_ranks_within_its_bounds(R, C, expected):
    grid = Grid(R, C, 1 << 30)
    assert default_capacity(grid) == expected
    assert landing_bytes(grid, expected) <= max(PEER_LANDING_BYTES, 4 * PEER_EDGES_PER_RANK * (2 * R + C))
    assert symmetric_bytes(grid, default_capacity(grid)) >= landing_bytes(grid, default_capacity(grid))


@pytest.mark.parametrize("R,C,scale,in_place", [
    (16, 1, 22, True),                          # sixteen ranks on one GPU: a bulk level costs ~0.35 ms
    (4, 4, 24, True),
    (4, 1, 24, False),
    (2, 2, 24, False),
])
def test_edges_unbounded_by_buffers_where_the_lists_are_read_in_place(R, C, scale, in_place):
    """Where the lists are read in place (no landings, which the edges would bound), a stretch level
    examines up to PEER_IN_PLACE_EDGES entries at least; with landings the limit is what they hold."""
    grid = Grid(R, C, 1 << scale)
    capacity = default_capacity(grid)
    assert lists_in_place(grid, capacity) == in_place
    assert (capacity >= PEER_IN_PLACE_EDGES) == in_place
    assert landing_bytes(grid, capacity) == (0 if in_place else 4 * capacity * (2 * R + C))


@pytest.mark.parametrize("R,C,scale,capacity,in_place", [
    (4, 4, 24, None, True),                     # sixteen ranks' landings 192 MiB, queues 20
    (4, 4, 22, None, True),
    (2, 2, 24, None, False),                    # 6 MiB of landings against 48 of queues
    (2, 1, 28, None, False),
    (4, 1, 29, None, False),
    (2, 2, 10, 1 << 40, True),                  # every level in the kernel: a capacity of the whole block
    (2, 2, 14, 1 << 10, False),
])
def test_lists_read_in_place_where_the_queues_take_no_more_room_than_the_landings(R, C, scale, capacity, in_place):
    grid = Grid(R, C, 1 << scale)
    capacity = default_capacity(grid) if capacity is None else capacity
    queues, b = 4 * (C + 1) * grid.block, grid.block     # two own groups, the C - 1 others' in use
    landings = 4 * min(capacity, b * C) * (2 * R + C)
    assert lists_in_place(grid, capacity) == in_place == (queues <= landings)
    assert landing_bytes(grid, capacity) == (0 if in_place else landings)
    assert queue_bytes(grid, capacity) == (queues if in_place else 0)
    assert queue_bytes(grid, capacity, 100, 30) == (4 * (2 * 100 + (C - 1) * 30) if in_place else 0)
    assert symmetric_bytes(grid, capacity) - landing_bytes(grid, capacity) < 1 << 16   # signals and records
