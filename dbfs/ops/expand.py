"""Frontier expansion of one BFS level on rank (i, j): scan the CSC columns of the gathered frontier.

Paper 004, section 3.4 (Algorithm 3) and 3.4.1. Every CSC entry (u -> v_row) of a frontier column u
is scanned once; a destination row whose visited bit is clear gets the bit (exactly one scanned edge
claims it), its predecessor column u, and is appended to the dst group of its owner's grid column
m = v_row // b as the offset v_row % b; rows of the own block (m == j) also get their level and the
delayed predecessor column j (section 3.5).

GPU method: an exclusive scan of the frontier degrees (kernels/expand.cu, one launch for frontiers of
up to 2048 vertices, three beyond), one 8-byte read of the total degree into pinned memory (it sizes
the launch), then one thread per `edges_per_thread` consecutive frontier edges doing a single binary
search (two global binary searches per warp, then a 5-step search over the warp's registers when
the warp's edges span at most 32 columns) plus a linear walk (section 3.4.1); the discoveries of a
block take their group slots with one global atomic per group (a single hot counter serialises at
the L2 otherwise). NumPy method: the same edges gathered with repeat/cumsum; np.unique picks the
first scanned edge of each unvisited row as its discoverer.
"""

from __future__ import annotations

import numpy as np

EDGES_PER_THREAD = (1, 2, 4, 8)
EXPAND_THREADS = 256          # EXPAND_THREADS in kernels/expand.cu
SCAN_THREADS = 256            # SCAN_THREADS in kernels/expand.cu
SCAN_TILE = 2048              # SCAN_TILE in kernels/expand.cu: frontier entries per scan block
GROUP_SCRATCH_BYTES = 8       # dynamic shared memory per dst group (common.cuh block_reserve)


def expand(backend, col_ptr, row_idx, frontier, bitmap, level, pred_row, pred_col, lvl, j, b, dst,
           dst_cnt, edges_per_thread=4, *, scratch=None) -> int:
    """Expand the frontier columns of one level; return the frontier's total degree (entries scanned).

    Arrays live on the backend's device (CuPy on a GPU backend, NumPy otherwise), 1-D, C-contiguous:
      col_ptr   int64 [ncols+1]   read   CSC column offsets (ncols = R*b local columns)
      row_idx   int32 [nnz]       read   CSC local destination rows (nrows = C*b local rows)
      frontier  int32 [nf]        read   local column ids to expand (nf may be 0)
      bitmap    uint32 [>= ceil(nrows/32)]  read/write  visited bit of every local row
      level     int32 [b]         write  level of newly discovered owned rows (offset o), set to lvl
      pred_row  int32 [nrows]     write  pred_row[v] = discovering frontier column u, new rows only
      pred_col  int32 [b]         write  pred_col[o] = j for newly discovered owned rows
      dst       int32 [C*b]       write  group m occupies dst[m*b : (m+1)*b]
      dst_cnt   int32 [C]         read/write  group m's fill; new offsets go to dst[m*b + dst_cnt[m]...]
    lvl, j, b: Python ints (level number, own grid column, block size).

    Guarantees: every row whose bit was clear and that has an edge from a frontier column is
    discovered exactly once (bit set, appended to exactly one group slot, pred_row set to one of its
    frontier neighbours); entries already in dst below the old dst_cnt and everything about other
    rows are left alone. The order of new entries inside a group and the choice among several
    frontier neighbours are unspecified (GPU: atomic order; NumPy: ascending rows, first scanned
    edge). The groups have room for all rows of their block, so they cannot overflow as long as the
    bitmap covers every row already appended.

    GPU: kernels run on CuPy's current stream; the function returns after the degree scan, while the
    expansion kernel may still run (read dst_cnt etc. in stream order or after backend.sync()).
    `frontier` must not be overwritten before then. edges_per_thread selects the kernel variant
    (one of EDGES_PER_THREAD); the launch takes 8*C bytes of shared memory, so C <= 6144. `scratch`
    (ExpandScratch) holds the scan buffers; by default one per device is kept and grown on demand, so
    calls after the first largest frontier allocate nothing.
    Two expansions on different streams must not share a scratch.
    """
    if backend.is_gpu:
        return _expand_gpu(backend, col_ptr, row_idx, frontier, bitmap, level, pred_row, pred_col,
                           lvl, j, b, dst, dst_cnt, edges_per_thread, scratch)
    return _expand_numpy(col_ptr, row_idx, frontier, bitmap, level, pred_row, pred_col, lvl, j, b,
                         dst, dst_cnt)


class ExpandScratch:
    """Device buffers of the degree scan for frontiers of up to `capacity` vertices."""

    def __init__(self, backend, capacity: int):
        xp = backend.xp
        self.capacity = int(capacity)
        self.cumul = xp.empty(self.capacity + 1, dtype=xp.int64)
        self.tile_sums = xp.empty(max(1, -(-self.capacity // SCAN_TILE)), dtype=xp.int64)
        self.total = backend.pinned_empty(1, np.int64)


_scratch_by_device: dict = {}
_functions: dict = {}


def _function(backend, name: str):
    key = (backend.device, name)
    fn = _functions.get(key)
    if fn is None:
        fn = _functions[key] = backend.module("expand").get_function(name)
    return fn


def _scratch_for(backend, nf: int) -> ExpandScratch:
    scratch = _scratch_by_device.get(backend.device)
    if scratch is None or scratch.capacity < nf:
        grown = max(nf, 2 * scratch.capacity) if scratch is not None else max(nf, SCAN_TILE)
        scratch = _scratch_by_device[backend.device] = ExpandScratch(backend, grown)
    return scratch


def require_array(name, array, dtype):
    """Raw kernels read memory blindly: insist on the dtype and a 1-D contiguous layout."""
    if array.dtype != dtype or array.ndim != 1 or not array.flags.c_contiguous:
        raise TypeError(f"{name} must be a 1-D C-contiguous {np.dtype(dtype).name} array, got "
                        f"{array.dtype} with shape {array.shape}")


def _expand_gpu(backend, col_ptr, row_idx, frontier, bitmap, level, pred_row, pred_col, lvl, j, b,
                dst, dst_cnt, edges_per_thread, scratch):
    import cupy

    if edges_per_thread not in EDGES_PER_THREAD:
        raise ValueError(f"edges_per_thread must be one of {EDGES_PER_THREAD}, got {edges_per_thread}")
    for name, array, dtype in (("col_ptr", col_ptr, np.int64), ("row_idx", row_idx, np.int32),
                               ("frontier", frontier, np.int32), ("bitmap", bitmap, np.uint32),
                               ("level", level, np.int32), ("pred_row", pred_row, np.int32),
                               ("pred_col", pred_col, np.int32), ("dst", dst, np.int32),
                               ("dst_cnt", dst_cnt, np.int32)):
        require_array(name, array, dtype)
    nf = frontier.shape[0]
    if nf == 0:
        return 0
    if scratch is None:
        scratch = _scratch_for(backend, nf)
    elif scratch.capacity < nf:
        raise ValueError(f"scratch holds {scratch.capacity} frontier entries, frontier has {nf}")

    ntiles = -(-nf // SCAN_TILE)
    nf32 = np.int32(nf)
    if ntiles > 1:
        _function(backend, "frontier_tile_degrees")(
            (ntiles,), (SCAN_THREADS,), (col_ptr, frontier, nf32, scratch.tile_sums))
        _function(backend, "scan_tile_sums")((1,), (SCAN_THREADS,), (scratch.tile_sums, np.int32(ntiles)))
    _function(backend, "frontier_degree_scan")(
        (ntiles,), (SCAN_THREADS,),
        (col_ptr, frontier, nf32, scratch.tile_sums, np.int32(ntiles > 1), scratch.cumul))

    stream = cupy.cuda.get_current_stream()
    cupy.cuda.runtime.memcpyAsync(scratch.total.ctypes.data, scratch.cumul.data.ptr + 8 * nf, 8,
                                  cupy.cuda.runtime.memcpyDeviceToHost, stream.ptr)
    stream.synchronize()
    total = int(scratch.total[0])
    if total == 0:
        return 0

    threads_needed = -(-total // edges_per_thread)
    ngroups = dst_cnt.shape[0]
    _function(backend, f"expand_frontier_e{edges_per_thread}")(
        (-(-threads_needed // EXPAND_THREADS),), (EXPAND_THREADS,),
        (col_ptr, row_idx, frontier, scratch.cumul, nf32, np.int64(total), bitmap, level, pred_row,
         pred_col, np.int32(lvl), np.int32(j), np.int32(b), np.int32(ngroups), dst, dst_cnt),
        shared_mem=GROUP_SCRATCH_BYTES * ngroups)
    return total


def _expand_numpy(col_ptr, row_idx, frontier, bitmap, level, pred_row, pred_col, lvl, j, b, dst,
                  dst_cnt):
    frontier = np.asarray(frontier, dtype=np.int64)
    starts = col_ptr[frontier]
    degrees = col_ptr[frontier + 1] - starts
    total = int(degrees.sum())
    if total == 0:
        return 0
    first_edge = np.cumsum(degrees) - degrees
    positions = np.arange(total, dtype=np.int64) + np.repeat(starts - first_edge, degrees)
    sources = np.repeat(frontier, degrees)
    rows = row_idx[positions].astype(np.int64)

    fresh = ~visited(bitmap, rows)
    new_rows, first = np.unique(rows[fresh], return_index=True)
    if new_rows.size == 0:
        return total
    set_visited(bitmap, new_rows)
    pred_row[new_rows] = sources[fresh][first]
    groups = new_rows // b
    offsets = new_rows - groups * b
    append_grouped(dst, dst_cnt, b, groups, offsets)
    own = offsets[groups == j]
    level[own] = lvl
    pred_col[own] = j
    return total


def visited(bitmap: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Bool per row: its bit in the uint32 bitmap is set."""
    return ((bitmap[rows >> 5] >> (rows & 31).astype(np.uint32)) & np.uint32(1)).astype(bool)


def set_visited(bitmap: np.ndarray, rows: np.ndarray) -> None:
    """Set the bits of `rows` (sorted ascending, unique) in the uint32 bitmap."""
    words = rows >> 5
    masks = np.left_shift(np.uint32(1), (rows & 31).astype(np.uint32))
    word_ids, word_starts = np.unique(words, return_index=True)
    bitmap[word_ids] |= np.bitwise_or.reduceat(masks, word_starts)


def append_grouped(dst: np.ndarray, dst_cnt: np.ndarray, b: int, groups: np.ndarray,
                   offsets: np.ndarray) -> None:
    """Append offsets[k] to group groups[k] of dst (groups sorted ascending), bumping dst_cnt."""
    counts = np.bincount(groups, minlength=dst_cnt.shape[0])
    group_start = np.cumsum(counts) - counts
    rank_in_group = np.arange(groups.shape[0]) - group_start[groups]
    dst[groups * b + dst_cnt[groups] + rank_in_group] = offsets
    dst_cnt += counts.astype(dst_cnt.dtype)
