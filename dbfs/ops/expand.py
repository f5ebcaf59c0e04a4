"""Frontier expansion of one BFS level on rank (i, j): scan the CSC columns of the gathered frontier.

Paper 004, section 3.4 (Algorithm 3) and 3.4.1. Every CSC entry (u -> v_row) of a frontier column u
is scanned once; a destination row whose visited bit is clear gets the bit (exactly one scanned edge
claims it), its predecessor column u, and is appended to the dst group of its owner's grid column
(Grid.row_group) as its offset in that block (Grid.row_offset); rows of the own block also get their
level and the delayed predecessor column j (section 3.5). The new frontier's figures are taken from
its list afterwards (dbfs.ops.frontier).

GPU method: an exclusive scan of the frontier degrees at the offsets' width (kernels/expand.cu: per-tile
sums, each degree looked up once; one block scanning the sums; the per-entry prefixes), a table of the frontier vertex
of every COLUMN_CHUNK-th edge, then threads of `edges_per_thread` consecutive frontier edges whose
warp names each edge's frontier vertex from the table and the vertices' edge offsets, without the
per-thread binary search of section 3.4.1 (kernels/columns.cuh); the discoveries of a block take
their group slots with one global atomic per group (a single hot counter serialises at the L2
otherwise). All launches have fixed grids (the blocks the GPU holds at once) that take their work in
order from a counter or by stride, and the frontier length may live on the device: nothing is read
back. NumPy method: the same edges gathered with repeat/cumsum; np.unique picks the first scanned
edge of each unvisited row.
"""

from __future__ import annotations

import numpy as np

from dbfs.kernels import (BLOCK_THREADS, COLUMN_CHUNK, CTL, DEFAULT_EDGES_PER_THREAD, EDGES_PER_THREAD, SCAN_TILE, STAT,
                          STEP)
from dbfs.ops.arrays import (NULL, TWIN_ITEMS, gate_args, gate_open, host_length, length_args, require_array,
                             require_offsets, twin_groups)
from dbfs.ops.bitmap import set_visited, visited
from dbfs.ops.sparse import column_starts, held_args

GROUP_SCRATCH_BYTES = 8       # dynamic shared memory per dst group (common.cuh block_reserve)


class ExpandScratch:
    """Device buffers of the expansion for a part of up to `capacity` frontier vertices (longer frontiers
    are expanded a part at a time) in a block of `entries` edges: the degree scan's cumul [capacity + 1]
    and tile_sums [ceil(capacity / SCAN_TILE)], both of the graph's offsets' dtype (int32 or int64: a
    frontier's degrees sum to at most the block's entries), the column table int32
    [ceil(entries / COLUMN_CHUNK)] and the chunk counter uint64 [1] (the search state holds them)."""

    def __init__(self, cumul, tile_sums, columns, chunks):
        self.cumul, self.tile_sums, self.columns, self.chunks = cumul, tile_sums, columns, chunks
        self.capacity = int(cumul.shape[0]) - 1
        self.entries = int(columns.shape[0]) * COLUMN_CHUNK
        if tile_sums.shape[0] < -(-self.capacity // SCAN_TILE):
            raise ValueError(f"{tile_sums.shape[0]} tile sums cannot scan {self.capacity} entries")

    @classmethod
    def allocate(cls, backend, capacity: int, entries: int, offsets) -> "ExpandScratch":
        """For a graph whose offsets are of dtype `offsets`."""
        xp = backend.xp
        return cls(xp.empty(capacity + 1, offsets), xp.empty(max(1, -(-capacity // SCAN_TILE)), offsets),
                   xp.empty(max(1, -(-entries // COLUMN_CHUNK)), xp.int32), xp.zeros(1, xp.uint64))


def expand(backend, grid, j, col_ptr, row_idx, frontier, length, bitmap, level, pred_row, pred_col, dst,
           dst_own, dst_cnt, stats, scratch, lvl=0, edges_per_thread=DEFAULT_EDGES_PER_THREAD, control=None,
           found_at=None, columns=None) -> None:
    """Expand the frontier columns of one level.

    Arrays live on the backend's device (CuPy on a GPU backend, NumPy otherwise), 1-D, C-contiguous:
      col_ptr   int32/int64 [ncols+1]  read   CSC column offsets (ncols = grid.cols_per_rank local columns);
                or [columns.count+1]     where columns (dbfs.ops.sparse.Positions of the non-empty
                                         columns) is given, theirs alone (dbfs.ops.sparse.column_starts)
      row_idx   int32 [nnz]       read   CSC local destination rows (grid.rows_per_rank local rows)
      frontier  int32 [>= nf]     read   local column ids to expand
      length    int or int32 [1]  read   nf, on the host or on the device (may be 0)
      bitmap    uint32 [>= ceil(nrows/32)]  read/write  visited bit of every local row
      level     int32 [b]         write  level of newly discovered owned rows (offset o), set to lvl
      pred_row  int32 [nrows]     write  pred_row[v] = discovering frontier column u, new rows only;
                or [found_at.count]      where found_at (dbfs.ops.sparse.Positions of the rows with an
                                         entry) is given, at v's position
      pred_col  int16 [b] or None write  pred_col[o] = j for newly discovered owned rows (None: one
                                         rank, where nothing needs it)
      dst       int32 [(C-1)*t]   write  the other owners' groups packed: group m != j occupies dst[k*t :
                                         (k+1)*t], k = m - (m > j) (t = len(dst) // (C - 1); on one grid
                                         column nothing, any array)
      dst_own   int32 [s]         write  group j, the next frontier (dbfs.search_state: a queue)
      dst_cnt   int32 [C]         read/write  group m's fill; new offsets go to its group at dst_cnt[m]...
      stats     int64 [STAT_WORDS] read/write  CHECKED += the frontier's total degree (entries scanned)
      scratch   ExpandScratch, its scan of col_ptr's dtype: a frontier longer than its capacity is expanded
                a part of that many columns at a time, in order
      control   int64 [CTL_WORDS] or None: the device-driven loop's control block; the level then runs
                only when the next step is a bulk top-down level, and lvl is its CTL_LEVEL
    grid: the dbfs.grid.Grid, j: own grid column, lvl: level number (without a control block).

    Guarantees: every row whose bit was clear and that has an edge from a frontier column is
    discovered exactly once (bit set, appended to exactly one group slot, pred_row set to one of its
    frontier neighbours); entries already in dst below the old dst_cnt and everything about other
    rows are left alone. The order of new entries inside a group and the choice among several
    frontier neighbours are unspecified (GPU: atomic order; NumPy: ascending rows, first scanned
    edge). A group cannot overflow as long as the bitmap covers every row already appended, s is at
    least the owned rows with an entry (dbfs.graph.LocalGraph.group_slots) and t at least the rows with
    an entry of any other group's segment (dbfs.graph.LocalGraph.segment_slots).

    GPU: five kernels a part on CuPy's current stream, as many parts as the frontier buffer's length
    takes (a part past a length on the device does nothing), no host synchronisation; `frontier` must not
    be overwritten before they ran. edges_per_thread selects the kernel variant (one of
    EDGES_PER_THREAD); the expansion takes 8*C bytes of shared memory, so C <= 6144.
    """
    if backend.is_gpu:
        _expand_gpu(backend, grid, j, col_ptr, row_idx, frontier, length, bitmap, level, pred_row, pred_col,
                    dst, dst_own, dst_cnt, stats, scratch, lvl, edges_per_thread, control, found_at, columns)
    elif gate_open(control, 1 << STEP.TOPDOWN):
        if control is not None:
            lvl = int(control[CTL.LEVEL])
        _expand_numpy(grid, j, col_ptr, row_idx, frontier[:host_length(length)], bitmap, level, pred_row,
                      pred_col, lvl, dst, dst_own, dst_cnt, stats, found_at, columns)


def _expand_gpu(backend, grid, j, col_ptr, row_idx, frontier, length, bitmap, level, pred_row, pred_col,
                dst, dst_own, dst_cnt, stats, scratch, lvl, edges_per_thread, control, found_at, columns):
    if edges_per_thread not in EDGES_PER_THREAD:
        raise ValueError(f"edges_per_thread must be one of {EDGES_PER_THREAD}, got {edges_per_thread}")
    offsets = require_offsets("col_ptr", col_ptr)
    for name, array, dtype in (("row_idx", row_idx, np.int32), ("frontier", frontier, np.int32),
                               ("bitmap", bitmap, np.uint32),
                               ("level", level, np.int32), ("pred_row", pred_row, np.int32),
                               ("dst", dst, np.int32), ("dst_own", dst_own, np.int32),
                               ("dst_cnt", dst_cnt, np.int32), ("stats", stats, np.int64)):
        require_array(name, array, dtype)
    if pred_col is not None:
        require_array("pred_col", pred_col, np.int16)
    require_offsets("scratch.cumul", scratch.cumul, offsets)
    require_offsets("scratch.tile_sums", scratch.tile_sums, offsets)
    if scratch.entries < row_idx.shape[0]:
        raise ValueError(f"scratch's column table covers {scratch.entries} edges, the CSC block has "
                         f"{row_idx.shape[0]}")
    count = length_args(length)
    gate = gate_args(control)[0]
    tiles = scratch.tile_sums.shape[0]
    tile_degrees, scan_tiles, degree_scan, column_table, expansion = (
        backend.kernel("expand", name, offsets)
        for name in ("frontier_tile_degrees", "scan_tile_sums", "frontier_degree_scan", "frontier_column_table",
                     f"expand_frontier_e{edges_per_thread}"))
    ngroups = dst_cnt.shape[0]
    part = scratch.capacity
    # the parts of what the frontier buffer holds, or of the length where the host knows it; at least one,
    # so that an empty frontier still zeroes the scan's total (cumul[0])
    extent = int(length) if isinstance(length, (int, np.integer)) else frontier.shape[0]
    for first in range(0, max(1, extent), part):
        span = (*count, np.int64(first), np.int64(part))
        part_frontier = frontier[first:]
        tile_degrees((min(backend.resident_blocks(tile_degrees, BLOCK_THREADS), tiles),), (BLOCK_THREADS,),
                     (col_ptr, *held_args(columns), part_frontier, *span, scratch.tile_sums, scratch.cumul, gate))
        scan_tiles((1,), (BLOCK_THREADS,), (scratch.tile_sums, *span, gate))
        degree_scan((min(backend.resident_blocks(degree_scan, BLOCK_THREADS), tiles),), (BLOCK_THREADS,),
                    (*span, scratch.tile_sums, scratch.cumul, scratch.chunks, gate))
        column_table((backend.resident_blocks(column_table, BLOCK_THREADS),), (BLOCK_THREADS,),
                     (scratch.cumul, *span, scratch.columns, gate))
        expansion(
            (backend.resident_blocks(expansion, BLOCK_THREADS),), (BLOCK_THREADS,),
            (col_ptr, *held_args(columns), row_idx, part_frontier, *span, scratch.cumul, scratch.columns, bitmap,
             level, pred_row, *held_args(found_at),
             pred_col if pred_col is not None else NULL, np.int32(lvl), np.int32(j), np.int32(grid.block),
             np.int32(ngroups), np.int64(dst.shape[0] // max(1, ngroups - 1)), dst, dst_own, dst_cnt,
             scratch.chunks, stats, gate),
            shared_mem=GROUP_SCRATCH_BYTES * ngroups)


def _expand_numpy(grid, j, col_ptr, row_idx, frontier, bitmap, level, pred_row, pred_col, lvl, dst, dst_own,
                  dst_cnt, stats, found_at=None, columns=None):
    """expand's twin, a step of TWIN_ITEMS frontier columns at a time, their entries in groups of
    whole columns (dbfs.ops.arrays.twin_groups; the steps bound the temporaries): in frontier order,
    so a row goes to the first column that reaches it, as in one pass over everything."""
    for lo in range(0, frontier.shape[0], TWIN_ITEMS):
        step = np.asarray(frontier[lo:lo + TWIN_ITEMS], dtype=np.int64)
        starts = column_starts(col_ptr, columns, step)
        degrees = column_starts(col_ptr, columns, step + 1) - starts
        for group in twin_groups(degrees):
            _expand_columns(grid, j, row_idx, step[group], starts[group], degrees[group], bitmap, level, pred_row,
                            pred_col, lvl, dst, dst_own, dst_cnt, stats, found_at)


def _expand_columns(grid, j, row_idx, frontier, starts, degrees, bitmap, level, pred_row, pred_col, lvl, dst,
                    dst_own, dst_cnt, stats, found_at):
    total = int(degrees.sum())
    stats[STAT.CHECKED] += total
    if total == 0:
        return
    first_edge = np.cumsum(degrees) - degrees
    positions = np.arange(total, dtype=np.int64) + np.repeat(starts - first_edge, degrees)
    sources = np.repeat(frontier, degrees)
    rows = row_idx[positions].astype(np.int64)

    fresh = ~visited(bitmap, rows)
    new_rows, first = np.unique(rows[fresh], return_index=True)
    if new_rows.size == 0:
        return
    set_visited(bitmap, new_rows)
    pred_row[new_rows if found_at is None else found_at.at(new_rows)] = sources[fresh][first]
    groups = grid.row_group(new_rows)
    offsets = grid.row_offset(new_rows)
    append_grouped(dst.shape[0] // max(1, dst_cnt.shape[0] - 1), dst, dst_cnt, groups, offsets, j, dst_own)
    own = offsets[groups == j]
    level[own] = lvl
    if pred_col is not None:
        pred_col[own] = j


def append_grouped(slots: int, dst: np.ndarray, dst_cnt: np.ndarray, groups: np.ndarray,
                   offsets: np.ndarray, j: int = -1, own=None) -> None:
    """Append offsets[k] to group groups[k] of dst (groups of `slots` entries, sorted ascending), bumping
    dst_cnt (IndexError where a group would overflow); where `own` is given, group j to it and the others
    to dst packed (group m at m - (m > j))."""
    counts = np.bincount(groups, minlength=dst_cnt.shape[0])
    group_start = np.cumsum(counts) - counts
    rank_in_group = np.arange(groups.shape[0]) - group_start[groups]
    at = dst_cnt[groups] + rank_in_group
    mine = groups == j if own is not None else np.zeros(groups.shape[0], bool)
    for ats, room in ((at[~mine], slots), (at[mine], 0 if own is None else own.shape[0])):
        if ats.size and int(ats.max()) >= room:
            raise IndexError(f"a group of {room} slots would overflow")
    packed = groups - (groups > j) if own is not None else groups
    dst[(packed * slots + at)[~mine]] = offsets[~mine]
    if own is not None:
        own[at[mine]] = offsets[mine]
    dst_cnt += counts.astype(dst_cnt.dtype)
