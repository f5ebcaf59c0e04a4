"""Delayed-predecessor resolution (paper 004, section 3.5): owned vertices' discoverer columns and the
discoverers' local predecessor columns -> global parent ids (resolve_parents). A vertex found bottom-up
was found by one rank of the grid row, whose entry is the only one set; where the bottom-up levels
searched the CSC's columns, by one rank of the grid column instead (resolve_columns). The entries each
rank of the line keeps for this rank's block are read as a block held by position (dbfs.ops.sparse):
that rank's record itself (read in place where NVSHMEM maps it), or its packed message.
GPU: kernels/predecessors.cu; NumPy twins below with the same contracts."""

from __future__ import annotations

import numpy as np

from dbfs.kernels import BLOCK_THREADS, BOTTOM_UP
from dbfs.ops.arrays import blocks_for, require_array
from dbfs.ops.sparse import held_entries


def resolve_parents(backend, grid, pred_col, entries, parent, rows_found: bool = True) -> None:
    """parent[o] = global id of local column r of grid column c, r = grid column c's entry for o and c =
    pred_col[o], left as it is when c == -1 (nothing discovered it: -1 from the reset, or the root's own
    id); for c == BOTTOM_UP, c is the lowest column whose entry for o is set, where the bottom-up levels
    recorded their finds in pred_row (rows_found; else those vertices are left as they are, for
    resolve_columns).

    pred_col  int16 [b]   read   grid column of the rank that discovered owned offset o (-1: none,
                                 BOTTOM_UP: found by the bottom-up search)
    entries   grid column c's pred_row entries for this rank's block, each a block held by position, as
              in resolve_columns (C of them)
    parent    int32 or int64 [b]  read/write  global parent ids (int32 only when every id fits)
    Device arrays of the backend; on the GPU the call returns with the kernel queued on the stream.
    """
    b, C = grid.block, grid.C
    if backend.is_gpu:
        require_array("pred_col", pred_col, np.int16)
        _launch(backend, "resolve_parents", b, pred_col, entries,
                (np.int32(C), np.int64(grid.cols_per_rank), np.int32(rows_found)), parent)
        return
    gathered = np.stack([held_entries(*entries[c], np.arange(b)) for c in range(C)])
    bottom_up = pred_col == BOTTOM_UP
    pred_col = np.where(bottom_up, np.argmax(gathered >= 0, axis=0) if rows_found else -1, pred_col)
    found = pred_col >= 0
    col = np.where(found, pred_col, 0).astype(np.int64)      # int16 grid columns: the ids are wider
    local = gathered[col, np.arange(b)].astype(np.int64)
    parent[found] = grid.to_global_col(col, local)[found]


def resolve_columns(backend, grid, marker, entries, first: int, parent) -> None:
    """For every owned offset o with marker[o] == BOTTOM_UP: parent[o] = global id of local row r of grid
    row p, r = grid row p's entry for o, p the first grid row from `first` on (cyclically) whose entry
    is set; -1 where none is.

    marker   int16 [b]   read   BOTTOM_UP where a rank of the grid column found o bottom-up (pred_col;
                                on a grid of one column the int32 parent array itself)
    entries  grid row p's entries for this rank's block, each a block held by position
             (dbfs.ops.sparse; an entry < 0 or a member not held: none): on the GPU three uint64 [R]
             device arrays of addresses (values: int32; words: uint32 Positions words, 0 where every
             member is held, offset o then at values[o]; starts: int32 Positions starts), which may be
             other ranks' memory mapped here (NVSHMEM); on the CPU a list of R (values, words, starts)
             tuples (words and starts None where every member is held)
    parent   int32 or int64 [b]  write  the found vertices' global parent ids (the others untouched)
    Device arrays of the backend; on the GPU the call returns with the kernel queued on the stream.
    """
    b, R = grid.block, grid.R
    if backend.is_gpu:
        # int32 marks only where they are the int32 parent array itself (a grid of one column)
        require_array("marker", marker, np.int32 if marker.dtype == parent.dtype == np.int32 else np.int16)
        _launch(backend, "resolve_columns", b, marker, entries, (np.int32(R), np.int32(first)), parent)
        return
    found = np.flatnonzero(marker == BOTTOM_UP)
    local = np.full(found.shape[0], -1, np.int64)
    finder = np.zeros(found.shape[0], np.int64)
    for k in range(R):
        p = (first + k) % R
        entry = held_entries(*entries[p], found)
        take = (local < 0) & (entry >= 0)
        local[take], finder[take] = entry[take], p
    parent[found] = np.where(local >= 0, grid.to_global_row(finder, local), -1)


def _launch(backend, kernel: str, b: int, marks, entries, scalars: tuple, parent) -> None:
    """kernels/predecessors.cu's `kernel` for the marks' dtype (int16, or the int32 parents themselves)
    and the parents' (_i16_i32, _i16_i64 or _i32_i32), a thread per owned vertex: (marks, values, b, words,
    starts, *scalars, parent), from the entries' three address arrays."""
    for name, addresses in zip(("values", "words", "starts"), entries):
        require_array(name, addresses, np.uint64)
    values, words, starts = entries
    suffix = f"{'i32' if marks.dtype == np.int32 else 'i16'}_{'i64' if parent.dtype == np.int64 else 'i32'}"
    backend.kernel("predecessors", f"{kernel}_{suffix}")(
        (blocks_for(b),), (BLOCK_THREADS,), (marks, values, np.int32(b), words, starts, *scalars, parent))
