"""Distributed Graph500 BFS validation over the 2D grid of the search (spec v3 "Validation";
graph500.md section 3; paper 004 section 2.2 for the layout).

Rank (i, j) holds the parents of its owned block and its CSC block of the graph. It never sees more
than the 2D decomposition's own footprint: the parents and levels of its N/R local rows (gathered
along the row communicator, in row order) and of its N/C local columns (gathered along the column
communicator, in column order).

Method.
1. Pass over the local CSC entries u -> v (in chunks, to bound temporaries): an entry is a tree entry
   when parent[v] == u. Tree entries mark "v's parent is a neighbour" and, when parent[u] == -1, "v's
   parent is unreached"; the marks reach v's owner by one bitwise-OR reduce-scatter along the row.
   The same pass counts the TEPS edges: entries with a visited end and v < u, i.e. every non-self-loop
   input tuple of the component once, duplicates included (reference 3.0.0 get_edge_count_for_teps;
   the CSC stores each such tuple in both directions).
2. Depths from the root, level-synchronously along tree entries only: the owned frontier of level k
   is gathered along the column (expand), the tree entries of those columns give their children, and
   the children go to their owners along the row (fold, Alltoallv), which give them level k+1.
   A vertex thus gets a finite depth iff its chain of parents reaches the root through graph edges.
3. Pass over the CSC entries with the depths of the local columns and rows: an entry with exactly
   one visited end breaks the spanning rule, two visited ends with depths differing by more than one
   break the edge-level rule.

Rules, in the order they are reported (the first broken rule is reported, naming its lowest
offending vertex; every rank gets the same message from one allgather of each rank's lowest
offender per rule):
  parent-range          parent is -1 or in [0, N) (padding vertices: -1)
  root                  parent[root] == root
  self-parent           no other vertex is its own parent
  parent-not-neighbour  a vertex and its parent share an input edge (spec 5)
  parent-unreached      the parent of a visited vertex is visited
  cycle                 following parents from a visited vertex reaches the root (spec 1; also
                        rejects a parent forest claiming another component, which the reference's
                        float depth sentinel misses)
  span                  no edge joins a visited and an unvisited vertex: the visited set is exactly
                        the root's component (spec 4)
  edge-level            every edge joins depths differing by at most 1 (spec 3)
  level                 the BFS's own levels, when given, equal the depths derived here
  nedge                 the BFS's TEPS edge count equals the validator's
Tree edges join depths differing by exactly 1 (spec 2) by construction of the depths.

Directed graphs (graph.info["directed"]: the CSC holds only u -> v for each tuple (u, v)) are checked
as a BFS along out-edges with the same passes: a parent must be an in-neighbour, the span rule reads
"no edge leaves the tree", the edge-level rule applies along the edge direction only (depth[v] <=
depth[u] + 1 for every edge u -> v between visited vertices), and the TEPS edge count is the number of
non-self-loop tuples whose source is visited (duplicates included): the edges the search examines.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mpi4py import MPI

from dbfs.runtime import alltoallv_int32, displacements

# CSC entries per pass step: about 1 GiB of temporaries on the CPU, 4 GiB on a GPU (fewer steps: each
# step costs a few host synchronisations)
ENTRY_CHUNK = {"cpu": 1 << 24, "gpu": 1 << 26}
NONE = np.iinfo(np.int64).max
_HAS_PARENT_EDGE, _PARENT_UNREACHED = 1, 2


@dataclass(frozen=True)
class ValidationResult:
    ok: bool                 # identical on every rank
    nedge: int               # TEPS edge count of the search (reference v3 definition)
    message: str | None      # the first broken rule and its lowest offending vertex; None when ok
    rule: str | None         # that rule's name (see the module docstring)
    vertex: int | None       # that vertex's global id
    visited: int             # vertices with a parent
    max_level: int           # deepest derived depth (-1 when the root is not its own parent)


RULES = ("parent-range", "root", "self-parent", "parent-not-neighbour", "parent-unreached", "cycle",
         "span", "edge-level", "level")


def _message(rule: str, n: int, root: int, v: int, w: int, a: int, b: int, directed: bool) -> str:
    if rule == "parent-range":
        where = f"padding vertex {v} (N = {n})" if v >= n else f"vertex {v}"
        allowed = "-1" if v >= n else f"-1 or in [0, {n})"
        return f"{where}: parent {w} is not {allowed}"
    if rule == "root":
        return f"root {v}: parent is {w}, not the root itself"
    if rule == "self-parent":
        return f"vertex {v} is its own parent but is not the root {root}"
    if rule == "parent-not-neighbour":
        return f"vertex {v}: parent {w} is not a neighbour (no input edge joins them)"
    if rule == "parent-unreached":
        return f"vertex {v}: parent {w} is not in the tree (its parent is -1)"
    if rule == "cycle":
        return (f"vertex {v} (parent {w}): following parents never reaches the root {root} "
                "(the parent links form a cycle)")
    if rule == "span" and directed:
        return (f"vertex {v} is unreached but the edge {w} -> {v} leaves the tree "
                "(the tree does not span the vertices reachable from the root)")
    if rule == "span":
        return (f"vertex {v} is unreached but its neighbour {w} is in the tree "
                "(the tree does not span the root's component)")
    if rule == "edge-level" and directed:
        return f"edge {w} -> {v} goes from level {b} to level {a}, more than one level deeper"
    if rule == "edge-level":
        return f"edge ({v}, {w}) joins levels {a} and {b}, which differ by more than 1"
    return f"vertex {v}: the BFS gives level {w}, the parent tree gives {a}"


def _lowest(xp, mask, offender, witness, a=None, b=None):
    """(offender, witness, a, b) of the masked entry with the least (offender, witness), or None."""
    if not bool(mask.any()):
        return None
    off = offender[mask]
    wit = witness[mask]
    x = off.min()
    wit_x = xp.where(off == x, wit, NONE)
    k = int(wit_x.argmin())
    pick = [int(x), int(wit[k])]
    for extra in (a, b):
        pick.append(int(extra[mask][k]) if extra is not None else 0)
    return tuple(pick)


def _merge(best: dict, rule: str, found) -> None:
    if found is not None and (rule not in best or found[:2] < best[rule][:2]):
        best[rule] = found


def _host(backend, a, dtype):
    return np.ascontiguousarray(backend.asnumpy(a), dtype=dtype)


def _allgather(comm: MPI.Comm, backend, local, dtype):
    """Concatenation of every rank's equally long `local` in communicator order, on the device."""
    send = _host(backend, local, dtype)
    recv = np.empty(send.size * comm.Get_size(), dtype)
    comm.Allgather(send, recv)
    return backend.asarray(recv)


def _allgatherv_int32(comm: MPI.Comm, backend, local):
    send = _host(backend, local, np.int32)
    counts = np.empty(comm.Get_size(), np.int64)
    comm.Allgather(np.array([send.size], np.int64), counts)
    recv = np.empty(int(counts.sum()), np.int32)
    comm.Allgatherv(send, [recv, (counts, displacements(counts)), MPI.INT32_T])
    return backend.asarray(recv)


def _alltoallv_int32(comm: MPI.Comm, backend, values, counts):
    """values grouped by destination rank, counts[d] of them for rank d; returns what arrived."""
    return backend.asarray(alltoallv_int32(comm, _host(backend, values, np.int32), counts))


def _expand_ranges(xp, starts, counts):
    """Concatenation of the index ranges [starts[k], starts[k] + counts[k])."""
    ends = xp.cumsum(counts)
    total = int(ends[-1]) if ends.size else 0
    position = xp.arange(total, dtype=xp.int64)
    segment = xp.searchsorted(ends, position, side="right")
    return starts[segment] + position - (ends[segment] - counts[segment])


def _entry_chunks(graph):
    """The local CSC entries u -> v in chunks: (local column, local row, global u, global v)."""
    xp = graph.backend.xp
    col_base = graph.grid.to_global_col(graph.j, 0)
    chunk = ENTRY_CHUNK[graph.backend.name]
    for e0 in range(0, graph.nnz, chunk):
        e1 = min(e0 + chunk, graph.nnz)
        c = xp.searchsorted(graph.col_ptr, xp.arange(e0, e1, dtype=xp.int64), side="right") - 1
        r = graph.row_idx[e0:e1].astype(xp.int64)
        yield c, r, c + col_base, graph.grid.to_global_row(graph.i, r)


def validate_bfs(graph, root: int, parent, nedge_claimed: int | None, level=None) -> ValidationResult:
    """Collective over graph.comms.world: check one BFS result (see the module docstring).
    nedge_claimed None: the search made no TEPS edge count of its own (the result's nedge is the
    validator's).

    parent: xp int64 [grid.block], global parent ids of the owned vertices (offset o is global
    grid.to_global_owned(i, j, o)), -1 for unreached and for padding. level: optional xp int32
    [grid.block], the BFS's levels of the owned vertices, -1 unreached.
    """
    comms, grid, backend = graph.comms, graph.grid, graph.backend
    xp, b, n = backend.xp, grid.block, grid.n_vertices
    directed = bool(graph.info.get("directed", False))
    if not 0 <= root < n:
        raise ValueError(f"root {root} outside [0, {n})")
    parent = xp.asarray(parent, dtype=xp.int64)
    if parent.shape != (b,):
        raise ValueError(f"parent must have the block length {b}, has shape {parent.shape}")
    if level is not None:
        level = xp.asarray(level, dtype=xp.int32)
        if level.shape != (b,):
            raise ValueError(f"level must have the block length {b}, has shape {level.shape}")

    owned = grid.to_global_owned(graph.i, graph.j, xp.arange(b, dtype=xp.int64))
    visited = parent != -1
    row_parent = _allgather(comms.row, backend, parent, np.int64)
    col_parent = _allgather(comms.col, backend, parent, np.int64)

    # step 1: tree entries, parent marks, TEPS edge count
    row_marks = xp.zeros(grid.rows_per_rank, xp.uint8)
    tree_cols, tree_rows = [], []
    nedge_local = 0
    for c, r, u, v in _entry_chunks(graph):
        pu, pv = col_parent[c], row_parent[r]
        counted = (pu != -1) if directed else ((pu != -1) | (pv != -1)) & (v < u)
        nedge_local += int(counted.sum())
        tree = pv == u
        tree_cols.append(c[tree].astype(xp.int32))
        tree_rows.append(r[tree].astype(xp.int32))
        row_marks[r[tree]] |= _HAS_PARENT_EDGE
        row_marks[r[tree & (pu == -1)]] |= _PARENT_UNREACHED
    marks = np.empty(b, np.uint8)
    comms.row.Reduce_scatter_block(_host(backend, row_marks, np.uint8), marks, op=MPI.BOR)
    marks = backend.asarray(marks)
    del row_marks

    tree_cols = xp.concatenate(tree_cols) if tree_cols else xp.empty(0, xp.int32)
    tree_rows = xp.concatenate(tree_rows) if tree_rows else xp.empty(0, xp.int32)
    depth, max_level = _derive_depths(graph, root, parent, tree_cols, tree_rows)
    del tree_cols, tree_rows

    best: dict = {}
    non_root = owned != root
    real = owned < n
    in_range = (parent >= 0) & (parent < n)
    _merge(best, "parent-range", _lowest(xp, visited & ~(in_range & real), owned, parent))
    _merge(best, "root", _lowest(xp, (owned == root) & (parent != root), owned, parent))
    _merge(best, "self-parent", _lowest(xp, non_root & (parent == owned), owned, parent))
    _merge(best, "parent-not-neighbour",
           _lowest(xp, visited & non_root & ((marks & _HAS_PARENT_EDGE) == 0), owned, parent))
    _merge(best, "parent-unreached",
           _lowest(xp, visited & ((marks & _PARENT_UNREACHED) != 0), owned, parent))
    _merge(best, "cycle", _lowest(xp, visited & real & (depth < 0), owned, parent))
    if level is not None:
        _merge(best, "level", _lowest(xp, level != depth, owned, level.astype(xp.int64), depth))

    # step 3: spanning and per-edge level rules, with the depths of local rows and columns
    row_depth = _allgather(comms.row, backend, depth, np.int32)
    col_depth = _allgather(comms.col, backend, depth, np.int32)
    for c, r, u, v in _entry_chunks(graph):
        pu, pv = col_parent[c], row_parent[r]
        _merge(best, "span", _lowest(xp, (pu != -1) & (pv == -1), v, u))
        du, dv = col_depth[c], row_depth[r]
        rise = (dv - du) if directed else xp.abs(du - dv)
        steep = (du >= 0) & (dv >= 0) & (rise > 1)
        _merge(best, "edge-level", _lowest(xp, steep, v, u, dv, du))

    return _agree(comms.world, grid, root, best, nedge_local, int(visited[real].sum()), max_level,
                  nedge_claimed, directed)


def _derive_depths(graph, root: int, parent, tree_cols, tree_rows):
    """Owned depths (int32, -1 where the parent chain does not reach the root) and the deepest level.

    tree_cols is sorted (CSC order), so the tree entries of local column c are
    tree_ptr[c] .. tree_ptr[c+1].
    """
    comms, grid, backend = graph.comms, graph.grid, graph.backend
    xp, b = backend.xp, grid.block
    tree_ptr = xp.searchsorted(tree_cols, xp.arange(grid.cols_per_rank + 1, dtype=xp.int32),
                               side="left")
    depth = xp.full(b, -1, xp.int32)
    frontier = xp.empty(0, xp.int32)
    if grid.owner(root) == (graph.i, graph.j):
        offset = root % b
        if int(parent[offset]) == root:
            depth[offset] = 0
            frontier = xp.asarray([offset], dtype=xp.int32)
    column_offset = grid.owned_col_start(graph.i)
    row_bounds = xp.arange(grid.C + 1, dtype=xp.int64) * b
    frontier_size = np.empty(1, np.int64)
    k = 0
    while True:
        comms.world.Allreduce(np.array([frontier.size], np.int64), frontier_size, op=MPI.SUM)
        if frontier_size[0] == 0:
            return depth, k - 1
        columns = _allgatherv_int32(comms.col, backend, frontier + column_offset).astype(xp.int64)
        starts = tree_ptr[columns]
        children = tree_rows[_expand_ranges(xp, starts, tree_ptr[columns + 1] - starts)]
        children = xp.unique(children).astype(xp.int64)
        counts = xp.diff(xp.searchsorted(children, row_bounds, side="left"))
        arrived = _alltoallv_int32(comms.row, backend, children % b, _host(backend, counts, np.int64))
        fresh = arrived[depth[arrived] < 0]
        depth[fresh] = k + 1
        frontier = fresh
        k += 1


def _agree(world: MPI.Comm, grid, root: int, best: dict, nedge_local: int, visited_local: int,
           max_level: int, nedge_claimed: int | None, directed: bool) -> ValidationResult:
    """One allgather of every rank's lowest offender per rule and counts; the same verdict everywhere."""
    table = np.full((len(RULES) + 1, 4), NONE, np.int64)
    for k, rule in enumerate(RULES):
        if rule in best:
            table[k] = best[rule]
    table[-1, :2] = nedge_local, visited_local
    everyone = np.empty((world.Get_size(),) + table.shape, np.int64)
    world.Allgather(table, everyone)
    nedge = int(everyone[:, -1, 0].sum())
    visited = int(everyone[:, -1, 1].sum())
    for k, rule in enumerate(RULES):
        rows = everyone[:, k]
        first = rows[np.lexsort((rows[:, 1], rows[:, 0]))[0]]
        if first[0] != NONE:
            v, w, a, b = (int(x) for x in first)
            return ValidationResult(False, nedge, _message(rule, grid.n_vertices, root, v, w, a, b,
                                                           directed), rule, v, visited, max_level)
    if nedge_claimed is not None and nedge != nedge_claimed:
        return ValidationResult(False, nedge, f"wrong edge count: the BFS claims {nedge_claimed}, "
                                f"the validator counts {nedge}", "nedge", None, visited, max_level)
    return ValidationResult(True, nedge, None, None, None, visited, max_level)
