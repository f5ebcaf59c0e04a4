"""Main-mode correctness: the distributed BFS against a serial BFS on the same edges, every grid of the
job's size, Graph500 graphs of scales 8-14 and random graphs with several components. The tests adapt to the
world size (any number of ranks, also plain pytest)."""

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


def check_search(bfs, graph, src, dst, root):
    """Search from root; compare with the serial BFS; validate; return (nedge, visited, depth)."""
    backend = graph.backend
    result = bfs.search(root)
    level, _ = serial_bfs(graph.grid.n_vertices, src, dst, root)
    ids, real = owned_ids(graph)
    got = backend.asnumpy(result.level)
    assert np.array_equal(got[real], level[ids[real]]), f"levels differ from serial BFS, root {root}"
    assert np.all(got[~real] == -1)
    assert result.nedge == component_nedge(src, dst, level)
    assert result.visited == np.count_nonzero(level >= 0)
    assert result.depth == level.max()
    check = validate_bfs(graph, root, result.parent, result.nedge, level=result.level)
    assert check.ok, check.message
    return result.nedge, result.visited, result.depth


def run_grids(backend, n_vertices, src, dst, roots=None, nroots=4):
    """Search every grid of the world's size; the per-root figures must not depend on the grid."""
    figures = {}
    for R, C in grids_of(WORLD.Get_size()):
        comms = GridComms.create(Grid(R, C, n_vertices))
        lo, hi = edge_range(len(src), WORLD.Get_rank(), WORLD.Get_size())
        graph = build_from_edges(comms, backend, src[lo:hi], dst[lo:hi], n_vertices)
        if roots is None:
            has_edge = np.zeros(n_vertices, bool)
            has_edge[src[src != dst]] = has_edge[dst[src != dst]] = True
            roots = sample_roots(n_vertices, nroots, lambda c: has_edge[c])
        bfs = BFS(graph)
        figures[(R, C)] = [check_search(bfs, graph, src, dst, int(r)) for r in roots]
        bfs.close()
        comms.free()
    first = next(iter(figures.values()))
    assert all(f == first for f in figures.values()), figures


@pytest.mark.parametrize("scale", range(8, 15))
def test_graph500_levels_match_serial(scale):
    src, dst = generate_edges(scale, 16, 0, 16 << scale)[:2]
    run_grids(Backend("cpu"), 1 << scale, src, dst, nroots=4 if scale < 13 else 2)


def test_several_components_isolated_vertices_and_padding():
    rng = np.random.default_rng(7)
    n = 301                                    # not divisible by any grid of 2..4 ranks
    src = rng.integers(0, 150, 600)            # vertices 150..300 isolated but for the edges below
    dst = rng.integers(0, 150, 600)
    src = np.concatenate((src, [200, 201, 202, 250, 250, 7]))
    dst = np.concatenate((dst, [201, 202, 200, 250, 251, 7]))   # a triangle, a self-loop, a pair
    run_grids(Backend("cpu"), n, src, dst, roots=[0, 200, 250, 299, 7])


@pytest.mark.gpu
@pytest.mark.parametrize("scale", [10, 14, 16])
def test_gpu_levels_match_serial(scale):
    src, dst = generate_edges(scale, 16, 0, 16 << scale)[:2]
    local = MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED).Get_rank()
    run_grids(Backend("gpu", local % gpu_count()), 1 << scale, src, dst, nroots=4)
