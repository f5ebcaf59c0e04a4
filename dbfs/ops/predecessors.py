"""Delayed-predecessor resolution (paper 004, section 3.5): owned vertices' discoverer columns and the
discoverers' local predecessor columns -> global parent ids (resolve_parents, from gathered entries, or
resolve_rows_mapped, reading them in place). A vertex found bottom-up was found by one rank of the grid
row, whose entry is the only one set; where the bottom-up levels searched the CSC's columns, by one
rank of the grid column instead (resolve_columns, from gathered entries, or resolve_mapped, reading
them in place). GPU: kernels/predecessors.cu; NumPy twins below with the same contracts."""

from __future__ import annotations

import numpy as np

from dbfs.kernels import BLOCK_THREADS, BOTTOM_UP
from dbfs.ops.arrays import blocks_for, require_array


def resolve_parents(backend, grid, pred_col, gathered, parent) -> None:
    """parent[o] = global id of local column gathered[c * b + o] of grid column c, with c = pred_col[o],
    left as it is when c == -1 (nothing discovered it: -1 from the reset, or the root's own id); for c
    == BOTTOM_UP, c is the lowest column whose gathered entry for o is set.

    pred_col  int32 [b]      read   grid column of the rank that discovered owned offset o (-1: none,
                                    BOTTOM_UP: found by the bottom-up search)
    gathered  int32 [C*b]    read   block c: grid column c's pred_row entries for this rank's block
    parent    int32 or int64 [b]  read/write  global parent ids (int32 only when every id fits)
    Device arrays of the backend; on the GPU the call returns with the kernel queued on the stream.
    """
    b, C = grid.block, grid.C
    if backend.is_gpu:
        require_array("gathered", gathered, np.int32)
        _launch(backend, "resolve_parents", b, pred_col, gathered, (np.int32(C), np.int64(grid.cols_per_rank)),
                parent)
        return
    bottom_up = pred_col == BOTTOM_UP
    finder = np.argmax(gathered.reshape(C, b) >= 0, axis=0)
    pred_col = np.where(bottom_up, finder, pred_col)
    found = pred_col >= 0
    col = np.where(found, pred_col, 0).astype(np.int64)
    local = gathered[col * b + np.arange(b)]
    parent[found] = grid.to_global_col(col, local)[found]


def resolve_rows_mapped(backend, grid, line: int, pred_col, peers, parent) -> None:
    """resolve_parents without a gather: each owned vertex reads its discoverer's entry where that rank
    of the grid row keeps it (all of them for a vertex found bottom-up, the lowest set one counting).

    pred_col  as in resolve_parents
    peers     on the GPU a uint64 [C] device array, the address of grid column c's pred_row (int32 [C*b],
              mapped here by NVSHMEM); on the CPU a list of the C arrays; the entries for this rank's
              block are rows line*b .. line*b + b of each (`line`: this rank's grid column)
    parent    as in resolve_parents
    """
    b, C = grid.block, grid.C
    if backend.is_gpu:
        require_array("peers", peers, np.uint64)
        _launch(backend, "resolve_rows_mapped", b, pred_col, peers,
                (np.int32(C), np.int32(line), np.int64(grid.cols_per_rank)), parent)
        return
    gathered = np.concatenate([peers[c][line * b:(line + 1) * b] for c in range(C)])
    resolve_parents(backend, grid, pred_col, gathered, parent)


def resolve_columns(backend, grid, marker, gathered, parent) -> None:
    """For every owned offset o with marker[o] == BOTTOM_UP: parent[o] = global id of local row
    gathered[p * b + o] of grid row p, p the lowest grid row whose entry for o is set (-1: none).

    marker    int32 [b]      read   BOTTOM_UP where a rank of the grid column found o bottom-up (pred_col,
                                    or the parent array itself on a grid of one column)
    gathered  int32 [R*b]    read   block p: grid row p's column_parent entries for this rank's block
    parent    int32 or int64 [b]  write  the found vertices' global parent ids (the others untouched)
    Device arrays of the backend; on the GPU the call returns with the kernel queued on the stream.
    """
    b, R = grid.block, grid.R
    if backend.is_gpu:
        require_array("gathered", gathered, np.int32)
        _launch(backend, "resolve_columns", b, marker, gathered, (np.int32(R),), parent)
        return
    found = np.flatnonzero(marker == BOTTOM_UP)
    candidates = gathered.reshape(R, b)[:, found]
    finder = np.argmax(candidates >= 0, axis=0)
    local = candidates[finder, np.arange(found.shape[0])].astype(np.int64)
    parent[found] = np.where(local >= 0, grid.to_global_row(finder, local), -1)


def resolve_mapped(backend, grid, line: int, marker, peers, parent) -> None:
    """resolve_columns without a gather: each marked vertex reads its entry where each rank of the grid
    column keeps it, its own grid row `line` first.

    marker  int32 [b]   read   as in resolve_columns
    peers   on the GPU a uint64 [R] device array, the address of grid row p's column_parent (int32
            [R*b], mapped here by NVSHMEM); on the CPU a list of the R arrays
    parent  int32 or int64 [b]  write  as in resolve_columns
    """
    b, R = grid.block, grid.R
    if backend.is_gpu:
        require_array("peers", peers, np.uint64)
        _launch(backend, "resolve_mapped", b, marker, peers, (np.int32(R), np.int32(line)), parent)
        return
    gathered = np.concatenate([peers[p][line * b:(line + 1) * b] for p in range(R)])
    resolve_columns(backend, grid, marker, gathered, parent)


def _launch(backend, kernel: str, b: int, marks, table, scalars: tuple, parent) -> None:
    """kernels/predecessors.cu's `kernel` for the parents' dtype (_i32 or _i64), a thread per owned
    vertex: (marks, table, b, *scalars, parent), table the gathered entries or the peers' addresses."""
    require_array("marks", marks, np.int32)
    suffix = "i64" if parent.dtype == np.int64 else "i32"
    backend.kernel("predecessors", f"{kernel}_{suffix}")(
        (blocks_for(b),), (BLOCK_THREADS,), (marks, table, np.int32(b), *scalars, parent))
