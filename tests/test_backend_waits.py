"""A rank's host waits (Backend.sync): they spin in CUDA's synchronise, except where several ranks of
this node are as many as the CPUs they may run on (waits_nap, runtime.node_cpus), where they poll and
sleep between polls, so that the other processes' threads find an idle core and need not preempt a rank
that the others wait for."""

import os

import pytest

from dbfs import runtime
from dbfs import backend as backend_module
from dbfs.backend import Backend, waits_nap

pytestmark = pytest.mark.one_rank


@pytest.mark.parametrize("ranks,cores,expected", [(1, 16, False), (4, 16, False), (15, 16, False),
                                                  (16, 16, True), (17, 16, True), (2, 2, True),
                                                  (1, 1, False)])   # a rank alone (bound to a core)
def test_waits_nap_where_the_ranks_fill_the_cores(ranks, cores, expected):
    assert waits_nap(ranks, cores) is expected


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


@pytest.mark.parametrize("napping", [False, True])
def test_sync_polls_and_naps_only_where_asked(monkeypatch, napping):
    naps = []
    monkeypatch.setattr(backend_module.time, "sleep", naps.append)
    backend = Backend("cpu", napping=napping)
    backend.name = "gpu"                        # the wait's GPU path, on a stand-in stream
    waitable = Waitable(polls=3)
    backend.sync(waitable)
    assert backend.host_syncs == 1
    assert waitable.synchronized is not napping
    assert naps == ([backend_module.NAP_S] * 3 if napping else [])


def test_timer_slack_is_tightened_for_the_calling_thread():
    """A napping wait's sleeps end within TIMER_SLACK_NS of their time (read back through prctl on
    Linux; elsewhere nothing is asked)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if not hasattr(libc, "prctl"):
        pytest.skip("no prctl: not Linux")
    get_timerslack = 30                          # PR_GET_TIMERSLACK, linux/prctl.h
    before = libc.prctl(get_timerslack, 0, 0, 0, 0)
    try:
        backend_module.tighten_timer_slack()
        assert libc.prctl(get_timerslack, 0, 0, 0, 0) == backend_module.TIMER_SLACK_NS
    finally:
        libc.prctl(backend_module.PR_SET_TIMERSLACK, ctypes.c_ulong(before), 0, 0, 0)
