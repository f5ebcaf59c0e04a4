"""Distributed Graph500 BFS validation over the 2D grid of the search (spec v3 "Validation";
graph500.md section 3; paper 004 section 2.2 for the layout): the search's level array is checked as
a certificate of its parent array, in a few passes at memory speed (design.md "Validation").

Method. Rank (i, j) checks its owned block of parents and levels and its CSC block (dbfs.ops.validate:
CUDA kernels on a GPU, NumPy twins on the CPU):
1. check_vertices: the rules of each owned vertex alone, the number of vertices with a parent and a
   level, and the deepest level, which picks the narrowest compact level type (uint8, uint16 or int32,
   all ones for "no level") so that the random reads of step 3 hit an array that mostly stays in the
   GPU's L2 cache (64 MB at 2^26 vertices).
2. compact_levels; on several ranks the compact levels of the local rows (gathered along the grid row)
   and columns (along the grid column), and the parents of the local columns (undirected; gathered
   along the column) or rows (directed; along the row), through the run's bulk transport
   (dbfs.collectives: NCCL between GPUs of their own, else host MPI). On one rank the owned block is
   every row and column: nothing is gathered and MPI is not used.
3. check_entries, one pass over the CSC entries u -> v: span and edge-level, the TEPS counts, and the
   entry joining each vertex to its parent, found from the vertex's own side (undirected: column x,
   read sequentially, holds the parent's row; directed: row x's parent is column u), which marks the
   vertex and compares the two levels. The marks reach the owners by one bitwise-OR reduce-scatter
   along the column (undirected) or row (directed). The column offsets are read as the searches left
   them: dense, or held by the positions of the block's non-empty columns (graph.columns).
   By owned block, where the workspace's lenders cannot hold the gathered ranges whole (pieces: whole
   columns and rows if they fit, else the columns by block with the rows whole, else both by block;
   every rank takes the choice of the rank that needs the most):
   the local columns are the R owned blocks of the grid column, the rows the C blocks of the grid row.
   Column piece p holds block p's compact levels (and, undirected, parents), broadcast from rank
   (p, j) along the column; row piece m block m's levels (and, directed, parents), broadcast from rank
   (i, m) along the row; the pass runs once per pair of pieces, over the piece's columns (contiguous
   in the CSC) and only the entries whose rows lie in the row piece, so that every entry is checked
   exactly once and the counts, offenders and marks are the whole pass's. Pieces cost time, not room:
   a column piece's entries are read once per row piece and the row pieces broadcast once per column
   piece, while each piece takes one block.
4. check_parent_edges: a visited vertex without a mark has no parent edge.
Each rule keeps its lowest offending global vertex id; one allgather of the per-rank results (none on
one rank) gives every rank the same verdict: the first broken rule in the order below and its lowest
offender. Only then are the details of the message looked up (the offender's parent and levels from
its owner; for span and edge-level the lowest other end of its offending entries, by the entry pass
once more, in the same pieces).

Rules, in the order they are reported; "visited" = has a parent (not -1). Each rule's check is exact
whenever every rule before it holds for every vertex, which is all that reporting the first broken
rule needs (after the level rule, "has a level" and "visited" coincide, and the passes use the
former):
  parent-range          parent is -1 or in [0, N) (padding vertices: -1)
  root                  parent[root] == root and level[root] == 0
  self-parent           no other vertex is its own parent
  level                 a vertex is visited iff its level is not -1, and then its level is >= 0; a
                        vertex's level is at most its parent's + 1 (checked where the parent is a
                        neighbour and both have levels)
  parent-not-neighbour  a vertex and its parent share an input edge (spec 5; directed: the parent is
                        an in-neighbour)
  parent-unreached      the parent of a visited vertex is visited
  cycle                 the parent of a visited vertex other than the root has a smaller level, so
                        following parents descends (a cycle in the parent links always contains a
                        link that does not descend: a cycle is reported here, naming the lowest vertex
                        of such a link; so is a parent on the vertex's own level or deeper)
  span                  no edge joins a visited and an unvisited vertex (spec 4; directed: no edge
                        leaves the visited set)
  edge-level            every edge joins levels differing by at most 1 (spec 3; directed: level[v] <=
                        level[u] + 1 along u -> v)
  nedge                 the search's TEPS edge count equals the validator's
When all hold, the arrays are a BFS tree with its exact depths (completeness):
- Chains: every visited vertex other than the root has a visited parent (parent-unreached) that is a
  neighbour (parent-not-neighbour) with level exactly one less (level, cycle: not less by more than
  one, not equal or more). Following parents from a visited vertex therefore decreases the level by one
  per step; it cannot repeat a vertex, so it ends, and only at the root (the one visited vertex whose
  parent link does not step down; root: it is its own parent, level 0). So the parent links have no
  cycle (spec 1), every chain is a path of graph edges to the root of length level[v], and tree edges
  join levels differing by exactly 1 (spec 2). Self-parents other than the root are excluded outright.
- Component: every visited vertex is joined to the root by its chain; no edge leaves the visited set
  (span), so the visited set is the root's whole component (spec 4; directed: the vertices reachable
  from the root). A parent forest covering another component cannot hide: its vertices would need a
  chain down to the root (the reference, with its float depth sentinel, misses this).
- Depths: level[v] is the length of a path from the root, so level[v] >= dist(v); along a shortest
  path the level rises by at most 1 per edge (edge-level; directed: along each edge's direction), so
  level[v] <= dist(v). The levels are the BFS depths and every edge joins levels differing by at most
  one (spec 3). Every visited vertex has a finite level >= 0 and every unvisited one -1 (level).
- nedge: the TEPS count (reference 3.0.0 get_edge_count_for_teps: the non-self-loop input tuples of the
  component, duplicates counted) is counted from the CSC, which stores each such tuple in both
  directions (self-loops are not stored): with e1 = entries from a visited column and e2 = those of
  them to an unvisited row, (e1 + e2) / 2 is the number of tuples with a visited end, the component's
  tuples when span holds. Directed: e1, the tuples whose source is visited (the edges the search
  examines).
Soundness rests on the CSC being the input graph, which the construction certificate checks once per
run. The undirected passes also rely on its symmetry: an entry x -> p exists iff p -> x does, so
column x is searched for its parent, and the span and edge-level rules, which are symmetric in the
edge's two ends, need only one entry of each edge: either the entries of visited columns (an edge
with a visited end has one there; unvisited columns are not read), or, when at least a quarter of
the vertices are visited (on a GPU), the "half form": the entry whose row has the larger global id,
every column read, which halves the random level reads when most entries belong to the component.
Both forms count the same totals and name the same offenders (ops.check_entries).
ValidationResult.visited and .nedge count the vertices with a parent and a level >= 0.

Directed graphs (graph.info["directed"]: the CSC holds only u -> v for each tuple (u, v)) are checked
as a BFS along out-edges with the same passes, reading every column (a parent need not be visited to be
found) and each visited row's parent: a second random read per entry.

Memory: see validation_bytes: the gathered ranges (R*b and C*b levels, R*b or C*b parents), or one
block of each where they come in pieces, the choice (pieces) made from the lenders alike by the
validation and the memory planner (dbfs.memory.validation_bytes, whose degree scan grows only where
the pieces do not fit). No per-entry temporary on the GPU; the NumPy twin works on chunks of whole
columns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dbfs import collectives
from dbfs.ops import validate as ops
from dbfs.workspace import Workspace, allocated_bytes


@dataclass(frozen=True)
class ValidationResult:
    ok: bool                 # identical on every rank
    nedge: int               # TEPS edge count (reference v3 definition; see the module docstring)
    message: str | None      # the first broken rule and its lowest offending vertex; None when ok
    rule: str | None         # that rule's name (see the module docstring)
    vertex: int | None       # that vertex's global id
    visited: int             # vertices with a parent and a level
    max_level: int           # their deepest level (-1 when there is none)


RULES = ops.CHECKS
SPLITS = ((False, False), (True, False), (True, True))   # (columns, rows) by owned block, least first
WHOLE = SPLITS[0]


def validation_bytes(grid, parent_itemsize: int, directed: bool = False, level_itemsize: int = 4,
                     lenders=None, entries: int = 0) -> int:
    """Bytes validate_bfs allocates per rank on the backend's device (all per vertex): what of
    validation_requests, by the pieces chosen for the `lenders` (byte sizes of its workspace's idle
    arrays, dbfs.workspace; None: no workspace, whole arrays of their own), the lenders do not hold, the
    marks' reduction (b / 8 on grids wider than one) and constants (the stats and the layout tables).
    GPU ranks of a multi-rank grid stage the gathered arrays (or pieces) through host memory of the
    same sizes, or, over NCCL, receive the line's mark blocks once more (another R*b / 8 or C*b / 8, not
    counted). Arrays of another dtype than int32 levels and int32/int64 parents are converted first
    (not counted)."""
    b, R, C = grid.block, grid.R, grid.C
    reduced = b // 8 if (C if directed else R) > 1 else 0
    split = WHOLE if lenders is None else pieces(grid, parent_itemsize, directed, level_itemsize, lenders, entries)
    requests = validation_requests(grid, parent_itemsize, directed, level_itemsize, entries, split)
    return allocated_bytes(lenders or (), requests) + reduced + 3 * 8 * ops.STATS_SLOTS + 8 * C + 4 * R * C


def pieces(grid, parent_itemsize: int, directed: bool, level_itemsize: int, lenders, entries: int = 0) -> tuple:
    """(columns in pieces, rows in pieces): the first of SPLITS (whole columns and rows, columns by owned
    block with whole rows, both by owned block) whose validation_requests the `lenders` (byte sizes)
    hold without allocating; both by owned block where none is held."""
    for split in SPLITS[:-1]:
        if not allocated_bytes(lenders, validation_requests(grid, parent_itemsize, directed, level_itemsize,
                                                            entries, split)):
            return split
    return SPLITS[-1]


def validation_requests(grid, parent_itemsize: int, directed: bool = False, level_itemsize: int = 4,
                        entries: int = 0, split: tuple = WHOLE) -> list:
    """The bytes of the arrays validate_bfs takes from its workspace, in order: the compact owned levels
    (b * L, L = level_itemsize: the narrowest type holding the deepest level), on grids wider than one
    the gathered compact levels of the local columns (R*b * L) and rows (C*b * L) and the gathered
    parents (undirected: R*b, directed: C*b, times parent_itemsize), the parent-edge marks (R*b / 8 or
    C*b / 8), and, for a block of `entries` entries (0: none), the entry pass's column table
    (dbfs.ops.validate.chunk_table_bytes). split (columns, rows in pieces; see pieces): one owned
    block (b) of the columns' levels, the rows' levels, and the parents that go with them (undirected:
    the columns', directed: the rows'), instead of the whole range."""
    b, R, C = grid.block, grid.R, grid.C
    columns, rows = piece_lengths(grid, split)
    edge_group = C if directed else R
    requests = [b * level_itemsize]
    requests += [columns * level_itemsize] if R > 1 else []
    requests += [rows * level_itemsize] if C > 1 else []
    requests += [(rows if directed else columns) * parent_itemsize] if edge_group > 1 else []
    return requests + [edge_group * b // 8] + ([ops.chunk_table_bytes(entries)] if entries else [])


def piece_lengths(grid, split: tuple = WHOLE) -> tuple:
    """(columns, rows) of a piece of the entry pass for `split` (see pieces): every local column (R*b)
    and row (C*b), or one owned block (b) of either."""
    by_cols, by_rows = split
    return grid.block if by_cols else grid.cols_per_rank, grid.block if by_rows else grid.rows_per_rank


def validate_bfs(graph, root: int, parent, nedge_claimed: int | None, level, workspace=None) -> ValidationResult:
    """Collective over graph.comms.world: check one BFS result (see the module docstring).
    nedge_claimed None: the search made no TEPS edge count of its own (the result's nedge is the
    validator's). workspace: a dbfs.workspace.Workspace holding the gathered arrays (validation_bytes),
    whose lenders no rank reads once every rank's search has ended (the first collective here); the
    arrays are gathered whole or by owned block as `pieces` picks for its lenders. None: whole arrays
    of their own.

    parent: xp int32 or int64 [grid.block], global parent ids of the owned vertices (offset o is
    global grid.to_global_owned(i, j, o)), -1 for unreached and for padding. level: xp int32
    [grid.block], the search's levels of the owned vertices, -1 unreached and for padding.
    Other integer dtypes are converted (a copy).
    """
    grid, xp, b = graph.grid, graph.backend.xp, graph.grid.block
    if not 0 <= root < grid.n_vertices:
        raise ValueError(f"root {root} outside [0, {grid.n_vertices})")
    parent, level = xp.asarray(parent), xp.asarray(level)
    if parent.dtype not in (np.int32, np.int64):
        parent = parent.astype(xp.int64)
    if level.dtype != np.int32:
        level = level.astype(xp.int32)
    for name, array in (("parent", parent), ("level", level)):
        if array.shape != (b,):
            raise ValueError(f"{name} must have the block length {b}, has shape {array.shape}")
    check = _Check(graph, root, xp.ascontiguousarray(parent), xp.ascontiguousarray(level),
                   workspace or Workspace(graph.backend), workspace is not None)
    return check.verdict(nedge_claimed)


class _Range:
    """The owned arrays of one grid line (comm) over the local range: gathered whole once, or, by
    owned block, piece k (rank k's block) broadcast into one block-sized array when asked for."""

    def __init__(self, comms, comm, backend, owned, workspace, by_block: bool):
        self.comms, self.comm, self.backend, self.owned = comms, comm, backend, owned
        self.pieces = comm.Get_size() if by_block else 1
        if self.pieces > 1:
            self.buffer = workspace.empty(owned.size, owned.dtype)
        else:
            self.whole = collectives.allgather(comms, comm, backend, owned, workspace)

    def piece(self, k: int) -> tuple:
        """(first local index, array) of piece k; the whole range where there is one piece."""
        if self.pieces == 1:
            return 0, self.whole
        return k * self.owned.size, collectives.broadcast(self.comms, self.comm, self.backend, self.owned, k,
                                                          self.buffer)


class _Check:
    """One validation on one rank: the passes (constructor) and the verdict with its message."""

    def __init__(self, graph, root: int, parent, level, workspace, lent: bool):
        comms, grid, backend = graph.comms, graph.grid, graph.backend
        self.graph, self.root, self.parent, self.level = graph, root, parent, level
        self.directed = bool(graph.info.get("directed", False))
        self.single = grid.size == 1
        xp = backend.xp
        self.first_id = grid.to_global_owned(graph.i, graph.j, 0)
        lo, hi = grid.owned_range(graph.i, graph.j)
        n_real = hi - lo

        stats = ops.new_stats(backend)
        ops.check_vertices(backend, parent, level, n_real, self.first_id, grid.n_vertices, root, stats)
        visited, deepest = (int(x) for x in backend.asnumpy(stats[ops.SLOT["visited"]:ops.SLOT["deepest"] + 1]))
        if not self.single:
            everyone = np.empty((comms.world.Get_size(), 3), np.int64)
            comms.world.Allgather(np.array([visited, deepest, parent.dtype.itemsize], np.int64), everyone)
            visited, deepest = int(everyone[:, 0].sum()), int(everyone[:, 1].max())
            if everyone[:, 2].max() > parent.dtype.itemsize:
                parent = self.parent = parent.astype(xp.int64)
        # the entry pass's half form when the visited vertices are many (the same choice on every rank);
        # the NumPy twin reads every entry either way, so the CPU keeps the other form
        self.half = backend.is_gpu and not self.directed and 4 * visited >= grid.n_vertices
        level_type = ops.level_dtype(deepest)
        split = WHOLE
        if lent:
            rooms = [lender.size - used for lender, used in zip(workspace.lenders, workspace.used)]
            split = pieces(grid, parent.dtype.itemsize, self.directed, level_type.itemsize, rooms, graph.nnz)
            if not self.single:    # the pieces of the rank that needs the most, on every rank
                split = SPLITS[max(comms.world.allgather(SPLITS.index(split)))]
        by_cols, by_rows = split
        owned_levels = workspace.empty(grid.block, level_type)
        ops.compact_levels(backend, parent, level, owned_levels)

        # the arrays of the local columns and rows, whole or by owned block; on one rank the owned ones
        edge_comm = comms.row if self.directed else comms.col
        edge_group = grid.C if self.directed else grid.R
        self.col_level = _Range(comms, comms.col, backend, owned_levels, workspace, by_cols)
        self.row_level = _Range(comms, comms.row, backend, owned_levels, workspace, by_rows)
        self.edge_parent = _Range(comms, edge_comm, backend, parent, workspace,
                                  by_rows if self.directed else by_cols)
        self.marks = workspace.zeros(edge_group * grid.block // 32, xp.uint32)
        self.column_table = workspace.empty(ops.chunk_table_bytes(graph.nnz) // 4, xp.int32) if graph.nnz else None
        self.layout = ops.EntryLayout.of(grid, graph.i, graph.j, backend)
        self._entries(stats)
        owned_marks = collectives.or_to_owners(comms, edge_comm, backend, self.marks)
        ops.check_parent_edges(backend, parent, owned_marks, n_real, self.first_id, root, stats)
        self.totals = self._combine(backend.asnumpy(stats))

    def _entries(self, stats, detail=None) -> None:
        """The entry pass once per (column piece, row piece); collective where pieces are broadcast."""
        graph = self.graph
        for p in range(self.col_level.pieces):
            first_col, col_level = self.col_level.piece(p)
            col_parent = None if self.directed else self.edge_parent.piece(p)[1]
            for m in range(self.row_level.pieces):
                first_row, row_level = self.row_level.piece(m)
                parent = self.edge_parent.piece(m)[1] if self.directed else col_parent
                ops.check_entries(graph.backend, graph.col_ptr, graph.row_idx, col_level, row_level, parent,
                                  self.directed, self.layout, self.marks, stats, detail, half=self.half,
                                  column_table=self.column_table, first_col=first_col, first_row=first_row,
                                  columns=graph.columns)

    def _combine(self, stats: np.ndarray) -> np.ndarray:
        """The grid's stats: lowest offenders and witness, summed counts, deepest level."""
        if self.single:
            return stats
        world = self.graph.comms.world
        everyone = np.empty((world.Get_size(), stats.size), np.uint64)
        world.Allgather(stats, everyone)
        total = everyone.min(axis=0)
        for slot in ("visited", "visited_entries", "span_entries"):
            total[ops.SLOT[slot]] = everyone[:, ops.SLOT[slot]].sum()
        total[ops.SLOT["deepest"]] = everyone[:, ops.SLOT["deepest"]].max()
        return total

    def verdict(self, nedge_claimed: int | None) -> ValidationResult:
        totals = self.totals
        counted = int(totals[ops.SLOT["visited_entries"]])
        nedge = counted if self.directed else (counted + int(totals[ops.SLOT["span_entries"]])) // 2
        visited, max_level = int(totals[ops.SLOT["visited"]]), int(totals[ops.SLOT["deepest"]]) - 1
        for rule in RULES:
            vertex = int(totals[ops.SLOT[rule.replace("-", "_")]])
            if vertex != ops.NO_VERTEX:
                return ValidationResult(False, nedge, self._message(rule, vertex), rule, vertex, visited,
                                        max_level)
        if nedge_claimed is not None and nedge != nedge_claimed:
            return ValidationResult(False, nedge, f"wrong edge count: the BFS claims {nedge_claimed}, "
                                    f"the validator counts {nedge}", "nedge", None, visited, max_level)
        return ValidationResult(True, nedge, None, None, None, visited, max_level)

    # the failure path: collective, every rank gets the same message ----------------------------------
    def _owned(self, array, v: int) -> int:
        """array[v]'s value at v's owner (array: an owned per-vertex array)."""
        if self.single:
            return int(array[v - self.first_id])
        world, owner = self.graph.comms.world, self.graph.grid.owner_rank(v)
        return world.bcast(int(array[v - self.first_id]) if owner == world.Get_rank() else None, root=owner)

    def _witness(self, rule: str, v: int) -> int:
        """The lowest other end of v's entries breaking `rule`."""
        stats = ops.new_stats(self.graph.backend)
        self._entries(stats, detail=(rule.replace("-", "_"), v))
        return int(self._combine(self.graph.backend.asnumpy(stats))[ops.SLOT["witness"]])

    def _message(self, rule: str, v: int) -> str:
        n, root = self.graph.grid.n_vertices, self.root
        if rule in ("span", "edge-level"):
            w = self._witness(rule, v)
            if rule == "span" and self.directed:
                return (f"vertex {v} is unreached but the edge {w} -> {v} leaves the tree "
                        "(the tree does not span the vertices reachable from the root)")
            if rule == "span":
                return (f"vertex {v} is unreached but its neighbour {w} is in the tree "
                        "(the tree does not span the root's component)")
            a, b = self._owned(self.level, v), self._owned(self.level, w)
            if self.directed:
                return f"edge {w} -> {v} goes from level {b} to level {a}, more than one level deeper"
            return f"edge ({v}, {w}) joins levels {a} and {b}, which differ by more than 1"
        p, lv = self._owned(self.parent, v), self._owned(self.level, v)
        if rule == "parent-range":
            where = f"padding vertex {v} (N = {n})" if v >= n else f"vertex {v}"
            allowed = "-1" if v >= n else f"-1 or in [0, {n})"
            return f"{where}: parent {p} is not {allowed}"
        if rule == "root" and p != root:
            return f"root {v}: parent is {p}, not the root itself"
        if rule == "root":
            return f"root {v}: level is {lv}, not 0"
        if rule == "self-parent":
            return f"vertex {v} is its own parent but is not the root {root}"
        if rule == "level" and p != -1 and lv < 0:
            return f"vertex {v} has the parent {p} but no level (level {lv})"
        if rule == "level" and p == -1:
            return f"vertex {v} is unreached (parent -1) but has level {lv}"
        if rule == "parent-not-neighbour":
            return f"vertex {v}: parent {p} is not a neighbour (no input edge joins them)"
        if rule == "parent-unreached":
            return f"vertex {v}: parent {p} is not in the tree (it has no parent)"
        up = self._owned(self.level, p)
        if rule == "level":
            return f"vertex {v}: the BFS gives level {lv}, but its parent {p} is on level {up}, not {lv - 1}"
        return (f"vertex {v} (parent {p}): the parent's level {up} is not below the vertex's level {lv}, "
                f"so following parents never descends to the root {root} (the parent links form a cycle "
                "or climb)")
