"""The five vertex programs of the WS mode (paper 000, Table I): bfs, sssp, sswp, cc and pr.

Each is a dbfs.ws.program.Program: CUDA C for the engine's kernel template plus NumPy twins of its four
functions. Graphs are undirected, so a vertex's incoming neighbours are simply its neighbours.
sssp and sswp read the graph's edge weights (Graph500 SSSP weights in [0, 1) for generated graphs);
pr reads 1 / degree of the neighbour as its edge value and keeps N times the PageRank of each vertex,
r(v) = (1 - d) + d * sum over neighbours u of r(u) / degree(u), d = 0.85, no dangling-mass
redistribution; a vertex counts as updated while its value moves by more than 1e-6 of itself.
"""

from __future__ import annotations

import numpy as np

from dbfs.ws.program import Program, register

UNREACHED = np.uint32(0xFFFFFFFF)
DAMPING = np.float32(0.85)
PR_TOLERANCE = np.float32(1e-6)

# init_vertex of the monotone programs: the reduction starts from the vertex's current value.
_COPY_INIT = """
__device__ __forceinline__ void init_vertex(Vertex* shared, const Vertex* current) { *shared = *current; }
"""


def _with_source(values, source, value):
    values[source] = value
    return values


register(Program(
    name="bfs", description="BFS level of every vertex from the source (unreached: 2^32 - 1)",
    vertex_dtype=np.uint32, needs_source=True, cuda=r"""
typedef u32 Vertex;
struct Edge {};
""" + _COPY_INIT + r"""
__device__ __forceinline__ void compute_nbr(Vertex nbr, const Edge*, Vertex* local)
{ *local = nbr == 0xffffffffu ? nbr : nbr + 1; }
__device__ __forceinline__ void reduce_vertices(Vertex* first, const Vertex* second)
{ *first = min(*first, *second); }
__device__ __forceinline__ bool is_updated(const Vertex* computed, const Vertex* current)
{ return *computed < *current; }
""",
    initial=lambda n, source: _with_source(np.full(n, UNREACHED, np.uint32), source, 0),
    init=np.copy,
    compute=lambda nbr, _: np.where(nbr == UNREACHED, UNREACHED, nbr + np.uint32(1)),
    reduce=np.minimum, is_updated=np.less,
    reached=lambda values: values != UNREACHED))

register(Program(
    name="sssp", description="shortest-path length from the source over the edge weights (unreached: inf)",
    vertex_dtype=np.float32, edge_dtype=np.float32, needs_source=True, weights="nonnegative", cuda=r"""
typedef float Vertex;
typedef float Edge;
""" + _COPY_INIT + r"""
__device__ __forceinline__ void compute_nbr(Vertex nbr, const Edge* edge, Vertex* local)
{ *local = nbr + *edge; }
__device__ __forceinline__ void reduce_vertices(Vertex* first, const Vertex* second)
{ *first = fminf(*first, *second); }
__device__ __forceinline__ bool is_updated(const Vertex* computed, const Vertex* current)
{ return *computed < *current; }
""",
    edge_values=lambda graph: graph.require_weights("sssp"),
    initial=lambda n, source: _with_source(np.full(n, np.inf, np.float32), source, 0),
    init=np.copy, compute=np.add, reduce=np.minimum, is_updated=np.less,
    reached=np.isfinite))

register(Program(
    name="sswp", description="widest-path bandwidth from the source (paper Figure 5; unreached: 0)",
    vertex_dtype=np.float32, edge_dtype=np.float32, needs_source=True, weights="finite", cuda=r"""
typedef float Vertex;
typedef float Edge;
""" + _COPY_INIT + r"""
__device__ __forceinline__ void compute_nbr(Vertex nbr, const Edge* edge, Vertex* local)
{ *local = fminf(nbr, *edge); }
__device__ __forceinline__ void reduce_vertices(Vertex* first, const Vertex* second)
{ *first = fmaxf(*first, *second); }
__device__ __forceinline__ bool is_updated(const Vertex* computed, const Vertex* current)
{ return *computed > *current; }
""",
    edge_values=lambda graph: graph.require_weights("sswp"),
    initial=lambda n, source: _with_source(np.zeros(n, np.float32), source, np.inf),
    init=np.copy, compute=np.minimum, reduce=np.maximum, is_updated=np.greater,
    reached=lambda values: values > 0))

register(Program(
    name="cc", description="connected components: smallest vertex id of the component (label propagation)",
    vertex_dtype=np.uint32, cuda=r"""
typedef u32 Vertex;
struct Edge {};
""" + _COPY_INIT + r"""
__device__ __forceinline__ void compute_nbr(Vertex nbr, const Edge*, Vertex* local) { *local = nbr; }
__device__ __forceinline__ void reduce_vertices(Vertex* first, const Vertex* second)
{ *first = min(*first, *second); }
__device__ __forceinline__ bool is_updated(const Vertex* computed, const Vertex* current)
{ return *computed < *current; }
""",
    initial=lambda n, source: np.arange(n, dtype=np.uint32),
    init=np.copy, compute=lambda nbr, _: nbr.copy(), reduce=np.minimum, is_updated=np.less))


def _neighbour_share(graph):
    """1 / degree(u) for every entry u of the CSR: the fraction of u's rank each neighbour receives."""
    xp = graph.xp
    inverse = (1.0 / xp.maximum(graph.degree, 1)).astype(xp.float32)
    return inverse[graph.nbrs]


register(Program(
    name="pr", description="PageRank times N (damping 0.85, tolerance 1e-6 relative per vertex)",
    vertex_dtype=np.float32, edge_dtype=np.float32, exact=False, cuda=r"""
typedef float Vertex;
typedef float Edge;                 // 1 / degree of the neighbour
#define PR_DAMPING 0.85f
#define PR_TOLERANCE 1e-6f
__device__ __forceinline__ void init_vertex(Vertex* shared, const Vertex*) { *shared = 1.0f - PR_DAMPING; }
__device__ __forceinline__ void compute_nbr(Vertex nbr, const Edge* edge, Vertex* local)
{ *local = PR_DAMPING * nbr * *edge; }
__device__ __forceinline__ void reduce_vertices(Vertex* first, const Vertex* second) { *first += *second; }
__device__ __forceinline__ bool is_updated(const Vertex* computed, const Vertex* current)
{ return fabsf(*computed - *current) > PR_TOLERANCE * *current; }
""",
    edge_values=_neighbour_share,
    initial=lambda n, source: np.ones(n, np.float32),
    init=lambda current: np.full_like(current, np.float32(1) - DAMPING),
    compute=lambda nbr, share: DAMPING * nbr * share,
    reduce=np.add,
    is_updated=lambda computed, current: np.abs(computed - current) > PR_TOLERANCE * current))
