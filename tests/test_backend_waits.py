"""A rank's host waits (Backend.sync): they spin in CUDA's synchronise, except where several ranks of
this node are as many as the CPUs they may run on (waits_yield, runtime.node_cpus), where they poll and
give the core away between polls, so the other processes' threads need not preempt a rank that the others
wait for; and there, where the launcher left them unbound, each rank's searching thread keeps a CPU of its
own (runtime.own_cpu, pin_searching_thread)."""

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


ALL4 = [0, 1, 2, 3]


@pytest.mark.parametrize("affinities,local_rank,expected", [
    ([ALL4] * 4, 2, 2),                                   # unbound, as many as the CPUs: its own
    ([[4, 5, 6, 7]] * 4, 1, 5),                           # an allocation's CPUs, in order
    ([ALL4] * 3, 1, None),                                # a CPU spare
    ([[0, 1]] * 4, 1, None),                              # more ranks than CPUs: they take turns anyway
    ([[0], [1], [2], [3]], 1, None),                      # bound by the launcher
    ([[0, 1], [0, 1, 2, 3], [2, 3], [0, 1, 2, 3]], 0, None),
    ([[0]], 0, None)])                                    # a rank alone
def test_a_searching_thread_takes_its_own_cpu_only_where_ranks_fill_unbound_cpus(affinities, local_rank, expected):
    assert runtime.own_cpu(affinities, local_rank) == expected


@pytest.mark.parametrize("cpu", [None, 3])
def test_pinning_sets_the_calling_threads_affinity_where_the_node_gives_a_cpu(monkeypatch, cpu):
    pinned = []
    monkeypatch.setattr(runtime, "node", lambda: runtime.Node(3, 4, 4, cpu))
    monkeypatch.setattr(os, "sched_setaffinity", lambda pid, cpus: pinned.append((pid, cpus)))
    runtime.pin_searching_thread()
    assert pinned == ([] if cpu is None else [(0, {3})])


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
