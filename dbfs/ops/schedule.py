"""Launch wrapper of kernels/schedule.cu, the kernel that ends every graph of a search the device drives
(dbfs.level_chain), with its NumPy twin: it charges the graph's timer marks and sends to the search's sums,
advances where the search stands as dbfs.grid_loop.GridLoop._host_levels does between two of its graphs, picks the
next graph's code and launches it from the device (a tail launch), or, the frontier empty, hands the
standing and sums to the host.

A graph's code says what it runs from which state: code_of(action, form, parity, half), the action a
stretch of small top-down levels, a whole top-down level or a whole bottom-up level (CHAIN_KIND), form the
own frontier's between levels (FORM), parity 1 where it is in queue 0, half the buffer of the own
frontier's message (dbfs.exchange.LevelExchange.out_of); START_CODE the graph that starts a search, then
the parents' resolutions (resolve_code), which end it.

Arrays:
  chain       int64 [chain_words(clock_phases)]  the standing (CHAIN_STATE), then (messages, bytes) per
                                                  CHAIN_TRAFFIC phase, then nanoseconds per clock phase
  plan        int64 [CODES, CHAIN_PLAN_WORDS]     each code's graph: its exec handle (0: none), kind,
                                                  message half after it, timer marks (address, count, the
                                                  address of their int32 phase ids), sends (CHAIN_SEND:
                                                  staged heads' address, stride, slots, slot skipped,
                                                  copies, traffic phase, messages) and fixed sends
  totals      int64 [2]     pinned (read by the device)  a whole level's global frontier size, degree sum
  peer_ctl    int64 [CTL_WORDS] or None           the stretches' control block
  control     int64 [CTL_WORDS]                   the whole levels' control block (level, step)
  chain_host  int64, as chain, pinned             the standing and sums once the search is over
  flag        int64 [1], pinned                   raised once chain_host is written, or on an error
"""

from __future__ import annotations

import numpy as np

from dbfs.direction import next_bottom_up
from dbfs.kernels import (CHAIN, CHAIN_AT, CHAIN_FIXED, CHAIN_FIXED_SEND, CHAIN_KIND, CHAIN_PLAN_WORDS, CHAIN_SEND,
                          CHAIN_SENDS, CHAIN_START_CODE, CHAIN_TRAFFIC, CHAIN_WORDS, CTL, FORM, HEAD, HEAD_WORDS, STEP)

START_CODE = CHAIN_START_CODE
CODES = START_CODE + 3
SEND_WORDS, FIXED_WORDS = len(CHAIN_SEND), len(CHAIN_FIXED_SEND)


def code_of(action: int, form: int, parity: int, half: int) -> int:
    """The code of the graph running `action` (a CHAIN_KIND) from frontier `form`, queue `parity`, message
    `half` (schedule.cu code_of)."""
    return ((action * 2 + form) * 2 + parity) * 2 + half


def resolve_code(any_bottom_up: bool) -> int:
    """The code of the parents' resolution after a search that ran a bottom-up level or none."""
    return START_CODE + 1 + any_bottom_up


def chain_words(clock_phases: int) -> int:
    return CHAIN_WORDS + 2 * len(CHAIN_TRAFFIC) + clock_phases


def schedule_next(backend, chain, plan, code: int, totals, peer_ctl, control, clock_phases: int, alpha: float,
                  beta: float, n: int, capacity: int, edge_limit: int, R: int, C: int, chain_host, flag,
                  launch: bool = True):
    """Enqueue the kernel ending the graph of `code` (see the module docstring). alpha: 0 where the
    search stays top-down; capacity, edge_limit: the stretches' (dbfs.peer_levels.PeerLevels.fits).
    GPU: one thread on the current stream (it is captured into the graph it ends); with `launch`, the next
    graph starts when this one has ended, launched by the device (the graph must have been instantiated
    for device launch). CPU (the twin): returns the next code (-1: the search is over), launching nothing;
    the plan's addresses must be this process's (NumPy arrays')."""
    if backend.is_gpu:
        address = [np.uint64(0 if a is None else a.ctypes.data if isinstance(a, np.ndarray) else a.data.ptr)
                   for a in (totals, peer_ctl, chain_host, flag)]
        backend.kernel("schedule", "schedule_next")(
            (1,), (1,), (chain, plan, np.int32(code), address[0], address[1], control, np.int32(clock_phases),
                         np.float64(alpha), np.float64(beta), np.int64(n), np.int64(capacity),
                         np.int64(edge_limit), np.int32(R), np.int32(C), address[2], address[3],
                         np.int32(launch)))
        return None
    return _schedule_next_numpy(chain, plan, code, totals, peer_ctl, control, clock_phases, alpha, beta, n,
                                capacity, edge_limit, R, C, chain_host, flag)


def _words(address: int, dtype, count: int) -> np.ndarray:
    return np.ctypeslib.as_array((np.ctypeslib.as_ctypes_type(dtype) * count).from_address(address))


def _charge(graph, traffic, phase_ns) -> None:
    marks = int(graph[CHAIN_AT.MARK_COUNT])
    if marks > 1:
        stamps = _words(int(graph[CHAIN_AT.MARKS]), np.int64, marks)
        for phase, begin, end in zip(_words(int(graph[CHAIN_AT.MARK_PHASES]), np.int32, marks), stamps, stamps[1:]):
            if phase >= 0:
                phase_ns[phase] += end - begin
    for s in range(CHAIN_SENDS):
        heads, stride, slots, skip, copies, phase, messages = (
            int(w) for w in graph[CHAIN_AT.SEND0_HEADS + s * SEND_WORDS:][:SEND_WORDS])
        if heads:
            sizes = _words(heads, np.uint32, (slots - 1) * stride + HEAD.SIZE + 1)[HEAD.SIZE::stride]
            traffic[2 * phase] += messages
            traffic[2 * phase + 1] += 4 * copies * sum(HEAD_WORDS + int(sizes[k]) for k in range(slots) if k != skip)
    for f in range(CHAIN_FIXED):
        phase, messages, sent = (int(w) for w in graph[CHAIN_AT.FIXED0_PHASE + f * FIXED_WORDS:][:FIXED_WORDS])
        traffic[2 * phase] += messages
        traffic[2 * phase + 1] += sent


def _schedule_next_numpy(chain, plan, code, totals, peer_ctl, control, clock_phases, alpha, beta, n, capacity,
                         edge_limit, R, C, chain_host, flag) -> int:
    graph = plan[code]
    traffic = chain[CHAIN_WORDS:]
    kind = int(graph[CHAIN_AT.KIND])
    lvl, form, parity, half = (int(chain[w]) for w in (CHAIN.LEVEL, CHAIN.FORM, CHAIN.PARITY, CHAIN.HALF))
    nf, mf, mu, visited = (int(chain[w]) for w in (CHAIN.FRONTIER, CHAIN.FRONTIER_EDGES, CHAIN.UNVISITED_EDGES,
                                                   CHAIN.VISITED))
    bottom_up, done = bool(chain[CHAIN.BOTTOMUP]), kind == CHAIN_KIND.RESOLVE
    if kind != CHAIN_KIND.START:
        _charge(graph, traffic, traffic[2 * len(CHAIN_TRAFFIC):])
    if kind == CHAIN_KIND.STRETCH:
        step, levels = int(peer_ctl[CTL.STEP]), int(peer_ctl[CTL.LOGGED])
        lvl = int(peer_ctl[CTL.LEVEL]) - 1
        visited, mu = int(peer_ctl[CTL.VISITED]), int(peer_ctl[CTL.UNVISITED_EDGES])
        nf, mf = int(peer_ctl[CTL.FRONTIER]), int(peer_ctl[CTL.FRONTIER_EDGES])
        traffic[0:4] += (levels * (R - 1), peer_ctl[CTL.EXPAND_BYTES], levels * (C - 1), peer_ctl[CTL.FOLD_BYTES])
        done, bottom_up = step == STEP.DONE, step == STEP.BOTTOMUP
    elif kind in (CHAIN_KIND.TOPDOWN, CHAIN_KIND.BOTTOMUP):
        form = FORM.BITS if bottom_up else FORM.LIST
        parity ^= not bottom_up
        half = int(graph[CHAIN_AT.HALF_AFTER])
        nf_new, mf_new = int(totals[0]), int(totals[1])
        if nf_new == 0:
            done = True
        else:
            visited += nf_new
            mu -= mf_new
            bottom_up = next_bottom_up(bottom_up, nf_new, nf, mf_new, mu, alpha, beta, n)
            nf, mf = nf_new, mf_new
    following = -1
    if done and kind != CHAIN_KIND.RESOLVE and plan[resolve_code(bool(chain[CHAIN.ANY_BOTTOMUP])), CHAIN_AT.EXEC]:
        following = resolve_code(bool(chain[CHAIN.ANY_BOTTOMUP]))
    elif not done:
        if peer_ctl is not None and not bottom_up and nf <= capacity and mf <= edge_limit:
            following = code_of(CHAIN_KIND.STRETCH, form, parity, half)
            for word, value in ((CTL.LEVEL, lvl + 1), (CTL.FRONTIER, nf), (CTL.FRONTIER_EDGES, mf),
                                (CTL.UNVISITED_EDGES, mu), (CTL.VISITED, visited), (CTL.LOGGED, 0)):
                peer_ctl[word] = value
            form = FORM.LIST
        else:
            lvl += 1
            chain[CHAIN.ANY_BOTTOMUP] |= bottom_up
            following = code_of(CHAIN_KIND.BOTTOMUP if bottom_up else CHAIN_KIND.TOPDOWN, form, parity, half)
            control[CTL.LEVEL] = lvl
            control[CTL.STEP] = STEP.BOTTOMUP if bottom_up else STEP.TOPDOWN
    for word, value in ((CHAIN.CODE, following), (CHAIN.LEVEL, lvl), (CHAIN.BOTTOMUP, bottom_up),
                        (CHAIN.FORM, form), (CHAIN.PARITY, parity), (CHAIN.HALF, half),
                        (CHAIN.FRONTIER, 0 if done else nf), (CHAIN.FRONTIER_EDGES, mf),
                        (CHAIN.UNVISITED_EDGES, mu), (CHAIN.VISITED, visited)):
        chain[word] = value
    chain[CHAIN.GRAPHS] += 1
    if following < 0:
        words = chain_words(clock_phases)
        chain_host[:words] = chain[:words]
        flag[0] = 1
    return following


def plan_array(rows: int = CODES) -> np.ndarray:
    """An empty plan (every code without a graph)."""
    return np.zeros((rows, CHAIN_PLAN_WORDS), np.int64)

