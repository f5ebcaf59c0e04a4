"""The level loop on one GPU (a 1x1 grid): the device drives itself, the host only enqueues.

Why this design (measured; bench/NOTES.md, 2026-11-24, the GPU drives the level loop). A level driven from the host cost ~150 us of
launches, count read-backs and synchronisations, so a 4096 x 4096 lattice (~6000 levels of a few
thousand vertices) ran slower than a 16-core CPU. Here the search's control state -- the level number,
the frontier's size, degree sum and form, the unvisited edges, the next step -- lives in a control
block in device memory, and every kernel reads its sizes and its gate from there:

- small top-down levels (at most `small_edges` frontier edges, no vertex of more than
  SMALL_MAX_DEGREE) run back to back inside one persistent cooperative kernel, a grid barrier between
  levels (kernels/small_levels.cu): a lattice search is a single launch; tiny levels (frontier
  vertices x SMALL_GROUP plus frontier edges at most `solo_work`) run in one block of it, a block
  barrier between them (a ladder's levels of a few vertices; bench/NOTES.md, 2026-11-24, tiny levels in one block);
- larger levels run as bulk levels with the load-balanced kernels of the multi-rank loop (top-down:
  degree scan and expansion, kernels/expand.cu; bottom-up: kernels/bottom_up.cu), launched with fixed
  grids that stride over device-held counts, and closed by a one-thread kernel that applies Beamer's
  rule and picks the next step (kernels/level_control.cu).

The host enqueues *rounds*: [frontier to list, small levels, bulk top-down level, frontier to bitmap,
bulk bottom-up level, finish]. Each kernel of a round runs only if the control block says its step is
next (the others return at once), so a round always advances the search by at least one level and the
host needs no decision of its own. Every kernel argument of a round is fixed for the loop's lifetime
(the control block carries what changes), so on a GPU the round is captured once into a CUDA graph,
with the copy of the control block to a pinned status slot at its end: replaying it costs the
host one graph launch (~15 us) where enqueuing its eleven kernels one by one cost ~360 us, which the
GPU waited for on every round whose levels are short (bench/NOTES.md, 2026-11-24, rounds replayed as CUDA graphs). Three captures
rotate over three status slots. The host keeps two rounds in flight and waits on the older round's
end only, so the GPU always has the next round queued. The search ends when a round's STEP word reads
DONE: its status slot holds the final control block, and the round queued behind it, which does
nothing, is not waited for (bench/NOTES.md, 2026-11-24, the capture fallback). Host synchronisations per search: one per round (a lattice:
1), counted in the per-level log.

Phase times: a captured round carries its own phase marks, kernel nodes that write the GPU's timer,
copied to the host with the control block and read after each replay (event-record nodes cost a
round 22 us of device time, bench/NOTES.md, 2026-11-24, the capture fallback); rounds enqueued kernel by kernel use CUDA
events (dbfs.timing). Per-level times come from the GPU's global timer, written by the kernels into
the per-level log. `round_graphs=False` enqueues every round kernel by kernel (for per-kernel
profiling), as does a GPU whose driver cannot capture the rounds (with a warning).
The CPU backend runs the same rounds with the NumPy twins and reads the control block directly.
"""

from __future__ import annotations

import time
from collections import deque
from contextlib import nullcontext
from typing import NamedTuple

import numpy as np

from dbfs import runtime
from dbfs.backend import abandon_capture
from dbfs.kernels import CTL, CTL_WORDS, FORM, LOG, LOG_WORDS, SMALL_THREADS, STEP
from dbfs.ops import bitmap, bottom_up
from dbfs.ops.expand import ExpandScratch, expand
from dbfs.ops.frontier import frontier_figures
from dbfs.ops.level_control import finish_level, small_levels, start_search
from dbfs.timing import GraphMarks

# Frontier edges up to which a top-down level runs in the persistent kernel: a 256^3 lattice ran 31.5 ms
# per search at 2^16 (~370 of its levels bulk rounds), 9.7 ms at 2^20; the 4096^2 lattice and
# Kronecker scale 26 did not move (bench/NOTES.md, 2026-11-24, the capture fallback).
DEFAULT_SMALL_EDGES = 1 << 20
# Work (frontier vertices x SMALL_GROUP + frontier edges) up to which a level runs in one block of the
# persistent kernel: about two passes of the block's lanes; 4096 gained nothing on a ladder and lost 3% on
# a 4096^2 lattice (bench/NOTES.md, 2026-11-24, tiny levels in one block).
DEFAULT_SOLO_WORK = 2 * SMALL_THREADS
ROUNDS_IN_FLIGHT = 2
STATUS_SLOTS = ROUNDS_IN_FLIGHT + 1           # pinned copies of the control block (and round graphs)
ROUND_MARKS = 8                               # phase marks of a captured round (six used)
TO_LIST = (1 << STEP.SMALL) | (1 << STEP.TOPDOWN)
TO_BITS = 1 << STEP.BOTTOMUP


def host_buffer_bytes() -> int:
    """The loop's pinned host buffers: the status slots."""
    return 8 * STATUS_SLOTS * CTL_WORDS


class Round(NamedTuple):
    """A launched round: the event that ends it (None: it has run), the control block as it ends there
    (a pinned status slot, or the block itself on the CPU), its captured phase marks, and the phase
    clock's mark count at its end (eager rounds)."""
    end: object
    control: np.ndarray
    marks: object
    clock_marks: int


class DeviceLoop:
    """Runs searches on a 1x1 grid's graph with a SearchState; `run(root, clock)` per search."""

    def __init__(self, graph, state, direction: str, alpha: float, beta: float, edges_per_thread: int,
                 small_edges: int = DEFAULT_SMALL_EDGES, round_graphs: bool = True,
                 solo_work: int = DEFAULT_SOLO_WORK):
        self.graph, self.state, self.backend = graph, state, graph.backend
        self.bottom_up = direction == "auto"
        self.alpha = alpha if self.bottom_up else 0.0
        self.beta, self.edges_per_thread, self.small_edges = beta, edges_per_thread, small_edges
        self.solo_work = solo_work
        self.total_degree = int(graph.degree.sum())
        self.scratch = ExpandScratch(state.cumul, state.tile_sums, state.columns, state.chunks)
        self.front = state.col_front if self.bottom_up else None
        self.status = self.backend.pinned_empty(STATUS_SLOTS * CTL_WORDS, np.int64)
        self.stream = self.backend.xp.cuda.Stream() if self.backend.is_gpu else None
        self.in_flight = ROUNDS_IN_FLIGHT if self.backend.is_gpu else 1
        self.rounds = self._captured_rounds() if self.backend.is_gpu and round_graphs else None

    def run(self, root: int, clock) -> dict:
        """One search from global vertex `root` (the state reset). Returns its time (from the root's
        visit to the round that ends the search, output in device memory), the control block's figures
        (depth, visited, unvisited edges) and the host waits by level. The round queued behind the last
        one does nothing and is neither waited for nor timed (the next reset is ordered after it)."""
        backend, s, g = self.backend, self.state, self.graph
        t_start = time.perf_counter()
        with self.stream if self.stream is not None else nullcontext():
            start_search(backend, s.control, s.queue0, s.counts0, s.visited, s.level, s.parent, g.degree, root,
                         self.total_degree, self.small_edges)
            waits, pending, launched, last_level = [], deque(), 0, 0
            while True:
                pending.append(self._launch_round(launched, clock))
                launched += 1
                if len(pending) < self.in_flight:
                    continue
                finished = pending.popleft()
                control = self._await_round(finished)
                step, level = int(control[CTL.STEP]), int(control[CTL.LEVEL])
                if backend.is_gpu:
                    waits.append(level)
                if step == STEP.DONE:
                    break
                if level <= last_level:
                    raise RuntimeError(f"device-driven search from {root} made no progress at level {level}")
                last_level = level
                self._charge(finished, clock)
        elapsed = time.perf_counter() - t_start
        self._charge(finished, clock)
        clock.rewind(finished.clock_marks)
        return {"time": elapsed, "levels": int(control[CTL.LEVEL]), "visited": int(control[CTL.VISITED]),
                "unvisited_edges": int(control[CTL.UNVISITED_EDGES]), "logged": int(control[CTL.LOGGED]),
                "start_ns": int(control[CTL.START_NS]), "waits": waits}

    def _slot(self, k: int) -> np.ndarray:
        return self.status[CTL_WORDS * (k % STATUS_SLOTS):CTL_WORDS * (k % STATUS_SLOTS + 1)]

    def _captured_rounds(self):
        """The captured rounds, or None (rounds enqueued kernel by kernel, with a warning) where this
        driver or CUDA cannot capture them: the search is the same, each short level slower."""
        try:
            return self._capture_rounds()
        except (RuntimeError, OSError) as error:    # CuPy's CUDA errors are RuntimeErrors
            abandon_capture(self.stream)
            runtime.warn(f"the level loop could not be captured as CUDA graphs ({error}); "
                         f"enqueuing its rounds kernel by kernel (about 0.3 ms more per round)")
            return None

    def _capture_rounds(self) -> list:
        """STATUS_SLOTS captured rounds (graph, its GraphMarks, the event recorded after each launch),
        round k copying the control block to status slot k. Each kernel is first launched once with the
        search marked over (all return at once), so that every module is loaded before the capture."""
        control = self.state.control
        control[CTL.STEP] = STEP.DONE
        with self.stream:
            self._enqueue_round(GraphMarks(self.backend, ROUND_MARKS))
        self.stream.synchronize()
        rounds = []
        for k in range(STATUS_SLOTS):
            marks = GraphMarks(self.backend, ROUND_MARKS)
            with self.stream:
                self.stream.begin_capture()
                self._enqueue_round(marks)
                marks.switch(None)
                marks.copy_out(self.stream)
                self.backend.copy(self._slot(k), control, self.stream)
                rounds.append((self.stream.end_capture(), marks, self.backend.xp.cuda.Event(disable_timing=True)))
        return rounds

    def _launch_round(self, k: int, clock) -> Round:
        """Round k on the device (on the CPU backend it has run when this returns)."""
        if self.rounds is not None:
            graph, marks, end = self.rounds[k % STATUS_SLOTS]
            graph.launch(self.stream)
            end.record(self.stream)
            return Round(end, self._slot(k), marks, 0)
        self._enqueue_round(clock)
        clock.switch(None)
        if not self.backend.is_gpu:
            return Round(None, self.state.control, None, clock.marks)
        slot = self._slot(k)
        self.state.control.get(out=slot, blocking=False)
        event = self.backend.xp.cuda.Event()
        event.record()
        return Round(event, slot, None, clock.marks)

    def _await_round(self, launched: Round) -> np.ndarray:
        """Wait for a launched round; the control block as it ended."""
        if launched.end is not None:
            self.backend.sync(launched.end)
        return launched.control

    @staticmethod
    def _charge(launched: Round, clock) -> None:
        """Add a finished round's phase times to the search's (a captured round's marks)."""
        if launched.marks is not None:
            clock.charge(launched.marks.seconds())

    def _enqueue_round(self, clock) -> None:
        backend, s, g, ctl = self.backend, self.state, self.graph, self.state.control
        grid = g.grid
        clock.switch("update")
        if self.bottom_up:
            bitmap.unpack(backend, self.front, s.queue0, s.counts0, control=ctl, steps=TO_LIST, form=FORM.BITS)
        clock.switch("expansion")
        small_levels(backend, grid, g.col_ptr, g.row_idx, g.degree, s.queue0, s.queue1, s.counts0, s.visited,
                     s.level, s.parent, ctl, s.slots, s.log, self.alpha, self.beta, self.small_edges,
                     self.solo_work)
        expand(backend, grid, 0, g.col_ptr, g.row_idx, s.queue0[:s.frontier_capacity], s.counts0, s.visited,
               s.level, s.pred_row, None, s.queue1, s.queue1, s.counts1, s.stats, self.scratch,
               edges_per_thread=self.edges_per_thread, control=ctl)
        clock.switch("update")
        frontier_figures(backend, s.queue1, s.counts1, g.degree, s.stats, copy_to=s.queue0, control=ctl)
        if self.bottom_up:
            bitmap.pack(backend, s.queue0, s.counts0, self.front, control=ctl, steps=TO_BITS, form=FORM.LIST)
            clock.switch("expansion")
            summary = bottom_up.summary_for(backend, self.front, s.front_summary, control=ctl)
            bottom_up.search_segment(backend, g.row_ptr, g.col_idx, 0, self.front, s.visited, s.segment,
                                     s.pred_row, s.stats, control=ctl, summary=summary)
            clock.switch("update")
            bottom_up.commit(backend, s.segment, s.visited, self.front, s.level, None, g.degree, 0, s.stats,
                             control=ctl)
        finish_level(backend, ctl, s.stats, s.counts0, s.counts1, s.log, self.alpha, self.beta,
                     grid.n_vertices, self.small_edges)

    def level_records(self, figures: dict) -> list[dict]:
        """The per-level log of the last search (with log_levels), host waits attributed to the last
        level finished when each wait returned."""
        n = min(figures["logged"], self.state.log_capacity)
        if figures["logged"] > n:
            runtime.log(f"the per-level log holds the first {n} of the search's {figures['logged']} levels")
        log = self.backend.asnumpy(self.state.log[:n * LOG_WORDS]).reshape(n, LOG_WORDS)
        waits = np.bincount(np.clip(np.asarray(figures["waits"], np.int64) - 2, 0, None),
                            minlength=max(n, 1))
        records, previous = [], figures["start_ns"]
        for row in log:
            level = int(row[LOG.LEVEL])
            records.append({"level": level, "direction": "bottomup" if row[LOG.DIRECTION] else "topdown",
                            "frontier": int(row[LOG.FRONTIER]), "edges": int(row[LOG.EDGES]),
                            "time": max(0, int(row[LOG.END_NS]) - previous) / 1e9,
                            "host_syncs": int(waits[level]) if level < waits.shape[0] else 0,
                            "bytes": 0, "bytes_raw": 0})
            previous = int(row[LOG.END_NS])
        return records
