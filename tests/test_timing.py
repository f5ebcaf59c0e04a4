"""dbfs.timing on the CPU backend: phase switches summed as they close, and replay marks charged after the
search."""

import itertools
import tracemalloc
from types import SimpleNamespace

import numpy as np
import pytest

from dbfs import timing
from dbfs.backend import Backend
from dbfs.ops.host_words import KERNEL_COPY_BYTES
from dbfs.timing import GraphMarks, MarkedTimes, PhaseClock

pytestmark = pytest.mark.one_rank

CPU = Backend("cpu")


def test_a_switch_to_no_phase_from_none_records_nothing():
    clock = PhaseClock(CPU, ("expansion", "update"))
    clock.start()
    clock.switch(None)
    clock.switch(None)
    assert clock.marks == 0
    clock.switch("expansion")
    clock.switch("expansion")
    assert clock.marks == 2
    clock.switch(None)
    clock.switch(None)
    assert clock.marks == 3
    totals = clock.totals()
    assert totals["expansion"] > 0 and totals["update"] == 0


def host_clock_ticking(monkeypatch, seconds: float) -> None:
    """The clock's host time advances by `seconds` at each reading."""
    ticks = itertools.count()
    monkeypatch.setattr(timing, "time", SimpleNamespace(perf_counter=lambda: next(ticks) * seconds))


def test_a_cpu_clock_holds_nothing_a_switch_and_sums_every_interval(monkeypatch):
    """A deep search's switches must not grow the CPU clock: a mark a switch held about 490 B a level, which
    the memory estimate cannot know. Quarter seconds keep the sums exact."""
    host_clock_ticking(monkeypatch, 0.25)
    clock = PhaseClock(CPU, ("expansion", "update"))
    clock.start()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(10_000):
            clock.switch("expansion")
            clock.switch("update")
        clock.switch(None)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < 4096 and clock.marks == 20_001
    assert clock.totals() == {"expansion": 2500.0, "update": 2500.0}


def test_a_cpu_clock_started_per_level_keeps_its_marks_for_the_levels_totals(monkeypatch):
    """Per-level totals (the grid loop's --log-levels rows) come from the marks, which a search started
    per_level keeps; the running totals are those marks' intervals summed in the same order, to the bit
    (tenths of a second are inexact, so another order could differ)."""
    host_clock_ticking(monkeypatch, 0.1)
    clock = PhaseClock(CPU, ("expansion", "update"))
    clock.start(per_level=True)
    levels = []
    for _ in range(3):
        first = clock.marks
        clock.switch("expansion")
        clock.switch("update")
        levels.append((first, clock.marks))
    clock.switch(None)
    per_level = [clock.totals(first, end) for first, end in levels]
    assert per_level == [pytest.approx({"expansion": 0.1, "update": 0.1})] * 3
    assert clock.totals() == clock.totals(0, clock.marks)
    assert clock.totals()["update"] == sum(level["update"] for level in per_level)
    clock.rewind(clock.marks)
    with pytest.raises(ValueError):
        clock.rewind(2)
    clock.start()
    clock.switch("expansion")
    with pytest.raises(ValueError):
        clock.totals(0, 1)


def test_marked_times_are_summed_into_the_totals_once():
    clock = PhaseClock(CPU, ("expansion", "update"))
    clock.start()
    times = MarkedTimes(["expansion", "update", None], np.array([1_000, 4_000, 10_000], np.int64))
    assert times.seconds() == pytest.approx({"expansion": 3e-6, "update": 6e-6})
    clock.charge_marked(times)
    clock.charge_marked(times)
    assert clock.totals() == pytest.approx({"expansion": 6e-6, "update": 12e-6})
    clock.start()
    assert clock.totals() == {"expansion": 0.0, "update": 0.0}


def test_graph_marks_stamp_only_where_the_phase_changes():
    """A switch to the phase already running adds no timer node (a kernel launch in a graph)."""
    marks = GraphMarks(CPU, 4)
    for phase in ("expansion", "expansion", "update", "update", None):
        marks.switch(phase)
    marks.copy_out(None)
    times = marks.taken()
    assert times.phases == ["expansion", "update", None] and times.stamps.shape == (3,)
    seconds = times.seconds()
    assert set(seconds) == {"expansion", "update"} and min(seconds.values()) >= 0


def test_taken_marks_keep_their_replay_once_the_marks_are_armed_again():
    """Marks taken are read from the pinned copy when first asked, off the host's turn, but never after
    the same marks are armed for their next replay, which writes that copy again."""
    marks = GraphMarks(CPU, 4)
    marks.switch("expansion")
    marks.switch(None)
    marks.copy_out(None)
    first = marks.taken()
    replayed = marks.stamps[:2].copy()
    marks.arm()
    marks.stamps[:2] = replayed + 1_000
    assert first.stamps.tolist() == replayed.tolist() and first.phases == ["expansion", None]


def test_flagged_marks_raise_their_flag_with_the_copy_and_arm_lowers_it():
    """A flagged replay's end is its flag (the CPU twin raises it as it copies); `wait` returns on it, and
    marks too large for a kernel's copy wait on the stream instead."""
    marks = GraphMarks(CPU, 4, flagged=True)
    marks.switch("expansion")
    marks.switch(None)
    marks.arm()
    assert marks.flag[0] == 0
    marks.copy_out(None)
    assert marks.flag[0] == 1
    syncs = CPU.host_syncs
    marks.wait()
    assert CPU.host_syncs == syncs + 1 and marks.taken().phases == ["expansion", None]
    assert GraphMarks(CPU, 4).flag is None
    assert GraphMarks(CPU, KERNEL_COPY_BYTES // 8 + 1, flagged=True).flag is None
