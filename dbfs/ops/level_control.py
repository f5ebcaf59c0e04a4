"""Launch wrappers of kernels/level_control.cu and kernels/small_levels.cu, the device-driven search on
one GPU (dbfs.device_loop), with their NumPy twins.

start_search visits the root and fills the control block (visit_root: the root alone, on the rank of a
grid that owns it, dbfs.grid_loop); small_levels runs small top-down levels in
one persistent cooperative kernel; finish_level closes a bulk level (the control block advanced by
Beamer's rule; after a top-down level dbfs.ops.frontier has moved the new frontier back to queue 0).
The twins run the same steps on NumPy arrays with the same contract; the host mirrors nothing during
a GPU search.

Arrays (device, 1-D, C-contiguous), as held by dbfs.search_state.SearchState on a 1x1 grid:
  control  int64 [CTL_WORDS]   the control block (kernels CTL)
  stats    int64 [STAT_WORDS]  the bulk level's counters
  slots    int64 [SMALL_SCRATCH_WORDS]  the persistent kernel's level counters and hand-off (dbfs.kernels)
  q0, q1   int32 [s]           frontier queues (s: dbfs.graph.LocalGraph.group_slots); between levels
                               the frontier list is queue 0
  counts0, counts1  int32 [1]  their lengths
  visited  uint32 [b/32], level int32 [b], parent int32 [b], degree int32 [b]
  log      int64 [capacity * LOG_WORDS] per-level records (capacity 0: no log)
"""

from __future__ import annotations

import time

import numpy as np

from dbfs.direction import next_bottom_up
from dbfs.kernels import CTL, FORM, LOG_WORDS, ROOT, SMALL_MAX_DEGREE, SMALL_THREADS, STAT, STAT_WORDS, STEP
from dbfs.ops.arrays import require_offsets
from dbfs.ops.expand import _expand_numpy
from dbfs.ops.frontier import add_discoveries


def next_step(bottom_up: bool, nf_new: int, nf_old: int, mf_new: int, max_degree: int, mu_new: int,
              alpha: float, beta: float, n: int, small_edges: int) -> int:
    """NumPy twin of level_control.cuh next_step: the STEP value after a level."""
    if nf_new == 0:
        return STEP.DONE
    if next_bottom_up(bottom_up, nf_new, nf_old, mf_new, mu_new, alpha, beta, n):
        return STEP.BOTTOMUP
    return STEP.SMALL if mf_new <= small_edges and max_degree <= SMALL_MAX_DEGREE else STEP.TOPDOWN


def start_search(backend, control, q0, counts0, visited, level, parent, degree, root: int, total_degree: int,
                 small_edges: int) -> None:
    """Visit the root (offset root of the 1x1 block; the state must be reset) and fill the control
    block for level 1. One thread on the current stream."""
    if backend.is_gpu:
        backend.kernel("level_control", "start_search")(
            (1,), (1,), (control, q0, counts0, visited, level, parent, degree, np.int32(root),
                         np.int64(total_degree), np.int64(small_edges)))
        return
    visited[root >> 5] |= np.uint32(1 << (root & 31))
    level[root] = 0
    parent[root] = root
    q0[0] = root
    counts0[0] = 1
    d = int(degree[root])
    control[CTL.STEP] = STEP.SMALL if d <= small_edges and d <= SMALL_MAX_DEGREE else STEP.TOPDOWN
    control[CTL.LEVEL] = 1
    control[CTL.FRONTIER] = 1
    control[CTL.FRONTIER_EDGES] = d
    control[CTL.UNVISITED_EDGES] = total_degree - d
    control[CTL.VISITED] = 1
    control[CTL.FORM] = FORM.LIST
    control[CTL.LOGGED] = 0
    control[CTL.START_NS] = time.time_ns()


def visit_root(backend, visited, level, parent, queue, counts, root) -> None:
    """The root on its owner of a grid (the state reset), where `root` (int64, ROOT_WORDS, in device
    memory: dbfs.kernels.ROOT_VISIT) says it lies: visited bit of local row root[ROW], level[OFFSET] = 0,
    parent[OFFSET] = root[ID] (its global id; parent int32 or int64), the own frontier {OFFSET} in
    `queue` (an own group) with counts[GROUP] = 1. One thread on the current stream, the same launch for
    every root."""
    if backend.is_gpu:
        backend.kernel("level_control", "visit_root")(
            (1,), (1,), (visited, level, queue, counts, parent, np.int32(parent.dtype.itemsize == 8), root))
        return
    row, offset = int(root[ROOT.ROW]), int(root[ROOT.OFFSET])
    visited[row >> 5] |= np.uint32(1 << (row & 31))
    level[offset] = 0
    parent[offset] = root[ROOT.ID]
    queue[0] = offset
    counts[root[ROOT.GROUP]] = 1


def small_levels(backend, grid, col_ptr, row_idx, degree, q0, q1, counts0, visited, level, parent, control,
                 slots, log, alpha: float, beta: float, small_edges: int, solo_work: int) -> None:
    """Run top-down levels while the control block's step is SMALL (none otherwise); leave the
    frontier in queue 0 and the control block at the next step. grid: the 1x1 dbfs.grid.Grid.
    GPU: one cooperative launch (a block of SMALL_THREADS per multiprocessor) on the current stream;
    a level whose frontier vertices x SMALL_GROUP plus frontier edges are at most solo_work runs in one
    block (0: none). The twin's levels are the same either way (solo_work only says where they run)."""
    capacity = log.shape[0] // LOG_WORDS
    n = grid.n_vertices
    if backend.is_gpu:
        backend.kernel("small_levels", "small_levels", require_offsets("col_ptr", col_ptr))(
            (backend.multiprocessors,), (SMALL_THREADS,),
            (col_ptr, row_idx, degree, q0, q1, counts0, visited, level, parent, control, slots, log,
             np.int64(capacity), np.float64(alpha), np.float64(beta), np.int64(n), np.int64(small_edges),
             np.int64(solo_work)))
        return
    if int(control[CTL.STEP]) != STEP.SMALL:
        return
    lvl, nf, mf = (int(control[k]) for k in (CTL.LEVEL, CTL.FRONTIER, CTL.FRONTIER_EDGES))
    mu, logged = int(control[CTL.UNVISITED_EDGES]), int(control[CTL.LOGGED])
    visited_count = int(control[CTL.VISITED])
    cur, nxt = q0, q1
    step = STEP.SMALL
    while step == STEP.SMALL:
        fill = np.zeros(1, np.int32)
        counters = np.zeros(STAT_WORDS, np.int64)
        _expand_numpy(grid, 0, col_ptr, row_idx, cur[:nf], visited, level, parent, None, lvl, nxt, nxt, fill,
                      counters)
        add_discoveries(counters, degree[nxt[:int(fill[0])]])
        nf_new, mf_new = int(fill[0]), int(counters[STAT.DEGREES])
        mu -= mf_new
        visited_count += nf_new
        _log_level(log, capacity, logged, lvl - 1, False, nf, mf)
        logged += 1
        step = next_step(False, nf_new, nf, mf_new, int(counters[STAT.MAX_DEGREE]), mu, alpha, beta, n,
                         small_edges)
        nf, mf, lvl = nf_new, mf_new, lvl + 1
        cur, nxt = nxt, cur
    if cur is not q0:
        q0[:nf] = cur[:nf]
    counts0[0] = nf
    for word, value in ((CTL.STEP, step), (CTL.LEVEL, lvl), (CTL.FRONTIER, nf), (CTL.FRONTIER_EDGES, mf),
                        (CTL.UNVISITED_EDGES, mu), (CTL.VISITED, visited_count), (CTL.FORM, FORM.LIST),
                        (CTL.LOGGED, logged)):
        control[word] = value


def finish_level(backend, control, stats, counts0, counts1, log, alpha: float, beta: float, n: int,
                 small_edges: int) -> None:
    """After a bulk level (step TOPDOWN or BOTTOMUP; nothing otherwise): log it, advance the control
    block to the next step, clear the level's counters. One thread on the current stream."""
    capacity = log.shape[0] // LOG_WORDS
    if backend.is_gpu:
        backend.kernel("level_control", "finish_level")(
            (1,), (1,), (control, stats, counts0, counts1, log, np.int64(capacity), np.float64(alpha),
                         np.float64(beta), np.int64(n), np.int64(small_edges)))
        return
    step = int(control[CTL.STEP])
    if step not in (STEP.TOPDOWN, STEP.BOTTOMUP):
        return
    bottom_up = step == STEP.BOTTOMUP
    nf_old, lvl = int(control[CTL.FRONTIER]), int(control[CTL.LEVEL])
    nf = int(stats[STAT.COUNT])
    mf = int(stats[STAT.DEGREES])
    mu = int(control[CTL.UNVISITED_EDGES]) - mf
    _log_level(log, capacity, int(control[CTL.LOGGED]), lvl - 1, bottom_up, nf_old, int(stats[STAT.CHECKED]))
    control[CTL.LOGGED] += 1
    control[CTL.STEP] = next_step(bottom_up, nf, nf_old, mf, int(stats[STAT.MAX_DEGREE]), mu, alpha, beta, n,
                                  small_edges)
    control[CTL.LEVEL] = lvl + 1
    control[CTL.FRONTIER] = nf
    control[CTL.FRONTIER_EDGES] = mf
    control[CTL.UNVISITED_EDGES] = mu
    control[CTL.VISITED] += nf
    control[CTL.FORM] = FORM.BITS if bottom_up else FORM.LIST
    counts0[0] = 0 if bottom_up else nf
    counts1[0] = 0
    stats[:] = 0


def _log_level(log, capacity: int, logged: int, level: int, bottom_up: bool, frontier: int, edges: int):
    if logged < capacity:
        log[logged * LOG_WORDS:(logged + 1) * LOG_WORDS] = (level, int(bottom_up), frontier, edges,
                                                            time.time_ns())
