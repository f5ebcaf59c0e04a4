"""Phase times of a search without synchronising the device: CUDA events on the search's stream.

A phase switch records an event (the GPU timestamps it when it reaches it in stream order); the
elapsed times between consecutive events are summed per phase once, after the search has been
synchronised anyway. Work replayed from a CUDA graph carries its own switches (GraphMarks: event-record
nodes captured with the graph); after each replay its phase times are charged to the search's clock.
On the CPU backend the same clock reads the host's perf_counter at each switch. Events are kept and
reused across searches.
"""

from __future__ import annotations

import time
from collections import defaultdict


class PhaseClock:
    def __init__(self, backend, phases):
        self.backend, self.phases = backend, tuple(phases)
        self._pool: list = []
        self._marks: list = []        # (phase or None, event or host time)
        self._charged = dict.fromkeys(self.phases, 0.0)

    def start(self) -> None:
        self._marks.clear()
        self._charged = dict.fromkeys(self.phases, 0.0)

    def switch(self, phase: str | None) -> None:
        """From here on, work is charged to `phase` (None: to no phase)."""
        if self.backend.is_gpu:
            if len(self._marks) == len(self._pool):
                self._pool.append(self.backend.xp.cuda.Event())
            event = self._pool[len(self._marks)]
            event.record()
            self._marks.append((phase, event))
        else:
            self._marks.append((phase, time.perf_counter()))

    def charge(self, seconds: dict) -> None:
        """Add phase times measured elsewhere (one replay of a graph's marks) to this search's."""
        for phase, value in seconds.items():
            self._charged[phase] += value

    def totals(self) -> dict:
        """Seconds per phase since start(); the stream must have been synchronised past the last
        switch."""
        return add_intervals(self._marks, self._elapsed, dict(self._charged))

    def _elapsed(self, begin, end) -> float:
        if self.backend.is_gpu:
            return event_seconds(self.backend, begin, end)
        return end - begin


class GraphMarks:
    """Phase switches captured into a CUDA graph on `stream`: each an event-record node that every
    replay records again. The last switch (to None) closes the captured work; `done` is its event."""

    def __init__(self, backend, stream):
        self.backend, self.stream = backend, stream
        self._marks: list = []

    def switch(self, phase: str | None) -> None:
        event = self.backend.xp.cuda.Event()
        self.backend.record_in_graph(event, self.stream)
        self._marks.append((phase, event))

    @property
    def done(self):
        return self._marks[-1][1]

    def seconds(self) -> dict:
        """Seconds per phase of the last replay, which must have finished (`done` waited for)."""
        return add_intervals(self._marks, lambda begin, end: event_seconds(self.backend, begin, end),
                             defaultdict(float))


class Untimed:
    """A clock that times nothing (work enqueued only to load its kernels)."""

    def switch(self, phase: str | None) -> None:
        pass


def add_intervals(marks, elapsed, totals: dict) -> dict:
    """totals[phase] += elapsed(begin, end) for each interval between consecutive marks (phase, stamp)
    charged to a phase; returns totals."""
    for (phase, begin), (_, end) in zip(marks, marks[1:]):
        if phase is not None:
            totals[phase] += elapsed(begin, end)
    return totals


def event_seconds(backend, begin, end) -> float:
    return backend.xp.cuda.get_elapsed_time(begin, end) / 1e3
