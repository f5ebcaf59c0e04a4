"""The per-search state of one rank: every array a BFS search writes, separate from the level loop that
drives it (dbfs.device_loop on one GPU, dbfs.grid_loop on a grid of ranks) and from the graph.

Paper 004, sections 3.2-3.5, with the direction-optimizing additions: the visited bitmap over the
rank's local rows, the levels and delayed predecessors of the owned block, the two frontier queues
(each the own group j of s slots, the next frontier or the one expanded) and the other owners' groups
(discoveries grouped by owner grid column, written and sent within a level, so one set serves both
queues), the degree-scan scratch and column table of the expansion, and, where the grid or the
direction needs them, the gathered column frontier, the fold receive buffer, the bottom-up bitmaps and
the frontier bitmap's summary (dbfs.ops.bottom_up.summarize), the predecessor-exchange buffers and the
one-GPU loop's control block and per-level log. The bottom-up frontier bitmap is over the local
columns where the search reads the block row-major, over the local rows where it reads the CSC's columns
(an undirected graph on several ranks without the row-major copy, dbfs.grid_loop), which then also keep
the parent each column found (a local row) until the search's end.

With bottom-up levels on an undirected graph, every search starts with the owned vertices that have no
edge marked visited: no edge can reach them, so top-down never claims them, and a bottom-up level,
which examines every unvisited row, skips them instead of reading their empty rows again at every level
(at Graph500 scale 26 about half the vertices have no edge). Levels, parents and counts never include
them. (A directed graph's vertex without out-edges may still be reached: there nothing is marked.)

One table (`layout`) says what is allocated for a grid and direction, so the memory planner counts
exactly what the constructor allocates. Parents are int32 when every global id fits (the validator and
the report take either); on a grid of one column (1x1, R x 1) the discoverer array is the parent array
itself (a local column is a global id there, and the local rows are the owned block), so a search leaves
its result in place and nothing is copied or resolved but the vertices found on the CSC's columns,
which the owner marks there. On other grids the owner keeps each vertex's discoverer grid column
(pred_col, int16: at most 32767 grid columns), and the predecessor exchange after the levels gathers the
discoverers' rows (where they are not read in place) over the discoverers' own pred_row, and the column
finds over the finders' own column parents. Once every
rank's search has ended, the arrays of `idle_after_search` hold nothing of its result: the validation
borrows them (dbfs.workspace), and the predecessor exchanges' buffers live in the expansion's scan
(dbfs.grid_loop), which is therefore at least their size.

A queue's group holds what one level appends to it: vertices of one owner that this rank discovers, each
once a search. In an undirected graph only a vertex with an edge can be discovered (or be the root), so
an own group's s slots are the most owned vertices with an edge on any rank
(dbfs.graph.LocalGraph.group_slots: about half the owned block at Graph500 scales 24-28); in a directed
graph a vertex without out-edges, of degree 0, may still be reached, and s is the owned block b. Only a
row with an entry is discovered through the block, so another owner's group holds at most the non-empty
rows of its segment of the local rows (dbfs.graph.LocalGraph.segment_slots: a sixth of the owned block at
Graph500 scale 36 on 128 x 64, against a third for s).

The gathered column frontier is sized by the block's non-empty columns (frontier_capacity), not by its
N/C local columns, wherever a frontier can only hold those, and the expansion's degree scan likewise, up
to SCAN_COLUMNS (a longer frontier is expanded in parts of that many columns, dbfs.ops.expand): a block of
an R x C grid holds 2m/(RC) entries over N/C columns, and as R grows most of its columns hold nothing
(hypersparse blocks; at Graph500 density a 4 x 4 grid leaves two in three empty, a 16 x 16 grid four in
five). Likewise the discoverers (pred_row, over the N/R local rows) and the column finds (column_parent,
over the N/C local columns) are held by position (dbfs.ops.sparse.Positions of the block's non-empty
rows or columns, by_position) wherever that takes fewer bytes: only a row with an entry can be
discovered, only a column with one can find a parent. Both are sized by the grid's most non-empty rows
or columns, alike on every rank (NVSHMEM maps them). The column finds' Positions are the graph's own,
by which it then holds its column offsets too (dbfs.graph.LocalGraph.hold_columns_by_position, done
here before anything is allocated).
"""

from __future__ import annotations

import numpy as np

from dbfs.graph import csc_is_row_major, offset_dtype
from dbfs.kernels import COLUMN_CHUNK, CTL_WORDS, LOG_WORDS, SCAN_TILE, SMALL_SCRATCH_WORDS, STAT_WORDS
from dbfs.ops.bottom_up import summary_words
from dbfs.ops.sparse import Positions, by_position
from dbfs.workspace import allocated_bytes


# Owned vertices a step of the no-edges marking takes (its mask and bits: 4.5 MiB at a time).
NO_EDGES_STEP = 1 << 22
# The most frontier columns the expansion's degree scan holds (1 GiB at int64 offsets): a longer frontier
# is expanded in parts (dbfs.ops.expand), so the scan does not grow with a block's non-empty columns,
# 2^30 at scale 41 on 8,192 ranks.
SCAN_COLUMNS = 1 << 27


def parent_dtype(grid) -> np.dtype:
    """int32 when every global id (and -1) fits, else int64."""
    return np.dtype(np.int32 if grid.n_vertices <= np.iinfo(np.int32).max else np.int64)


def frontier_capacity(grid, symmetric: bool, columns: int | None) -> int:
    """The most local columns a top-down level expands: the block's `columns` non-empty columns (at least
    one) where the frontier is gathered (several grid rows: dbfs.ops.message.to_list keeps the columns
    with an entry) or is a 1x1 undirected block's discovered vertices (rows with an entry, or the root
    alone); every local column elsewhere, and while the columns are not counted (None)."""
    if columns is None or not (grid.R > 1 or csc_is_row_major(grid, symmetric)):
        return grid.cols_per_rank
    return max(1, min(grid.cols_per_rank, columns))


def discoverers_held(grid, rows: int | None) -> bool:
    """Whether the discoverers (pred_row) are held by the positions of a block's `rows` non-empty rows
    (by_position); on one grid column pred_row is the parent array, every local row's."""
    return grid.C > 1 and by_position(grid.rows_per_rank, rows)


def layout(grid, direction: str, entries: int, log_capacity: int = 0, by_columns: bool = False,
           columns: int | None = None, symmetric: bool = True, scan_lent: int = 0, slots: int | None = None,
           rows: int | None = None, records_in_place: bool = False, segment_slots: int | None = None) -> dict:
    """{array name: (dtype, length)} of a rank's search state (see the module docstring) for a CSC
    block of `entries` entries, `columns` non-empty columns (None: not counted; frontier_capacity) and
    `rows` non-empty rows (None: not counted), own queue groups of `slots` and the other owners' of
    `segment_slots` (None: b, a bound until counted);
    by_columns: the bottom-up levels search the CSC's columns (dbfs.graph.LocalGraph.bottom_up_by_columns;
    direction auto); scan_lent: the bytes the predecessor exchanges carve out of the degree scan
    (dbfs.grid_loop.scan_lent_bytes), which it holds at least, as it holds what of the validation's
    arrays the other idle arrays do not (_scan_with_validation); records_in_place: the owners read the
    discoverers and the column finds in place (dbfs.grid_loop.finds_read_in_place), so nothing is gathered."""
    b, R, C = grid.block, grid.R, grid.C
    n_rows, cols = grid.rows_per_rank, grid.cols_per_rank
    frontier = frontier_capacity(grid, symmetric, columns)
    scan_dtype = offset_dtype(entries)   # the offsets' width: a frontier's degrees sum to at most the entries
    rows_held = discoverers_held(grid, rows)
    one_gpu = grid.size == 1
    parts = {
        "visited": (np.uint32, n_rows // 32),
        "level": (np.int32, b),
        # discoverer local column of each local row, by the row's position where that takes less room
        "pred_row": (np.int32, max(1, rows) if rows_held else n_rows),
        # each queue is its own group: the other owners' groups serve both (SearchState.group)
        "queue0": (np.int32, b if slots is None else slots),
        "queue1": (np.int32, b if slots is None else slots),
        "counts0": (np.int32, C),
        "counts1": (np.int32, C),
        "stats": (np.int64, STAT_WORDS),
        # the expansion's degree scan
        "cumul": (scan_dtype, max(min(frontier, SCAN_COLUMNS), -(-scan_lent // scan_dtype.itemsize) - 1) + 1),
        "tile_sums": (scan_dtype, 0),            # sized with the scan, below
        "columns": (np.int32, max(1, -(-entries // COLUMN_CHUNK))),   # the expansion's column table
        "chunks": (np.uint64, 1),                # the expansion's chunk counter
    }
    if rows_held:
        parts["row_words"] = (np.uint32, n_rows // 32)
        parts["row_starts"] = (np.int32, n_rows // 32 + 1)
    if not one_gpu:
        parts["count"] = (np.int32, 1)           # scratch counter of message decoding
    if C > 1:
        # what a level discovers for the other owners: their C - 1 groups (SearchState.group)
        parts["groups"] = (np.int32, (C - 1) * (b if segment_slots is None else segment_slots))
        if C > np.iinfo(np.int16).max:          # pred_col holds a grid column in 16 bits
            raise ValueError(f"a grid of {C} columns: the search state takes at most {np.iinfo(np.int16).max}")
        parts["pred_col"] = (np.int16, b)        # the discoverer's grid column (delayed predecessor)
        parts["parent"] = (parent_dtype(grid), b)
    # the predecessor gathers' presence bitmaps (none where the owners read the records in place): the
    # peers' landed words and starts along the grid row, and along the column for the finds on the CSC's
    # columns; the words sent for a record held densely (one held by position sends its own Positions)
    row_peers = 0 if records_in_place else C - 1
    column_peers = R - 1 if by_columns and not records_in_place else 0
    gathered_peers = max(row_peers, column_peers)
    dense_peers = max(0 if rows_held else row_peers, 0 if by_position(cols, columns) else column_peers)
    if dense_peers:
        parts["sent_presence"] = (np.uint32, dense_peers * b // 32)
    if gathered_peers:
        parts["recv_presence"] = (np.uint32, gathered_peers * b // 32)
        parts["presence_starts"] = (np.int32, gathered_peers * (b // 32 + 1))   # a peer's words' starts each
    if R > 1:
        parts["front"] = (np.int32, frontier)    # the column's frontier, gathered
    if by_columns:
        parts["row_front"] = (np.uint32, n_rows // 32)   # frontier bitmap of the local rows
        # the local row a column found bottom-up, by the column's position where that takes less room (the
        # graph's column offsets are then held by the same Positions, dbfs.graph.holds_columns_by_position)
        parts["column_parent"] = (np.int32, max(1, columns) if by_position(cols, columns) else cols)
    elif direction == "auto":
        parts["col_front"] = (np.uint32, cols // 32)   # frontier bitmap of the local columns
    if direction == "auto":
        parts["front_summary"] = (np.uint32, summary_words((n_rows if by_columns else cols) // 32))
        parts["segment"] = (np.uint32, b // 32)        # the rotating row segment's state
        parts["no_edges"] = (np.uint32, b // 32)       # owned vertices without an edge (set once)
    if one_gpu:
        parts["control"] = (np.int64, CTL_WORDS)
        parts["slots"] = (np.int64, SMALL_SCRATCH_WORDS)
        parts["log"] = (np.int64, log_capacity * LOG_WORDS)
    parts = {name: (np.dtype(dtype), int(n)) for name, (dtype, n) in parts.items()}
    scan = -(-_scan_with_validation(grid, parts, by_columns, symmetric, entries) // parts["cumul"][0].itemsize)
    parts["cumul"] = (parts["cumul"][0], scan)
    parts["tile_sums"] = (parts["tile_sums"][0], max(1, -(-(scan - 1) // SCAN_TILE)))
    return parts


def _scan_with_validation(grid, parts: dict, by_columns: bool, symmetric: bool, entries: int) -> int:
    """The degree scan's bytes, grown where the validation, which borrows the idle arrays
    (idle_after_search) by the workspace's best-fit rule, would otherwise allocate some of its arrays
    even gathered by owned block (graph500.validate.pieces: columns and rows in pieces, the smallest
    requests): by what those arrays need, until every one is lent. Nothing grows where the scan and the
    other idle arrays hold the pieces (the validation gathers whole ranges where they hold those)."""
    from graph500.validate import validation_requests
    requests = validation_requests(grid, parent_dtype(grid).itemsize, directed=not symmetric, level_itemsize=4,
                                   entries=entries, split=(True, True))
    others = [parts[name][0].itemsize * parts[name][1] for name in idle_after_search(grid, by_columns)
              if name != "cumul"]

    def grown(scan: int) -> int:
        while extra := allocated_bytes(others + [scan], requests):
            scan += extra
        return scan

    least = parts["cumul"][0].itemsize * parts["cumul"][1]
    # grown from its own size, or from what the unlent arrays need alone (best fit packs them differently)
    return min(grown(least), grown(max(least, grown(0))))


def idle_after_search(grid, by_columns: bool = False) -> list:
    """The names of the arrays of `layout` that hold nothing a search's result needs once every rank's
    search has ended (its parents are `parent`, or `pred_row` on a grid of one column; its levels
    `level`): the expansion's scan and column table, the queues, the gathered column frontier, the
    discoverers and the column finds. Lent to the validation (dbfs.workspace)."""
    names = ["cumul", "columns", "queue0", "queue1"]
    names += ["front"] if grid.R > 1 else []
    names += ["pred_row", "groups"] if grid.C > 1 else []
    return names + (["column_parent"] if by_columns else [])


def held_segments(grid, by_columns: bool, columns: int | None, rows: int | None, segment_rows: int | None,
                  segment_columns: int | None) -> tuple:
    """What an Exchange gathering the records receives a peer beyond the words (dbfs.grid_loop.gather_block):
    (a segment's most rows with an entry, `segment_rows`, where `layout` holds the discoverers by
    position, else None; a segment's most columns with an entry, `segment_columns`, where it holds the
    column finds so (by_columns), else None). None counts: bounds."""
    columns_held = by_columns and by_position(grid.cols_per_rank, columns)
    return segment_rows if discoverers_held(grid, rows) else None, segment_columns if columns_held else None


def graph_held_segments(graph, by_columns: bool) -> tuple:
    """Collective on first use: held_segments for `graph`'s counted blocks."""
    grid = graph.grid
    return held_segments(grid, by_columns, graph.most_nonempty_columns, graph.most_nonempty_rows,
                         graph.segment_slots if grid.C > 1 else None, graph.segment_columns if by_columns else None)


def layout_bytes(grid, direction: str, entries: int, log_capacity: int = 0, by_columns: bool = False,
                 columns: int | None = None, symmetric: bool = True, scan_lent: int = 0,
                 slots: int | None = None, rows: int | None = None, records_in_place: bool = False,
                 segment_slots: int | None = None) -> int:
    return sum(dtype.itemsize * n for dtype, n in
               layout(grid, direction, entries, log_capacity, by_columns, columns, symmetric, scan_lent,
                      slots, rows, records_in_place, segment_slots).values())


class SearchState:
    """The arrays of `layout` on the backend's device, as attributes, for rank (i, j) of the graph's
    grid; `reset` before each search."""

    def __init__(self, graph, direction: str, log_capacity: int = 0, scan_lent: int = 0,
                 records_in_place: bool = False):
        """scan_lent, records_in_place: as in layout."""
        backend, grid = graph.backend, graph.grid
        self.backend, self.grid, self.direction = backend, grid, direction
        self.i, self.j = graph.i, graph.j
        self.log_capacity = log_capacity
        xp = backend.xp
        symmetric = not graph.info.get("directed")
        graph.hold_columns_by_position()                # before the state's arrays: the dense offsets go
        self.by_columns = graph.searches_columns(direction)
        self.slots = graph.group_slots
        self.segment_slots = graph.segment_slots if grid.C > 1 else None
        arrays = layout(grid, direction, graph.nnz, log_capacity, self.by_columns, graph.most_nonempty_columns,
                        symmetric, scan_lent, self.slots, graph.most_nonempty_rows, records_in_place,
                        self.segment_slots)
        for name, (dtype, n) in arrays.items():
            setattr(self, name, xp.zeros(n, dtype))
        self.frontier_capacity = frontier_capacity(grid, symmetric, graph.most_nonempty_columns)
        # the column finds are held by the Positions of the graph's held offsets (the same rule decides both)
        self.column_positions = graph.columns if self.by_columns else None
        if self.column_positions is not None:
            self.column_words, self.column_starts = graph.columns.words, graph.columns.starts
        self.row_positions = (Positions.of_rows(backend, graph.row_idx, self.row_words, self.row_starts)
                              if "row_words" in arrays else None)
        if grid.C == 1:
            self.parent = self.pred_row         # a local column is a global id on one grid column
            self.pred_col = None                # every discoverer is the owner
        self.words = grid.block // 32
        if direction == "auto" and symmetric:           # in steps: a whole block's mask takes b bytes
            for lo in range(0, grid.block, NO_EDGES_STEP):
                hi = min(grid.block, lo + NO_EDGES_STEP)
                bits = xp.packbits(graph.degree[lo:hi] == 0, bitorder="little")
                self.no_edges[lo // 32:hi // 32] = bits.view(xp.uint32)

    def group(self, queue, m: int):
        """Group m of `queue` (queue0 or queue1): the list for grid column m's owner. The own group (m = j),
        a level's new frontier while the other queue's is expanded, is each queue itself; the others are
        those of `groups` for both (packed: the own one left out), written by a level's expansion and read
        by its fold."""
        if m == self.j:
            return queue
        k = m - (m > self.j)
        return self.groups[k * self.segment_slots:(k + 1) * self.segment_slots]

    def idle_arrays(self) -> list:
        """The arrays of idle_after_search, valid to lend until the next search's reset."""
        return [getattr(self, name) for name in idle_after_search(self.grid, self.by_columns)]

    def own_front(self):
        """The owned block's segment of the bottom-up frontier bitmap: segment j of the row bitmap, or
        segment i of the column bitmap."""
        if self.by_columns:
            return self.row_front[self.j * self.words:(self.j + 1) * self.words]
        return self.col_front[self.i * self.words:(self.i + 1) * self.words]

    def own_visited(self, j: int | None = None):
        """The visited bits of the owned block: segment j of the row bitmap (of the rank in grid column `j`
        of this grid row, where given: the same place in its bitmap)."""
        j = self.j if j is None else j
        return self.visited[j * self.words:(j + 1) * self.words]

    def reset(self) -> None:
        """Before a search (untimed): nothing visited (but, for bottom-up levels, the owned vertices
        without an edge), nothing found bottom-up in the segment, no levels or parents, empty queues."""
        self.visited.fill(0)
        if self.direction == "auto":
            self.own_visited()[:] = self.no_edges
            self.segment.fill(0)
        self.level.fill(-1)
        self.pred_row.fill(-1)
        if self.by_columns:
            self.column_parent.fill(-1)
        if self.grid.C > 1:
            self.pred_col.fill(-1)
            self.parent.fill(-1)
        self.counts0.fill(0)
        self.counts1.fill(0)
        self.stats.fill(0)
