"""Graphs, reference solutions and an extra vertex program shared by the ws-mode tests.

References are independent of the engine: BFS levels from graph500.serial, shortest paths from SciPy's
Dijkstra, widest paths from a maximum spanning forest (the widest path between two vertices runs along
it), components from SciPy, PageRank by float64 power iteration of the same formula.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from dbfs.backend import Backend
from dbfs.families import lattice_graph, lattice_with_holes
from dbfs.ws.engine import Engine, Layout
from dbfs.ws.frontier import THRESHOLD
from dbfs.ws.graph import build_csr
from dbfs.ws.program import Program
from dbfs.ws.shards import SHARD_METHODS, WINDOW
from dbfs.ws.programs import UNREACHED
from graph500.generator import generate_edges
from graph500.serial import serial_bfs


@lru_cache(maxsize=None)
def kronecker(scale: int, edgefactor: int = 8):
    """(n, src, dst, weights) of the Graph500 graph (SSSP weights), no zero weight (Dijkstra drops them)."""
    src, dst, w = generate_edges(scale, edgefactor, 0, edgefactor << scale, weights=True)
    assert np.all(w > 0)
    return 1 << scale, src, dst, w


@lru_cache(maxsize=None)
def handmade():
    """A hub of degree 1100 (many 32-edge chunks), a second hub of 40, a path, two small components,
    isolated vertices (also inside warps), self-loops and duplicate edges with different weights."""
    rng = np.random.default_rng(11)
    n = 1500
    hub = np.full(1100, 3)
    hub_nbrs = rng.choice(np.arange(100, 1400), 1100, replace=False)
    pairs = [(hub, hub_nbrs),
             (np.full(40, 70), np.arange(1400, 1440)),
             (np.arange(1440, 1460), np.arange(1441, 1461)),          # a path
             (np.array([3, 70, 1460, 9, 9, 9, 1480, 1481]), np.array([70, 1460, 3, 9, 12, 12, 1481, 1482])),
             (rng.integers(100, 1400, 900), rng.integers(100, 1400, 900))]
    src = np.concatenate([a for a, _ in pairs]).astype(np.int64)
    dst = np.concatenate([b for _, b in pairs]).astype(np.int64)
    w = rng.uniform(0.01, 1.0, src.shape[0]).astype(np.float32)
    return n, src, dst, w


def _weighted(n, src, dst, seed):
    return n, src, dst, np.random.default_rng(seed).uniform(0.01, 1.0, src.shape[0]).astype(np.float32)


@lru_cache(maxsize=None)
def lattice():
    """A 48 x 40 lattice with scrambled ids (long paths: many iterations), random weights."""
    return _weighted(*lattice_graph((48, 40)), seed=12)


@lru_cache(maxsize=None)
def lattice_holes():
    """A 40 x 60 lattice whose square holes are isolated vertices (many components), random weights."""
    return _weighted(*lattice_with_holes(), seed=13)


GRAPHS = {"kronecker9": lambda: kronecker(9), "handmade": handmade, "lattice": lattice,
          "lattice_holes": lattice_holes}


def run(program, graph, parts=1, exchange=None, method="ws", source=None, devices=None, shard_window=None,
        shard_memory="auto", frontier="all", bin_threshold=THRESHOLD, **hubs):
    """One run to convergence; hubs: hub_degree and hub_slice of the Layout (default: the engine's);
    shard_window and shard_memory for the gs and cw methods (default: the engine's window); frontier and
    bin_threshold: the active lists (dbfs.ws.frontier)."""
    n, src, dst, w = graph
    xp = np
    shard = {}
    if method in SHARD_METHODS:
        shard = dict(shard_methods=(method,), shard_window=shard_window or WINDOW, shard_memory=shard_memory)
    if devices is not None:
        import cupy as xp
        with xp.cuda.Device(devices[0]):
            backend = Backend("gpu", devices[0])
            csr = build_csr(xp, n, xp.asarray(src), xp.asarray(dst), xp.asarray(w))
            layout = Layout(csr, parts, devices, pinned_empty=backend.pinned_empty, **shard, **hubs)
    else:
        layout = Layout(build_csr(xp, n, src, dst, w), parts, None, **shard, **hubs)
        backend = Backend("cpu")
    return Engine(layout, program, backend).run(method, exchange, source, frontier=frontier,
                                                bin_threshold=bin_threshold)


def source_of(graph) -> int:
    n, src, dst, _ = graph
    return int(src[0])


def undirected_min(n, src, dst, w, keep_max=False):
    """SciPy matrix of the simple undirected graph, parallel edges merged to the min (max) weight."""
    keep = src != dst
    a, b, w = np.minimum(src, dst)[keep], np.maximum(src, dst)[keep], w[keep].astype(np.float64)
    key = a * n + b
    order = np.lexsort((-w if keep_max else w, key))
    first = np.ones(order.shape[0], bool)
    first[1:] = key[order][1:] != key[order][:-1]
    pick = order[first]
    return a[pick], b[pick], w[pick]


def bfs_reference(graph, source):
    n, src, dst, _ = graph
    level, _ = serial_bfs(n, src, dst, source)
    return np.where(level < 0, UNREACHED, level).astype(np.uint32)


def sssp_reference(graph, source):
    n, src, dst, w = graph
    a, b, w = undirected_min(n, src, dst, w)
    matrix = sp.csr_matrix((w, (a, b)), shape=(n, n))
    return csgraph.dijkstra(matrix, directed=False, indices=source)


def sswp_reference(graph, source):
    n, src, dst, w = graph
    a, b, w = undirected_min(n, src, dst, w, keep_max=True)
    forest = csgraph.minimum_spanning_tree(sp.csr_matrix((2.0 - w, (a, b)), shape=(n, n)))
    forest = (forest + forest.T).tocsr()
    order, pred = csgraph.breadth_first_order(forest, source, directed=False, return_predecessors=True)
    width = np.zeros(n)
    up = np.full(n, np.inf)
    ancestor = np.arange(n)
    children = order[1:]
    up[children] = 2.0 - np.asarray(forest[pred[children], children]).ravel()
    ancestor[children] = pred[children]
    for _ in range(int(np.ceil(np.log2(n))) + 1):       # pointer jumping: min weight up to the source
        up = np.minimum(up, up[ancestor])
        ancestor = ancestor[ancestor]
    width[order] = up[order]
    return width


def cc_reference(graph):
    """Component labels as the smallest vertex id of each component (and the SciPy labelling)."""
    n, src, dst, _ = graph
    matrix = sp.csr_matrix((np.ones(src.shape[0]), (src, dst)), shape=(n, n))
    _, labels = csgraph.connected_components(matrix, directed=False)
    smallest = np.full(labels.max() + 1, n)
    np.minimum.at(smallest, labels, np.arange(n))
    return smallest[labels], labels


def pagerank_reference(graph, iterations):
    """N x PageRank after `iterations` float64 Jacobi steps of r = 0.15 + 0.85 A (r / degree)."""
    n, src, dst, _ = graph
    keep = src != dst
    rows = np.concatenate((dst[keep], src[keep]))
    cols = np.concatenate((src[keep], dst[keep]))
    matrix = sp.csr_matrix((np.ones(rows.shape[0]), (rows, cols)), shape=(n, n))
    degree = np.maximum(np.asarray(matrix.sum(axis=0)).ravel(), 1)
    r = np.ones(n)
    for _ in range(iterations):
        r = 0.15 + 0.85 * (matrix @ (r / degree))
    return r


# A program with a struct vertex (12 bytes): BFS level plus the smallest-id parent on the level above.
PARENT_DTYPE = np.dtype([("level", "<u4"), ("self", "<u4"), ("parent", "<u4")])


def _parent_initial(n, source):
    values = np.zeros(n, PARENT_DTYPE)
    values["level"] = UNREACHED
    values["self"] = np.arange(n)
    values["parent"] = UNREACHED
    values[source] = (0, source, source)
    return values


def _parent_compute(nbr, _):
    out = nbr.copy()
    out["level"] = np.where(nbr["level"] == UNREACHED, UNREACHED, nbr["level"] + np.uint32(1))
    out["parent"] = nbr["self"]
    return out


def _parent_better(a, b):
    return (b["level"] < a["level"]) | ((b["level"] == a["level"]) & (b["parent"] < a["parent"]))


def _parent_reduce(a, b):
    out = a.copy()
    take = _parent_better(a, b)
    out["level"][take], out["parent"][take] = b["level"][take], b["parent"][take]
    return out


BFS_PARENT = Program(
    name="bfs_parent", description="BFS level and smallest parent (a struct vertex)",
    vertex_dtype=PARENT_DTYPE, needs_source=True, cuda=r"""
struct Vertex { u32 level, self, parent; };
struct Edge {};
__device__ __forceinline__ bool parent_better(const Vertex* a, const Vertex* b)
{ return b->level < a->level || (b->level == a->level && b->parent < a->parent); }
__device__ __forceinline__ void init_vertex(Vertex* shared, const Vertex* current) { *shared = *current; }
__device__ __forceinline__ void compute_nbr(Vertex nbr, const Edge*, Vertex* local)
{
    local->level = nbr.level == 0xffffffffu ? nbr.level : nbr.level + 1;
    local->self = nbr.self;
    local->parent = nbr.self;
}
__device__ __forceinline__ void reduce_vertices(Vertex* first, const Vertex* second)
{
    if (parent_better(first, second)) { first->level = second->level; first->parent = second->parent; }
}
__device__ __forceinline__ bool is_updated(const Vertex* computed, const Vertex* current)
{ return parent_better(current, computed); }
""",
    initial=_parent_initial, init=np.copy, compute=_parent_compute, reduce=_parent_reduce,
    is_updated=lambda computed, current: _parent_better(current, computed),
    reached=lambda values: values["level"] != UNREACHED)
