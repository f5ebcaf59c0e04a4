"""Phase times of a search without synchronising the device: CUDA events on the search's stream.

A phase switch records an event (the GPU timestamps it when it reaches it in stream order); the
elapsed times between consecutive events are summed per phase once, after the search has been
synchronised anyway. Work replayed from a CUDA graph carries its own switches (GraphMarks: kernel
nodes that write the GPU's timer, copied to the host at the end of the replay); after each replay its
phase times are charged to the search's clock. Events are kept and reused across searches. A switch to
no phase where the clock is in none records nothing. A replay's marks are kept as they are
(MarkedTimes, read from the pinned copy only when asked or before the same marks' next replay) and
summed into phases only once the search has been timed, so the host's turn between two levels holds
none of it (bench/NOTES.md, 2026-11-26, the host's turn between levels).
On the CPU backend the same clock reads the host's perf_counter at each switch and adds the interval that
switch closes to its phase's running total: a mark a switch, kept until the next search, held about 490 B a
level, which the memory estimate cannot know (nor a search's depth; a 589-level lattice search held 288 kB,
bench/NOTES.md, 2026-11-29, the search's marks). There it keeps every switch's mark only in a search whose
per-level totals are asked for (start(per_level=True)).
"""

from __future__ import annotations

import time
from collections import defaultdict
from contextlib import nullcontext

import numpy as np

from dbfs.ops import host_words
from dbfs.ops.clock import stamp


class PhaseClock:
    def __init__(self, backend, phases):
        self.backend, self.phases = backend, tuple(phases)
        self._pool: list = []                   # the GPU's events, reused across searches
        self._marks: list = []                  # (phase or None, event or host time)
        self._marked: list = []                 # MarkedTimes of replays, summed by totals()
        self.start()

    def start(self, per_level: bool = False) -> None:
        """A search begins. per_level: totals(begin, end) will be asked, so the CPU keeps every switch's mark
        too (the GPU always does)."""
        self._marks.clear()
        self._keeps_marks = self.backend.is_gpu or per_level
        self._switches, self._running = 0, None
        self._since = 0.0                       # the CPU: the host time of the last switch
        self._charged = dict.fromkeys(self.phases, 0.0)     # charged, and on the CPU the intervals closed
        self._marked.clear()

    def switch(self, phase: str | None) -> None:
        """From here on, work is charged to `phase` (None: to no phase)."""
        if phase is None and self._running is None:
            return
        if self.backend.is_gpu:
            if len(self._marks) == len(self._pool):
                self._pool.append(self.backend.xp.cuda.Event())
            event = self._pool[len(self._marks)]
            event.record()
            self._marks.append((phase, event))
        else:
            now = time.perf_counter()
            if self._running is not None:
                self._charged[self._running] += now - self._since
            self._since = now
            if self._keeps_marks:
                self._marks.append((phase, now))
        self._switches += 1
        self._running = phase

    @property
    def marks(self) -> int:
        """The number of switches so far (a position for rewind and totals)."""
        return self._switches

    def rewind(self, marks: int) -> None:
        """Forget the switches after the first `marks` (work enqueued behind the search's end: the device
        loop's round in flight behind the last on the GPU). The CPU has none (each round has run before the
        next is enqueued) and cannot forget intervals it has summed."""
        if marks >= self._switches:
            return
        if not self.backend.is_gpu:
            raise ValueError(f"the CPU clock cannot forget switches already summed ({self._switches}, not {marks})")
        del self._marks[marks:]
        self._switches, self._running = marks, self._marks[-1][0] if self._marks else None

    def charge(self, seconds: dict) -> None:
        """Add phase times measured elsewhere (one replay of a graph's marks) to this search's."""
        for phase, value in seconds.items():
            self._charged[phase] += value

    def charge_marked(self, times: "MarkedTimes") -> None:
        """As `charge`, for a replay's marks as copied (summed when totals() asks)."""
        self._marked.append(times)

    def totals(self, begin: int = 0, end: int | None = None) -> dict:
        """Seconds per phase since start(), or of the intervals that switches begin to end - 1 opened
        (positions from `marks`; one level, say: on the CPU, in a search started per_level); the stream
        must have been synchronised past the last switch."""
        if begin == 0 and end is None:
            for times in self._marked:
                self.charge(times.seconds())
            self._marked.clear()
            if not self.backend.is_gpu:
                return dict(self._charged)
            return add_intervals(self._marks, self._elapsed, dict(self._charged))
        if not self._keeps_marks:
            raise ValueError("the CPU clock keeps the marks of a search's switches only when started per_level")
        return add_intervals(self._marks[begin:end + 1], self._elapsed, dict.fromkeys(self.phases, 0.0))

    def _elapsed(self, begin, end) -> float:
        if self.backend.is_gpu:
            return self.backend.xp.cuda.get_elapsed_time(begin, end) / 1e3
        return end - begin


class GraphMarks:
    """Phase switches captured into a CUDA graph: each a one-thread kernel node that writes the GPU's
    nanosecond timer into a device slot at every replay (dbfs.ops.clock.stamp; an event-record node
    cost the device three times as much, bench/NOTES.md, 2026-11-24, graphs not seen before); `copy_out`,
    captured after the last switch, copies the slots to pinned host memory, read once the replay has been
    waited for.
    flagged: the copy is the graph's last node and raises a pinned flag (host_words.copy_words), which
    `wait` polls instead of the stream (`arm` lowers it before each replay)."""

    def __init__(self, backend, capacity: int, flagged: bool = False):
        self.backend = backend
        self.device = backend.xp.zeros(capacity, np.int64)
        self.stamps = backend.pinned_empty(capacity, np.int64)
        self.flag = backend.pinned_empty(1, np.int64) if flagged and host_words.fits(self.device) else None
        self._phases: list = []
        self._taken: MarkedTimes | None = None    # the last replay's, until read

    def restart(self) -> None:
        """Before the work is enqueued again (captured after an eager run): its switches from the first
        (a new list: the MarkedTimes taken before keep theirs)."""
        self._phases = []

    def switch(self, phase: str | None) -> None:
        """A timer node where `phase` begins; none where that phase is already running (a node costs the
        graph a kernel launch)."""
        if self._phases and self._phases[-1] == phase:
            return
        stamp(self.backend, self.device, len(self._phases))
        self._phases.append(phase)

    def phase_ids(self, phases) -> np.ndarray:
        """The position in `phases` of the phase each switch so far began (-1: none), int32."""
        return np.array([-1 if phase is None else phases.index(phase) for phase in self._phases], np.int32)

    def copy_out(self, stream) -> None:
        if self.flag is None:
            self.backend.copy(self.stamps, self.device, stream)
            return
        with stream if stream is not None else nullcontext():
            host_words.copy_words(self.backend, self.stamps, self.device, self.flag)

    def arm(self) -> None:
        """Before a replay (that `wait` will wait for): the last replay's marks taken are read first."""
        if self._taken is not None:
            self._taken.read()
            self._taken = None
        if self.flag is not None:
            self.flag[0] = 0

    def wait(self) -> None:
        """Wait for the replay (armed) to end: on its flag where it raises one, else on the stream."""
        if self.flag is None:
            self.backend.sync()
        else:
            self.backend.wait_flag(self.flag)

    def taken(self) -> "MarkedTimes":
        """The last replay's marks (it must have finished), read from the pinned copy when first asked or
        before the next replay (`arm`)."""
        self._taken = MarkedTimes(self._phases, source=self.stamps)
        return self._taken

    def seconds(self) -> dict:
        """Seconds per phase of the last replay, which must have finished."""
        return self.taken().seconds()


class MarkedTimes:
    """One replay's phase switches and the GPU timer at each (nanoseconds): the stamps given, or read
    from `source` (a GraphMarks' pinned copy) when first asked."""

    __slots__ = ("phases", "_stamps", "_source")

    def __init__(self, phases: list, stamps: np.ndarray | None = None, source: np.ndarray | None = None):
        self.phases, self._stamps, self._source = phases, stamps, source

    def read(self) -> np.ndarray:
        if self._stamps is None:
            self._stamps, self._source = self._source[:len(self.phases)].copy(), None
        return self._stamps

    stamps = property(read)

    def seconds(self) -> dict:
        marks = zip(self.phases, self.stamps.tolist())
        return add_intervals(list(marks), lambda begin, end: (end - begin) / 1e9, defaultdict(float))


def add_intervals(marks, elapsed, totals: dict) -> dict:
    """totals[phase] += elapsed(begin, end) for each interval between consecutive marks (phase, stamp)
    charged to a phase; returns totals."""
    for (phase, begin), (_, end) in zip(marks, marks[1:]):
        if phase is not None:
            totals[phase] += elapsed(begin, end)
    return totals
