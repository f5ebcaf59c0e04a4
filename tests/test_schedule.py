"""The kernel that ends each graph of a search the device launches (kernels/schedule.cu, dbfs.ops.schedule):
its NumPy twin against the host-driven grid loop's rule (dbfs.grid_loop.GridLoop._host_levels) on random
standings, the sums it keeps, the hand-over at the search's end; on a GPU the kernel against the twin."""

import numpy as np
import pytest

from dbfs.backend import Backend
from dbfs.direction import next_bottom_up
from dbfs.kernels import CHAIN, CHAIN_AT, CHAIN_KIND, CHAIN_TRAFFIC, CHAIN_WORDS, CTL, CTL_WORDS, FORM, HEAD, STEP
from dbfs.level_chain import destroy_graph, device_graph, launch_graph
from dbfs.ops.schedule import (CODES, FIXED_WORDS, SEND_WORDS, START_CODE, chain_words, code_of, plan_array,
                               resolve_code, schedule_next)

pytestmark = pytest.mark.one_rank

CLOCK_PHASES = 3
ALPHA, BETA, N, R, C = 14.0, 24.0, 1 << 20, 2, 4


def test_every_graph_has_a_code_of_its_own():
    codes = {code_of(action, form, parity, half) for action in (CHAIN_KIND.STRETCH, CHAIN_KIND.TOPDOWN,
                                                                CHAIN_KIND.BOTTOMUP)
             for form in (FORM.LIST, FORM.BITS) for parity in (0, 1) for half in (0, 1)}
    assert codes == set(range(START_CODE)) and CODES == START_CODE + 3
    assert {resolve_code(False), resolve_code(True)} == {START_CODE + 1, START_CODE + 2}


class Case:
    """A standing, a plan whose marks and sends point into arrays of `xp` (host arrays: pinned on a GPU), and
    what the kernel reads after a graph of `kind`."""

    def __init__(self, rng, backend, kind: int, stretches: bool, resolves: bool = False):
        xp, self.backend = backend.xp, backend
        self.kind, self.stretches, self.resolves = kind, stretches, resolves
        self.start = np.zeros(chain_words(CLOCK_PHASES), np.int64)
        bottom_up = kind == CHAIN_KIND.BOTTOMUP
        nf = int(rng.integers(1, 1000))
        for word, value in ((CHAIN.LEVEL, rng.integers(0, 20)), (CHAIN.BOTTOMUP, bottom_up),
                            (CHAIN.FORM, rng.integers(0, 2) if kind != CHAIN_KIND.STRETCH else FORM.LIST),
                            (CHAIN.PARITY, rng.integers(0, 2)), (CHAIN.HALF, rng.integers(0, 2)),
                            (CHAIN.FRONTIER, nf), (CHAIN.FRONTIER_EDGES, rng.integers(0, 50 * nf)),
                            (CHAIN.UNVISITED_EDGES, rng.integers(0, 1 << 24)),
                            (CHAIN.VISITED, rng.integers(1, 1 << 16))):
            self.start[word] = value
        self.totals = backend.pinned_empty(2, np.int64)
        new = int(rng.choice([0, rng.integers(1, 1 << 16)], p=[0.1, 0.9]))
        self.totals[:] = (new, rng.integers(0, 1 << 22) if new else 0)
        self.peer_ctl = np.zeros(CTL_WORDS, np.int64)
        step = int(rng.choice([STEP.DONE, STEP.BOTTOMUP, STEP.TOPDOWN]))
        for word, value in ((CTL.STEP, step), (CTL.LEVEL, rng.integers(2, 30)),
                            (CTL.VISITED, rng.integers(1, 1 << 16)), (CTL.UNVISITED_EDGES, rng.integers(0, 1 << 20)),
                            (CTL.FRONTIER, rng.integers(0, 1 << 12)),
                            (CTL.FRONTIER_EDGES, rng.integers(0, 1 << 14)), (CTL.LOGGED, rng.integers(1, 9)),
                            (CTL.EXPAND_BYTES, rng.integers(0, 1 << 20)), (CTL.FOLD_BYTES, rng.integers(0, 1 << 20))):
            self.peer_ctl[word] = value
        self.capacity = int(rng.integers(0, 2000))
        self.stamps = xp.asarray(np.cumsum(rng.integers(0, 1000, 5)).astype(np.int64))
        self.ids = xp.asarray(np.array([0, -1, 2, 1, -1], np.int32))
        self.heads = backend.pinned_empty(2 * 4 * 8, np.uint32)
        self.heads[:] = rng.integers(0, 100, self.heads.shape[0])
        self.plan = plan_array()
        self.code = {CHAIN_KIND.START: START_CODE, CHAIN_KIND.RESOLVE: resolve_code(False)}.get(
            kind, int(rng.integers(0, START_CODE)))
        if resolves:                            # a resolution graph to launch (never launched here)
            self.plan[[resolve_code(False), resolve_code(True)], CHAIN_AT.EXEC] = 1
        row = self.plan[self.code]
        row[[CHAIN_AT.KIND, CHAIN_AT.HALF_AFTER, CHAIN_AT.MARKS, CHAIN_AT.MARK_COUNT, CHAIN_AT.MARK_PHASES]] = (
            kind, rng.integers(0, 2), address(self.stamps), 5, address(self.ids))
        row[CHAIN_AT.SEND0_HEADS:][:SEND_WORDS] = (address(self.heads), 8, 1, -1, 3, 0, 3)
        row[CHAIN_AT.SEND1_HEADS:][:SEND_WORDS] = (address(self.heads) + 4 * 32, 8, 4, 1, 1, 1, 3)
        row[CHAIN_AT.FIXED0_PHASE:][:FIXED_WORDS] = (0, 2, 100)
        row[CHAIN_AT.FIXED1_PHASE:][:FIXED_WORDS] = (1, 1, 50)

    def run(self, backend):
        """The kernel (or its twin) on this case; (the standing and sums, peer_ctl, control, host copy, flag)."""
        xp = backend.xp
        chain, plan = xp.array(self.start), xp.array(self.plan)           # copies: the twin writes in place
        peer_ctl = xp.array(self.peer_ctl) if self.stretches else None
        control = xp.zeros(CTL_WORDS, np.int64)
        done, flag = backend.pinned_empty(chain.shape[0], np.int64), backend.pinned_empty(1, np.int64)
        done[:], flag[:] = 0, 0
        def enqueue():
            schedule_next(backend, chain, plan, self.code, self.totals, peer_ctl, control, CLOCK_PHASES, ALPHA, BETA,
                          N, self.capacity, self.capacity * 10, R, C, done, flag, launch=False)
        if backend.is_gpu:                      # a kernel that may launch a graph runs in a graph
            stream = xp.cuda.Stream(non_blocking=True)
            graph, exec_ = device_graph(backend, stream, enqueue)
            launch_graph(exec_, stream)
            stream.synchronize()
            destroy_graph(graph, exec_)
        else:
            enqueue()
        return (backend.asnumpy(chain), None if peer_ctl is None else backend.asnumpy(peer_ctl),
                backend.asnumpy(control), done.copy(), int(flag[0]))


def address(array) -> int:
    return array.ctypes.data if isinstance(array, np.ndarray) else array.data.ptr


def expected(case):
    """The host-driven loop's next step from the case (GridLoop._host_levels), as (code, standing words)."""
    s, ctl = case.start, case.peer_ctl
    lvl, form, parity, half = (int(s[w]) for w in (CHAIN.LEVEL, CHAIN.FORM, CHAIN.PARITY, CHAIN.HALF))
    nf, mf, mu, visited = (int(s[w]) for w in (CHAIN.FRONTIER, CHAIN.FRONTIER_EDGES, CHAIN.UNVISITED_EDGES,
                                               CHAIN.VISITED))
    bottom_up = bool(s[CHAIN.BOTTOMUP])
    over = (resolve_code(bool(s[CHAIN.ANY_BOTTOMUP])) if case.resolves else -1), None
    if case.kind == CHAIN_KIND.RESOLVE:
        return -1, None
    if case.kind == CHAIN_KIND.STRETCH:
        if ctl[CTL.STEP] == STEP.DONE:
            return over
        lvl, visited, mu, nf, mf = (int(ctl[CTL.LEVEL]) - 1, int(ctl[CTL.VISITED]), int(ctl[CTL.UNVISITED_EDGES]),
                                    int(ctl[CTL.FRONTIER]), int(ctl[CTL.FRONTIER_EDGES]))
        bottom_up = ctl[CTL.STEP] == STEP.BOTTOMUP
    elif case.kind != CHAIN_KIND.START:
        form, parity = (FORM.BITS, parity) if bottom_up else (FORM.LIST, 1 - parity)
        half = int(case.plan[case.code, CHAIN_AT.HALF_AFTER])
        if case.totals[0] == 0:
            return over
        new_nf, new_mf = int(case.totals[0]), int(case.totals[1])
        visited, mu = visited + new_nf, mu - new_mf
        bottom_up = next_bottom_up(bottom_up, new_nf, nf, new_mf, mu, ALPHA, BETA, N)
        nf, mf = new_nf, new_mf
    if case.stretches and not bottom_up and nf <= case.capacity and mf <= case.capacity * 10:
        return code_of(CHAIN_KIND.STRETCH, form, parity, half), (lvl, FORM.LIST, parity, half, nf, mf, mu, visited)
    action = CHAIN_KIND.BOTTOMUP if bottom_up else CHAIN_KIND.TOPDOWN
    return code_of(action, form, parity, half), (lvl + 1, form, parity, half, nf, mf, mu, visited)


CASES = [(seed, kind, stretches, seed % 2 == 0) for seed in range(40)
         for kind in (CHAIN_KIND.STRETCH, CHAIN_KIND.TOPDOWN, CHAIN_KIND.BOTTOMUP, CHAIN_KIND.START, CHAIN_KIND.RESOLVE)
         for stretches in (True, False) if stretches or kind != CHAIN_KIND.STRETCH]


@pytest.mark.parametrize("seed,kind,stretches,resolves", CASES)
def test_the_next_graph_is_the_host_loops_next_step(seed, kind, stretches, resolves):
    """The next graph as the host loop would take it; at the search's end the parents' resolution where
    there is one to launch, whose own end (or the last level's, where there is none) hands the standing
    to the host."""
    backend = Backend("cpu")
    case = Case(np.random.default_rng(seed), backend, kind, stretches, resolves)
    chain, peer_ctl, control, done, flag = case.run(backend)
    code, standing = expected(case)
    assert chain[CHAIN.CODE] == code and chain[CHAIN.GRAPHS] == 1
    if code < 0:
        assert flag == 1 and np.array_equal(done, chain)
        return
    assert flag == 0
    if code >= START_CODE:                      # the resolution
        assert chain[CHAIN.FRONTIER] == 0
        return
    words = (CHAIN.LEVEL, CHAIN.FORM, CHAIN.PARITY, CHAIN.HALF, CHAIN.FRONTIER, CHAIN.FRONTIER_EDGES,
             CHAIN.UNVISITED_EDGES, CHAIN.VISITED)
    assert tuple(chain[list(words)]) == standing
    lvl, _, _, _, nf, mf, mu, visited = standing
    if code // 8 == CHAIN_KIND.STRETCH:        # the stretch starts from the standing at the next level
        assert tuple(peer_ctl[[CTL.LEVEL, CTL.FRONTIER, CTL.FRONTIER_EDGES, CTL.UNVISITED_EDGES, CTL.VISITED,
                               CTL.LOGGED]]) == (lvl + 1, nf, mf, mu, visited, 0)
    else:
        assert control[CTL.LEVEL] == lvl
        assert control[CTL.STEP] == (STEP.BOTTOMUP if code // 8 == CHAIN_KIND.BOTTOMUP else STEP.TOPDOWN)


def test_a_graphs_marks_and_sends_are_summed():
    """Phase times between marks (none after a mark of no phase); a shared message's bytes to each of its
    peers, a line's messages to all but this rank; the fixed sends; a stretch's messages from its control
    block."""
    backend = Backend("cpu")
    case = Case(np.random.default_rng(3), backend, CHAIN_KIND.STRETCH, True)
    case.heads[:] = 0
    case.heads[HEAD.SIZE] = 5                                       # the shared message: 5 words
    case.heads[32 + HEAD.SIZE::8] = (2, 99, 0, 7)                   # the line's: slot 1 is this rank's
    case.stamps[:] = (10, 15, 40, 41, 50)
    chain = case.run(backend)[0]
    sums = chain[CHAIN_WORDS:]
    logged, ctl = case.peer_ctl[CTL.LOGGED], case.peer_ctl
    assert sums[:4].tolist() == [3 + 2 + logged * (R - 1), 3 * 4 * (3 + 5) + 100 + ctl[CTL.EXPAND_BYTES],
                                 3 + 1 + logged * (C - 1), 4 * (5 + 3 + 10) + 50 + ctl[CTL.FOLD_BYTES]]
    assert sums[2 * len(CHAIN_TRAFFIC):].tolist() == [15 - 10, 50 - 41, 41 - 40]   # by the marks' phases


@pytest.mark.gpu
def test_gpu_schedule_kernel_matches_its_twin():
    gpu, cpu = Backend("gpu", 0), Backend("cpu")
    for case in CASES:
        twin = Case(np.random.default_rng(case[0]), cpu, *case[1:]).run(cpu)
        kernel = Case(np.random.default_rng(case[0]), gpu, *case[1:]).run(gpu)
        for a, b in zip(kernel, twin):
            assert np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b, case
