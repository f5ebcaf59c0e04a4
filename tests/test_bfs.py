"""Main-mode correctness: the distributed BFS against a serial BFS on the same edges, every grid of the
job's size, Graph500 graphs of scales 8-14 and random graphs with several components, top-down and
direction-optimizing, with every message encoding. The tests adapt to the world size (any number of
ranks, also plain pytest)."""

import numpy as np
import pytest
from mpi4py import MPI

from dbfs.backend import Backend, gpu_count
from dbfs.bfs import BFS
from dbfs.build import build_from_edges
from dbfs.graph import GridComms
from dbfs.grid import Grid
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
    """Search from root; compare with the serial BFS; validate; return (nedge, visited, depth) and
    the directions the levels took."""
    backend = graph.backend
    result = bfs.search(root, log_levels=True)
    level, nedge = reference(root)
    ids, real = owned_ids(graph)
    got = backend.asnumpy(result.level)
    assert np.array_equal(got[real], level[ids[real]]), f"levels differ from serial BFS, root {root}"
    assert np.all(got[~real] == -1)
    assert result.nedge == nedge
    assert result.visited == np.count_nonzero(level >= 0)
    assert result.depth == level.max()
    check = validate_bfs(graph, root, result.parent, result.nedge, level=result.level)
    assert check.ok, check.message
    return (result.nedge, result.visited, result.depth), {row["direction"] for row in result.levels}


def run_grids(backend, n_vertices, src, dst, roots=None, nroots=4, variants=ALL_VARIANTS, comm="mpi"):
    """Build (over the transport `comm`) and search every grid of the world's size with every
    (direction, encoding) variant; the per-root figures must not depend on either. Returns the set of
    directions the levels took."""
    figures, directions = {}, set()
    reference = SerialReference(n_vertices, src, dst)
    for R, C in grids_of(WORLD.Get_size()):
        comms = GridComms.create(Grid(R, C, n_vertices))
        lo, hi = edge_range(len(src), WORLD.Get_rank(), WORLD.Get_size())
        graph = build_from_edges(comms, backend, src[lo:hi], dst[lo:hi], n_vertices, row_major=True,
                                 transport=comm)
        if roots is None:
            has_edge = np.zeros(n_vertices, bool)
            has_edge[src[src != dst]] = has_edge[dst[src != dst]] = True
            roots = sample_roots(n_vertices, nroots, lambda c: has_edge[c])
        for direction, encoding in variants:
            bfs = BFS(graph, direction=direction, encoding=encoding, comm=comm)
            results = [check_search(bfs, graph, reference, int(r)) for r in roots]
            figures[(R, C, direction, encoding)] = [f for f, _ in results]
            directions.update(*(d for _, d in results))
            bfs.close()
        comms.free()
    first = next(iter(figures.values()))
    assert all(f == first for f in figures.values()), figures
    return directions


@pytest.mark.parametrize("scale", range(8, 15))
def test_graph500_levels_match_serial(scale):
    src, dst = generate_edges(scale, 16, 0, 16 << scale)[:2]
    directions = run_grids(Backend("cpu"), 1 << scale, src, dst, nroots=4 if scale < 13 else 2,
                           variants=ALL_VARIANTS if scale <= 11 else MAIN_VARIANTS)
    assert directions == {"topdown", "bottomup"}


def test_several_components_isolated_vertices_and_padding():
    rng = np.random.default_rng(7)
    n = 301                                    # not divisible by any grid of 2..4 ranks
    src = rng.integers(0, 150, 600)            # vertices 150..300 isolated but for the edges below
    dst = rng.integers(0, 150, 600)
    src = np.concatenate((src, [200, 201, 202, 250, 250, 7]))
    dst = np.concatenate((dst, [201, 202, 200, 250, 251, 7]))   # a triangle, a self-loop, a pair
    run_grids(Backend("cpu"), n, src, dst, roots=[0, 200, 250, 299, 7])


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


@pytest.mark.gpu
@pytest.mark.parametrize("comm", ["mpi", "nccl"])
@pytest.mark.parametrize("scale", [10, 14, 16])
def test_gpu_levels_match_serial(scale, comm):
    from dbfs.exchange import nccl_available, shares_a_gpu
    local = MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED).Get_rank()
    backend = Backend("gpu", local % gpu_count())
    if comm == "nccl" and (WORLD.Get_size() == 1 or not nccl_available() or shares_a_gpu(WORLD, backend)):
        pytest.skip("NCCL needs several ranks, one GPU each, and the NCCL library")
    src, dst = generate_edges(scale, 16, 0, 16 << scale)[:2]
    directions = run_grids(backend, 1 << scale, src, dst, nroots=4, comm=comm)
    assert directions == {"topdown", "bottomup"}
