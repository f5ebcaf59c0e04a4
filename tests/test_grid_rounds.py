"""The decisions of the grid's rounds driven by the device (dbfs.ops.grid_rounds, kernels/grid_rounds.cu):
round_advance takes the step the host-driven loop takes after a bulk level (Beamer's rule on the global
totals, then a stretch where it fits, dbfs.grid_loop._host_levels); round_pick the body of the step from the
form and queue, and what the body leaves; round_status the slot's layout. On a GPU: the kernels against
their twins, and a switch node (dbfs.graph_conditionals) captured with CuPy runs the body its condition
names, none past the last, replay after replay."""

import itertools

import numpy as np
import pytest

from dbfs.backend import Backend
from dbfs.direction import next_bottom_up
from dbfs.grid_rounds import BODY_CHOICES
from dbfs.kernels import CTL, CTL_WORDS, FORM, HEAD_WORDS, STAT_WORDS, STEP
from dbfs.ops.grid_rounds import (SLOT_FOLD_HEADS, SLOT_FRONTIER_HEAD, SLOT_STATUS, SLOT_TOTALS, body_index,
                                  round_advance, round_pick, round_status, slot_words)

pytestmark = pytest.mark.one_rank

N, ALPHA, BETA = 1 << 20, 14.0, 24.0


def control(nf: int, mf: int, mu: int, visited: int, level: int = 3) -> np.ndarray:
    ctl = np.zeros(CTL_WORDS, np.int64)
    ctl[[CTL.LEVEL, CTL.FRONTIER, CTL.FRONTIER_EDGES, CTL.UNVISITED_EDGES, CTL.VISITED]] = level, nf, mf, mu, visited
    return ctl


def host_step(bottom_up: bool, nf_new: int, nf_old: int, mf_new: int, mu_new: int, alpha: float,
              capacity: int, edge_limit: int) -> int:
    """The host-driven loop's next step after a bulk level (grid_loop._host_levels, PeerLevels.fits)."""
    if nf_new == 0:
        return STEP.DONE
    if alpha and next_bottom_up(bottom_up, nf_new, nf_old, mf_new, mu_new, alpha, BETA, N):
        return STEP.BOTTOMUP
    return STEP.SMALL if nf_new <= capacity and mf_new <= edge_limit else STEP.TOPDOWN


CASES = [  # bottom_up, nf_old, nf_new, mf_new, mu_before, alpha, capacity, edge_limit
    (False, 10, 5000, 900_000, 9_000_000, ALPHA, 1 << 16, 1 << 22),     # grows, heavy: bottom-up
    (False, 10, 500, 9_000, 9_000_000, ALPHA, 1 << 16, 1 << 22),        # grows, light: a stretch
    (False, 10, 500, 9_000, 9_000_000, 0.0, 1 << 16, 1 << 22),          # no bottom-up: a stretch
    (False, 10, 500, 9_000_000, 90_000_000, 0.0, 1 << 16, 1 << 22),     # too many edges: bulk top-down
    (False, 10, 70_000, 9_000, 90_000_000, 0.0, 1 << 16, 1 << 22),      # too many vertices: bulk top-down
    (True, 900_000, 800_000, 9_000_000, 10_000_000, ALPHA, 1 << 16, 1 << 22),   # shrinking, still large
    (True, 900_000, 30_000, 90_000, 100_000, ALPHA, 1 << 16, 1 << 22),  # below n / beta: back to a stretch
    (True, 900_000, 30_000, 90_000, 100_000, ALPHA, 0, -1),             # no stretches: bulk top-down
    (True, 900_000, 0, 0, 100_000, ALPHA, 1 << 16, 1 << 22),            # done
]


@pytest.mark.parametrize("bottom_up, nf_old, nf_new, mf_new, mu, alpha, capacity, edge_limit", CASES)
def test_round_advance_takes_the_host_loops_step(bottom_up, nf_old, nf_new, mf_new, mu, alpha, capacity, edge_limit):
    ctl = control(nf_old, 123, mu, 1000)
    round_advance(Backend("cpu"), ctl, np.array([nf_new, mf_new], np.int64), bottom_up, alpha, BETA, N, capacity,
                  edge_limit)
    assert ctl[CTL.STEP] == host_step(bottom_up, nf_new, nf_old, mf_new, mu - mf_new, alpha, capacity, edge_limit)
    assert ctl[[CTL.LEVEL, CTL.FRONTIER, CTL.FRONTIER_EDGES, CTL.UNVISITED_EDGES, CTL.VISITED]].tolist() == [
        4, nf_new, mf_new, mu - mf_new, 1000 + nf_new]


def test_round_pick_runs_the_steps_body_and_says_what_it_leaves():
    bodies = np.arange(BODY_CHOICES, dtype=np.int32) + 100
    for step, form, parity in itertools.product((STEP.SMALL, STEP.TOPDOWN, STEP.BOTTOMUP), (0, 1), (0, 1)):
        ctl = control(1, 1, 1, 1)
        ctl[[CTL.STEP, CTL.FORM, CTL.PARITY]] = step, form, parity
        body = round_pick(Backend("cpu"), ctl, bodies, 7, 0)
        assert body == ctl[CTL.BRANCH] == 100 + body_index(step, form, parity)
        assert ctl[CTL.FORM] == (FORM.BITS if step == STEP.BOTTOMUP else FORM.LIST)
        assert ctl[CTL.PARITY] == parity ^ (step == STEP.TOPDOWN)      # a bulk top-down level swaps the queues
    ctl = control(0, 0, 0, 1)
    ctl[[CTL.STEP, CTL.FORM, CTL.PARITY]] = STEP.DONE, FORM.BITS, 1
    assert round_pick(Backend("cpu"), ctl, bodies, 7, 0) == 7 == ctl[CTL.BRANCH]
    assert ctl[[CTL.FORM, CTL.PARITY]].tolist() == [FORM.BITS, 1]


def status_case(C: int, stride: int):
    rng = np.random.default_rng(C)
    ctl = rng.integers(0, 1 << 40, CTL_WORDS).astype(np.int64)
    status = rng.integers(0, 1 << 40, STAT_WORDS).astype(np.int64)
    totals = rng.integers(0, 1 << 40, 2).astype(np.int64)
    frontier = rng.integers(0, 1 << 31, 16).astype(np.uint32)
    fold = rng.integers(0, 1 << 31, C * stride).astype(np.uint32)
    return ctl, status, totals, frontier, fold


def expected_slot(C, stride, ctl, status, totals, frontier, fold):
    heads = [fold[p * stride:p * stride + HEAD_WORDS] for p in range(C)]
    return np.concatenate([ctl, status, totals, frontier[:HEAD_WORDS], *heads]).astype(np.int64)


@pytest.mark.parametrize("C", [1, 4])
def test_round_status_slot_layout(C):
    stride = 10
    ctl, status, totals, frontier, fold = status_case(C, stride)
    slot = np.full(slot_words(C), -1, np.int64)
    round_status(Backend("cpu"), ctl, status, totals, frontier, fold, stride, C, slot)
    assert slot.tolist() == expected_slot(C, stride, ctl, status, totals, frontier, fold).tolist()
    assert (SLOT_STATUS, SLOT_TOTALS, SLOT_FRONTIER_HEAD, SLOT_FOLD_HEADS) == (
        CTL_WORDS, CTL_WORDS + STAT_WORDS, CTL_WORDS + STAT_WORDS + 2, CTL_WORDS + STAT_WORDS + 2 + HEAD_WORDS)
    round_status(Backend("cpu"), ctl, status, totals, None, None, 0, 0, slot[:slot_words(0)])
    assert not slot[SLOT_FRONTIER_HEAD:SLOT_FOLD_HEADS].any()


def gpu():
    return Backend("gpu")


@pytest.mark.gpu
@pytest.mark.parametrize("bottom_up, nf_old, nf_new, mf_new, mu, alpha, capacity, edge_limit", CASES)
def test_gpu_round_advance_matches_twin(bottom_up, nf_old, nf_new, mf_new, mu, alpha, capacity, edge_limit):
    backend = gpu()
    totals = backend.pinned_empty(2, np.int64)
    totals[:] = nf_new, mf_new
    expected = control(nf_old, 123, mu, 1000)
    ctl = backend.asarray(expected)
    round_advance(Backend("cpu"), expected, totals, bottom_up, alpha, BETA, N, capacity, edge_limit)
    round_advance(backend, ctl, totals, bottom_up, alpha, BETA, N, capacity, edge_limit)
    assert backend.asnumpy(ctl).tolist() == expected.tolist()


@pytest.mark.gpu
@pytest.mark.parametrize("C", [1, 4])
def test_gpu_round_status_matches_twin(C):
    backend, stride = gpu(), 10
    ctl, status, totals, frontier, fold = status_case(C, stride)
    pinned = []
    for host in (status, totals):
        pinned.append(backend.pinned_empty(host.shape[0], np.int64))
        pinned[-1][:] = host
    slot = backend.pinned_empty(slot_words(C), np.int64)
    round_status(backend, backend.asarray(ctl), *pinned, backend.asarray(frontier), backend.asarray(fold), stride, C,
                 slot)
    backend.sync()
    assert slot.tolist() == expected_slot(C, stride, ctl, status, totals, frontier, fold).tolist()


@pytest.mark.gpu
def test_gpu_switch_node_runs_the_picked_body():
    """A captured round (round_pick, a switch node of three bodies, each adding its own value) replayed for
    every step, form and queue, and once done: the body the twin picks runs, alone; none once done."""
    from dbfs import graph_conditionals
    if not graph_conditionals.available():
        pytest.skip("the CUDA driver makes no switch nodes")
    backend = gpu()
    xp = backend.xp
    table = np.array([k % 3 for k in range(BODY_CHOICES)], np.int32)
    ctl, total = xp.zeros(CTL_WORDS, xp.int64), xp.zeros(1, xp.int64)
    stream, body_stream = xp.cuda.Stream(non_blocking=True), xp.cuda.Stream(non_blocking=True)

    def body(k):
        return lambda: total.__iadd__(10 ** k)

    with stream:
        stream.begin_capture()
        handle = graph_conditionals.switch_handle(stream)
        round_pick(backend, ctl, xp.asarray(table), 3, handle)
        graph_conditionals.switch(stream, handle, [body(k) for k in range(3)], body_stream)
        graph = stream.end_capture()
    cases = list(itertools.product((STEP.SMALL, STEP.TOPDOWN, STEP.BOTTOMUP), (0, 1), (0, 1))) + [(STEP.DONE, 0, 0)]
    for step, form, parity in cases:
        total[:] = 0
        ctl[CTL.STEP], ctl[CTL.FORM], ctl[CTL.PARITY] = step, form, parity
        xp.cuda.Device().synchronize()
        graph.launch(stream)
        stream.synchronize()
        expected = 0 if step == STEP.DONE else 10 ** int(table[body_index(step, form, parity)])
        assert int(total[0]) == expected, (step, form, parity)
        assert int(ctl[CTL.BRANCH]) == (3 if step == STEP.DONE else table[body_index(step, form, parity)])
