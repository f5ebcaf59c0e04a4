"""Bottom-up levels run behind a grid's whole bottom-up level where the device decides so
(dbfs.followers): the gate kernel (kernels/level_gate.cu) against its NumPy twin and the host's rule,
the IF node it opens (dbfs.conditional), and searches with followers against the same searches without."""

import numpy as np
import pytest
from mpi4py import MPI

from dbfs import conditional, grid_loop
from dbfs.backend import Backend
from dbfs.bfs import BFS
from dbfs.build import build_from_edges
from dbfs.direction import next_bottom_up
from dbfs.graph import GridComms
from dbfs.grid import Grid
from dbfs.kernels import CTL, CTL_WORDS, STEP
from dbfs.ops.level_control import follow_bottom_up
from graph500.generator import edge_range, generate_edges
from test_bfs import SerialReference, check_search, gpu_backend_of_rank, skip_unless_transport_runs

WORLD = MPI.COMM_WORLD
N, BETA = 1 << 20, 24.0
# (step, the level's input frontier, the new frontier's size and degree sum, unvisited edges before it)
CASES = [(STEP.BOTTOMUP, 1000, 500_000, 9_000_000, 20_000_000),   # grows: stays bottom-up
         (STEP.BOTTOMUP, 500_000, 90_000, 700_000, 11_000_000),    # shrinks but above n / beta
         (STEP.BOTTOMUP, 500_000, 30_000, 200_000, 11_000_000),    # shrinks below n / beta: top-down
         (STEP.BOTTOMUP, 30_000, 0, 0, 100),                       # nothing found: the search ends
         (STEP.TOPDOWN, 1000, 500_000, 9_000_000, 20_000_000)]     # an earlier gate shut


def control_of(step, frontier, unvisited):
    control = np.zeros(CTL_WORDS, np.int64)
    control[[CTL.STEP, CTL.LEVEL, CTL.FRONTIER, CTL.UNVISITED_EDGES]] = step, 5, frontier, unvisited
    return control


@pytest.mark.parametrize("step, frontier, found, degrees, unvisited", CASES)
def test_gate_twin_opens_where_the_hosts_rule_stays_bottom_up(step, frontier, found, degrees, unvisited):
    control, opened = control_of(step, frontier, unvisited), np.zeros(1, np.int64)
    sums = np.array([found, degrees], np.int64)
    expected = step == STEP.BOTTOMUP and found > 0 and next_bottom_up(
        True, found, frontier, degrees, unvisited - degrees, 14.0, BETA, N)
    assert follow_bottom_up(Backend("cpu"), 0, control, sums, BETA, N, opened) == expected
    assert opened[0] == expected
    if expected:
        assert control[[CTL.STEP, CTL.LEVEL, CTL.FRONTIER, CTL.UNVISITED_EDGES]].tolist() == [
            STEP.BOTTOMUP, 6, found, unvisited - degrees]
    else:
        assert control[[CTL.STEP, CTL.LEVEL, CTL.FRONTIER, CTL.UNVISITED_EDGES]].tolist() == [
            STEP.TOPDOWN, 5, frontier, unvisited]


@pytest.mark.gpu
def test_gpu_gate_opens_its_if_node_as_its_twin():
    """A captured graph of the gate and an IF node whose body copies a device word to pinned memory: the
    body runs exactly where the twin opens, and the control block and the opened flag match the twin's."""
    if not conditional.available():
        pytest.skip("cuda.bindings is not installed: no conditional graph nodes")
    backend = gpu_backend_of_rank()
    xp = backend.xp
    stream, body_stream = xp.cuda.Stream(non_blocking=True), xp.cuda.Stream(non_blocking=True)
    control, marker = xp.zeros(CTL_WORDS, np.int64), xp.full(1, 7, np.int64)
    sums, opened, copied = (backend.pinned_empty(k, np.int64) for k in (2, 1, 1))
    with stream:
        stream.begin_capture()
        handle, value = conditional.conditional_handle(stream)
        follow_bottom_up(backend, value, control, sums, BETA, N, opened)
        with conditional.if_body(stream, handle, body_stream):
            backend.copy(copied, marker)
        graph = stream.end_capture()
    for step, frontier, found, degrees, unvisited in CASES:
        twin_control, twin_opened = control_of(step, frontier, unvisited), np.zeros(1, np.int64)
        control.set(control_of(step, frontier, unvisited))
        sums[:], copied[0] = (found, degrees), 0
        expected = follow_bottom_up(Backend("cpu"), 0, twin_control, sums, BETA, N, twin_opened)
        graph.launch(stream)
        stream.synchronize()
        assert (int(opened[0]), int(copied[0])) == ((1, 7) if expected else (0, 0)), (step, frontier, found)
        assert np.array_equal(control.get(), twin_control)


@pytest.mark.gpu
@pytest.mark.mpi(min_size=2)
def test_gpu_followers_run_the_levels_the_host_would(monkeypatch):
    """On every grid with more than one row (the bottom-up frontier in place, NVSHMEM), searches with
    followers give the serial BFS's levels, and the same levels, directions and frontiers as searches
    whose host launches every level; some of their bottom-up levels ran behind another (no wait of
    their own)."""
    backend = gpu_backend_of_rank()
    skip_unless_transport_runs("nvshmem", backend)
    if not conditional.available():
        pytest.skip("cuda.bindings is not installed: no conditional graph nodes")
    scale, size = 14, WORLD.Get_size()
    src, dst = generate_edges(scale, 16, 0, 16 << scale)[:2]
    lo, hi = edge_range(len(src), WORLD.Get_rank(), size)
    reference, roots = SerialReference(1 << scale, src, dst), [int(src[0]), int(dst[7]), int(src[99])]
    for R in (r for r in range(2, size + 1) if size % r == 0):
        comms = GridComms.create(Grid(R, size // R, 1 << scale))
        graph = build_from_edges(comms, backend, src[lo:hi], dst[lo:hi], 1 << scale, row_major=True,
                                 transport="nvshmem")
        runs = {}
        for followed in (True, False):
            monkeypatch.setattr(grid_loop.conditional, "available", lambda followed=followed: followed)
            bfs = BFS(graph, direction="auto", comm="nvshmem")
            runs[followed] = []
            for root in roots:
                check_search(bfs, graph, reference, root)
                result = bfs.search(root, log_levels=True)
                runs[followed].append([(row["direction"], row["frontier"], row["host_syncs"])
                                       for row in result.levels])
            assert (bfs.loop.followers is not None) == followed
            bfs.close()
        strip = [[row[:2] for row in search] for search in runs[False]]
        assert [[row[:2] for row in search] for search in runs[True]] == strip
        behind = sum(1 for search in runs[True] for direction, _, syncs in search
                     if direction == "bottomup" and syncs == 0)
        assert behind > 0, runs[True]
        assert all(syncs == 1 for search in runs[False] for direction, _, syncs in search if direction == "bottomup")
        comms.free()
