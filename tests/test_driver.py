"""The benchmark driver (dbfs.harness.drive): the hooks in the Graph500 order, every search validated,
and Python's cyclic collector kept out of the searches (run before each, off during it, back on after)."""

import gc
from types import SimpleNamespace

import pytest

from dbfs.harness import Benchmark, drive

pytestmark = pytest.mark.one_rank


class Probe(Benchmark):
    """Records each hook's call and whether the collector was on during each search."""

    def __init__(self):
        self.calls, self.collector_on = [], []

    def build(self):
        self.calls.append("build")
        return {"construction_time": 0.0}

    def trials(self):
        return [3, 5]

    def search(self, trial):
        self.calls.append(f"search {trial}")
        self.collector_on.append(gc.isenabled())
        return SimpleNamespace(time=0.001)

    def validate(self, trial, outcome):
        self.calls.append(f"validate {trial}")
        return None

    def label(self, trial):
        return f"root {trial}"

    def record(self, trial, outcome):
        return {"root": trial, "time": outcome.time}

    def progress(self, index, count, trial, record):
        return f"search {index + 1}/{count}"

    def report(self, run):
        self.calls.append("report")


def test_hooks_in_order_and_the_collector_off_in_each_timed_search():
    probe = Probe()
    assert gc.isenabled()
    run = drive(probe)
    assert probe.calls == ["build", "search 3", "validate 3", "search 3", "validate 3", "search 5",
                           "validate 5", "report"]
    # the warm-up search is not timed; the timed ones ran with the collector off
    assert probe.collector_on[1:] == [False, False] and gc.isenabled()
    assert [r["validated"] for r in run.records] == [True, True]
