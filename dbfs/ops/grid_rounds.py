"""Launch wrappers of kernels/grid_rounds.cu, the decisions of the grid loop's rounds driven by the device
(dbfs.grid_rounds), with their NumPy twins.

round_pick chooses the round's body from the control block and says what it leaves there; round_advance
closes a bulk level by Beamer's rule on its global totals (the rule of the stretches' kernel:
dbfs.ops.level_control.next_step, with the stretch's limits); round_status copies what the host reads of
a round into the round's pinned slot (SLOT_WORDS(C) words: the control block, the level's counters, its
totals, the head of the own frontier's message, the heads of the C fold messages).

Arrays:
  ctl      int64 [CTL_WORDS], device  read/write  the grid loop's control block (kernels CTL): STEP (the
                                                  step to run: SMALL, TOPDOWN, BOTTOMUP, DONE), LEVEL, FRONTIER,
                                                  FRONTIER_EDGES, UNVISITED_EDGES, VISITED, FORM, PARITY
                                                  (the queue of the own frontier list), BRANCH (the body run)
  bodies   int32 [12], device         read        body index by (step * 2 + form) * 2 + parity
  totals   int64 [2], pinned host     read        a bulk level's global new frontier size and degree sum
  status   int64 [STAT_WORDS], pinned host  read  the level's counters as handed to the host
  slot     int64 [SLOT_WORDS(C)], pinned host  write
GPU: one thread on the current stream, the host words reached through their mapped addresses. round_pick
also sets the switch node's condition `handle` (dbfs.graph_conditionals); its twin returns the body.
"""

from __future__ import annotations

import numpy as np

from dbfs.kernels import CTL, CTL_WORDS, FORM, HEAD_WORDS, STAT_WORDS, STEP
from dbfs.ops.level_control import next_step

# Where a round's slot holds each part.
SLOT_STATUS = CTL_WORDS
SLOT_TOTALS = SLOT_STATUS + STAT_WORDS
SLOT_FRONTIER_HEAD = SLOT_TOTALS + 2
SLOT_FOLD_HEADS = SLOT_FRONTIER_HEAD + HEAD_WORDS


def slot_words(C: int) -> int:
    return SLOT_FOLD_HEADS + C * HEAD_WORDS


def body_index(step: int, form: int, parity: int) -> int:
    """Where `bodies` holds the body of `step` from that form and queue."""
    return (step * 2 + form) * 2 + parity


def round_pick(backend, ctl, bodies, none: int, handle: int) -> int | None:
    """The round's body (`none` once the search is done) into ctl[BRANCH] and the switch's condition;
    FORM and PARITY := what the body leaves. Returns the body on the CPU backend."""
    if backend.is_gpu:
        backend.kernel("grid_rounds", "round_pick")((1,), (1,), (ctl, bodies, np.int32(none), np.uint64(handle)))
        return None
    step, form, parity = int(ctl[CTL.STEP]), int(ctl[CTL.FORM]), int(ctl[CTL.PARITY])
    body = none
    if step != STEP.DONE:
        body = int(bodies[body_index(step, form, parity)])
        ctl[CTL.FORM] = FORM.BITS if step == STEP.BOTTOMUP else FORM.LIST
        ctl[CTL.PARITY] = parity ^ (step == STEP.TOPDOWN)
    ctl[CTL.BRANCH] = body
    return body


def round_advance(backend, ctl, totals, bottom_up: bool, alpha: float, beta: float, n: int, capacity: int,
                  edge_limit: int) -> None:
    """After a bulk level (bottom_up: which direction it ran): LEVEL + 1, the new frontier (totals),
    VISITED and UNVISITED_EDGES, and STEP by Beamer's rule (alpha 0: never bottom-up), SMALL where a
    stretch takes the frontier (at most `capacity` vertices and `edge_limit` edges)."""
    if backend.is_gpu:
        backend.kernel("grid_rounds", "round_advance")(
            (1,), (1,), (ctl, np.uint64(totals.ctypes.data), np.int32(bottom_up), np.float64(alpha),
                         np.float64(beta), np.int64(n), np.int64(capacity), np.int64(edge_limit)))
        return
    nf_new, mf_new = int(totals[0]), int(totals[1])
    mu = int(ctl[CTL.UNVISITED_EDGES]) - mf_new
    step = next_step(bottom_up, nf_new, int(ctl[CTL.FRONTIER]), mf_new, 0, mu, alpha, beta, n, edge_limit)
    if nf_new > capacity and step == STEP.SMALL:
        step = STEP.TOPDOWN
    ctl[CTL.UNVISITED_EDGES] = mu
    ctl[CTL.VISITED] += nf_new
    ctl[CTL.STEP], ctl[CTL.FRONTIER], ctl[CTL.FRONTIER_EDGES] = step, nf_new, mf_new
    ctl[CTL.LEVEL] += 1


def round_status(backend, ctl, status, totals, frontier_message, fold_messages, fold_stride: int, C: int,
                 slot) -> None:
    """slot := the control block, status, totals, the own frontier message's head (frontier_message: uint32
    device array or None) and the C fold messages' heads (fold_messages, `fold_stride` words apart, or
    None)."""
    if backend.is_gpu:
        null = np.uint64(0)
        backend.kernel("grid_rounds", "round_status")(
            (1,), (1,), (ctl, np.uint64(status.ctypes.data), np.uint64(totals.ctypes.data),
                         null if frontier_message is None else frontier_message,
                         null if fold_messages is None else fold_messages, np.int64(fold_stride), np.int32(C),
                         np.uint64(slot.ctypes.data)))
        return
    slot[:CTL_WORDS] = ctl
    slot[SLOT_STATUS:SLOT_TOTALS] = status
    slot[SLOT_TOTALS:SLOT_FRONTIER_HEAD] = totals[:2]
    slot[SLOT_FRONTIER_HEAD:SLOT_FOLD_HEADS] = 0 if frontier_message is None else frontier_message[:HEAD_WORDS]
    heads = slot[SLOT_FOLD_HEADS:SLOT_FOLD_HEADS + C * HEAD_WORDS].reshape(C, HEAD_WORDS)
    heads[:] = 0 if fold_messages is None else np.stack(
        [fold_messages[p * fold_stride:p * fold_stride + HEAD_WORDS] for p in range(C)])
