"""A grid search whose graphs the device launches (issue 29; bench/NOTES.md, 2026-11-29, levels that the
device launches itself): where every exchange is on the device (NVSHMEM), each graph that dbfs.grid_loop
replays for a stretch of small levels or a whole level ends in a one-thread kernel (kernels/schedule.cu,
dbfs.ops.schedule) that advances where the search stands, as the grid loop's host turn between two graphs
would, and launches the next graph itself (a tail launch, CUDA's device graph launch). The host launches a
search's first graph and waits once, on a flag the last raises; a rank whose host is late (off its CPU for
a scheduler tick) then holds up no level of the others.

Every graph such a search may run is captured before its first search, one per code (dbfs.ops.schedule
code_of: a stretch, a top-down or a bottom-up level from each frontier form, queue parity and message
half), instantiated for device launch and uploaded; the plan the kernel reads holds each one's exec handle,
the addresses of its timer marks and of the heads its sends stage, and the bytes of its sends that the host
counts by formula. What the host-driven loop counts after each graph (the sends' bytes, the phase times,
the stretches' traffic) the kernel sums on the device; the host reads the sums once, after the search. The
per-level log keeps the host's turns (GridLoop); so do MPI's and NCCL's exchanges.
"""

from __future__ import annotations

import ctypes

import numpy as np

from dbfs.kernels import CHAIN, CHAIN_AT, CHAIN_KIND, CHAIN_TRAFFIC, CHAIN_WORDS, FORM
from dbfs.ops.schedule import (FIXED_WORDS, SEND_WORDS, START_CODE, chain_words, plan_array, schedule_next)
from dbfs.timing import GraphMarks

DEVICE_LAUNCH = 4                   # CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH


def _driver():
    return ctypes.CDLL("libcuda.so.1")


def _check(result: int, what: str) -> None:
    if result != 0:
        raise RuntimeError(f"{what} failed (CUresult {result})")


def device_graph(backend, stream, enqueue, driver=None) -> tuple[int, int]:
    """enqueue() captured from `stream` into a graph instantiated for device launch and uploaded (a kernel that
    launches a graph must run in one): (the graph, its exec handle), for cuGraphExecDestroy and cuGraphDestroy."""
    driver = driver or _driver()
    runtime, launches = backend.xp.cuda.runtime, backend.launches
    runtime.streamBeginCapture(stream.ptr)
    try:
        with stream:
            enqueue()
    finally:
        graph = runtime.streamEndCapture(stream.ptr)
        backend.launches = launches
    exec_ = ctypes.c_void_p()
    _check(driver.cuGraphInstantiateWithFlags(ctypes.byref(exec_), ctypes.c_void_p(graph),
                                              ctypes.c_ulonglong(DEVICE_LAUNCH)),
           "instantiating a graph for device launch")
    _check(driver.cuGraphUpload(exec_, ctypes.c_void_p(stream.ptr)), "uploading a graph")
    return graph, exec_.value


def launch_graph(exec_: int, stream, driver=None) -> None:
    _check((driver or _driver()).cuGraphLaunch(ctypes.c_void_p(exec_), ctypes.c_void_p(stream.ptr)),
           "launching a graph")


def destroy_graph(graph: int, exec_: int, driver=None) -> None:
    driver = driver or _driver()
    driver.cuGraphExecDestroy(ctypes.c_void_p(exec_))
    driver.cuGraphDestroy(ctypes.c_void_p(graph))


class LevelChain:
    """The device-launched graphs of one GridLoop and a search run by them (GPU; collective captures)."""

    def __init__(self, loop, phases):
        backend, grid = loop.backend, loop.graph.grid
        xp = backend.xp
        self.loop, self.backend, self.phases = loop, backend, tuple(phases)
        self.words = chain_words(len(self.phases))
        self.chain = xp.zeros(self.words, xp.int64)
        self.start = backend.pinned_empty(self.words, np.int64)
        self.done = backend.pinned_empty(self.words, np.int64)
        self.flag = backend.pinned_empty(1, np.int64)
        self.plan = xp.zeros(plan_array().shape, xp.int64)     # its address is in every graph's kernel
        self.driver = _driver()
        self.graphs, self.execs, self.held = [], [], []
        peers = loop.peers
        self.limits = (peers.capacity, peers.edge_limit) if peers is not None else (0, 0)
        plan = plan_array()
        capacity = 2 * max(grid.R, grid.C) + 10
        for code, kind, enqueue, half_after, sends, fixed in loop._chain_graphs():
            marks = GraphMarks(backend, capacity)
            plan[code, CHAIN_AT.EXEC] = self._capture(lambda: self._marked(code, enqueue, marks))
            ids = backend.asarray(marks.phase_ids(self.phases))
            self.held += [marks, ids]
            plan[code, [CHAIN_AT.KIND, CHAIN_AT.HALF_AFTER, CHAIN_AT.MARKS, CHAIN_AT.MARK_COUNT,
                        CHAIN_AT.MARK_PHASES]] = (kind, half_after, marks.device.data.ptr, ids.shape[0], ids.data.ptr)
            for k, (phase, x, half) in enumerate(sends):
                heads, stride, slots, skip, copies, messages = x.staged_heads(half)
                plan[code, CHAIN_AT.SEND0_HEADS + k * SEND_WORDS:][:SEND_WORDS] = (
                    heads, stride, slots, skip, copies, CHAIN_TRAFFIC.index(phase), messages)
            messages, sent, _ = fixed.snapshot()
            for k, phase in enumerate(CHAIN_TRAFFIC):
                plan[code, CHAIN_AT.FIXED0_PHASE + k * FIXED_WORDS:][:FIXED_WORDS] = (k, messages[phase], sent[phase])
        self.first = self._capture(lambda: self._schedule(START_CODE))
        plan[START_CODE, [CHAIN_AT.EXEC, CHAIN_AT.KIND]] = (self.first, CHAIN_KIND.START)
        self.plan.set(plan)

    def _marked(self, code: int, enqueue, marks) -> None:
        marks.restart()
        enqueue(marks.switch)
        marks.switch(None)
        self._schedule(code)

    def _schedule(self, code: int) -> None:
        loop, grid = self.loop, self.loop.graph.grid
        peers = loop.peers
        schedule_next(self.backend, self.chain, self.plan, code, loop.totals.totals_host,
                      None if peers is None else peers.ctl, loop.control, len(self.phases),
                      loop.alpha if loop.bottom_up_allowed else 0.0, loop.beta, grid.n_vertices, *self.limits,
                      grid.R, grid.C, self.done, self.flag)

    def _capture(self, enqueue) -> int:
        graph, exec_ = device_graph(self.backend, self.loop.stream, enqueue, self.driver)
        self.graphs.append(graph)
        self.execs.append(exec_)
        return exec_

    def search(self, clock, traffic, lvl: int, frontier: int, frontier_edges: int, unvisited_edges: int,
               visited: int) -> tuple[int, int, int, bool]:
        """One search's levels from level lvl + 1, the frontier, its edges, the unvisited edges and the visited
        count as the host holds them (the own frontier in queue 0 as a list, the message in half 0): the first
        graph launched and waited for on the flag of the last. Adds the search's sends to `traffic` and its
        phase times to `clock`; returns the last level, the visited count, the unvisited edges and whether any
        level ran bottom-up."""
        self.start[:] = 0
        for word, value in ((CHAIN.CODE, -1), (CHAIN.LEVEL, lvl), (CHAIN.FORM, FORM.LIST), (CHAIN.PARITY, 1),
                            (CHAIN.FRONTIER, frontier), (CHAIN.FRONTIER_EDGES, frontier_edges),
                            (CHAIN.UNVISITED_EDGES, unvisited_edges), (CHAIN.VISITED, visited)):
            self.start[word] = value
        self.flag[0] = 0
        stream = self.loop.stream
        self.backend.copy(self.chain, self.start, stream)
        launch_graph(self.first, stream, self.driver)
        self.backend.launches += 1
        self.backend.wait_flag(self.flag)
        end = self.done.copy()
        if end[CHAIN.ERROR]:
            raise RuntimeError(f"the device could not launch the search's next graph (code {end[CHAIN.CODE]}, "
                               f"CUDA error {end[CHAIN.ERROR]})")
        sums = end[CHAIN_WORDS:]
        for k, phase in enumerate(CHAIN_TRAFFIC):
            traffic.add(phase, int(sums[2 * k]), int(sums[2 * k + 1]), int(sums[2 * k + 1]))
        clock.charge({phase: ns / 1e9 for phase, ns in zip(self.phases, sums[2 * len(CHAIN_TRAFFIC):].tolist())})
        return (int(end[CHAIN.LEVEL]), int(end[CHAIN.VISITED]), int(end[CHAIN.UNVISITED_EDGES]),
                bool(end[CHAIN.ANY_BOTTOMUP]))

    def close(self) -> None:
        for graph, exec_ in zip(self.graphs, self.execs):
            destroy_graph(graph, exec_, self.driver)
        self.execs, self.graphs, self.held = [], [], []
