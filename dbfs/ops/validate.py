"""BFS result validation on one rank: launch wrappers of kernels/validate.cu and their NumPy twins.

The checks of one search's parent and level arrays against one rank's CSC block (Graph500 spec v3
"Validation"); graph500/validate.py runs them over the grid, orders the rules and proves them
complete. Four operations, all accumulating into one uint64 `stats` array (new_stats) whose rule slots
keep the lowest offending global vertex id (NO_VERTEX: none) and whose other slots count:
  check_vertices      per owned vertex: parent-range, root, self-parent, level (visited <=> level);
                      vertices with a parent and a level, deepest level + 1
  compact_levels      the owned levels in the narrowest type holding the deepest (level_dtype),
                      all ones for a vertex without a parent or a level
  check_entries       per CSC entry u -> v (of the block, or of a piece: a range of columns, the
                      entries whose rows lie in a range of rows): span, edge-level, the TEPS counts, and
                      on the entry that joins a vertex to its parent: its mark, level (parent more than
                      one level up), parent-unreached, cycle (parent not above the vertex)
  check_parent_edges  per owned vertex: parent-not-neighbour (no mark)
GPU method (check_entries): the entries in equal chunks, EPT consecutive ones per thread; a table of
the column of every COLUMN_CHUNK-th entry, made in one pass over the columns, bounds each warp's
columns, whose starts the warp loads once to name every entry's column (kernels/columns.cuh; the
starts read through kernels/positions.cuh ColumnStarts where the block holds its column offsets by
the positions of its non-empty columns, dbfs.graph.LocalGraph.columns), so
hubs and long runs of empty columns cost no more than other entries; per entry the row (loaded
first: it depends on nothing), its compact level (and, directed, its parent) and the column's level
and parent (once per warp lane).
Lowest offenders: warp minimum, then one atomicMin only below the slot's value; counts: one atomic per
block. NumPy method: the same rules on whole arrays, entries in chunks of whole columns, a piece's
column starts made dense first (dbfs.ops.sparse.column_starts).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dbfs.kernels import BLOCK_THREADS as THREADS
from dbfs.kernels import COLUMN_CHUNK, VALIDATE_SLOTS
from dbfs.ops.arrays import TWIN_CHUNK, blocks_for, require_array, require_offsets
from dbfs.ops.sparse import Positions, column_starts, held_args

SLOT = {name.lower(): k for k, name in enumerate(VALIDATE_SLOTS)}
STATS_SLOTS = len(VALIDATE_SLOTS)
# rule slots precede the count slots: the rule names in the order they are reported
CHECKS = tuple(name.replace("_", "-") for name, slot in sorted(SLOT.items(), key=lambda x: x[1])
               if slot < SLOT["visited"])
NO_VERTEX = (1 << 64) - 1
ENTRIES_PER_LANE = (4,)               # the check_entries_*_e<EPT>_<form> variants compiled
DEFAULT_ENTRIES_PER_LANE = 4

_LEVEL_TYPES = ((np.uint8, "u8"), (np.uint16, "u16"), (np.int32, "i32"))
_PARENT_TYPES = {np.dtype(np.int32): "i32", np.dtype(np.int64): "i64"}


def level_dtype(deepest_plus_one: int) -> np.dtype:
    """The narrowest compact level type whose all-ones value is above every level < deepest_plus_one."""
    for dtype, _ in _LEVEL_TYPES[:-1]:
        if deepest_plus_one <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.int32)


def new_stats(backend):
    """uint64 [STATS_SLOTS] on the device: rule slots NO_VERTEX, counts 0."""
    stats = np.zeros(STATS_SLOTS, np.uint64)
    stats[:len(CHECKS)] = NO_VERTEX
    stats[SLOT["witness"]] = NO_VERTEX
    return backend.asarray(stats)


@dataclass(frozen=True)
class EntryLayout:
    """Where the local rows and columns of a block sit among the global ids (from dbfs.grid).

    col_base    int: global id of local column 0 (local column c is col_base + c)
    row_starts  int64 [C] (device): global id of the first row of local row block m (rows m*b ..)
    block_rows  int32 [R*C] (device): local row of the first id of global block k (ids k*b ..
                (k+1)*b), -1 when another grid row owns block k
    b           int: the block size
    """
    col_base: int
    row_starts: object
    block_rows: object
    b: int

    @classmethod
    def of(cls, grid, i: int, j: int, backend) -> "EntryLayout":
        """The layout of rank (i, j)'s block (dbfs.grid: local row r of local block m = r // b is
        global to_global_row(i, r); global block k holds the ids k*b .. (k+1)*b - 1)."""
        b = grid.block
        row_starts = grid.to_global_row(i, np.arange(grid.C, dtype=np.int64) * b)
        block_first = np.arange(grid.size, dtype=np.int64) * b
        owner_row, _ = grid.owner(block_first)
        block_rows = np.where(owner_row == i, grid.to_local_row(block_first), -1).astype(np.int32)
        return cls(grid.to_global_col(j, 0), backend.asarray(row_starts), backend.asarray(block_rows), b)


def check_vertices(backend, parent, level, n_real: int, first_id: int, n_vertices: int, root: int,
                   stats) -> None:
    """The per-vertex rules of the owned block.

      parent  int32|int64 [b]  read   global parent ids, -1 for no parent
      level   int32 [b]        read   levels, -1 for unreached
      stats   uint64 [STATS_SLOTS]  read/write  lowered: parent-range (parent not -1 and not in
              [0, n_vertices), or a padding vertex with a parent), root (the root's parent is not
              itself or its level not 0), self-parent, level (a parent but a negative level, or no
              parent but a level other than -1); raised: visited (real vertices with a parent and a
              level >= 0), deepest (their deepest level + 1, padding included)
    Offset o is global vertex first_id + o; offsets >= n_real are padding. GPU: one launch on the
    current stream, no synchronisation.
    """
    b = int(parent.shape[0])
    if backend.is_gpu:
        _require(parent, level, stats)
        if b:
            backend.kernel("validate", f"check_vertices_{_PARENT_TYPES[parent.dtype]}")(
                (blocks_for(b, THREADS),), (THREADS,),
                (parent, level, np.int32(b), np.int32(n_real), np.int64(first_id), np.int64(n_vertices),
                 np.int64(root), stats))
        return
    p = parent.astype(np.int64, copy=False)
    v = first_id + np.arange(b, dtype=np.int64)
    real = np.arange(b) < n_real
    has_parent = p != -1
    _lower(stats, "parent_range", v[has_parent & (~real | (p < 0) | (p >= n_vertices))])
    if first_id <= root < first_id + n_real:
        o = root - first_id
        if p[o] != root or level[o] != 0:
            _lower(stats, "root", np.array([root]))
    _lower(stats, "self_parent", v[real & (p == v) & (v != root)])
    _lower(stats, "level", v[np.where(has_parent, level < 0, level != -1)])
    valid = has_parent & (level >= 0)
    stats[SLOT["visited"]] += np.uint64(np.count_nonzero(valid & real))
    if valid.any():
        stats[SLOT["deepest"]] = max(int(stats[SLOT["deepest"]]), int(level[valid].max()) + 1)


def compact_levels(backend, parent, level, out) -> None:
    """out[o] = level[o] where parent[o] != -1 and level[o] >= 0, else all ones (the type's -1).

      parent  int32|int64 [b]  read
      level   int32 [b]        read
      out     uint8|uint16|int32 [b]  write  (a type from level_dtype of the block's deepest level)
    GPU: one launch on the current stream.
    """
    b = int(parent.shape[0])
    if backend.is_gpu:
        _require(parent, level)
        if b:
            backend.kernel("validate", f"compact_levels_{_level_name(out)}_{_PARENT_TYPES[parent.dtype]}")(
                (blocks_for(b, THREADS),), (THREADS,), (parent, level, np.int32(b), out))
        return
    out[:] = np.where((parent != -1) & (level >= 0), level, -1).astype(out.dtype)


def check_entries(backend, col_ptr, row_idx, col_level, row_level, parent, directed: bool,
                  layout: EntryLayout, marks, stats, detail: tuple[str, int] | None = None,
                  entries_per_lane: int = DEFAULT_ENTRIES_PER_LANE, half: bool = False, column_table=None,
                  first_col: int = 0, first_row: int = 0, columns=None) -> None:
    """The entry rules of one CSC block (A[v][u] = 1 for the entry u -> v, u a column, v a row), or of
    a piece of it: the entries of the local columns [first_col, first_col + nc) whose rows lie in
    [first_row, first_row + nr) (nc, nr: the lengths of col_level and row_level; first_col a multiple
    of 32). Over pieces that cover the columns and the rows once each, every entry is checked once:
    the stats and marks come out as the whole block's.

      col_ptr    int32/int64 [ncols+1]  read   the block's; where `columns` is given, the offsets of
                 its non-empty columns alone ([columns.count + 1], dbfs.graph.LocalGraph.col_ptr)
      columns    Positions of the block's non-empty local columns (dbfs.ops.sparse) or None (col_ptr
                 dense): column c starts at col_ptr[columns.below(c)]
      row_idx    int32 [nnz]      read   local rows, the block's
      col_level  L [nc]           read   compact levels of the piece's columns (L from level_dtype)
      row_level  L [nr]           read   compact levels of the piece's rows
      parent     P [nc] (undirected: parents of the piece's columns) or P [nr] (directed: of its
                 rows), P int32 or int64, global ids
      marks      uint32 [ncols/32] (undirected) or [nrows/32] (directed)  read/write  the block's: a
                 bit is set for each column (row) whose vertex has its parent-edge entry here
      stats      uint64 [STATS_SLOTS]  read/write
      column_table  int32 [chunk_table_bytes(nnz) / 4] or None  scratch  (GPU) the column of every
                 COLUMN_CHUNK-th entry of the piece's columns; None: allocated here
    An entry u -> v whose column has a level ("visited"): visited-entries += 1; a row without a
    level: span-entries += 1 and span lowered to v; a row with a level more than one away (directed:
    more than one deeper) lowers edge-level to v. half (undirected only; the CSC must be symmetric):
    span and edge-level instead on every entry u -> v with v > u (global ids), visited or not, which
    stands for the edge and its mirror entry: exactly one end visited: span-entries += 1 and span
    lowered to the unvisited end; both visited, levels more than one apart: edge-level lowered to u
    (the lower end). The totals equal the full form's on a symmetric CSC; the pass reads a row's level
    for half the entries. The parent-edge entry of a vertex x (undirected:
    column x holding its parent's row, only visited columns are read; directed: row x, with a
    level, whose parent is column u) marks x and, with the parent's level `up` and x's `lx`: up < 0
    lowers parent-unreached, 0 <= up < lx - 1 lowers level, up >= lx lowers cycle, each to x.
    detail (rule, vertex): also lower the witness slot to the lowest other end of that rule's
    offending entries whose offender is `vertex` (the column vertex for span, edge-level and the
    directed parent rules; the row vertex, the parent, for the undirected parent rules; half: the
    other end of an offending edge, either end of an edge-level one).
    GPU: two launches on the current stream (the column table, the pass), the piece's starts as
    (col_ptr, col_words, col_starts): col_ptr[first_col:] and null pointers (dense), or the whole held
    col_ptr and the Positions' words and starts from word first_col / 32 on, whose positions stay the
    whole range's (kernels/positions.cuh ColumnStarts); entries_per_lane picks the variant
    (ENTRIES_PER_LANE).
    """
    ncols, nnz = int(col_level.shape[0]), int(row_idx.shape[0])
    if first_col % 32:
        raise ValueError(f"a piece's first column must be a multiple of 32, got {first_col}")
    if columns is None:
        col_ptr = col_ptr[first_col:first_col + ncols + 1]
    else:
        columns = Positions(columns.words[first_col // 32:], columns.starts[first_col // 32:], columns.count)
    col_marks = marks if directed else marks[first_col // 32:]
    detail_slot, detail_vertex = (-1, 0) if detail is None else (SLOT[detail[0]], detail[1])
    if backend.is_gpu:
        if entries_per_lane not in ENTRIES_PER_LANE:
            raise ValueError(f"entries_per_lane must be one of {ENTRIES_PER_LANE}, got {entries_per_lane}")
        if half and directed:
            raise ValueError("the half form needs an undirected (symmetric) CSC")
        _require(parent, marks=marks, stats=stats)
        offsets = require_offsets("col_ptr", col_ptr)
        for name, array, dtype in (("row_idx", row_idx, np.int32),
                                   ("col_level", col_level, col_level.dtype),
                                   ("row_level", row_level, col_level.dtype)):
            require_array(name, array, dtype)
        if nnz == 0:
            return
        nchunks = -(-nnz // COLUMN_CHUNK)
        if column_table is None:
            column_table = backend.xp.empty(nchunks, backend.xp.int32)
        backend.kernel("validate", "entry_column_table", offsets)(
            (blocks_for(ncols, THREADS),), (THREADS,),
            (col_ptr, *held_args(columns), np.int32(ncols), np.int64(nchunks), column_table))
        form = "directed" if directed else "half" if half else "full"
        name = f"check_entries_{_level_name(col_level)}_{_PARENT_TYPES[parent.dtype]}_e{entries_per_lane}_{form}"
        kernel = backend.kernel("validate", name, offsets)
        kernel(
            (min(backend.resident_blocks(kernel, THREADS), -(-nnz // (THREADS * entries_per_lane))),), (THREADS,),
            (col_ptr, *held_args(columns), row_idx, np.int32(ncols), col_level, row_level, parent, parent,
             np.int64(layout.col_base + first_col), layout.row_starts, layout.block_rows,
             np.int32(layout.block_rows.shape[0]), np.int32(layout.b), np.int32(first_row),
             np.int32(first_row + row_level.shape[0]), col_marks, stats, np.int32(detail_slot),
             np.uint64(detail_vertex), column_table))
        return
    col_levels, row_levels = _decode(col_level), _decode(row_level)
    if columns is not None:
        col_ptr = _dense_starts(col_ptr, columns, ncols)
    # whole columns a step; the bounds are sorted, so repeats go by a comparison (np.unique would import numpy.ma
    # mid-run: a MiB of module objects in the CPU backend's peak)
    starts = np.searchsorted(col_ptr, np.arange(int(col_ptr[0]), int(col_ptr[-1]), TWIN_CHUNK), side="right") - 1
    bounds = np.append(starts, ncols)
    bounds = bounds[np.append(True, bounds[1:] != bounds[:-1])]
    for c0, c1 in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        _entries_numpy(col_ptr, row_idx, col_levels, row_levels, parent, directed, half, layout, first_col,
                       first_row, col_marks, stats, detail_slot, detail_vertex, c0, c1)


def chunk_table_bytes(entries: int) -> int:
    """Device bytes of check_entries' column table for a block of `entries` entries (GPU only)."""
    return 4 * -(-entries // COLUMN_CHUNK)


def check_parent_edges(backend, parent, marks, n_real: int, first_id: int, root: int, stats) -> None:
    """parent-not-neighbour: lowered to every real owned vertex other than the root with a parent
    (not -1) and no mark.

      parent  int32|int64 [b]  read
      marks   uint32 [b/32]    read   the owned vertices' parent-edge marks (all of check_entries'
                                      marks of the grid column or row, OR-reduced to the owner)
      stats   uint64 [STATS_SLOTS]  read/write
    GPU: one launch on the current stream.
    """
    b = int(parent.shape[0])
    if backend.is_gpu:
        _require(parent, marks=marks, stats=stats)
        if b:
            backend.kernel("validate", f"check_parent_edges_{_PARENT_TYPES[parent.dtype]}")(
                (blocks_for(b, THREADS),), (THREADS,),
                (parent, marks, np.int32(b), np.int32(n_real), np.int64(first_id), np.int64(root), stats))
        return
    marked = np.unpackbits(marks.view(np.uint8), bitorder="little")[:n_real].astype(bool)
    v = first_id + np.arange(n_real, dtype=np.int64)
    _lower(stats, "parent_not_neighbour", v[~marked & (parent[:n_real] != -1) & (v != root)])


def _dense_starts(col_ptr, columns, ncols: int) -> np.ndarray:
    """NumPy: the starts [ncols + 1] of the piece's columns, whose offsets col_ptr are held by the
    piece's Positions `columns`; in steps of TWIN_CHUNK columns, which bound below()'s temporaries."""
    starts = np.empty(ncols + 1, col_ptr.dtype)
    for lo in range(0, ncols + 1, TWIN_CHUNK):
        hi = min(ncols + 1, lo + TWIN_CHUNK)
        starts[lo:hi] = column_starts(col_ptr, columns, np.arange(lo, hi))
    return starts


def _entries_numpy(col_ptr, row_idx, col_levels, row_levels, parent, directed, half, layout, first_col,
                   first_row, marks, stats, detail_slot, detail_vertex, c0, c1) -> None:
    """check_entries on the piece's columns [c0, c1) (col_ptr, col_levels and marks, undirected, start
    at the piece's first column), levels decoded (_decode). Every entry of the piece is looked at
    (masks stand for the GPU's skipped reads); one combined test finds the entries that break span
    or edge-level, which a valid search has none of. Temporaries are made in place or dropped once used,
    so the step's bytes (dbfs.memory.TWIN_CHECK_BYTES) do not depend on what NumPy elides."""
    e0, e1 = int(col_ptr[c0]), int(col_ptr[c1])
    if e0 == e1:
        return
    rows = row_idx[e0:e1]
    cols = np.repeat(np.arange(c1 - c0, dtype=np.int32), np.diff(col_ptr[c0:c1 + 1]))   # each entry's, from c0
    here = rows >= first_row
    here &= rows < first_row + row_levels.shape[0]
    if not here.all():
        rows, cols = rows[here], cols[here]
    del here
    step_levels = col_levels[c0:c1]
    lc = step_levels[cols]
    lr = row_levels[rows - first_row]
    stats[SLOT["visited_entries"]] += np.uint64(np.count_nonzero(lc >= 0))

    def col_ids(picked):
        return cols[picked] + np.int64(layout.col_base + first_col + c0)

    def row_ids(picked):
        r = rows[picked].astype(np.int64)
        return layout.row_starts[r // layout.b] + r % layout.b

    # a level of NO_LEVEL (no level) is far below any level: one unsigned test per entry
    rise = lr - lc
    if directed:
        bad = rise > 1
        del rise
        bad |= lr < 0
        bad &= lc >= 0
    elif half:
        everything = np.arange(rows.size)
        bad = (np.abs(rise) > 1) & (row_ids(everything) > col_ids(everything))
    else:
        rise += 1
        bad = rise.view(np.uint64 if rise.dtype == np.int64 else np.uint32) > 2
        del rise
        bad &= lc >= 0
    bad = np.flatnonzero(bad)
    span = steep = np.empty(0, np.int64)
    if bad.size:
        crossing = (lr[bad] < 0) != (lc[bad] < 0)
        reached = (lr[bad] >= 0) & (lc[bad] >= 0)
        span, steep = bad[crossing], bad[reached]
        stats[SLOT["span_entries"]] += np.uint64(span.size)

    # the parent-edge entries (a mask), each marked; a rule can only break where the parent is not one level above
    # the vertex (which has a level; a parent without one is NO_LEVEL): those, few, by position
    if directed:
        tree = lr >= 0
        tree[tree] = parent[rows[tree] - first_row] == col_ids(tree)
        _mark(marks, rows[tree])
        child, up = lr, lc
    else:
        expect = _local_rows(parent[c0:c1], layout)
        expect[step_levels < 0] = -1
        tree = rows == expect[cols]
        del expect
        _mark(marks, cols[tree], c0)
        child, up = lc, lr
    gap = child[tree]
    gap -= up[tree]
    wrong = gap != 1
    tree = np.flatnonzero(tree)[wrong] if wrong.any() else np.empty(0, np.int64)
    del gap, wrong
    child, up = child[tree], up[tree]

    # (rule, offender, the other end) per offending entry; the lowest offender counts
    offences = []
    for rule, picked in (("parent_unreached", tree[up < 0]), ("level", tree[(up >= 0) & (up < child - 1)]),
                         ("cycle", tree[up >= child])):
        c, r = col_ids(picked), row_ids(picked)
        offences.append((rule, r, c) if directed else (rule, c, r))
    c, r = col_ids(span), row_ids(span)
    unvisited_column = lc[span] < 0
    offences.append(("span", np.where(unvisited_column, c, r), np.where(unvisited_column, r, c)))
    c, r = col_ids(steep), row_ids(steep)
    offences.append(("edge_level", r, c))
    if half:
        offences.append(("edge_level", c, r))
    for rule, offender, other in offences:
        if offender.size == 0:
            continue
        _lower(stats, rule, offender)
        if SLOT[rule] == detail_slot:
            _lower(stats, "witness", other[offender == detail_vertex])


# NumPy twin: compact level -> level, NO_LEVEL for all ones (a vertex without a level), one table per
# unsigned compact type. NO_LEVEL is far enough below every level that a rise from a column level to it
# is never within one.
NO_LEVEL = -(1 << 30)
_DECODE = {np.dtype(dtype): np.append(np.arange(np.iinfo(dtype).max, dtype=np.int32), np.int32(NO_LEVEL))
           for dtype in (np.uint8, np.uint16)}


def _decode(compact: np.ndarray) -> np.ndarray:
    """Compact levels -> levels, NO_LEVEL for all ones (int64 from int32: no sum overflows)."""
    if compact.dtype == np.int32:
        return np.where(compact == -1, NO_LEVEL, compact.astype(np.int64))
    return _DECODE[compact.dtype][compact]


def _local_rows(parents: np.ndarray, layout: EntryLayout) -> np.ndarray:
    """int32 local row (on this grid row) of each global id, -1 for ids owned by another grid row or not ids:
    one array of the ids' type for their blocks, then their offsets in them, beside the rows."""
    block = parents // layout.b
    unsigned = block.view(np.uint64 if block.dtype == np.int64 else np.uint32)
    # ids outside the blocks (negative, or past the last) read the -1 after the last block's row
    np.minimum(unsigned, layout.block_rows.shape[0], out=unsigned)
    rows = np.append(layout.block_rows, np.int32(-1))[block]
    offset = np.remainder(parents, layout.b, out=block)
    np.add(rows, offset, out=rows, where=rows >= 0, casting="unsafe")
    return rows


def _mark(marks: np.ndarray, ids: np.ndarray, first: int = 0) -> None:
    """Set bit k % 32 of word k // 32 of the uint32 `marks` for each k of `ids` (int32, overwritten) + first."""
    ids += first
    bits = (ids & 31).view(np.uint32)
    np.left_shift(np.uint32(1), bits, out=bits)
    ids >>= 5
    np.bitwise_or.at(marks, ids, bits)


def _lower(stats: np.ndarray, slot: str, ids: np.ndarray) -> None:
    if ids.size:
        lowest = int(ids.min())
        if lowest < int(stats[SLOT[slot]]):
            stats[SLOT[slot]] = lowest


def _level_name(array) -> str:
    return dict((np.dtype(t), name) for t, name in _LEVEL_TYPES)[np.dtype(array.dtype)]


def _require(parent, level=None, stats=None, marks=None) -> None:
    if np.dtype(parent.dtype) not in _PARENT_TYPES:
        raise TypeError(f"parent must be int32 or int64, got {parent.dtype}")
    require_array("parent", parent, parent.dtype)
    for name, array, dtype in (("level", level, np.int32), ("stats", stats, np.uint64),
                               ("marks", marks, np.uint32)):
        if array is not None:
            require_array(name, array, dtype)
