"""Phase times of a search without synchronising the device: CUDA events on the search's stream.

A phase switch records an event (the GPU timestamps it when it reaches it in stream order); the
elapsed times between consecutive events are summed per phase once, after the search has been
synchronised anyway. On the CPU backend the same clock reads the host's perf_counter at each switch.
Events are kept and reused across searches.
"""

from __future__ import annotations

import time


class PhaseClock:
    def __init__(self, backend, phases):
        self.backend, self.phases = backend, tuple(phases)
        self._pool: list = []
        self._marks: list = []        # (phase or None, event or host time)

    def start(self) -> None:
        self._marks.clear()

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

    def totals(self) -> dict:
        """Seconds per phase since start(); the stream must have been synchronised past the last
        switch."""
        totals = dict.fromkeys(self.phases, 0.0)
        for (phase, begin), (_, end) in zip(self._marks, self._marks[1:]):
            if phase is not None:
                totals[phase] += self._elapsed(begin, end)
        return totals

    def _elapsed(self, begin, end) -> float:
        if self.backend.is_gpu:
            return self.backend.xp.cuda.get_elapsed_time(begin, end) / 1e3
        return end - begin
