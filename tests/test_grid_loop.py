"""The lean host-driven level on a grid of ranks (dbfs.grid_loop): what each level costs the host -- its
waits on the device, messages and bytes per phase, launches, host and device time -- as the per-level
log and the per-search JSON report them, and the status record the host decides on. Every grid of the
job's size (two ranks or more), both directions, every encoding; on a GPU also the launches a level
enqueues."""

import numpy as np
import pytest
from mpi4py import MPI

from dbfs.backend import Backend, gpu_count
from dbfs.bfs import BFS
from dbfs.build import build_from_edges
from dbfs.graph import GridComms
from dbfs.grid import Grid
from dbfs.kernels import STAT
from graph500.generator import edge_range, generate_edges

WORLD = MPI.COMM_WORLD
SCALE = 11
pytestmark = pytest.mark.mpi(min_size=2)


def grids():
    size = WORLD.Get_size()
    return [(r, size // r) for r in range(1, size + 1) if size % r == 0]


def expected_waits(row, R, C, switched: bool, by_columns: bool) -> int:
    """One wait closing every level; host-staged MPI adds the fold's (top-down, C > 1) and one per
    rotation sub-step (bottom-up: along the grid row, C > 1; on the CSC's columns along the grid
    column, R > 1)."""
    if row["direction"] == "topdown":
        return 1 + (C > 1)
    line = R if by_columns else C
    return 1 + (line if line > 1 else 0)


def expected_messages(row, R, C, switched: bool, by_columns: bool) -> dict:
    """Messages this rank sends: top-down, its frontier to the R - 1 others of its grid column and a fold
    message to each of the C - 1 others of its grid row; bottom-up, its frontier to the others of one
    line and a rotation sub-step per rank of the other (the row-major copy: gathered along the column,
    rotated along the row; the CSC's columns: the other way round); after bottom-up, its visited bits
    to the row."""
    if row["direction"] == "topdown":
        return {"expand": R - 1, "fold": C - 1 + (C - 1 if switched else 0)}
    if by_columns:
        return {"expand": R if R > 1 else 0, "fold": C - 1}
    return {"expand": R - 1, "fold": C if C > 1 else 0}


def searches(backend, direction, encoding, row_copy=True, **options):
    src, dst = generate_edges(SCALE, 16, 0, 16 << SCALE)[:2]
    lo, hi = edge_range(len(src), WORLD.Get_rank(), WORLD.Get_size())
    for R, C in grids():
        comms = GridComms.create(Grid(R, C, 1 << SCALE))
        graph = build_from_edges(comms, backend, src[lo:hi], dst[lo:hi], 1 << SCALE,
                                 row_major=direction == "auto" and row_copy)
        bfs = BFS(graph, direction=direction, encoding=encoding, **options)
        for root in (int(src[0]), int(dst[7])):
            yield R, C, bfs, bfs.search(root, log_levels=True)
        bfs.close()
        comms.free()


@pytest.mark.parametrize("encoding", ["adaptive", "list", "bitmap"])
@pytest.mark.parametrize("direction, row_copy", [("topdown", True), ("auto", True), ("auto", False)])
def test_levels_report_waits_messages_bytes_and_times(direction, row_copy, encoding):
    for R, C, bfs, result in searches(Backend("cpu"), direction, encoding, row_copy):
        by_columns = bfs.state.by_columns
        assert by_columns == (direction == "auto" and not row_copy)
        previous = "topdown"
        assert sum(row["frontier"] for row in result.levels) == result.visited
        for row in result.levels:
            switched = previous == "bottomup" and row["direction"] == "topdown"
            previous = row["direction"]
            assert row["host_syncs"] == expected_waits(row, R, C, switched, by_columns), (R, C, row)
            assert row["messages"] == expected_messages(row, R, C, switched, by_columns), (R, C, row)
            sent = np.array([sum(row["phase_bytes"].values())], np.int64)
            WORLD.Allreduce(MPI.IN_PLACE, sent)
            assert int(sent[0]) == row["bytes"], (R, C, row)
            assert 0 <= row["device_time"] and 0 <= row["host_time"] <= row["time"], row
            assert row["launches"] >= 0
        # the levels' own waits, the one before the clock starts, the one that stages the root's expand
        # message and the one after the predecessors are resolved
        assert result.host_syncs == 3 + sum(row["host_syncs"] for row in result.levels)
        # the status record of the last level: an empty frontier on every rank
        assert int(bfs.loop.status[STAT.COUNT]) == 0


@pytest.mark.parametrize("direction", ["topdown", "auto"])
def test_device_driven_levels_report_their_phases_and_wait_once_a_stretch(direction):
    """Top-down levels of at most 2^9 frontier edges run as stretches of dbfs.peer_levels (here its NumPy
    twin): their rows carry the kernel's phase times, no wait and no launch of their own but the
    stretch's one wait on its last row and its launch and wait time on its first, the messages every
    level sends and the bytes they put."""
    from dbfs.peer_levels import DEVICE_PHASES
    for R, C, bfs, result in searches(Backend("cpu"), direction, "adaptive", peer_edges=1 << 9):
        stretch = [row for row in result.levels if "device_phases" in row]
        assert stretch, (R, C, [row["frontier"] for row in result.levels])
        assert sum(row["frontier"] for row in result.levels) == result.visited
        starts = [k for k, row in enumerate(result.levels) if "device_phases" in row and
                  (k == 0 or "device_phases" not in result.levels[k - 1])]
        for k, row in enumerate(result.levels):
            if "device_phases" not in row:
                continue
            assert row["direction"] == "topdown" and row["host_time"] >= 0.0
            assert row["host_time"] == 0.0 or k in starts     # a stretch's launch and closing wait: its first row
            assert set(row["device_phases"]) == set(DEVICE_PHASES)
            assert sum(row["device_phases"].values()) == pytest.approx(row["device_time"])
            assert row["time"] == pytest.approx(row["device_time"] + row["host_time"])
            assert row["messages"] == {"expand": R - 1, "fold": C - 1}
            assert row["host_syncs"] in (0, 1)
            sent = np.array([sum(row["phase_bytes"].values())], np.int64)
            WORLD.Allreduce(MPI.IN_PLACE, sent)
            assert int(sent[0]) == row["bytes"], (R, C, row)
        others = [row for row in result.levels if "device_phases" not in row]
        device = ["device_phases" in row for row in result.levels] + [False]
        stretch_ends = sum(1 for k in range(len(result.levels)) if device[k] and not device[k + 1])
        assert sum(row["host_syncs"] for row in stretch) == stretch_ends
        # the one before the clock starts and the one after the predecessors; the one that stages the
        # root's expand message only where the search does not start with a stretch (which encodes its own)
        stages_root = 0 if "device_phases" in result.levels[0] else 1
        assert result.host_syncs == 2 + stages_root + stretch_ends + sum(row["host_syncs"] for row in others)
        # without the per-level log (and its records) the stretches' traffic is the same, summed by the kernel
        unlogged = bfs.search(result.root)
        assert (unlogged.bytes, unlogged.bytes_raw) == (result.bytes, result.bytes_raw), (R, C)


@pytest.mark.gpu
def test_gpu_level_launches_stay_few():
    """A top-down level enqueues a fixed number of operations, whatever the number of peers: the
    expand gather, the five expansion kernels, the fold's encoding and staging, the update and the
    frontier figures, the next expand message, the status copy (and its memsets)."""
    local = WORLD.Split_type(MPI.COMM_TYPE_SHARED).Get_rank()
    backend = Backend("gpu", local % gpu_count())
    for R, C, bfs, result in searches(backend, "topdown", "adaptive"):
        for row in result.levels:
            assert row["launches"] <= 20, (R, C, row)


@pytest.mark.parametrize("shape", grids())
def test_level_totals_give_each_rank_its_column_peers_expand_sizes(shape):
    """Where NCCL moves the expand at its size, the level's allgather carries every rank's next expand
    size, and each rank expects from peer p of its grid column (grid row p) exactly that rank's."""
    from types import SimpleNamespace

    from dbfs.grid_loop import GridLoop
    R, C = shape
    comms = GridComms.create(Grid(R, C, 1 << 10))
    me = WORLD.Get_rank()
    status = np.zeros(STAT.CHECKED + 1, np.int64)
    status[STAT.COUNT], status[STAT.DEGREES] = me + 1, 10 * me
    expand = SimpleNamespace(sized=True, peers=[p for p in range(R) if p != comms.i], own_words=lambda: 100 + me)
    expand.expect = lambda words: setattr(expand, "expected", words)
    loop = SimpleNamespace(graph=SimpleNamespace(comms=comms, grid=comms.grid), expand_x=expand, status=status,
                           totals=None)
    size = WORLD.Get_size()
    assert GridLoop._level_totals(loop) == (size * (size + 1) // 2, 10 * size * (size - 1) // 2)
    assert expand.expected == {p: 100 + comms.grid.rank(p, comms.j) for p in expand.peers}
    comms.free()

