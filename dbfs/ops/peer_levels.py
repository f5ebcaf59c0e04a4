"""Launch wrapper of kernels/peer_levels.cu: small top-down levels of rank (i, j) of an R x C grid run
back to back by one persistent cooperative grid per rank, the ranks' kernels putting their expand and
fold messages into each other's memory and deciding termination and direction together (paper 004,
Algorithm 2, sections 3.2-3.5; GPU-initiated messages). Its NumPy twin runs the same levels with the
same contract, the messages going through MPI on the grid's communicators. level_totals: a bulk level's
global totals summed the same way by one block per rank.

Arrays (device, 1-D, C-contiguous; state names as in dbfs.search_state):
  col_ptr int32/int64 [cols+1], row_idx int32 [nnz], degree int32 [b]    read   the CSC block (col_ptr
                                  held by the Positions graph.columns where given: ops.sparse.column_starts)
  own_list  int32 [s]             read/write  the own frontier (offsets) in, and out when the kernel ends
                                              (group j of a frontier queue, s = state.slots: a level finds
                                              at most the owned vertices with an edge)
  spare     int32 [s]             scratch     the other frontier list (group j of the other queue)
  own_count int32 [1]             read/write  its length
  visited uint32 [C*b/32], level int32 [b], pred_row int32 [C*b] (or at the rows' positions,
  state.row_positions), pred_col int16 [b] or None (one grid column)
                                  read/write  as the host-driven level writes them
  counters  int64 [counter_words(C)] scratch  the level's counters (rotating slots)
  ctl       int64 [CTL_WORDS]     read/write  in: where the search stands: LEVEL (the number of the level
                                              to discover), FRONTIER and FRONTIER_EDGES (the global
                                              frontier's size and degree sum, at most `capacity` and
                                              `edge_limit`),
                                              UNVISITED_EDGES, VISITED (vertices visited so far), LOGGED
                                              (the search's records in `log` so far); out, when the
                                              kernel ends: STEP (the next step: TOPDOWN, BOTTOMUP or
                                              DONE), LEVEL (the next level's number), FRONTIER,
                                              FRONTIER_EDGES, UNVISITED_EDGES, VISITED (global), LOGGED
                                              (levels run), START_NS, EXPAND_BYTES and FOLD_BYTES (the
                                              bytes of the stretch's expand and fold messages)
  rounds    uint64 [1]            read/write  the round of the first level, then the next stretch's
  stats     int64 [STAT_WORDS]    write       COUNT and DEGREES := the own frontier's; CHECKED += entries
  log       int64 [records * PEER_LOG_WORDS] write  one record per level run after the LOGGED ones, up
                                              to `records` (dbfs.kernels.PEER_LOG)
Nothing of a launch comes from the host but the control block, so a CUDA graph can replay it. `links`
holds the message buffers and peer tables (dbfs.peer_levels.PeerLinks; on the CPU backend the grid's
communicators).

Guarantees: levels lvl, lvl+1, ... are discovered exactly as the host-driven loop would discover them (each
vertex once, its level, pred_row and pred_col), for as long as the next step is a small top-down level (a
frontier of at most `capacity` vertices and `edge_limit` edges); then the new own frontier is in own_list.
Every rank runs the same levels. GPU: one cooperative launch on the current stream, returning when the search
leaves the small levels; every rank of the grid must launch it (the ranks' grids wait for each other, so all
must be resident at once: a rank takes its share of the GPU's multiprocessors, three quarters of it where
ranks share a GPU under CUDA MPS, whose clients' shares are rounded, and at most PEER_BLOCKS blocks).
"""

from __future__ import annotations

import os
import time

import numpy as np

from dbfs.kernels import (CTL, PEER_COUNTER_SLOTS, PEER_COUNTERS, PEER_LOG_AT, PEER_LOG_WORDS, PEER_REC,
                          PEER_RECORD_WORDS, PEER_THREADS, STAT, STEP)
from dbfs.ops.arrays import NULL, require_offsets
from dbfs.ops.expand import _expand_numpy
from dbfs.ops.frontier import publish_figures
from dbfs.ops.level_control import next_step
from dbfs.ops.sparse import held_args
from dbfs.ops.update import update_from_offsets


# The most blocks a rank's grid takes: a small level's chain of dependent loads is as long at any count
# (a level examines at most the stretch's capacity of entries, 2^16 a rank on average by default: two
# a thread here), while the grid barrier and the decision's polling cost every block's part; a lattice
# level on two H200 took 11.5 us at 32 blocks, 11.6-11.7 at 48, 11.8 at 64 and 12.4 at 132
# (bench/NOTES.md, 2026-11-26, the device-driven level's grid).
PEER_BLOCKS = 32


def shared_bytes(R: int, C: int) -> int:
    """The kernel's dynamic shared memory (8-byte words): where each grid row's list starts in the column
    frontier (R + 1), the fold entries per grid column (C), where the column peers' lists are (R)."""
    return 8 * (2 * R + 1 + C)


def counter_words(C: int) -> int:
    """The level's counters: PEER_COUNTER_SLOTS slots of PEER_COUNTERS and the fold entries per grid
    column."""
    return PEER_COUNTER_SLOTS * (len(PEER_COUNTERS) + C)


def blocks(backend, kernel) -> int:
    """The rank's grid: its share of the GPU, which for a CUDA MPS client is also at most its
    CUDA_MPS_ACTIVE_THREAD_PERCENTAGE of the multiprocessors (a block of PEER_THREADS fills one); three
    quarters of that when ranks share a GPU, whose clients' shares are rounded; at most PEER_BLOCKS."""
    resident = backend.resident_blocks(kernel, PEER_THREADS)
    percentage = os.environ.get("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE")
    if percentage:
        resident = min(resident, int(backend.multiprocessors * float(percentage) / 100))
    return min(PEER_BLOCKS, max(1, resident * 3 // 4) if backend.sharing > 1 or percentage else resident)


def peer_levels(backend, graph, state, links, own_list, spare, own_count, counters, ctl, rounds, log,
                capacity: int, edge_limit: int, alpha: float, beta: float) -> None:
    grid, i, j = graph.grid, graph.i, graph.j
    if backend.is_gpu:
        kernel = backend.kernel("peer_levels", "peer_levels", require_offsets("col_ptr", graph.col_ptr))
        kernel((blocks(backend, kernel),), (PEER_THREADS,),
               (graph.col_ptr, *held_args(graph.columns), graph.row_idx, graph.degree, own_list, spare, own_count,
                state.visited, state.level, state.pred_row, *held_args(state.row_positions),
                state.pred_col if state.pred_col is not None else NULL, counters,
                *links.kernel_args(own_list), ctl, rounds, state.stats, log, np.int64(log.shape[0] // PEER_LOG_WORDS),
                np.int32(i), np.int32(j), np.int32(grid.R), np.int32(grid.C), np.int32(grid.size),
                np.int32(grid.block), np.int64(capacity), np.int64(edge_limit), np.float64(alpha),
                np.float64(beta), np.int64(grid.n_vertices)),
               shared_mem=shared_bytes(grid.R, grid.C))
        return
    _peer_levels_numpy(graph, state, links, own_list, own_count, ctl, rounds, log, capacity, edge_limit, alpha,
                       beta)


def level_totals(backend, stats, record_out, records, rounds, totals, status) -> None:
    """A bulk level's global new frontier size and degree sum, summed on every rank by the ranks' own
    kernels (kernels/peer_levels.cu level_totals), and the level's counters handed to the host:

      stats       int64 [STAT_WORDS]              read/write  this rank's level counters (COUNT, DEGREES:
                                                              its new frontier), cleared for the next level
      record_out  uint64 [P]                      read        GPU: the address of this rank's record
                                                              (records' slot `rank`) on each rank p
      records     int64 [2 * P * PEER_RECORD_WORDS] read      every rank's record of a round, two halves by
                                                              the round's parity (written by the ranks)
      rounds      uint64 [1]                      read/write  the rounds so far, advanced by one
      totals      int64 [2], pinned host          write       the sums over the P ranks
      status      int64 [STAT_WORDS], pinned host write       the counters as they were
    GPU: one block on the current stream, writing the host arrays through their mapped addresses; every
    rank must launch it (each waits for all). NumPy: record_out a list of views, each from this rank's
    slot of one rank's records on, and every other rank's record of the round already in `records`
    (RuntimeError otherwise)."""
    if backend.is_gpu:
        threads = min(1024, max(32, -(-len(record_out) // 32) * 32))
        backend.kernel("peer_levels", "level_totals")(
            (1,), (threads,), (stats, record_out, records, np.int32(len(record_out)), rounds,
                               np.uint64(totals.ctypes.data), np.uint64(status.ctypes.data)))
        return
    P, round_ = len(record_out), int(rounds[0]) + 1
    half = (round_ & 1) * P * PEER_RECORD_WORDS
    for slot in record_out:
        slot[half + PEER_REC.COUNT], slot[half + PEER_REC.DEGREES] = stats[STAT.COUNT], stats[STAT.DEGREES]
        slot[half + PEER_REC.ROUND] = round_
    table = records[half:half + P * PEER_RECORD_WORDS].reshape(P, PEER_RECORD_WORDS)
    late = np.flatnonzero(table[:, PEER_REC.ROUND] != round_)
    if late.size:
        raise RuntimeError(f"the records of ranks {late.tolist()} are not of round {round_}")
    totals[0], totals[1] = table[:, PEER_REC.COUNT].sum(), table[:, PEER_REC.DEGREES].sum()
    publish_figures(backend, stats, status)
    rounds[0] = round_


def _peer_levels_numpy(graph, state, comms, own_list, own_count, ctl, rounds, log, capacity, edge_limit, alpha,
                       beta) -> None:
    grid, i, j = graph.grid, graph.i, graph.j
    lvl, nf, mf, mu, visited, first_record = (int(ctl[word]) for word in (
        CTL.LEVEL, CTL.FRONTIER, CTL.FRONTIER_EDGES, CTL.UNVISITED_EDGES, CTL.VISITED, CTL.LOGGED))
    ctl[CTL.START_NS] = time.perf_counter_ns()
    own = own_list[:int(own_count[0])].copy()
    step, logged, checked_total, expand_bytes, fold_bytes = STEP.SMALL, 0, 0, 0, 0
    segment = state.segment_slots or 0
    others = np.zeros((grid.C - 1) * segment, np.int32)    # the other owners' groups, packed as the state's
    mine = np.zeros(state.slots, np.int32)

    def group(m: int):
        k = m - (m > j)
        return mine if m == j else others[k * segment:(k + 1) * segment]
    fill = np.zeros(grid.C, np.int32)
    while step == STEP.SMALL:
        lists = comms.col.allgather(own)                       # entry p: grid row p's frontier
        marks = [time.perf_counter_ns()]
        columns = np.concatenate([grid.owned_col(p, np.asarray(lst, np.int64)) for p, lst in enumerate(lists)])
        fill[:] = 0
        checked = np.zeros_like(state.stats)
        _expand_numpy(grid, j, graph.col_ptr, graph.row_idx, columns, state.visited, state.level, state.pred_row,
                      state.pred_col, lvl, others, mine, fill, checked, state.row_positions, graph.columns)
        outgoing = [group(m)[:fill[m]].copy() for m in range(grid.C)]
        marks.append(time.perf_counter_ns())
        received = [(m, offsets) for m, offsets in enumerate(comms.row.alltoall(outgoing)) if m != j]
        marks.append(time.perf_counter_ns())
        if received:
            update_from_offsets(grid, j, np.concatenate([np.full(len(o), m, np.int32) for m, o in received]),
                                np.concatenate([o for _, o in received]).astype(np.int64), state.visited,
                                state.level, state.pred_col, lvl, mine, fill)
        own = mine[:fill[j]].copy()
        degrees = int(graph.degree[own].sum())
        marks.append(time.perf_counter_ns())
        nf_new, mf_new = (int(x) for x in comms.world.allreduce(np.array([own.size, degrees], np.int64)))
        level_expand = 4 * len(lists[i]) * (grid.R - 1)
        level_fold = 4 * sum(len(o) for m, o in enumerate(outgoing) if m != j)
        expand_bytes, fold_bytes = expand_bytes + level_expand, fold_bytes + level_fold
        record = first_record + logged
        if record < log.shape[0] // PEER_LOG_WORDS:
            entry = log[record * PEER_LOG_WORDS:(record + 1) * PEER_LOG_WORDS]
            entry[PEER_LOG_AT.LEVEL], entry[PEER_LOG_AT.FRONTIER], entry[PEER_LOG_AT.EDGES] = lvl - 1, nf, mf
            entry[PEER_LOG_AT.CHECKED] = checked[STAT.CHECKED]
            entry[PEER_LOG_AT.EXPAND_BYTES], entry[PEER_LOG_AT.FOLD_BYTES] = level_expand, level_fold
            marks.append(time.perf_counter_ns())
            for name, mark in zip(("WAITED_NS", "EXPANDED_NS", "FOLDED_NS", "UPDATED_NS", "END_NS"), marks):
                entry[getattr(PEER_LOG_AT, name)] = mark
        mu -= mf_new
        visited += nf_new
        step = next_step(False, nf_new, nf, mf_new, 0, mu, alpha, beta, grid.n_vertices, edge_limit)
        if nf_new > capacity and step == STEP.SMALL:
            step = STEP.TOPDOWN
        nf, mf, lvl, logged = nf_new, mf_new, lvl + 1, logged + 1
        checked_total += int(checked[STAT.CHECKED])
    own_list[:own.size] = own
    own_count[0] = own.size
    state.stats[STAT.COUNT], state.stats[STAT.DEGREES] = own.size, degrees
    state.stats[STAT.CHECKED] += checked_total
    for word, value in ((CTL.STEP, step), (CTL.LEVEL, lvl), (CTL.FRONTIER, nf), (CTL.FRONTIER_EDGES, mf),
                        (CTL.UNVISITED_EDGES, mu), (CTL.VISITED, visited), (CTL.LOGGED, logged),
                        (CTL.EXPAND_BYTES, expand_bytes), (CTL.FOLD_BYTES, fold_bytes)):
        ctl[word] = value
    rounds[0] += logged + 1
