"""The grid's search driven by the device (issue 29's "every rank's GPU drives its own search"): where every
exchange of a level is kernels alone (NVSHMEM) and the CUDA driver makes switch nodes, the grid loop
enqueues *rounds*, CUDA graphs each holding a switch node over every step the search can take next -- a
stretch of small top-down levels (dbfs.peer_levels), a bulk top-down level, a bulk bottom-up level, each
from either frontier queue and either form of the frontier -- and the device picks the body from the
control block (kernels/grid_rounds.cu round_pick). A bulk body ends by advancing the control block by
Beamer's rule on the level's global totals, which the ranks' kernels summed (round_advance); a stretch's
kernel leaves it advanced. So no decision waits for the host: every rank's rounds take the same bodies, as
the totals are the same on every rank.

As the one-GPU loop does with its rounds (dbfs.device_loop), the host keeps ROUNDS_AHEAD rounds queued and
waits on the older one alone; what the host reads of a round -- the control block after it (the body it
ran, the level, the frontier), the level's counters and totals, the heads of the messages it encoded --
a kernel copies into the round's pinned slot (round_status), and ROUND_GRAPHS captures rotate over the
slots, so a slot is read before its capture runs again. The phase marks of each body are its own (GraphMarks
per capture and body). Once a round reads DONE, the rounds queued behind it run no body.

Why (bench/NOTES.md, 2026-11-29, the grid's search driven by the device): sixteen PEs sharing one GPU
spent about half a search of Kronecker 22 between levels -- each level's launch (0.04-0.15 ms of host
time) and the tail from the level's last kernel to the host's wait returning -- while the GPU waited
for the host's next decision.
"""

from __future__ import annotations

import functools

import numpy as np

from dbfs import graph_conditionals
from dbfs.backend import abandon_capture
from dbfs.kernels import STEP
from dbfs.ops.grid_rounds import body_index, round_pick, round_status, slot_words
from dbfs.timing import GraphMarks

ROUND_GRAPHS = 3
ROUNDS_AHEAD = 2
BODY_CHOICES = body_index(STEP.BOTTOMUP, 1, 1) + 1


class Rounds:
    """The captured rounds of one grid loop. bodies: enqueue(mark) of each body (a step's kernels, with
    phase marks); table: int32 [BODY_CHOICES], the body of each (step, form, parity), len(bodies) where there
    is none; control: the loop's control block; status, totals: the pinned words a bulk level's totals
    hand to the host; frontier_message: the own frontier's encoded message (or None); fold: (messages,
    stride, C) of the fold's encoded messages (messages None: no fold)."""

    def __init__(self, backend, stream, bodies, table, control, status, totals, frontier_message, fold,
                 marks_capacity: int):
        self.backend, self.stream, self.bodies, self.control = backend, stream, bodies, control
        xp = backend.xp
        self.table = xp.asarray(np.asarray(table, np.int32))
        self.status, self.totals, self.frontier_message, self.fold = status, totals, frontier_message, fold
        self.slot_words = slot_words(fold[2])
        self.slots = backend.pinned_empty(ROUND_GRAPHS * self.slot_words, np.int64)
        self.marks = [[GraphMarks(backend, marks_capacity) for _ in bodies] for _ in range(ROUND_GRAPHS)]
        self.events = [xp.cuda.Event(disable_timing=True) for _ in range(ROUND_GRAPHS)]
        self.body_stream = xp.cuda.Stream(non_blocking=True)
        self.graphs = [self._capture(r) for r in range(ROUND_GRAPHS)]

    @staticmethod
    def available(backend) -> bool:
        return backend.is_gpu and graph_conditionals.available()

    def _capture(self, r: int):
        backend, stream = self.backend, self.stream
        launches = backend.launches
        stream.begin_capture()
        try:
            handle = graph_conditionals.switch_handle(stream)
            round_pick(backend, self.control, self.table, len(self.bodies), handle)
            graph_conditionals.switch(stream, handle, [functools.partial(self._body, r, b)
                                                       for b in range(len(self.bodies))], self.body_stream)
            messages, stride, C = self.fold
            round_status(backend, self.control, self.status, self.totals, self.frontier_message, messages, stride,
                         C, self.slot(r))
            graph = stream.end_capture()
        except (RuntimeError, OSError):
            abandon_capture(stream)
            raise
        finally:
            backend.launches = launches
        graph.upload(stream)
        return graph

    def _body(self, r: int, b: int) -> None:
        marks = self.marks[r][b]
        marks.restart()
        self.bodies[b](marks.switch)
        marks.switch(None)
        marks.copy_out(self.body_stream)

    def slot(self, k: int) -> np.ndarray:
        """Round k's pinned slot (dbfs.ops.grid_rounds: the control block first)."""
        r = k % ROUND_GRAPHS
        return self.slots[r * self.slot_words:(r + 1) * self.slot_words]

    def launch(self, k: int) -> None:
        """Enqueue round k (its capture k mod ROUND_GRAPHS, whose slot round k - ROUND_GRAPHS has left read)."""
        r = k % ROUND_GRAPHS
        self.graphs[r].launch(self.stream)
        self.events[r].record(self.stream)
        self.backend.launches += 1

    def wait(self, k: int) -> np.ndarray:
        """Wait for round k; returns its slot."""
        self.backend.sync(self.events[k % ROUND_GRAPHS])
        return self.slot(k)

    def marked(self, k: int, body: int):
        """The phase marks of round k's body (waited for)."""
        return self.marks[k % ROUND_GRAPHS][body].taken()
