"""The level loop on one GPU (a 1x1 grid): the device drives itself, the host only enqueues.

Why this design (measured; bench/NOTES.md, session 5). A level driven from the host cost ~150 us of
launches, count read-backs and synchronisations, so a 4096 x 4096 lattice (~6000 levels of a few
thousand vertices) ran slower than a 16-core CPU. Here the search's control state -- the level number,
the frontier's size, degree sum and form, the unvisited edges, the next step -- lives in a control
block in device memory, and every kernel reads its sizes and its gate from there:

- small top-down levels (at most `small_edges` frontier edges, no vertex of more than
  SMALL_MAX_DEGREE) run back to back inside one persistent cooperative kernel, a grid barrier between
  levels (kernels/small_levels.cu): a lattice search is a single launch;
- larger levels run as bulk levels with the load-balanced kernels of the multi-rank loop (top-down:
  degree scan and expansion, kernels/expand.cu; bottom-up: kernels/bottom_up.cu), launched with fixed
  grids that stride over device-held counts, and closed by a one-thread kernel that applies Beamer's
  rule and picks the next step (kernels/level_control.cu).

The host enqueues *rounds*: [frontier to list, small levels, bulk top-down level, frontier to bitmap,
bulk bottom-up level, finish]. Each kernel of a round runs only if the control block says its step is
next (the others return at once), so a round always advances the search by at least one level and the
host needs no decision of its own. Every kernel argument of a round is fixed for the loop's lifetime
(the control block carries what changes), so on a GPU the round is captured once into a CUDA graph,
with the copy of the STEP and LEVEL words to a pinned status slot at its end: replaying it costs the
host one graph launch (~15 us) where enqueuing its eleven kernels one by one cost ~360 us, which the
GPU waited for on every round whose levels are short (bench/NOTES.md, session 6). Three captures
rotate over three status slots. The host keeps two rounds in flight and waits on the older round's
end only, so the GPU always has the next round queued. The search ends when a round's STEP word reads
DONE; the round queued behind it does nothing. Host synchronisations per search: one per round (a
lattice: 2), counted in the per-level log.

Phase times come from CUDA events (dbfs.timing; a captured round carries its own event-record nodes,
read after each replay); per-level times from the GPU's global timer, written by the kernels into the
per-level log. `round_graphs=False` enqueues every round kernel by kernel (for per-kernel profiling).
The CPU backend runs the same rounds with the NumPy twins and reads the STEP word directly.
"""

from __future__ import annotations

from collections import deque
from contextlib import nullcontext

import numpy as np

from dbfs.kernels import CTL, CTL_WORDS, FORM, LOG, LOG_WORDS, STEP
from dbfs.ops import bitmap, bottom_up
from dbfs.ops.expand import ExpandScratch, expand
from dbfs.ops.frontier import frontier_figures
from dbfs.ops.level_control import finish_level, small_levels, start_search
from dbfs.timing import GraphMarks, Untimed

# Frontier edges below which a top-down level runs in the persistent kernel (bench/NOTES.md, session 5).
DEFAULT_SMALL_EDGES = 1 << 16
ROUNDS_IN_FLIGHT = 2
STATUS_SLOTS = ROUNDS_IN_FLIGHT + 1           # pinned copies of the STEP and LEVEL words (and round graphs)
TO_LIST = (1 << STEP.SMALL) | (1 << STEP.TOPDOWN)
TO_BITS = 1 << STEP.BOTTOMUP


def host_buffer_bytes() -> int:
    """The loop's pinned host buffers (the status slots and the final control block)."""
    return 8 * (2 * STATUS_SLOTS + CTL_WORDS)


class DeviceLoop:
    """Runs searches on a 1x1 grid's graph with a SearchState; `run(root, clock)` per search."""

    def __init__(self, graph, state, direction: str, alpha: float, beta: float, edges_per_thread: int,
                 small_edges: int = DEFAULT_SMALL_EDGES, round_graphs: bool = True):
        self.graph, self.state, self.backend = graph, state, graph.backend
        self.bottom_up = direction == "auto"
        self.alpha = alpha if self.bottom_up else 0.0
        self.beta, self.edges_per_thread, self.small_edges = beta, edges_per_thread, small_edges
        self.total_degree = int(graph.degree.sum())
        self.scratch = ExpandScratch(state.cumul, state.tile_sums, state.columns, state.chunks)
        self.front = state.col_front if self.bottom_up else None
        self.status = self.backend.pinned_empty(STATUS_SLOTS * 2, np.int64)
        self.final = self.backend.pinned_empty(CTL_WORDS, np.int64)
        self.stream = self.backend.xp.cuda.Stream() if self.backend.is_gpu else None
        self.in_flight = ROUNDS_IN_FLIGHT if self.backend.is_gpu else 1
        self.rounds = self._capture_rounds() if self.backend.is_gpu and round_graphs else None

    def run(self, root: int, clock) -> dict:
        """One search from global vertex `root` (the state reset). Returns the control block's
        figures (depth, visited, unvisited edges) and the host waits by level."""
        backend, s, g = self.backend, self.state, self.graph
        with self.stream if self.stream is not None else nullcontext():
            start_search(backend, s.control, s.queue0, s.counts0, s.visited, s.level, s.parent, g.degree, root,
                         self.total_degree, self.small_edges)
            waits, pending, launched, last_level = [], deque(), 0, 0
            while True:
                pending.append(self._launch_round(launched, clock))
                launched += 1
                if len(pending) < self.in_flight:
                    continue
                step, level = self._await_round(pending.popleft(), clock)
                if backend.is_gpu:
                    waits.append(level)
                if step == STEP.DONE:
                    break
                if level <= last_level:
                    raise RuntimeError(f"device-driven search from {root} made no progress at level {level}")
                last_level = level
            clock.switch(None)
            control = backend.read(s.control, self.final)
        for _event, _slot, marks in pending:       # finished: the read waited for the stream
            if marks is not None:
                clock.charge(marks.seconds())
        return {"levels": int(control[CTL.LEVEL]), "visited": int(control[CTL.VISITED]),
                "unvisited_edges": int(control[CTL.UNVISITED_EDGES]), "logged": int(control[CTL.LOGGED]),
                "start_ns": int(control[CTL.START_NS]), "waits": waits}

    def _slot(self, k: int) -> np.ndarray:
        return self.status[2 * (k % STATUS_SLOTS):2 * (k % STATUS_SLOTS) + 2]

    def _capture_rounds(self) -> list:
        """STATUS_SLOTS captured rounds (graph, its GraphMarks), round k copying the STEP and LEVEL words
        to status slot k. Each kernel is first launched once with the search marked over (all return at
        once), so that every module is loaded before the capture."""
        control = self.state.control
        control[CTL.STEP] = STEP.DONE
        with self.stream:
            self._enqueue_round(Untimed())
        self.stream.synchronize()
        rounds = []
        for k in range(STATUS_SLOTS):
            marks = GraphMarks(self.backend, self.stream)
            with self.stream:
                self.stream.begin_capture()
                self._enqueue_round(marks)
                self.backend.copy_to_host_async(self._slot(k), control[:2], self.stream)   # CTL.STEP, CTL.LEVEL
                marks.switch(None)
                rounds.append((self.stream.end_capture(), marks))
        return rounds

    def _launch_round(self, k: int, clock):
        """Round k on the device: (its end event, its status slot, its GraphMarks or None); None on
        the CPU backend, where the round has already run."""
        if self.rounds is not None:
            graph, marks = self.rounds[k % STATUS_SLOTS]
            graph.launch(self.stream)
            return marks.done, self._slot(k), marks
        self._enqueue_round(clock)
        if not self.backend.is_gpu:
            return None
        slot = self._slot(k)
        self.state.control[:2].get(out=slot, blocking=False)   # CTL.STEP, CTL.LEVEL
        event = self.backend.xp.cuda.Event()
        event.record()
        return event, slot, None

    def _await_round(self, launched, clock) -> tuple[int, int]:
        """Wait for a launched round; its STEP and LEVEL words."""
        if launched is None:
            return int(self.state.control[CTL.STEP]), int(self.state.control[CTL.LEVEL])
        event, slot, marks = launched
        self.backend.sync(event)
        if marks is not None:
            clock.charge(marks.seconds())
        return int(slot[0]), int(slot[1])

    def _enqueue_round(self, clock) -> None:
        backend, s, g, ctl = self.backend, self.state, self.graph, self.state.control
        grid = g.grid
        clock.switch("update")
        if self.bottom_up:
            bitmap.unpack(backend, self.front, s.queue0, s.counts0, control=ctl, steps=TO_LIST, form=FORM.BITS)
        clock.switch("expansion")
        small_levels(backend, grid, g.col_ptr, g.row_idx, g.degree, s.queue0, s.queue1, s.counts0, s.visited,
                     s.level, s.parent, ctl, s.slots, s.log, self.alpha, self.beta, self.small_edges)
        expand(backend, grid, 0, g.col_ptr, g.row_idx, s.queue0, s.counts0, s.visited, s.level, s.pred_row,
               None, s.queue1, s.counts1, s.stats, self.scratch, edges_per_thread=self.edges_per_thread,
               control=ctl)
        clock.switch("update")
        frontier_figures(backend, s.queue1, s.counts1, g.degree, s.stats, copy_to=s.queue0, control=ctl)
        if self.bottom_up:
            bitmap.pack(backend, s.queue0, s.counts0, self.front, control=ctl, steps=TO_BITS, form=FORM.LIST)
            clock.switch("expansion")
            bottom_up.search_segment(backend, g.row_ptr, g.col_idx, 0, self.front, s.visited, s.segment,
                                     s.pred_row, s.stats, control=ctl)
            clock.switch("update")
            bottom_up.commit(backend, s.segment, s.visited, self.front, s.level, None, g.degree, 0, s.stats,
                             control=ctl)
        finish_level(backend, ctl, s.stats, s.counts0, s.counts1, s.log, self.alpha, self.beta,
                     grid.n_vertices, self.small_edges)

    def level_records(self, figures: dict) -> list[dict]:
        """The per-level log of the last search (with log_levels), host waits attributed to the last
        level finished when each wait returned."""
        n = min(figures["logged"], self.state.log_capacity)
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
