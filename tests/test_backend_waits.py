"""A rank's host waits (Backend.sync): they spin in CUDA's synchronise, except where several ranks of
this node are as many as the CPUs they may run on (waits_yield, runtime.node_cpus), where they poll and
give the core away between polls, so the other processes' threads need not preempt a rank that the others
wait for."""

import os

import pytest

from dbfs import runtime
from dbfs.backend import FLAG_QUERY_POLLS, Backend, waits_yield

pytestmark = pytest.mark.one_rank


@pytest.mark.parametrize("ranks,cores,expected", [(1, 16, False), (4, 16, False), (15, 16, False),
                                                  (16, 16, True), (17, 16, True), (2, 2, True),
                                                  (1, 1, False)])   # a rank alone (bound to a core)
def test_waits_yield_where_the_ranks_fill_the_cores(ranks, cores, expected):
    assert waits_yield(ranks, cores) is expected


def test_node_cpus_are_the_processes_affinity():
    """The union of the node's processes' affinities: on one process its own."""
    if runtime.local_rank()[1] == 1:
        assert runtime.node_cpus() == len(os.sched_getaffinity(0))
    else:
        assert len(os.sched_getaffinity(0)) <= runtime.node_cpus() <= (os.cpu_count() or 1)


class Waitable:
    """A stream that completes after `polls` queries, and records whether it was synchronised."""

    def __init__(self, polls: int):
        self.polls, self.synchronized = polls, False

    @property
    def done(self) -> bool:
        self.polls -= 1
        return self.polls < 0

    def synchronize(self) -> None:
        self.synchronized = True


@pytest.mark.parametrize("yielding", [False, True])
def test_sync_polls_and_yields_only_where_asked(monkeypatch, yielding):
    yields = []
    monkeypatch.setattr(os, "sched_yield", lambda: yields.append(1))
    backend = Backend("cpu", yielding=yielding)
    backend.name = "gpu"                        # the wait's GPU path, on a stand-in stream
    waitable = Waitable(polls=3)
    backend.sync(waitable)
    assert backend.host_syncs == 1
    assert waitable.synchronized is not yielding
    assert len(yields) == (3 if yielding else 0)


class Flag:
    """A pinned flag word the device sets after `polls` reads (None: never)."""

    def __init__(self, polls):
        self.polls = polls

    def __getitem__(self, k):
        if self.polls is None:
            return 0
        self.polls -= 1
        return int(self.polls < 0)


@pytest.mark.parametrize("yielding", [False, True])
def test_a_flag_wait_polls_the_word_and_queries_the_stream_only_now_and_then(monkeypatch, yielding):
    yields = []
    monkeypatch.setattr(os, "sched_yield", lambda: yields.append(1))
    backend = Backend("cpu", yielding=yielding)
    backend.name = "gpu"
    polls = 2 * FLAG_QUERY_POLLS + 5
    waitable = Waitable(polls=10 ** 6)
    backend.wait_flag(Flag(polls), waitable)
    assert backend.host_syncs == 1 and not waitable.synchronized
    assert waitable.polls == 10 ** 6 - 2         # two stream queries in all those polls
    assert len(yields) == (polls if yielding else 0)


def test_a_flag_wait_fails_where_the_stream_ends_without_the_flag():
    backend = Backend("cpu")
    backend.name = "gpu"
    with pytest.raises(RuntimeError, match="without setting the flag"):
        backend.wait_flag(Flag(None), Waitable(polls=0))
