"""ws mode, CPU: the approximate layouts (dbfs.ws.approx) do what their description says, on a
Kronecker graph, a lattice and the hand-made graph with isolated parts; a coalescing layout that may
replicate nothing is a pure renumbering, so every exact program gives the exact values there; the
inaccuracy figures."""

import numpy as np
import pytest

from dbfs.ws import programs  # noqa: F401
from dbfs.ws.approx import KINDS, REPLICA_DEGREE, approximate, inaccuracy
from dbfs.ws.graph import build_csr
from dbfs.ws.program import PROGRAMS
from ws_cases import GRAPHS, run, source_of

pytestmark = pytest.mark.one_rank

GRAPH_NAMES = ["kronecker9", "lattice", "handmade"]


def undirected_set(src, dst):
    keep = src != dst
    return set(zip(np.minimum(src, dst)[keep].tolist(), np.maximum(src, dst)[keep].tolist()))


@pytest.mark.parametrize("graph_name", GRAPH_NAMES)
def test_coalesce_renumbers_by_levels_and_fills_holes_with_replicas(graph_name):
    n, src, dst, w = GRAPHS[graph_name]()
    a = approximate("coalesce", n, src, dst, w, threshold=2)
    position = a.position
    assert np.array_equal(np.sort(position[position >= 0]), np.unique(position)) and position.size == n
    # the original tuples are kept, renumbered; added tuples all touch a replica
    original = undirected_set(position[src], position[dst])
    approx = undirected_set(a.src, a.dst)
    assert original <= approx
    replicas = np.setdiff1d(np.arange(a.n), position)
    added = approx - original
    assert all(x in replicas or y in replicas for x, y in added)
    csr = build_csr(np, n, src, dst, w)
    degree = np.diff(csr.rowptr)
    # levels of the BFS tree from the highest-degree vertex start on multiples of 32
    root = int(np.argmax(degree))
    assert position[root] == 0
    from graph500.serial import serial_bfs
    level, _ = serial_bfs(n, src, dst, root)
    for lv in range(1, level.max() + 1):
        assert position[level == lv].min() % 32 == 0
    # a replica has >= threshold edges into its chunk (through the vertex it copies) and reaches it all
    a_csr = build_csr(np, a.n, a.src, a.dst, a.weights)
    replicas_placed = [r for r in replicas if a_csr.rowptr[r + 1] > a_csr.rowptr[r]]
    assert len(replicas_placed) == a.replicas
    for r in replicas_placed:
        chunk = np.arange(r // 32 * 32, r)
        chunk = chunk[np.isin(chunk, position)]
        row = a_csr.nbrs[a_csr.rowptr[r]:a_csr.rowptr[r + 1]]
        assert np.all(np.isin(chunk, row))
        assert row.size <= REPLICA_DEGREE + 31                  # hubs are never copied
    if graph_name == "lattice":
        assert a.replicas > 0


@pytest.mark.parametrize("graph_name", GRAPH_NAMES)
@pytest.mark.parametrize("name", ["bfs", "sssp", "sswp", "pr"])
def test_coalesce_without_replicas_is_a_renumbering(name, graph_name):
    graph = GRAPHS[graph_name]()
    n, src, dst, w = graph
    a = approximate("coalesce", n, src, dst, w, threshold=10 ** 9)
    assert a.replicas == 0 and a.added == 0
    program = PROGRAMS[name]
    source = source_of(graph) if program.needs_source else None
    exact = run(program, graph, source=source)
    moved = run(program, (a.n, a.src, a.dst, a.weights), source=None if source is None else int(a.position[source]))
    figures = inaccuracy(program, exact.values, moved.values, a.position)
    if program.exact:
        assert figures["differ_fraction"] == 0 and figures["mean_relative_error"] == 0
    else:
        assert figures["mean_relative_error"] < 1e-4


def test_latency_completes_the_neighbourhoods_of_high_clustering_vertices():
    n, src, dst, w = GRAPHS["kronecker9"]()
    a = approximate("latency", n, src, dst, w, degree=16, fraction=0.05)
    assert a.added > 0 and a.n == n and np.array_equal(a.position, np.arange(n))
    csr = build_csr(np, n, src, dst, w)
    added = undirected_set(a.src[src.shape[0]:], a.dst[src.shape[0]:])
    assert not added & undirected_set(src, dst)             # only missing edges are added
    # every added edge joins two neighbours of a vertex of degree 2..16
    neighbours = [set(csr.nbrs[csr.rowptr[v]:csr.rowptr[v + 1]].tolist()) for v in range(n)]
    small = [s for s in neighbours if 2 <= len(s) and len(s) <= 16]
    assert all(any(x in s and y in s for s in small) for x, y in added)
    assert np.all(a.weights[src.shape[0]:] > 0)
    lattice = approximate("latency", *GRAPHS["lattice"]())   # no triangles: nothing to complete
    assert lattice.added == 0


@pytest.mark.parametrize("graph_name", GRAPH_NAMES)
def test_divergence_brings_degrees_towards_the_warp_mean(graph_name):
    n, src, dst, w = GRAPHS[graph_name]()
    tolerance = 0.25
    a = approximate("divergence", n, src, dst, w, tolerance=tolerance)
    before = np.diff(build_csr(np, n, src, dst, w).rowptr)
    after = np.diff(build_csr(np, a.n, a.src, a.dst, a.weights).rowptr)
    order = np.argsort(a.position)                             # new id -> original vertex
    assert np.all(np.diff(before[order]) >= 0)                 # renumbered by degree

    def spread(degree_by_new_id):
        warps = degree_by_new_id[: n // 32 * 32].reshape(-1, 32).astype(float)
        return np.abs(warps - warps.mean(axis=1, keepdims=True)).sum()
    assert spread(after) <= spread(before[order])
    if graph_name != "lattice":
        assert a.added > 0 and a.removed > 0


def test_inaccuracy_counts_differences_and_relative_errors():
    program = PROGRAMS["sssp"]
    exact = np.array([0.0, 1.0, 2.0, np.inf, 4.0], np.float32)
    approx = np.array([0.0, 1.0, 1.0, 5.0, 4.0, 9.0], np.float32)   # one replica at the end
    position = np.arange(5)
    figures = inaccuracy(program, exact, approx, position)
    assert figures["differ_fraction"] == pytest.approx(2 / 5)
    assert figures["mean_relative_error"] == pytest.approx((0.5 + 1.0) / 5)
    bfs = PROGRAMS["bfs"]
    levels = np.array([0, 1, 0xFFFFFFFF], np.uint32)
    assert inaccuracy(bfs, levels, levels.copy(), np.arange(3))["differ_fraction"] == 0
    pr = PROGRAMS["pr"]
    ranks = np.array([1.0, 2.0], np.float32)
    assert inaccuracy(pr, ranks, ranks * np.float32(1 + 1e-6), np.arange(2))["differ_fraction"] == 0


def test_unknown_kind():
    with pytest.raises(ValueError, match="unknown approximation"):
        approximate("blur", *GRAPHS["kronecker9"]())
    assert KINDS == ("coalesce", "latency", "divergence")
