"""Progress of long phases on stderr (generation, reading, construction, the certificate, conversion),
from rank 0 only: nothing for work that ends within AFTER_S seconds; then, on a terminal, one bar
redrawn in place every EVERY_S seconds, and elsewhere (a Slurm log) a plain line with the percentage
every LINE_S seconds, so a log holds a few lines per phase, not hundreds."""

from __future__ import annotations

import sys
import time

from dbfs import runtime

AFTER_S = 2.0
EVERY_S = 0.5
LINE_S = 10.0
BAR = 30


class Progress:
    """Progress of `label` towards `total` units (None: unknown), shown as done / scale `unit`."""

    def __init__(self, label: str, total: int | None, unit: str = "M tuples", scale: float = 1e6):
        self.label, self.total, self.unit, self.scale = label, total, unit, scale
        self.start = self.last = time.perf_counter()
        self.show = runtime.rank() == 0
        self.tty = self.show and sys.stderr.isatty()
        self.shown = False
        self.done = 0

    def advance(self, amount: int) -> None:
        self.update(self.done + amount)

    def update(self, done: int) -> None:
        self.done = done
        if not self.show:
            return
        now = time.perf_counter()
        if now - self.start < AFTER_S or (self.shown and now - self.last < (EVERY_S if self.tty else LINE_S)):
            return
        self.last, self.shown = now, True
        digits = 0 if self.scale == 1 else 1
        rate = done / self.scale / max(now - self.start, 1e-9)
        amount = f"{done / self.scale:.{digits}f}"
        if self.total:
            fraction = min(1.0, done / self.total)
            filled = int(BAR * fraction)
            bar = f"[{'#' * filled}{'.' * (BAR - filled)}] " if self.tty else ""
            amount = f"{bar}{100 * fraction:3.0f}% {amount}/{self.total / self.scale:.{digits}f}"
        text = f"[dbfs] {self.label}: {amount} {self.unit} ({rate:.1f} {self.unit}/s)"
        sys.stderr.write("\r" + text if self.tty else text + "\n")
        sys.stderr.flush()

    def close(self) -> None:
        """End the bar's line on a terminal."""
        if self.shown and self.tty:
            sys.stderr.write("\n")
            sys.stderr.flush()
