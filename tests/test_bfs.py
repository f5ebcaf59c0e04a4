"""Main-mode correctness: the distributed BFS against a serial BFS on the same edges, every grid of the
job's size, Graph500 graphs of scales 8-14, random graphs with several components and high-diameter
graphs (a lattice with holes, a 3D lattice, a long path with branches, a disconnected graph; roots in
small components too), top-down and direction-optimizing (bottom-up with the row-major copy and, on
several ranks, on the CSC's columns without it), with every message encoding. On one rank
the device-driven loop runs both ways: small levels in the persistent kernel and every level as a bulk
level. The tests adapt to the world size (any number of ranks, also plain pytest)."""

from dataclasses import replace
from itertools import product

import numpy as np
import pytest
from mpi4py import MPI

from dbfs import bfs as bfs_module
from dbfs import families
from dbfs import graph as graph_module
from dbfs.ops import sparse
from dbfs.backend import Backend, gpu_count
from dbfs.bfs import BFS
from dbfs.build import build_from_edges
from dbfs.kernels import SMALL_MAX_DEGREE
from dbfs.graph import GridComms
from dbfs.grid import Grid
from dbfs.timing import GraphMarks
from graph500.generator import edge_range, generate_edges
from graph500.roots import sample_roots
from graph500.serial import component_nedge, serial_bfs
from graph500.validate import validate_bfs

WORLD = MPI.COMM_WORLD


def grids_of(size):
    return [(r, size // r) for r in range(1, size + 1) if size % r == 0]


def owned_ids(graph):
    grid = graph.grid
    ids = grid.to_global_owned(graph.i, graph.j, np.arange(grid.block))
    return ids, ids < grid.n_vertices


ALL_VARIANTS = [(d, e) for d in ("topdown", "auto") for e in ("list", "adaptive", "bitmap")]
MAIN_VARIANTS = [("topdown", "list"), ("auto", "adaptive")]
# Loop options on one rank: the small-level kernel's frontier-edge limit at its default, none (every
# level is a bulk level), one that these graphs' frontiers cross both ways, and all (every level whose
# vertices are light enough runs there); on a GPU also the rounds enqueued kernel by kernel instead of
# replayed as CUDA graphs (the CPU has one way).
ONE_RANK_LOOPS = ({}, {"small_edges": 0}, {"small_edges": 1 << 12}, {"small_edges": 1 << 40})
GPU_ONE_RANK_LOOPS = ({"round_graphs": False}, {"solo_work": 0}, {"solo_work": 1 << 40})
# Loop options on a grid of ranks: the device-driven small levels (dbfs.peer_levels; on the CPU their
# NumPy twin, on GPUs with NVSHMEM the kernel) for frontiers of at most 2^10 edges, entered and left
# as the frontier crosses it, and for every top-down level.
PEER_LOOPS = ({"peer_edges": 1 << 10}, {"peer_edges": 1 << 40})


class SerialReference:
    """Serial BFS levels and the component's edge count per root, computed once per root."""

    def __init__(self, n_vertices, src, dst):
        self.n_vertices, self.src, self.dst, self.by_root = n_vertices, src, dst, {}

    def __call__(self, root):
        if root not in self.by_root:
            level, _ = serial_bfs(self.n_vertices, self.src, self.dst, root)
            self.by_root[root] = level, component_nedge(self.src, self.dst, level)
        return self.by_root[root]


def check_search(bfs, graph, reference, root):
    """Search from root; compare with the serial BFS; validate (in the idle arrays); return (nedge, visited, depth) and
    the directions the levels took. Where the device launches a search's graphs (NVSHMEM, without the per-level
    log: dbfs.level_chain), so searched first, with the same checks and the host-launched search's bytes and
    messages."""
    chained = None
    if getattr(bfs.loop, "whole_levels", False):
        chained = check_search_once(bfs, graph, reference, root, log_levels=False)
        assert bfs.level_launch == "device", "the device did not launch the search's graphs"
    result = check_search_once(bfs, graph, reference, root, log_levels=True)
    assert bfs.level_launch == ("device" if bfs.one_rank and graph.backend.is_gpu else "host")
    if chained is not None:
        assert (chained.bytes, chained.bytes_raw) == (result.bytes, result.bytes_raw), root
    return (result.nedge, result.visited, result.depth), {row["direction"] for row in result.levels}


def check_search_once(bfs, graph, reference, root, log_levels):
    backend = graph.backend
    result = bfs.search(root, log_levels=log_levels)
    level, nedge = reference(root)
    ids, real = owned_ids(graph)
    got = backend.asnumpy(result.level)
    assert np.array_equal(got[real], level[ids[real]]), f"levels differ from serial BFS, root {root}"
    assert np.all(got[~real] == -1)
    assert result.nedge == nedge
    assert result.visited == np.count_nonzero(level >= 0)
    assert result.depth == level.max()
    # validated in the search state's idle arrays, as the benchmark does: the result is not among them
    check = validate_bfs(graph, root, result.parent, result.nedge, level=result.level, workspace=bfs.idle_memory())
    assert check.ok, check.message
    assert np.array_equal(backend.asnumpy(result.level), got)
    return result


def run_grids(backend, n_vertices, src, dst, roots=None, nroots=4, variants=ALL_VARIANTS, comm="mpi"):
    """Build (over the transport `comm`) and search every grid of the world's size with every
    (direction, encoding) variant -- on one rank with every one-rank loop option as well; the
    per-root figures must not depend on any of it. Returns the set of directions the levels took."""
    figures, directions = {}, set()
    reference = SerialReference(n_vertices, src, dst)
    one_rank_loops = ONE_RANK_LOOPS + (GPU_ONE_RANK_LOOPS if backend.is_gpu else ())
    for R, C in grids_of(WORLD.Get_size()):
        comms = GridComms.create(Grid(R, C, n_vertices))
        lo, hi = edge_range(len(src), WORLD.Get_rank(), WORLD.Get_size())
        graph = build_from_edges(comms, backend, src[lo:hi], dst[lo:hi], n_vertices, row_major=True,
                                 transport=comm)
        if roots is None:
            has_edge = np.zeros(n_vertices, bool)
            has_edge[src[src != dst]] = has_edge[dst[src != dst]] = True
            roots = sample_roots(n_vertices, nroots, lambda c: has_edge[c])
        peer_loops = PEER_LOOPS if not backend.is_gpu or comm == "nvshmem" else ()
        # bottom-up levels with the row-major copy and, on several ranks, on the CSC's columns without it
        layouts = [graph] + ([replace(graph, row_ptr=None, col_idx=None)] if R * C > 1 else [])
        for direction, encoding in variants:
            grid_loops = ({},) + (peer_loops if (direction, encoding) in MAIN_VARIANTS else ())
            for searched, options in product(layouts if direction == "auto" else layouts[:1],
                                             one_rank_loops if R * C == 1 else grid_loops):
                bfs = BFS(searched, direction=direction, encoding=encoding, comm=comm, **options)
                assert bfs.state.by_columns == (searched.row_ptr is None and direction == "auto")
                results = [check_search(bfs, searched, reference, int(r)) for r in roots]
                figures[(R, C, direction, encoding, str(options), bfs.state.by_columns)] = [f for f, _ in results]
                directions.update(*(d for _, d in results))
                bfs.close()
        comms.free()
    first = next(iter(figures.values()))
    assert all(f == first for f in figures.values()), figures
    return directions


@pytest.mark.parametrize("scale", [8, 11, 12, 14])     # both variant sets, the smallest and largest of each
def test_graph500_levels_match_serial(scale):
    src, dst = generate_edges(scale, 16, 0, 16 << scale)[:2]
    directions = run_grids(Backend("cpu"), 1 << scale, src, dst, nroots=4 if scale < 13 else 2,
                           variants=ALL_VARIANTS if scale <= 11 else MAIN_VARIANTS)
    assert directions == {"topdown", "bottomup"}


def several_components():
    rng = np.random.default_rng(7)
    n = 301                                    # not divisible by any grid of 2..4 ranks
    src = rng.integers(0, 150, 600)            # vertices 150..300 isolated but for the edges below
    dst = rng.integers(0, 150, 600)
    src = np.concatenate((src, [200, 201, 202, 250, 250, 7]))
    dst = np.concatenate((dst, [201, 202, 200, 250, 251, 7]))   # a triangle, a self-loop, a pair
    return n, src, dst


def test_several_components_isolated_vertices_and_padding(monkeypatch):
    """Also the discoverers and the column finds held by the positions of the non-empty rows and
    columns, on the grids where most of a block's rows or columns are empty."""
    held = positions_held(monkeypatch)
    run_grids(Backend("cpu"), *several_components(), roots=[0, 200, 250, 299, 7])
    assert WORLD.Get_size() == 1 or (any(rows for rows, _ in held) and any(columns for _, columns in held))


def test_discoverers_and_column_finds_held_densely(monkeypatch):
    """Over every local row and column, as where most of a block's rows and columns have an entry."""
    monkeypatch.setattr(sparse, "POSITIONS_SHARE", 0.0)
    held = positions_held(monkeypatch)
    run_grids(Backend("cpu"), *several_components(), roots=[0, 250], variants=[("auto", "adaptive")])
    assert not any(rows or columns for rows, columns in held)


def positions_held(monkeypatch) -> list:
    """A list that will tell, for each search set up, whether it holds its discoverers (pred_row) and its
    column finds (column_parent) by position."""
    held, init = [], BFS.__init__

    def noted(self, *args, **kwargs):
        init(self, *args, **kwargs)
        held.append((self.state.row_positions is not None, self.state.column_positions is not None))
    monkeypatch.setattr(BFS, "__init__", noted)
    return held


HIGH_DIAMETER = {
    "lattice with holes": lambda: families.lattice_with_holes(rows=30, cols=46),
    "3D lattice": lambda: families.lattice_graph((12, 9, 7), remove_fraction=0.1),
    "caterpillar": lambda: families.caterpillar(spine=100),
    "several components": families.several_components,
}


@pytest.mark.parametrize("name", sorted(HIGH_DIAMETER))
def test_high_diameter_levels_match_serial(name):
    """A hundred levels and more; roots in the main component and in small ones, isolated vertices too."""
    n, src, dst = HIGH_DIAMETER[name]()
    sizes = np.bincount(np.concatenate((src, dst)), minlength=n)
    roots = [int(src[0]), int(dst[-1]), int(np.argmax(sizes == 0)) if (sizes == 0).any() else int(src[-1])]
    if name == "several components":
        roots += [int(v) for v in np.unique(src)[-3:]]
    run_grids(Backend("cpu"), n, src, dst, roots=roots, variants=MAIN_VARIANTS)


def test_lattice_tail_stays_top_down():
    """Beamer's rule goes bottom-up only while the frontier grows: on a lattice, whose frontiers are a
    tiny part of the graph, the search never turns bottom-up, not even on the last few vertices."""
    n, src, dst = families.lattice_graph((60, 60), scramble=True)
    comms = GridComms.create(Grid(*grids_of(WORLD.Get_size())[0], n))
    lo, hi = edge_range(len(src), WORLD.Get_rank(), WORLD.Get_size())
    graph = build_from_edges(comms, Backend("cpu"), src[lo:hi], dst[lo:hi], n, row_major=True)
    bfs = BFS(graph, direction="auto")
    _, directions = check_search(bfs, graph, SerialReference(n, src, dst), int(src[0]))
    assert directions == {"topdown"}
    bfs.close()
    comms.free()


def test_small_level_kernel_hands_heavy_vertices_to_bulk_levels():
    """One rank: a frontier holding a vertex of more than SMALL_MAX_DEGREE neighbours is a bulk
    level even under a huge edge limit, and the levels still match the serial BFS."""
    if WORLD.Get_size() != 1:
        pytest.skip("the device-driven loop runs on one rank")
    hub_degree = 4 * SMALL_MAX_DEGREE
    leaves = np.arange(1, hub_degree + 1)
    src = np.concatenate(([1000 + 1], leaves, leaves[:20]))
    dst = np.concatenate(([0], np.zeros(hub_degree, np.int64), leaves[:20] + 2000))
    n = 3000
    comms = GridComms.create(Grid(1, 1, n))
    graph = build_from_edges(comms, Backend("cpu"), src, dst, n, row_major=True)
    bfs = BFS(graph, direction="topdown", small_edges=1 << 40)
    check_search(bfs, graph, SerialReference(n, src, dst), 1001)
    comms.free()


@pytest.mark.parametrize("alpha, beta", [(1e9, 1e9), (1e-9, 1.0)])
def test_always_bottom_up_and_never(alpha, beta):
    """Extreme thresholds: every level after the first bottom-up, or top-down throughout."""
    src, dst = generate_edges(10, 16, 0, 16 << 10)[:2]
    for R, C in grids_of(WORLD.Get_size()):
        comms = GridComms.create(Grid(R, C, 1 << 10))
        lo, hi = edge_range(len(src), WORLD.Get_rank(), WORLD.Get_size())
        graph = build_from_edges(comms, Backend("cpu"), src[lo:hi], dst[lo:hi], 1 << 10, row_major=True)
        bfs = BFS(graph, direction="auto", alpha=alpha, beta=beta)
        hub = int(np.bincount(np.concatenate((src, dst))).argmax())
        _, directions = check_search(bfs, graph, SerialReference(1 << 10, src, dst), hub)
        assert directions == ({"topdown", "bottomup"} if alpha > 1 else {"topdown"})
        bfs.close()
        comms.free()


def gpu_backend_of_rank():
    """This rank's GPU, and how many ranks of the node share it (their kernels' share of it)."""
    node = MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED)
    local, on_node, gpus = node.Get_rank(), node.Get_size(), gpu_count()
    node.Free()
    return Backend("gpu", local % gpus, sharing=len(range(local % gpus, on_node, gpus)))


@pytest.mark.gpu
@pytest.mark.parametrize("comm", ["mpi", "nccl", "nvshmem"])
@pytest.mark.parametrize("scale", [10, 14, 16])
def test_gpu_levels_match_serial(scale, comm):
    backend = gpu_backend_of_rank()
    skip_unless_transport_runs(comm, backend)
    src, dst = generate_edges(scale, 16, 0, 16 << scale)[:2]
    directions = run_grids(backend, 1 << scale, src, dst, nroots=4, comm=comm)
    assert directions == {"topdown", "bottomup"}


@pytest.mark.gpu
@pytest.mark.parametrize("comm", ["mpi", "nvshmem"])
def test_gpu_levels_match_serial_with_int64_offsets(monkeypatch, comm):
    """The kernels compiled for 64-bit offsets (a block of 2^31 entries and more) on a graph whose
    offsets would be int32."""
    monkeypatch.setattr(graph_module, "NARROW_OFFSETS_MAX", -1)
    backend = gpu_backend_of_rank()
    skip_unless_transport_runs(comm, backend)
    src, dst = generate_edges(10, 16, 0, 16 << 10)[:2]
    assert run_grids(backend, 1 << 10, src, dst, nroots=4, comm=comm) == {"topdown", "bottomup"}


def skip_unless_transport_runs(comm, backend):
    """Skip (on every rank) where the transport cannot run: NCCL needs a GPU per rank, NVSHMEM its
    library; both need several ranks."""
    from dbfs.transport import problem
    if comm != "mpi" and (WORLD.Get_size() == 1 or problem(comm, backend, WORLD)):
        pytest.skip(f"--comm {comm} cannot run here (one rank, or {problem(comm, backend, WORLD)})")


@pytest.mark.gpu
@pytest.mark.mpi(min_size=2)
def test_gpu_level_totals_match_an_allreduce():
    """The bulk levels' totals summed by the ranks' kernels (both halves of the records, reused), and each
    level's counters handed to the host and cleared."""
    from dbfs.kernels import STAT, STAT_WORDS
    from dbfs.peer_levels import LevelTotals
    backend = gpu_backend_of_rank()
    skip_unless_transport_runs("nvshmem", backend)
    totals, stats, rank = LevelTotals(backend, WORLD), backend.xp.zeros(STAT_WORDS, np.int64), WORLD.Get_rank()
    status = backend.pinned_empty(STAT_WORDS, np.int64)
    for level in range(5):
        mine = ((rank + 1) * (level + 3), (rank + 7) << (level + 30))
        stats[STAT.COUNT], stats[STAT.DEGREES], stats[STAT.CHECKED] = *mine, level
        totals.enqueue(stats, status)
        backend.sync()
        assert totals.read() == tuple(WORLD.allreduce(np.array(mine, np.int64)).tolist())
        assert status[[STAT.COUNT, STAT.DEGREES, STAT.CHECKED]].tolist() == [*mine, level]
        assert not stats.any()
    totals.close()


@pytest.mark.gpu
@pytest.mark.mpi(min_size=2)
def test_gpu_whole_levels_count_the_bytes_mpi_sends():
    """NVSHMEM's whole levels count their sends after their launch, from the half of the staging the level
    reads (the level stages the next message into the other): top-down, level by level the bytes of the
    same messages that `--comm mpi` sends."""
    backend = gpu_backend_of_rank()
    skip_unless_transport_runs("nvshmem", backend)
    src, dst = generate_edges(12, 16, 0, 16 << 12)[:2]
    for R, C in grids_of(WORLD.Get_size()):
        sent = {}
        for comm in ("mpi", "nvshmem"):
            comms = GridComms.create(Grid(R, C, 1 << 12))
            lo, hi = edge_range(len(src), WORLD.Get_rank(), WORLD.Get_size())
            graph = build_from_edges(comms, backend, src[lo:hi], dst[lo:hi], 1 << 12, transport=comm)
            bfs = BFS(graph, direction="topdown", comm=comm, peer_edges=0)
            assert bfs.loop.whole_levels == (comm == "nvshmem")
            results = [bfs.search(int(root), log_levels=True) for root in (src[0], dst[5], src[9])]
            sent[comm] = [(r.bytes, [row["phase_bytes"] for row in r.levels]) for r in results]
            bfs.close()
            comms.free()
        assert sent["nvshmem"] == sent["mpi"], (R, C)


@pytest.mark.gpu
@pytest.mark.mpi(min_size=2)
@pytest.mark.parametrize("comm", ["nccl", "nvshmem"])
@pytest.mark.parametrize("name", ["caterpillar", "lattice 300x300"])
def test_gpu_stream_transports_on_high_diameter_graphs(name, comm):
    """Rounds queued on the stream (NCCL, NVSHMEM puts and signal waits) over hundreds of levels, with
    a root of degree zero and a graph with isolated parts among the roots."""
    backend = gpu_backend_of_rank()
    skip_unless_transport_runs(comm, backend)
    n, src, dst = (families.lattice_graph((300, 300), remove_fraction=0.05) if name == "lattice 300x300"
                   else HIGH_DIAMETER[name]())
    isolated = int(np.setdiff1d(np.arange(n), np.concatenate([src, dst]))[:1].sum()) if n > 0 else 0
    roots = [int(src[0]), int(dst[-1]), isolated]
    run_grids(backend, n, src, dst, roots=roots, variants=ALL_VARIANTS, comm=comm)


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(HIGH_DIAMETER) + ["lattice 300x300"])
def test_gpu_high_diameter_levels_match_serial(name):
    """The persistent small-level kernel across hundreds of levels (and its hand-over to bulk levels)."""
    n, src, dst = (families.lattice_graph((300, 300), remove_fraction=0.05) if name == "lattice 300x300"
                   else HIGH_DIAMETER[name]())
    roots = [int(src[0]), int(dst[-1]), int(src[len(src) // 2])]
    run_grids(gpu_backend_of_rank(), n, src, dst, roots=roots, variants=MAIN_VARIANTS)


@pytest.mark.gpu
def test_gpu_round_graphs_time_their_phases():
    """Rounds replayed as CUDA graphs time their phases with the event nodes captured with them: as
    with rounds enqueued kernel by kernel, every phase of the one-GPU loop gets time, and the phases
    fit in the search's wall time."""
    n = 1 << 14
    src, dst = generate_edges(14, 16, 0, 16 * n)[:2]
    comms = GridComms.create(Grid(1, 1, n), MPI.COMM_SELF)
    graph = build_from_edges(comms, gpu_backend_of_rank(), src, dst, n, row_major=True)
    for round_graphs in (True, False):
        bfs = BFS(graph, direction="auto", round_graphs=round_graphs)
        result = bfs.search(int(src[0]))
        assert result.phases["expansion"] > 0 and result.phases["update"] > 0, result.phases
        assert result.phases["expansion"] + result.phases["update"] <= result.time, (result.phases, result.time)
        bfs.close()
    comms.free()


@pytest.mark.gpu
def test_gpu_loop_without_graph_capture_enqueues_kernel_by_kernel(monkeypatch, capsys):
    """A driver that cannot capture the rounds (a node refused mid-capture) leaves the stream usable:
    the loop warns once and enqueues its rounds kernel by kernel, with the serial levels."""
    import cupy
    switch = GraphMarks.switch

    def refuse_under_capture(self, phase):
        if cupy.cuda.get_current_stream().is_capturing():
            raise RuntimeError("cudaErrorStreamCaptureUnsupported: operation not permitted when stream is capturing")
        switch(self, phase)

    monkeypatch.setattr(GraphMarks, "switch", refuse_under_capture)
    n = 1 << 12
    src, dst = generate_edges(12, 16, 0, 16 * n)[:2]
    comms = GridComms.create(Grid(1, 1, n), MPI.COMM_SELF)
    graph = build_from_edges(comms, gpu_backend_of_rank(), src, dst, n, row_major=True)
    bfs = BFS(graph, direction="auto")
    assert bfs.loop.rounds is None
    if WORLD.Get_rank() == 0:
        assert "could not be captured as CUDA graphs" in capsys.readouterr().err
    reference = SerialReference(n, src, dst)
    for root in (int(src[0]), int(dst[7])):
        check_search(bfs, graph, reference, root)
    bfs.close()
    comms.free()


def test_per_level_log_longer_than_its_capacity_says_so(monkeypatch, capsys):
    """One rank: a search of more levels than the per-level log holds returns the first ones and says
    on stderr how many it left out."""
    if WORLD.Get_size() != 1:
        pytest.skip("the device-driven loop runs on one rank")
    monkeypatch.setattr(bfs_module, "LOG_CAPACITY", 8)
    n, src, dst = families.lattice_graph((40, 2))
    comms = GridComms.create(Grid(1, 1, n))
    graph = build_from_edges(comms, Backend("cpu"), src, dst, n, row_major=True)
    check_search(BFS(graph, direction="topdown"), graph, SerialReference(n, src, dst), int(src[0]))
    assert "the per-level log holds the first 8 of the search's" in capsys.readouterr().err
    comms.free()
