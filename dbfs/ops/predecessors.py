"""Delayed-predecessor resolution (paper 004, section 3.5): owned vertices' discoverer columns and the
discoverers' local predecessor columns -> global parent ids (resolve_parents, from gathered entries, or
resolve_rows_mapped, reading them in place). A vertex found bottom-up was found by one rank of the grid
row, whose entry is the only one set; where the bottom-up levels searched the CSC's columns, by one
rank of the grid column instead (resolve_columns, each grid row's entries a block held by position:
gathered, or read in place). GPU: kernels/predecessors.cu; NumPy twins below with the same contracts."""

from __future__ import annotations

import numpy as np

from dbfs.kernels import BLOCK_THREADS, BOTTOM_UP
from dbfs.ops.arrays import blocks_for, require_array
from dbfs.ops.sparse import held_entries


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


def resolve_columns(backend, grid, marker, entries, first: int, parent) -> None:
    """For every owned offset o with marker[o] == BOTTOM_UP: parent[o] = global id of local row r of grid
    row p, r = grid row p's entry for o, p the first grid row from `first` on (cyclically) whose entry
    is set; -1 where none is.

    marker   int32 [b]   read   BOTTOM_UP where a rank of the grid column found o bottom-up (pred_col,
                                or the parent array itself on a grid of one column)
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
        values, words, starts = entries
        for name, array in (("values", values), ("words", words), ("starts", starts)):
            require_array(name, array, np.uint64)
        _launch(backend, "resolve_columns", b, marker, values, (words, starts, np.int32(R), np.int32(first)),
                parent)
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


def _launch(backend, kernel: str, b: int, marks, table, scalars: tuple, parent) -> None:
    """kernels/predecessors.cu's `kernel` for the parents' dtype (_i32 or _i64), a thread per owned
    vertex: (marks, table, b, *scalars, parent), table the gathered entries or the peers' addresses."""
    require_array("marks", marks, np.int32)
    suffix = "i64" if parent.dtype == np.int64 else "i32"
    backend.kernel("predecessors", f"{kernel}_{suffix}")(
        (blocks_for(b),), (BLOCK_THREADS,), (marks, table, np.int32(b), *scalars, parent))
