"""The level loop on a grid of ranks (paper 004, Algorithm 2, sections 3.2-3.5), top-down or
direction-optimizing, driven by the host, lean: per level the host enqueues a few kernels, waits on the
device as few times as its transport allows, and sends what the kernels encoded.

Top-down level: expand (the frontier pieces of the grid column, received as messages and gathered into
local column ids by one kernel) -> frontier expansion (dbfs.ops.expand: atomic bitmap, discoveries grouped
by owner grid column) -> fold (each group encoded by the kernels into its message, list or bitmap
whichever is smaller, and sent to its owner along the grid row) -> frontier update (dbfs.ops.update,
reading the received messages in place). Predecessors are delayed: the owner of a vertex discovered by
another rank records the discoverer's grid column, and after the search the owner reads its
discoverers' records in place (NVSHMEM maps them) or one row exchange (each rank's discoverers of the
others' blocks, sent sparse) brings them, which turns those into global parent ids (section 3.5); on a
grid of one column every discoverer is the owner and pred_row is the parent array.

Bottom-up level (direction-optimizing BFS, Beamer et al.; in 2D after Ueno et al. and Checconi and
Petrini), through the block's row-major copy: the frontier pieces of the grid column are decoded into
bitmap segments; the C segments of a rank's rows (one per owner in the grid row) then rotate along the
row: in sub-step s rank (i, j) searches segment (j - s) mod C for parents (dbfs.ops.bottom_up) and passes
the segment's visited bits to (i, j + 1), so a vertex found by one rank is not searched again by the
others and after C sub-steps every segment is back with its owner, who commits the new vertices.
Where NVSHMEM maps the line's memory nothing rotates: each segment's state stays in its owner's memory,
and the line's ranks search the segments there in the same order, reading the owner's visited bits beside
it and OR-ing what they find into it, so no rank waits for another within the level; one signal round of
the line precedes the commits.
Where NVSHMEM maps the grid column's memory, the commit also stores the new own frontier into every
column peer's frontier bitmap (after a barrier of the column: the peers' searches have read the old bits;
the level's closing totals, a round of every rank, then have the new ones everywhere), so a bottom-up
level after a bottom-up level, and the switch back to top-down (which then unpacks the whole bitmap),
need no frontier message. An
undirected graph can do without the copy (--row-copy off): A is symmetric, so the CSC column of a vertex
lists its neighbours among the block's rows, and the same level runs in mirror image on the CSC, the
columns looking for parents among the rows: the own frontier's message (the expand's) is gathered
along the grid row into a bitmap over the local rows, the R column segments rotate along the grid
column, and the finder keeps the parent (a local row) for its column until the search's end, when each
owner reads its finders' entries in place (NVSHMEM maps them) or one column exchange brings them
(BottomUpSide holds which form a loop runs).

Host waits (dbfs.exchange.LevelExchange): every level ends with one wait, after which one pinned status
record holds what the host decides on -- the new frontier's size, degree sum and entries examined, and
the next expand message, already encoded and staged with its head -- and one allreduce gives everyone the
totals for termination and the direction (where an expand goes through NCCL, an allgather, which also
gives every rank the size of each next expand message, so NCCL moves it at its size). A host-staged
transport (`mpi`) adds the waits its payloads need before MPI can send them: the fold's (top-down) and
each rotation sub-step's (bottom-up); NCCL (messages on the stream) and NVSHMEM (kernels putting each
message into its receiver's memory, signalling and waiting on the device) move them on the stream and add
none. Message sizes come from heads the kernels wrote, buffers and pre-posted receives are made once per
run, and no launch depends on a count read back. On a GPU a top-down level's three kernel sequences
(gather and expansion and fold encoding; update; the next expand message and the status record) are
captured once as CUDA graphs (`Replays`) and replayed, the level number coming from a control block
copied up at the start of each replay: launched one by one, their ~18 kernels cost the host ~0.5 ms a
level. With NVSHMEM, whose rounds are kernels alone (the round counted on the device), a whole level,
top-down or bottom-up with its rotation, sends and closing encode included, is one graph: one launch and
one wait a level, its phase times from timer nodes in the graph (summed after the search, so that the
host's turn between two levels holds only the decision and the next launch). The root's visit, and with
NVSHMEM the parents' resolution, are graphs too. Every wait, launch, message and byte is counted per
level for the per-level log.

Small top-down levels driven by the GPUs (`peer_edges` > 0; with `--comm nvshmem` by default): before a
top-down level whose global frontier is small enough (dbfs.peer_levels.PeerLevels.fits), the loop hands
the search to dbfs.peer_levels, whose kernels run such levels back to back, sending their own messages,
and come back when the next level is a bulk or bottom-up one (or the search is over): one launch and one
wait for the stretch instead of a wait, a collective and a dozen launches per level.

Where every exchange is on the device and no per-level log is asked for, the device also launches the
graphs: each ends in a kernel that decides the next step as the host loop would and launches the next
graph itself (dbfs.level_chain; `--level-launch host` keeps the host's turns), so the host launches a
search's first graph and waits once.

Timing follows Graph500 kernel 2: from just before the root is visited until the parent array is
complete on every rank (the slowest rank's time), state reset excluded; with NVSHMEM the reset ends by
waking the links to the other GPUs, which the validation has left idle long enough to sleep
(dbfs.link_wake).
"""

from __future__ import annotations

import time
from contextlib import nullcontext
from dataclasses import dataclass
from itertools import product

import numpy as np
from mpi4py import MPI

from dbfs import runtime
from dbfs.backend import abandon_capture
from dbfs.direction import next_bottom_up
from dbfs.exchange import Exchange, LevelExchange, OffsetSet
from dbfs.kernels import CHAIN_KIND, CTL, CTL_WORDS, FORM, ROOT, ROOT_WORDS, STAT, STAT_WORDS, STEP
from dbfs.level_chain import LevelChain
from dbfs.line_records import LineRecords
from dbfs.link_wake import LinkWake
from dbfs.ops import bitmap, bottom_up, message
from dbfs.ops.expand import ExpandScratch, expand
from dbfs.ops.frontier import frontier_figures, publish_figures
from dbfs.ops.level_control import visit_root
from dbfs.ops.predecessors import resolve_columns, resolve_parents
from dbfs.ops.schedule import code_of, resolve_code
from dbfs.ops.sparse import Positions, record_bytes
from dbfs.ops.update import update
from dbfs.peer_levels import LevelTotals, PeerLevels, device_bytes as peer_device_bytes
from dbfs.peer_levels import default_capacity as peer_capacity, queue_bytes as peer_queue_bytes
from dbfs.peer_levels import symmetric_bytes as peer_symmetric_bytes
from dbfs.search_state import graph_held_segments
from dbfs.timing import GraphMarks, MarkedTimes
from dbfs.workspace import Workspace, lender_bytes

EXPAND_TAG, FOLD_TAG, FRONT_TAG = 1, 2, 4   # a rotation uses its exchange's tag + 1 on its own communicator
COMPUTE_PHASES = ("expansion", "update")
ROOT_VISIT_KEY = ("root",)                  # the Replays key of the root's visit


def buffer_bytes(grid, encoding: str, transport: str, cpu: bool, direction: str = "auto",
                 by_columns: bool = False, log_levels: bool = False, held: tuple = (None, None)) -> int:
    """What a GridLoop allocates beside the search state: its exchanges' device buffers (the rotation's
    too), the message cursor, the expand's column bases, the control block and the root's place (with
    --comm nvshmem the device-driven levels' buffers, and their log for the per-level log: log_levels),
    and on the CPU backend (where host memory is the device's) the pinned host buffers too: the status
    record, the copies of the control block and of the root's place, and the exchanges' staging (held: as
    in scan_lent_bytes)."""
    on_device, on_host = level_exchange_bytes(grid, encoding, transport, cpu, direction, by_columns)
    device = 4 + 4 * grid.R + 8 * CTL_WORDS + 8 * ROOT_WORDS + on_device
    host = 8 * STAT_WORDS + 8 * CTL_WORDS + 8 * ROOT_WORDS + on_host
    scan = [scan_lent_bytes(grid, transport, cpu, by_columns, held)]   # the predecessor exchanges' lender
    in_place = finds_read_in_place(transport, cpu)
    if grid.C > 1:                              # the row exchange, and the discoverers' addresses
        device += (Exchange.buffer_bytes(grid.C - 1, row_exchange_block(grid, in_place, held[0]), transport, cpu,
                                         scan, packs_dense(in_place, held[0])) + (8 * grid.C if in_place else 0))
    if by_columns and grid.R > 1:               # the column finds' gather, or the table of their places
        device += (8 * grid.R if in_place else
                   Exchange.buffer_bytes(grid.R - 1, gather_block(grid, held[1]), transport, cpu, scan,
                                         packs_dense(in_place, held[1])))
    if transport == "nvshmem" and not cpu:
        device += (peer_device_bytes(grid, peer_capacity(grid), log_levels) + LevelTotals.device_bytes(grid.size)
                   + LinkWake.device_bytes(grid.size))
    return device + (host if cpu else 0)


def symmetric_bytes(grid, encoding: str, direction: str = "auto", by_columns: bool = False,
                    columns: int | None = None, rows: int | None = None, slots: int | None = None,
                    segment_slots: int | None = None) -> int:
    """What a GridLoop with --comm nvshmem allocates on the NVSHMEM symmetric heap: its level exchanges'
    buffers (every one of them symmetric), the once-a-search rounds' landings and signal words
    (NvshmemPuts), the search state's arrays read or written in place by other ranks (fronts_in_place and
    segments_in_place among them; the frontier queues where the device-driven levels read them in place),
    the device-driven levels' landings, the bulk levels' total records and the span read to wake the
    links. The records read in place, with their Positions where they are held by position, and the
    queues, for a block of `columns` non-empty columns and `rows` non-empty rows, queue groups of `slots`
    and `segment_slots` (None: not counted, every one; search_state.layout)."""
    rounds = 0
    if grid.C > 1:                              # the visited bitmaps' landing; the discoverers, read in place
        rounds += (4 * (grid.C - 1) * row_exchange_block(grid, True) + 8 * grid.C
                   + record_bytes(grid.rows_per_rank, rows))
    if by_columns and grid.R > 1:               # the column finds, read in place (in the search state too)
        rounds += record_bytes(grid.cols_per_rank, columns)
    if fronts_in_place(grid, direction, by_columns):
        rounds += grid.cols_per_rank // 8       # the bottom-up frontier bitmap (in the search state too)
    if segments_in_place(grid, direction, by_columns, "nvshmem", False):   # (both in the search state too)
        rounds += grid.block // 8 + grid.rows_per_rank // 8     # the segment's state, the visited bitmap
    capacity = peer_capacity(grid)
    rounds += peer_queue_bytes(grid, capacity, slots, segment_slots)
    return (peer_symmetric_bytes(grid, capacity) + rounds + LevelTotals.symmetric_bytes(grid.size)
            + LinkWake.symmetric_bytes()
            + level_exchange_bytes(grid, encoding, "nvshmem", False, direction, by_columns)[0])


def fronts_in_place(grid, direction: str, by_columns: bool) -> bool:
    """Whether, where NVSHMEM maps the grid column's memory, a bottom-up level's commit stores the new own
    frontier straight into the column peers' frontier bitmaps (GridLoop.front_peers)."""
    return direction == "auto" and not by_columns and grid.R > 1


def segments_in_place(grid, direction: str, by_columns: bool, transport: str, cpu: bool) -> bool:
    """Whether a bottom-up level's ranks search their line's segments (the grid row's; the grid column's
    where they search the CSC's columns) where the segments' owners keep them (NVSHMEM maps the line's
    memory: GridLoop.segment_steps), with no rotation."""
    line = grid.R if by_columns else grid.C
    return direction == "auto" and line > 1 and finds_read_in_place(transport, cpu)


def scan_lent_bytes(grid, transport: str, cpu: bool, by_columns: bool = False, held: tuple = (None, None)) -> int:
    """What the predecessor exchanges carve out of the expansion's degree scan (search_state.layout holds
    at least this): the row exchange's buffers (several grid columns) or the column finds' gather's
    (several grid rows, bottom-up on the CSC's columns, not read in place), whichever is more; held: the
    most rows and columns with an entry in a segment where the records are held by position
    (search_state.held_segments; None: not)."""
    in_place = finds_read_in_place(transport, cpu)
    needs = [0]
    if grid.C > 1:
        needs.append(lender_bytes(Exchange.lent_requests(grid.C - 1, row_exchange_block(grid, in_place, held[0]),
                                                         transport, cpu, packs_dense(in_place, held[0]))))
    if by_columns and grid.R > 1 and not in_place:
        needs.append(lender_bytes(Exchange.lent_requests(grid.R - 1, gather_block(grid, held[1]), transport, cpu,
                                                         packs_dense(in_place, held[1]))))
    return max(needs)


def packs_dense(in_place: bool, held: int | None) -> bool:
    """Whether a gather of records packs them through its Exchange's send scratch (dbfs.line_records): where
    they are gathered (not read in place) and held densely (`held` None), not by position (sent in place)."""
    return not in_place and held is None


def gather_block(grid, held: int | None) -> int:
    """The block of words a peer of an Exchange that gathers a record along a grid line (LineRecords): a
    block's presence or Positions words (b / 32) and its values, at most `held` where the record is held
    by position (a segment's most members with an entry; 0: read in place, no values), else b; rounded up
    to a multiple of 32."""
    return grid.block if held is None else -(-max(grid.block // 32, held) // 32) * 32


def row_exchange_block(grid, in_place: bool, held: int | None = None) -> int:
    """The block of words of row_x (GridLoop), which also carries the visited bitmaps (b / 32 words):
    gather_block of the discoverers (`held`: a segment's most rows with an entry where they are held by
    position, None where they are not; nothing where they are read in place)."""
    return gather_block(grid, 0 if in_place else held)


def finds_read_in_place(transport: str, cpu: bool) -> bool:
    """Whether the owners read the discoverers' records and the column finds where their finders keep
    them (NVSHMEM maps the peers' memory), with no gather after the search."""
    return transport == "nvshmem" and not cpu


def level_exchange_bytes(grid, encoding: str, transport: str, cpu: bool, direction: str,
                         by_columns: bool = False) -> tuple[int, int]:
    """(device, pinned host) bytes of a GridLoop's level exchanges: the expand along the grid column, the
    fold along the grid row, and with bottom-up levels the rotation (along the row, or, where they search
    the CSC's columns, along the column, the frontier then gathered along the row with the expand's
    message buffer where there is one; none where the segments are searched in place)."""
    rotates = direction == "auto" and not segments_in_place(grid, direction, by_columns, transport, cpu)
    lines = [(grid.R, True, rotates and by_columns, True), (grid.C, False, rotates and not by_columns, True)]
    if by_columns:
        lines.append((grid.C, True, False, grid.R == 1))
    device = host = 0
    for size, shared, rotation, own_out in lines:
        if size > 1:
            on_device, on_host = LevelExchange.buffer_bytes(size, grid.block, encoding, transport, shared,
                                                            rotation, cpu, own_out)
            device, host = device + on_device, host + on_host
    return device, host


class Traffic:
    """Messages and bytes sent per phase in one search, as encoded and as lists."""

    def __init__(self):
        self.sent = {"expand": 0, "fold": 0}
        self.raw = {"expand": 0, "fold": 0}
        self.messages = {"expand": 0, "fold": 0}

    def add(self, phase: str, messages: int, sent: int, raw: int) -> None:
        self.messages[phase] += messages
        self.sent[phase] += sent
        self.raw[phase] += raw

    def snapshot(self) -> tuple:
        return dict(self.messages), dict(self.sent), dict(self.raw)


class Replays:
    """Fixed kernel sequences of a level replayed as CUDA graphs: a sequence runs eagerly the first time
    (its modules load), is captured the second time and replayed with one launch from then on. A graph
    is uploaded to the device as it is captured (its first launch, in a timed search, would upload it
    otherwise: bench/NOTES.md, 2026-11-26, the graphs uploaded as they are captured). On the CPU
    backend, and after a failed capture (with a warning), sequences are enqueued call by call."""

    def __init__(self, backend, stream):
        self.backend, self.stream = backend, stream
        self.graphs, self.seen, self.enabled, self.marks = {}, set(), backend.is_gpu, {}

    def run(self, key, enqueue) -> None:
        graph = self.graphs.get(key)
        if graph is None and self.enabled and key in self.seen:
            graph = self._capture(key, enqueue)
        if graph is None:
            self.seen.add(key)
            enqueue()
            return
        self._launch(graph)

    def _launch(self, graph) -> None:
        graph.launch(self.stream)
        self.backend.launches += 1

    def run_marked(self, key, enqueue, capacity: int, capture_only: bool = False) -> GraphMarks:
        """As `run`, for enqueue(mark), which calls mark(phase) where its phases begin: the marks are
        timer nodes in the graph (at most `capacity`); returns them, whose seconds() are this run's phase
        times once it has been waited for (their `wait`: the graph raises a flag as it ends). capture_only:
        captured now, nothing run (the kernels must have been loaded: dbfs.backend warm-up)."""
        marks = self.marks.get(key)
        if marks is None:
            marks = self.marks[key] = GraphMarks(self.backend, capacity, flagged=True)
        if not capture_only:
            marks.arm()
            graph = self.graphs.get(key)
            if graph is not None:               # captured: launched with no more on the host's turn
                self._launch(graph)
                return marks

        def marked():
            marks.restart()
            enqueue(marks.switch)
            marks.switch(None)
            marks.copy_out(self.stream)
        (self.prepare if capture_only else self.run)(key, marked)
        return marks

    def prepare(self, key, enqueue) -> None:
        """Capture enqueue() as key's graph now, running nothing (its kernels must have been loaded:
        dbfs.backend warm-up)."""
        if self.enabled and key not in self.graphs:
            self._capture(key, enqueue)

    def _capture(self, key, enqueue):
        launches = self.backend.launches
        try:
            self.stream.begin_capture()
            enqueue()
            self.graphs[key] = self.stream.end_capture()
            self.graphs[key].upload(self.stream)
        except (RuntimeError, OSError) as error:    # CuPy's CUDA errors are RuntimeErrors
            abandon_capture(self.stream)
            self.enabled = False
            runtime.warn(f"the grid loop's levels could not be captured as CUDA graphs ({error}); enqueuing "
                         "their kernels one by one")
            return None
        finally:
            self.backend.launches = launches
        return self.graphs[key]


@dataclass(frozen=True)
class BottomUpSide:
    """What a bottom-up level reads and where its pieces travel (see the module docstring): the
    adjacency it searches (pointers, indices), the frontier bitmap over the indices' range and the
    exchange gathering it (None: one rank on that line), the exchange rotating the segments (None: one
    rank on that line) and their phases, each sub-step's segment base, where a find records its parent
    (an index) and the Positions it is held by (None: by the index itself), and the array whose owned
    entries the commit marks BOTTOM_UP (None: the finder is the owner and its record is the parent);
    pointers_held: the Positions whose members' offsets the adjacency's pointers hold (None: every
    index's)."""

    adjacency: tuple
    frontier: object
    gather: object
    gather_phase: str
    rotation: object
    rotation_phase: str
    bases: tuple
    found: object
    found_at: object
    marker: object
    pointers_held: object = None


class GridLoop:
    """Runs searches on one rank of an R x C grid (R*C > 1) with a SearchState (collective)."""

    def __init__(self, graph, state, direction: str, alpha: float, beta: float, edges_per_thread: int,
                 encoding: str, comm: str, peer_edges: int = 0, level_launch: str = "device"):
        """level_launch: "device" where every exchange is on the device (whole levels): the searches without
        a per-level log run as graphs that launch each other (dbfs.level_chain); "host": the host launches
        each."""
        self.graph, self.state, self.backend = graph, state, graph.backend
        grid, comms = graph.grid, graph.comms
        self.on_heap = []                           # the search state's arrays moved to the NVSHMEM heap
        backend, b, xp = self.backend, grid.block, self.backend.xp
        i, j = comms.i, comms.j
        self.bottom_up_allowed = direction == "auto"
        self.by_columns = state.by_columns
        self.alpha, self.beta, self.edges_per_thread, self.encoding = alpha, beta, edges_per_thread, encoding
        shared_segments = segments_in_place(grid, direction, self.by_columns, comm, not backend.is_gpu)
        self.expand_x = (LevelExchange(comms.col, backend, b, encoding, comm, shared=True, tag=EXPAND_TAG,
                                       rotation=self.by_columns and not shared_segments) if grid.R > 1 else None)
        self.fold_x = (LevelExchange(comms.row, backend, b, encoding, comm, shared=False, tag=FOLD_TAG,
                                     rotation=self.bottom_up_allowed and not self.by_columns and not shared_segments)
                       if grid.C > 1 else None)
        self.front_x = (LevelExchange(comms.row, backend, b, encoding, comm, shared=True, tag=FRONT_TAG,
                                      out=self.expand_x)
                        if self.by_columns and grid.C > 1 else None)
        # the own frontier's message, encoded once a level for the exchanges that send it, into one of
        # `halves` buffers (LevelExchange.out_of: under NVSHMEM two, the one a level's closing encode
        # writes being the other after a round that read a message: _next_half)
        self.frontier_xs = [x for x in (self.expand_x, self.front_x) if x is not None]
        self.halves = len(self.frontier_xs[0].outs) if self.frontier_xs else 1
        # the discoverers' and the column finds' way to their owners: read in place (NVSHMEM maps the
        # finders' records) or gathered; row_x also carries the switch back to top-down's visited bitmaps
        # (its buffers in the expansion's degree scan, idle before a level's expansion and after the last)
        in_place = finds_read_in_place(comm, not backend.is_gpu)
        held = graph_held_segments(graph, self.by_columns)
        self.row_x = self.col_x = self.discoverers = self.column_finds = None
        if grid.C > 1:
            self.row_x = Exchange(comms.row, backend, row_exchange_block(grid, in_place, held[0]), encoding, comm,
                                  Workspace(backend, [state.cumul]), packs_dense(in_place, held[0]))
            self.discoverers = LineRecords(backend, state, "pred_row", "row", j,
                                           [grid.rank(i, m) for m in range(grid.C)],
                                           None if in_place else self.row_x, self._map_to_heap)
        if self.by_columns:
            if grid.R > 1 and not in_place:
                self.col_x = Exchange(comms.col, backend, gather_block(grid, held[1]), encoding, comm,
                                      Workspace(backend, [state.cumul]), packs_dense(in_place, held[1]))
            self.column_finds = LineRecords(backend, state, "column_parent", "column", i,
                                            [grid.rank(p, j) for p in range(grid.R)], self.col_x, self._map_to_heap)
            if graph.columns is not None and self.column_finds.mapped is not None:
                graph.columns = state.column_positions      # moved to the heap: one copy (back on close)
        # the bottom-up frontier bitmap where NVSHMEM maps it: a bottom-up level's commit stores the new
        # own frontier into every grid-column peer's copy of this rank's segment (front_peers)
        self.front_peers = None
        if in_place and fronts_in_place(grid, direction, self.by_columns):
            self.front_peers = self._map_to_heap(state, "col_front", [grid.rank(p, j) for p in range(grid.R)],
                                                 offset=4 * state.words * i, skip=i)
        # the bottom-up segment states of the line that the segments pass along, and their owners' visited
        # bits, each in its owner's memory, mapped here, in the order of the sub-steps that search them
        # (segments_in_place)
        step_segments = step_visited = None
        if shared_segments:
            from dbfs import nvshmem
            own = self._move_to_heap(state, "segment")
            self._move_to_heap(state, "visited")
            me, size = (i, grid.R) if self.by_columns else (j, grid.C)
            ranks = [grid.rank(p, j) if self.by_columns else grid.rank(i, p) for p in range(size)]
            owners = [(me - step) % size for step in range(size)]
            # each owner's visited bits where that owner keeps them: its grid column's segment of its bitmap
            owned = [state.own_visited(j if self.by_columns else m) for m in owners]
            step_segments = [own if m == me else nvshmem.peer_array(backend, own, ranks[m]) for m in owners]
            step_visited = [bits if m == me else nvshmem.peer_array(backend, bits, ranks[m])
                            for m, bits in zip(owners, owned)]
        self.col_bases = backend.asarray(np.array([grid.owned_col(p, 0) for p in range(grid.R)], np.int32))
        self.total_degree = comms.world.allreduce(int(graph.degree.sum()))
        self.scratch = ExpandScratch(state.cumul, state.tile_sums, state.columns, state.chunks)
        self.status = backend.pinned_empty(STAT_WORDS, np.int64)
        self.cursor = xp.zeros(1, xp.int32)
        self.own_visited = state.own_visited()
        self.own_front = state.own_front() if direction == "auto" else None
        self.side = self._bottom_up_side() if direction == "auto" else None
        self.segment_steps = (bottom_up.SegmentSteps(backend, step_segments, step_visited, self.side.bases)
                              if shared_segments else None)
        self.control = xp.zeros(CTL_WORDS, xp.int64)
        self.control_host = backend.pinned_empty(CTL_WORDS, np.int64)
        self.control_host[:] = 0
        self.control_host[CTL.STEP] = STEP.TOPDOWN
        self.root_place = xp.zeros(ROOT_WORDS, xp.int64)
        self.root_place_host = backend.pinned_empty(ROOT_WORDS, np.int64)
        self.root_place_host[:] = 0
        self.stream = xp.cuda.Stream(non_blocking=True) if backend.is_gpu else None
        self.unsettled = []                     # (traffic, phase, exchange) whose bytes the heads will give
        self.replays = Replays(backend, self.stream)
        self.peers = PeerLevels(graph, state, peer_edges) if peer_edges else None
        self.whole_levels = backend.is_gpu and all(x.on_device for x in self._exchanges())
        self.totals = LevelTotals(backend, comms.world) if self.whole_levels else None
        self.wake = LinkWake(backend, comms.world) if self.whole_levels else None
        self.chained = self.whole_levels and level_launch == "device"
        self.chain = None                       # its LevelChain, made before its first search
        self.level_launch = "host"              # who launched the last search's level graphs

    def close(self) -> None:
        for x in (self.expand_x, self.fold_x, self.front_x, self.row_x, self.col_x, self.peers, self.totals,
                  self.wake, self.chain):
            if x is not None:
                x.close()
        from dbfs import nvshmem
        held = self.graph.columns
        if "column_words" in self.on_heap and held is not None:     # the graph's, off the heap before it goes
            self.graph.columns = Positions(held.words.copy(), held.starts.copy(), held.count)
        for name in self.on_heap:
            nvshmem.free(getattr(self.state, name))

    def _map_to_heap(self, state, name: str, line_ranks: list, offset: int = 0, skip: int = -1):
        """Collective: the search state's array `name` moved to the NVSHMEM symmetric heap; returns the
        addresses, here, of `offset` bytes into the copies at the world ranks `line_ranks` (a grid line, in
        its order), 0 for the line's rank `skip`."""
        from dbfs import nvshmem
        moved = self._move_to_heap(state, name)
        addresses = [0 if k == skip else nvshmem.peer_address(moved.data.ptr + offset, rank)
                     for k, rank in enumerate(line_ranks)]
        return self.backend.asarray(np.array(addresses, np.uint64))

    def _move_to_heap(self, state, name: str):
        """Collective: the search state's array `name` moved to the NVSHMEM symmetric heap (given back on close)."""
        from dbfs import nvshmem
        self.on_heap.append(name)
        return nvshmem.move_to_heap(self.backend, state, name)

    def _exchanges(self):
        return [x for x in (self.expand_x, self.fold_x, self.front_x) if x is not None]

    def _bottom_up_side(self) -> BottomUpSide:
        g, s = self.graph, self.state
        grid, i, j = g.grid, g.comms.i, g.comms.j
        if self.by_columns:
            return BottomUpSide((g.col_ptr, g.row_idx), s.row_front, self.front_x, "fold", self.expand_x, "expand",
                                tuple(grid.owned_col((i - step) % grid.R, 0) for step in range(grid.R)),
                                s.column_parent, s.column_positions, s.pred_col if grid.C > 1 else s.parent,
                                g.columns)
        return BottomUpSide((g.row_ptr, g.col_idx), s.col_front, self.expand_x, "expand", self.fold_x, "fold",
                            tuple(grid.owned_row((j - step) % grid.C, 0) for step in range(grid.C)),
                            s.pred_row, s.row_positions, s.pred_col)

    def _wait(self, marks: GraphMarks | None = None) -> None:
        """One wait on the device (for the replay of `marks` where given: on its flag); the receives whose
        messages were decoded before it are posted again."""
        started = time.perf_counter()
        if marks is None:
            self.backend.sync()
        else:
            marks.wait()
        self.wait_seconds += time.perf_counter() - started
        if not self.whole_levels:               # (a whole level's exchanges post no receives)
            for x in self._exchanges():
                x.after_wait()

    def _wait_replay(self, marks: GraphMarks, clock) -> MarkedTimes:
        """The wait on a replay's flag, its marks charged to the clock (read after the search); returns them."""
        self._wait(marks)
        times = marks.taken()
        clock.charge_marked(times)
        return times

    def run(self, root: int, clock, traffic: Traffic, log_levels: bool) -> dict:
        """One search from global vertex `root` (the state reset); returns the global figures."""
        with self.stream if self.stream is not None else nullcontext():
            if log_levels and self.peers is not None and self.peers.keep_log():
                self.replays = Replays(self.backend, self.stream)    # the stretches' graphs hold the log
            if self.whole_levels and not self.replays.graphs:
                self._capture_levels()
            if self.chained and not log_levels and self.chain is None:
                self._make_chain(clock)
            return self._run(root, clock, traffic, log_levels)

    def _make_chain(self, clock) -> None:
        """The graphs of a search that the device launches (collective; where the device runtime cannot
        be linked, every rank says why and the host launches them)."""
        error = None
        try:
            self.chain = LevelChain(self, clock.phases)
        except (RuntimeError, OSError, self.backend.xp.cuda.compiler.CompileException) as failure:
            error = str(failure).splitlines()[0] if str(failure) else type(failure).__name__
        errors = [e for e in self.graph.comms.world.allgather(error) if e is not None]
        if errors:
            if self.chain is not None:
                self.chain.close()
            self.chain, self.chained = None, False
            runtime.warn(f"the device cannot launch the search's graphs ({errors[0]}); the host launches them")

    def _capture_levels(self) -> None:
        """Every kind of whole level captured before the first search (capturing runs nothing), so no
        search pays a capture: top-down from either queue, after a top-down level or a bottom-up one;
        bottom-up (packing the list first where the grid has one row: from either queue), where the
        direction allows it; the device-driven stretch from either queue; the root's visit and the
        parents' resolution (after bottom-up levels or none)."""
        bottom_up_too = self.bottom_up_allowed
        self.replays.prepare(ROOT_VISIT_KEY, self._enqueue_visit_root)
        for any_bottom_up in (False, True) if bottom_up_too else (False,):
            if self._resolves(any_bottom_up):
                self._replay_level(("resolve", any_bottom_up), self._resolve_enqueue(any_bottom_up), capture_only=True)
        bottom_up_kinds = sorted({self._bottom_up_kind(form) for form in ("list", "bits")}) if bottom_up_too else []
        for parity, half in product((True, False), range(self.halves)):
            queue, counts, dst, dst_cnt = self._queues(parity)
            for switch in ((False, True) if bottom_up_too else (False,)):
                self._replay_level(self._level_key(False, switch, parity, False, half),
                                   self._top_down_enqueue(switch, queue, counts, dst, dst_cnt, half), capture_only=True)
            for pack, gathered in bottom_up_kinds:
                self._replay_level(self._level_key(True, pack, parity, gathered, half),
                                   self._bottom_up_enqueue(pack, queue, counts, gathered, half), capture_only=True)
            for switch in ((False, True) if bottom_up_too else (False,)) if self.peers is not None else ():
                self._replay_level(self._stretch_key(switch, parity, half),
                                   self._stretch_enqueue(queue, counts, dst, switch, half), capture_only=True)

    def _chain_graphs(self):
        """Every graph a search that the device launches may run (dbfs.level_chain), one per code
        (dbfs.ops.schedule.code_of: a stretch, a whole top-down or bottom-up level, from each frontier form,
        queue parity and message half; the parents' resolutions), as the host-driven search would replay it
        but with where the search stands set on the device: (code, kind, enqueue(mark), the message half
        after it, its sends read from their staged heads as (phase, exchange, half), the bytes the host
        counts by formula as a Traffic)."""
        bottom_up_too = self.bottom_up_allowed
        for any_bottom_up in (False, True) if bottom_up_too else (False,):
            if self._resolves(any_bottom_up):
                yield (resolve_code(any_bottom_up), CHAIN_KIND.RESOLVE, self._resolve_enqueue(any_bottom_up), 0,
                       [], Traffic())
        forms = (FORM.LIST, FORM.BITS) if bottom_up_too else (FORM.LIST,)
        for form, parity, half in product(forms, (1, 0), range(self.halves)):
            queue, counts, dst, dst_cnt = self._queues(parity)
            bits = form == FORM.BITS
            visited_sends = Traffic()
            if bits:
                self._count_visited_sends(visited_sends)
            if self.peers is not None:
                yield (code_of(CHAIN_KIND.STRETCH, form, parity, half), CHAIN_KIND.STRETCH,
                       self._stretch_enqueue(queue, counts, dst, bits, half, host_control=False), half, [],
                       visited_sends)
            x = self._frontier_exchange(False, bits, False)
            sends = ([("expand", x, half)] if x is not None else []) + (
                [("fold", self.fold_x, 0)] if self.fold_x is not None else [])
            yield (code_of(CHAIN_KIND.TOPDOWN, form, parity, half), CHAIN_KIND.TOPDOWN,
                   self._top_down_enqueue(bits, queue, counts, dst, dst_cnt, half, host_control=False),
                   self._next_half(half, x is not None), sends, visited_sends)
            if bottom_up_too:
                pack, gathered = self._bottom_up_kind("bits" if bits else "list")
                x = self._frontier_exchange(True, pack, gathered)
                fixed = Traffic()
                self._count_rotation(fixed)
                self._count_front_writes(fixed)
                sends = [(self.side.gather_phase, x, half)] if x is not None else []
                yield (code_of(CHAIN_KIND.BOTTOMUP, form, parity, half), CHAIN_KIND.BOTTOMUP,
                       self._bottom_up_enqueue(pack, queue, counts, gathered, half, host_control=False),
                       self._next_half(half, x is not None), sends, fixed)

    def _queues(self, parity) -> tuple:
        """(the own frontier's queue, its counts, the other queue, its counts) where `parity` says the own
        frontier is in queue 0."""
        s = self.state
        return (s.queue0, s.counts0, s.queue1, s.counts1) if parity else (s.queue1, s.counts1, s.queue0, s.counts0)

    def _bottom_up_kind(self, form: str) -> tuple[bool, bool]:
        """(pack, gathered) of a bottom-up level after a level that left the own frontier as `form` ("list"
        or "bits"): a list is packed where the grid has one row; elsewhere the frontier comes as messages,
        but after a bottom-up level whose commit left it in place (front_peers)."""
        if self.side.gather is None:
            return form == "list", False
        return False, self.front_peers is None or form == "list"

    def _run(self, root: int, clock, traffic: Traffic, log_levels: bool) -> dict:
        backend, s, g = self.backend, self.state, self.graph
        grid, comms = g.grid, g.comms
        j = comms.j
        own_root = grid.owns(comms.i, j, root)
        root_offset = int(grid.owned_offset(root))
        root_degree = comms.world.allreduce(int(g.degree[root_offset]) if own_root else 0)
        if self.peers is not None:
            self.peers.start_search()
        if self.wake is not None:               # before the clock: its first messages find the links awake
            self.wake.enqueue()
        backend.sync()
        comms.world.Barrier()
        self.wait_seconds, self.half = 0.0, 0
        t_start = time.perf_counter()
        clock.start(per_level=log_levels)
        queue, counts = s.queue0, s.counts0
        if own_root:
            self.root_place_host[[ROOT.ID, ROOT.ROW, ROOT.OFFSET, ROOT.GROUP]] = (
                root, grid.owned_row(j, root_offset), root_offset, j)
            self.replays.run(ROOT_VISIT_KEY, self._enqueue_visit_root)
        if not self._stretch_next(False, 1, root_degree):             # a stretch encodes its own
            self._end_level(clock, queue, counts, bits=False)
            if self.expand_x is not None and self.expand_x.sized:
                self._level_totals()            # the sizes of the first expand messages
        unvisited_edges = self.total_degree - root_degree
        levels, stretches = [], []
        self.level_launch = "device" if self.chain is not None and not log_levels else "host"
        if self.level_launch == "device":       # the parents' resolution included
            clock.switch(None)
            lvl, visited, unvisited_edges, any_bottom_up = self.chain.search(clock, traffic, 0, 1, root_degree,
                                                                             unvisited_edges, 1)
            reached_degrees = self.total_degree - unvisited_edges
        else:
            lvl, visited, reached_degrees, any_bottom_up = self._host_levels(
                clock, traffic, log_levels, levels, stretches, root_degree, unvisited_edges)
            if self.whole_levels:               # kernels alone: one graph, waited for on its flag
                if self._resolves(any_bottom_up):
                    marks = self._replay_level(("resolve", any_bottom_up), self._resolve_enqueue(any_bottom_up))
                    self._wait_replay(marks, clock)
            else:
                clock.switch("pred_resolve")
                self._resolve_parents(any_bottom_up)
                clock.switch(None)
                backend.sync()
        elapsed = comms.world.allreduce(time.perf_counter() - t_start, op=MPI.MAX)
        self._count_stretch_traffic(traffic, stretches)
        stretch_log = self.peers.search_log() if stretches and log_levels else None
        rows = []
        for row in levels:
            if isinstance(row, tuple):          # a device-driven stretch: its log becomes its levels' rows
                rows.extend(self._stretch_rows(stretch_log, *row))
                continue
            phases, charged = clock.totals(*row.pop("marks")), row.pop("charged")
            charged = charged.seconds() if charged is not None else {}
            row["device_time"] = sum(phases[phase] + charged.get(phase, 0.0) for phase in COMPUTE_PHASES)
            rows.append(row)
        return {"time": elapsed, "depth": lvl - 1, "visited": visited, "reached_degrees": reached_degrees,
                "levels": rows}

    def _host_levels(self, clock, traffic, log_levels: bool, levels: list, stretches: list, root_degree: int,
                     unvisited_edges: int) -> tuple[int, int, int, bool]:
        """The search's levels with a turn of the host between two graphs (the per-level log, exchanges
        through MPI or NCCL, or where the device does not launch them: dbfs.level_chain), from the root's
        on: the stretches and the per-level log's rows appended to `stretches` and `levels`; returns the
        last level, the visited count, the edges reached and whether any level ran bottom-up."""
        grid = self.graph.grid
        queue, counts, spare, spare_counts = self._queues(True)
        lvl, frontier_total, visited, reached_degrees, frontier_degrees = 0, 1, 1, root_degree, root_degree
        bottom_up_level, form, any_bottom_up = False, "list", False
        while True:
            if self._stretch_next(bottom_up_level, frontier_total, frontier_degrees):
                switch = form == "bits"
                if switch and not self.whole_levels:
                    self._bits_to_list(clock, traffic, queue, counts)
                form = "list"
                end, stretch = self._peer_stretch(clock, traffic, switch and self.whole_levels, queue, counts,
                                                  spare, lvl + 1, frontier_total, frontier_degrees,
                                                  unvisited_edges, visited)
                lvl, visited, unvisited_edges = end["LEVEL"] - 1, end["VISITED"], end["UNVISITED_EDGES"]
                frontier_total, frontier_degrees = end["FRONTIER"], end["FRONTIER_EDGES"]
                reached_degrees = self.total_degree - unvisited_edges
                stretches.append(stretch)
                if log_levels:
                    levels.append(stretch)
                if end["STEP"] == STEP.DONE:
                    break
                bottom_up_level = end["STEP"] == STEP.BOTTOMUP
                continue
            before = self._level_start(clock, traffic) if log_levels else None
            lvl += 1
            any_bottom_up |= bottom_up_level
            switch = not bottom_up_level and form == "bits"
            pack, gathered = self._bottom_up_kind(form) if bottom_up_level else (False, False)
            charged = None                      # a whole level's marks (MarkedTimes)
            if self.whole_levels:
                charged = self._whole_level(clock, traffic, lvl, bottom_up_level, switch or pack, queue, counts,
                                            spare, spare_counts, gathered)
            elif not bottom_up_level:
                if switch:
                    self._bits_to_list(clock, traffic, queue, counts)
                self.control_host[CTL.LEVEL] = lvl
                self._top_down_level(clock, traffic, queue, counts, spare, spare_counts)
            else:
                self._bottom_up_level(clock.switch, lambda phase, x: self._send(traffic, phase, x), self._wait,
                                      lvl, None, pack, queue, counts)
                self._count_rotation(traffic)
            if not bottom_up_level:
                queue, spare, counts, spare_counts = spare, queue, spare_counts, counts
            form = "bits" if bottom_up_level else "list"
            if not self.whole_levels:
                self._end_level(clock, queue, counts, bits=bottom_up_level)
            if not self.whole_levels:           # the totals' collective
                clock.switch("fold_comm")
            level_frontier, (frontier_total, frontier_degrees) = frontier_total, self._level_totals()
            if log_levels:
                levels.append(self._level_row(before, clock, traffic, lvl - 1, bottom_up_level, level_frontier,
                                              int(self.status[STAT.CHECKED]), charged))
            if frontier_total == 0:
                break
            visited += frontier_total
            reached_degrees += frontier_degrees
            unvisited_edges -= frontier_degrees
            bottom_up_level = self.bottom_up_allowed and next_bottom_up(
                bottom_up_level, frontier_total, level_frontier, frontier_degrees, unvisited_edges,
                self.alpha, self.beta, grid.n_vertices)

        return lvl, visited, reached_degrees, any_bottom_up

    def _level_start(self, clock, traffic) -> tuple:
        """What a level's log row is measured from (taken only for the per-level log)."""
        backend = self.backend
        return (time.perf_counter(), backend.host_syncs, backend.launches, self.wait_seconds, clock.marks,
                traffic.snapshot())

    def _level_row(self, before, clock, traffic, level: int, bottom_up_level: bool, frontier: int, checked: int,
                   charged) -> dict:
        """A host-driven or whole level's row of the per-level log (its phases resolved after the search)."""
        started, syncs, launches, waited, marks, traffic_before = before
        wall = time.perf_counter() - started
        messages, sent, raw = ({k: now[k] - then[k] for k in now}
                               for now, then in zip(traffic.snapshot(), traffic_before))
        return {"level": level, "direction": "bottomup" if bottom_up_level else "topdown",
                "frontier": frontier, "edges": checked, "time": wall,
                "host_time": wall - (self.wait_seconds - waited), "marks": (marks, clock.marks),
                "charged": charged, "bytes": sum(sent.values()), "bytes_raw": sum(raw.values()),
                "phase_bytes": sent, "messages": messages, "host_syncs": self.backend.host_syncs - syncs,
                "launches": self.backend.launches - launches}

    def _enqueue_visit_root(self) -> None:
        """The root's visit on its owner (a search starts from queue 0), where root_place_host says it
        lies: one graph for every root."""
        s = self.state
        self.backend.copy(self.root_place, self.root_place_host)
        visit_root(self.backend, s.visited, s.level, s.parent, s.queue0, s.counts0, self.root_place)

    def _end_level(self, clock, queue, counts, bits: bool) -> None:
        """The level's one closing wait: the new own frontier encoded as the next expand message and
        staged, the level counters copied to the status record and cleared for the next level."""
        clock.switch("update")
        for x in self.frontier_xs:
            x.finish_sends()                    # this level's sends of the own frontier read the staging
        self.replays.run(("end", bits, queue is self.state.queue0, self.half),
                         lambda: self._enqueue_end(queue, counts, bits, half=self.half))
        self._wait()
        self._settle()

    def _settle(self) -> None:
        """After a level's wait: the bytes of the sends whose heads the level staged."""
        for traffic, phase, x in self.unsettled:
            sent = x.staged_bytes()
            traffic.add(phase, 0, sent, sent)
        self.unsettled.clear()

    def _whole_level(self, clock, traffic, lvl: int, bottom_up_level: bool, first: bool, queue, counts, dst,
                     dst_cnt, gathered: bool) -> MarkedTimes:
        """A level whose exchanges are kernels alone (NVSHMEM), from its sends to its closing encode and
        status copy, replayed as one CUDA graph (every kind captured before the first search): one
        launch and one wait. `first`: a top-down level first turns the bottom-up frontier into a list
        (and brings the row's visited bits up to date), a bottom-up one first packs the list; gathered:
        a bottom-up level's frontier comes as messages (not already in place: front_peers). The level
        number and its step reach the kernels through the control block. The sends are counted after the
        launch, from their heads (the level stages the next ones into the other half of the staging) or
        the sizes the host knows (a fold's bytes after the wait). Returns its marks (read after the
        search)."""
        self.control_host[CTL.LEVEL] = lvl
        self.control_host[CTL.STEP] = STEP.BOTTOMUP if bottom_up_level else STEP.TOPDOWN
        frontier_x = self._frontier_exchange(bottom_up_level, first, gathered)
        half = self.half
        if bottom_up_level:
            enqueue = self._bottom_up_enqueue(first, queue, counts, gathered, half)
        else:
            enqueue = self._top_down_enqueue(first, queue, counts, dst, dst_cnt, half)
        clock.switch(None)                      # the graph's phases are charged from its own marks
        marks = self._replay_level(self._level_key(bottom_up_level, first, queue is self.state.queue0, gathered,
                                                   half), enqueue)
        self.half = self._next_half(half, frontier_x is not None)
        sends = ((self.side.gather_phase, frontier_x),) if bottom_up_level else (
            ("expand", frontier_x), ("fold", self.fold_x))
        for phase, x in sends:
            if x is not None:
                self._count_sent(traffic, phase, x, *x.sent(half))
        if bottom_up_level:
            self._count_rotation(traffic)
            self._count_front_writes(traffic)
        elif first:
            self._count_visited_sends(traffic)
        times = self._wait_replay(marks, clock)
        self._settle()
        return times

    @staticmethod
    def _level_key(bottom_up_level: bool, first: bool, parity: bool, gathered: bool, half: int) -> tuple:
        return "level", bottom_up_level, first, parity if first or not bottom_up_level else None, gathered, half

    def _frontier_exchange(self, bottom_up_level: bool, first: bool, gathered: bool):
        """The exchange by which a whole level sends the own frontier's message (None: it sends none): a
        top-down level's expand, but for a switch whose frontier bits are all here (front_peers); a
        bottom-up level's gather where its frontier comes as messages (gathered)."""
        if bottom_up_level:
            return self.side.gather if gathered else None
        return None if first and self.front_peers is not None else self.expand_x

    def _next_half(self, half: int, read: bool) -> int:
        """The half of the own frontier's message buffers (LevelExchange.out_of) that a level's closing
        encode writes, the level having started with its message in `half`: the other one after a round
        that read it (read), where there are two."""
        return half ^ (read and self.halves == 2)

    def _replay_level(self, key, enqueue, capture_only: bool = False) -> GraphMarks:
        grid = self.graph.grid
        return self.replays.run_marked(key, enqueue, 2 * max(grid.R, grid.C) + 10, capture_only)

    def _top_down_enqueue(self, switch: bool, queue, counts, dst, dst_cnt, half: int = 0, host_control: bool = True):
        """enqueue(mark) of a whole top-down level (every exchange on the device): the switch from
        bottom-up, expand sends (its messages in `half` of their buffers), expansion, fold sends, update,
        the closing encode of the new frontier (group j of dst); host_control: the level number copied
        from the host's control block first (else the device has set it: dbfs.level_chain)."""
        def enqueue(mark):
            in_place = switch and self.front_peers is not None   # every rank's frontier bits are here
            sends = self._frontier_exchange(False, switch, False) is not None
            if switch:
                self._enqueue_bits_to_list(mark, queue, counts, own_list=not in_place)
            if sends:
                mark("expand_comm")
                self.expand_x.enqueue_send()
            mark("expansion")
            self._enqueue_expansion(queue, counts, dst, dst_cnt, from_bits=in_place, half=half,
                                    host_control=host_control)
            if self.fold_x is not None:
                mark("fold_comm")
                self.fold_x.enqueue_send()
                mark("update")
                self._enqueue_update(dst, dst_cnt)
            mark("update")
            self._enqueue_end(dst, dst_cnt, bits=False, totals=True, half=self._next_half(half, sends))
        return enqueue

    def _bottom_up_enqueue(self, pack: bool, queue, counts, gathered: bool, half: int = 0,
                           host_control: bool = True):
        """enqueue(mark) of a whole bottom-up level (every exchange on the device), the level number
        from the control block (host_control: copied from the host's first); a gathered frontier's
        messages in `half` of their buffers."""
        def enqueue(mark):
            if host_control:
                self.backend.copy(self.control, self.control_host)
            self._bottom_up_level(mark, lambda _phase, x: x.enqueue_send(), None, 0, self.control, pack, queue,
                                  counts, gathered, half)
            mark("update")
            self._enqueue_end(queue, counts, bits=True, totals=True,
                              half=self._next_half(half, self._frontier_exchange(True, pack, gathered) is not None))
        return enqueue

    def _level_totals(self) -> tuple[int, int]:
        """The new frontier's global size and degree sum: after a whole level, the sums its graph made
        on the device (LevelTotals); else from every rank's status record, in one collective: an
        allreduce, or, where the expand goes through NCCL, an allgather that also gives every rank the
        size of each next expand message, so that round moves only those words."""
        if self.totals is not None:
            return self.totals.read()
        world, x = self.graph.comms.world, self.expand_x
        mine = [int(self.status[STAT.COUNT]), int(self.status[STAT.DEGREES])]
        if x is None or not x.sized:
            totals = np.array(mine, np.int64)
            world.Allreduce(MPI.IN_PLACE, totals)
            return int(totals[0]), int(totals[1])
        every = np.empty((world.Get_size(), 3), np.int64)
        world.Allgather(np.array(mine + [x.own_words()], np.int64), every)
        grid, j = self.graph.grid, self.graph.comms.j       # rank p of the column line is grid row p
        x.expect({p: int(every[grid.rank(p, j), 2]) for p in x.peers})
        return int(every[:, 0].sum()), int(every[:, 1].sum())

    def _enqueue_end(self, queue, counts, bits: bool, totals: bool = False, half: int = 0) -> None:
        """The closing encode of the new own frontier (into `half` of its buffers) and the status copy (see
        _end_level); totals: the ranks' kernels sum the level's totals first (a whole level)."""
        backend, s, grid, j = self.backend, self.state, self.graph.grid, self.graph.comms.j
        if self.frontier_xs and not (bits and self.front_peers is not None):   # (in place: no message)
            x = self.frontier_xs[0]             # the others send its buffer
            if bits:
                message.encode_bits(backend, self.own_front, s.stats, grid.block, self.encoding, x.out_of(half),
                                    self.cursor)
            else:
                message.encode_lists(backend, s.group(queue, j), s.slots, counts[j:j + 1], -1, grid.block,
                                     self.encoding, x.out_of(half), x.stride, 1)
            for x in self.frontier_xs:
                x.stage(half)
        if totals:
            self.totals.enqueue(s.stats, self.status)
        else:
            publish_figures(backend, s.stats, self.status)

    # top-down --------------------------------------------------------------------------------------
    def _top_down_level(self, clock, traffic, queue, counts, dst, dst_cnt) -> None:
        """Expand, expansion, fold, update (the level number in the control block): the new frontier
        becomes group j of dst."""
        parity = queue is self.state.queue0
        clock.switch("expand_comm")
        if self.expand_x is not None:
            self._send(traffic, "expand", self.expand_x)
        clock.switch("expansion")
        if self.fold_x is not None:
            self.fold_x.finish_sends()
        self.replays.run(("expansion", parity), lambda: self._enqueue_expansion(queue, counts, dst, dst_cnt))
        x = self.fold_x
        if x is not None:
            clock.switch("fold_comm")
            if x.needs_wait:
                self._wait()
            self._send(traffic, "fold", x)
            clock.switch("update")
            self.replays.run(("update", parity), lambda: self._enqueue_update(dst, dst_cnt))

    def _enqueue_expansion(self, queue, counts, dst, dst_cnt, from_bits: bool = False, half: int = 0,
                           host_control: bool = True) -> None:
        """The control block copied up from the host's (host_control), the expand messages (in `half` of
        their buffers) gathered into the column frontier (from_bits: the frontier bitmap, every rank's
        segment in place, unpacked instead), its expansion, and the fold messages encoded and staged
        (without a fold: the new frontier's figures)."""
        backend, s, g = self.backend, self.state, self.graph
        grid, j, b = g.grid, g.comms.j, g.grid.block
        if host_control:
            backend.copy(self.control, self.control_host)
        if from_bits:
            bitmap.unpack(backend, s.col_front, s.front, s.count, col_ptr=g.col_ptr, columns=g.columns)
            frontier, length = s.front, s.count
        elif self.expand_x is not None:
            message.to_list(backend, self.expand_x.sources_of(half), self.col_bases, b, g.col_ptr, s.front, s.count,
                            g.columns)
            frontier, length = s.front, s.count
        else:
            frontier, length = s.group(queue, j), counts[j:j + 1]
        backend.zero(dst_cnt)
        others = s.groups if grid.C > 1 else s.group(dst, j)    # one grid column: every row is owned
        expand(backend, grid, j, g.col_ptr, g.row_idx, frontier, length, s.visited, s.level, s.pred_row,
               s.pred_col, others, s.group(dst, j), dst_cnt, s.stats, self.scratch,
               edges_per_thread=self.edges_per_thread, control=self.control, found_at=s.row_positions,
               columns=g.columns)
        if self.fold_x is None:
            frontier_figures(backend, s.group(dst, j), dst_cnt[j:j + 1], g.degree, s.stats, control=self.control)
            return
        x = self.fold_x
        message.encode_lists(backend, s.groups, s.segment_slots, dst_cnt, j, b, self.encoding, x.out_of(), x.stride,
                             grid.C)
        x.stage()

    def _enqueue_update(self, dst, dst_cnt) -> None:
        """The fold messages' owned vertices, and the new frontier's figures."""
        backend, s, g = self.backend, self.state, self.graph
        grid, j = g.grid, g.comms.j
        update(backend, grid, j, self.fold_x.sources_of(), s.visited, s.level, s.pred_col, 0, s.group(dst, j), dst_cnt,
               control=self.control)
        frontier_figures(backend, s.group(dst, j), dst_cnt[j:j + 1], g.degree, s.stats, control=self.control)

    def _send(self, traffic, phase: str, x) -> None:
        self._count_sent(traffic, phase, x, *x.send())

    def _count_sent(self, traffic, phase: str, x, messages: int, sent: int | None) -> None:
        if sent is None:                        # known once the level's wait has staged the heads
            self.unsettled.append((traffic, phase, x))
            traffic.add(phase, messages, 0, 0)
            return
        raw = x.list_bytes() if x.needs_wait or not self.backend.is_gpu else 0
        traffic.add(phase, messages, sent, raw or sent)

    # device-driven small levels -------------------------------------------------------------------
    def _peer_stretch(self, clock, traffic, switch: bool, queue, counts, spare, lvl, nf, mf, mu,
                      visited) -> tuple[dict, tuple]:
        """Small top-down levels from level lvl run by the ranks' kernels (dbfs.peer_levels) until the
        next step is another: the own frontier is left in group j of `queue`, the next expand message
        encoded and staged as after a host-driven level. switch (where every exchange is on the device):
        the stretch's graph first turns the bottom-up frontier into a list (_enqueue_bits_to_list).
        Returns the stretch's end and what its traffic and level rows are made of after the search is
        timed (its records in the search's log, host waits, launches and wall time)."""
        backend = self.backend
        syncs, launches, started = backend.host_syncs, backend.launches, time.perf_counter()
        self.peers.begin(lvl, nf, mf, mu, visited)
        enqueue = self._stretch_enqueue(queue, counts, spare, switch, self.half)
        if self.whole_levels:                   # the stretch and its closing encode: one graph, one wait
            clock.switch(None)
            marks = self._replay_level(self._stretch_key(switch, queue is self.state.queue0, self.half), enqueue)
            if switch:
                self._count_visited_sends(traffic)
            self._wait_replay(marks, clock)
        else:
            enqueue(clock.switch)
            self._end_level(clock, queue, counts, bits=False)
        end, records = self.peers.result()
        wall = time.perf_counter() - started
        return end, (end, records, backend.host_syncs - syncs, backend.launches - launches, wall)

    def _stretch_next(self, bottom_up_level: bool, frontier: int, frontier_edges: int) -> bool:
        """Whether the next level starts a device-driven stretch: a top-down level small enough."""
        return self.peers is not None and not bottom_up_level and self.peers.fits(frontier, frontier_edges)

    @staticmethod
    def _stretch_key(switch: bool, parity: bool, half: int) -> tuple:
        return "stretch", switch, parity, half

    def _stretch_enqueue(self, queue, counts, spare, switch: bool = False, half: int = 0, host_control: bool = True):
        """enqueue(mark) of a stretch (`begin` set it up; without host_control the device, dbfs.level_chain);
        where every exchange is on the device, with its closing encode (into `half` of its buffers) and status
        copy (a whole level's end), which `_end_level` adds otherwise, and (switch) first the switch from
        bottom-up."""
        s, j = self.state, self.graph.comms.j
        alpha = self.alpha if self.bottom_up_allowed else 0.0

        def enqueue(mark):
            if switch:
                self._enqueue_bits_to_list(mark, queue, counts)
            mark("expansion")
            self.peers.launch(s.group(queue, j), s.group(spare, j), counts[j:j + 1], alpha, self.beta, host_control)
            if self.whole_levels:
                mark("update")
                self._enqueue_end(queue, counts, bits=False, half=half)
        return enqueue

    def _count_stretch_traffic(self, traffic, stretches) -> None:
        """After the search: the stretches' messages and bytes, as their kernels summed them (every level
        of a stretch messages every peer)."""
        grid = self.graph.grid
        for end, *_ in stretches:
            for phase, peers in (("expand", grid.R - 1), ("fold", grid.C - 1)):
                sent = end[f"{phase.upper()}_BYTES"]
                traffic.add(phase, end["LOGGED"] * peers, sent, sent)

    def _stretch_rows(self, log, end, records, syncs, launches, wall) -> list[dict]:
        """The stretch's level rows; the first carries its launches and the time the stretch took beyond
        its kernel's levels (the launch, a switch from bottom-up, the closing encode and wait) as host time,
        the last its wait."""
        rows = self.peers.level_records(end, log[records])
        if rows:
            rows[0]["launches"], rows[-1]["host_syncs"] = launches, syncs
            rows[0]["host_time"] = max(0.0, wall - sum(row["device_time"] for row in rows))
            rows[0]["time"] += rows[0]["host_time"]
        return rows

    # bottom-up ------------------------------------------------------------------------------------
    def _bottom_up_level(self, mark, send, wait, lvl: int, control, pack: bool, queue, counts,
                         gathered: bool = True, half: int = 0) -> None:
        """The frontier gathered as bitmaps (gathered, its messages in `half` of their buffers; else already
        in place: front_peers), its summary (where the bitmap outgrows the L2: bottom_up.summary_for), a
        search sub-step per segment with the rotation or in the owners' memory (segment_steps), commit (see
        BottomUpSide); the new frontier is the own frontier bitmap (pack: first from the list in group j of
        `queue`), with front_peers stored into the grid column's frontier bitmaps too, after a barrier of the
        line (the peers' searches have read the old bits; the level's closing totals, every rank's round
        after its commit, have the new ones everywhere before any rank's next level). mark(phase) marks
        where phases begin, send(phase, x) sends a round, wait waits on the device (a host-staged
        rotation); control: the control block (its level number) or None (lvl)."""
        backend, s, g, side = self.backend, self.state, self.graph, self.side
        j = g.comms.j
        if pack:
            mark("update")
            bitmap.pack(backend, s.group(queue, j), counts[j:j + 1], self.own_front)
        if side.gather is not None and gathered:
            mark(side.gather_phase + "_comm")
            send(side.gather_phase, side.gather)
            mark("expansion")
            message.to_bitmaps(backend, side.gather.sources_of(half), s.words, side.frontier)
        mark("expansion")
        summary = bottom_up.summary_for(backend, side.frontier, s.front_summary, control=control)
        if self.segment_steps is not None:
            self._search_segments_in_place(mark, control, summary)
            state = s.segment
        else:
            state = self._search_rotating(mark, wait, control, summary)
        if self.front_peers is not None:
            mark(side.gather_phase + "_comm")
            side.gather.enqueue_barrier()
        mark("update")
        bottom_up.commit(backend, state, self.own_visited, self.own_front, s.level, side.marker, g.degree, lvl,
                         s.stats, control=control, peer_fronts=self.front_peers)

    def _search_rotating(self, mark, wait, control, summary):
        """A bottom-up level's search sub-steps with the rotation; returns the own segment's final state."""
        s, side = self.state, self.side
        state = self.own_visited
        for base in side.bases:
            bottom_up.search_segment(self.backend, *side.adjacency, base, side.frontier, state, s.segment, side.found,
                                     s.stats, control=control, summary=summary, found_at=side.found_at,
                                     rows_held=side.pointers_held)
            state = s.segment
            if side.rotation is not None:
                mark(side.rotation_phase + "_comm")
                state = side.rotation.rotate(s.segment, wait)     # the previous rank's, where it landed
                mark("expansion")
        return state

    def _search_segments_in_place(self, mark, control, summary) -> None:
        """A bottom-up level's search where every rank of the line searches the line's segments in their
        owners' memory (segment_steps), in the rotation's order, what it finds OR-ed into the owner's
        state, no rank waiting for another: one kernel searches them in turn (bottom_up.search_segments).
        The owners' visited bits are read beside their states, so a state holds only the rows found since
        the search began (the search state's reset clears it) and no rank writes it before another reads
        it, top-down levels having set visited bits since or not. The commits wait for every search of the
        line."""
        side = self.side
        bottom_up.search_segments(self.backend, *side.adjacency, self.segment_steps, side.frontier, side.found,
                                  self.state.stats, control=control, summary=summary, found_at=side.found_at,
                                  rows_held=side.pointers_held)
        mark(side.rotation_phase + "_comm")
        side.rotation.enqueue_barrier()         # (the caller marks its next phase: no timer node between)

    def _count_rotation(self, traffic) -> None:
        """A bottom-up level's rotation: a segment to the next rank of the line per sub-step; searched in
        place, the other owners' segments and their visited bits read where they are."""
        if self.side.rotation is not None:
            in_place = self.segment_steps is not None
            steps = len(self.side.bases) - in_place
            sent = steps * self.state.segment.nbytes * (2 if in_place else 1)
            traffic.add(self.side.rotation_phase, steps, sent, sent)

    def _bits_to_list(self, clock, traffic, queue, counts) -> None:
        """Bottom-up -> top-down: the own frontier as a list in group j of `queue`, and every rank's
        row bitmap brought up to the owners' visited bits, so a top-down expansion never rediscovers a
        vertex found bottom-up (whose predecessor only its finder holds)."""
        s, w = self.state, self.state.words
        clock.switch("update")
        self._unpack_own_front(queue, counts)
        if self.row_x is not None:
            clock.switch("fold_comm")
            peers = self.row_x.peers
            received, sent, raw = self.row_x.round({m: OffsetSet(None, bitmap=self.own_visited) for m in peers},
                                                   peers)
            traffic.add("fold", len(peers), sent, raw)
            for m, message_ in received.items():
                s.visited[m * w:(m + 1) * w] = message_.payload

    def _count_front_writes(self, traffic) -> None:
        """A bottom-up level's new own frontier stored into the grid-column peers' bitmaps (front_peers)."""
        if self.front_peers is not None:
            peers, nbytes = self.graph.grid.R - 1, self.own_front.nbytes
            traffic.add(self.side.gather_phase, peers, peers * nbytes, peers * nbytes)

    def _count_visited_sends(self, traffic) -> None:
        """The sends of _enqueue_bits_to_list, counted on the host: the owned visited bits to each grid-row peer."""
        peers = self.row_x.peers if self.row_x is not None else []
        if peers:
            sent = len(peers) * self.own_visited.nbytes
            traffic.add("fold", len(peers), sent, sent)

    def _enqueue_bits_to_list(self, mark, queue, counts, own_list: bool = True) -> None:
        """_bits_to_list on the device alone (the peers' memory mapped: whole visited bitmaps, kernels
        only); own_list=False: without the own frontier's list (a top-down level that unpacks the whole
        frontier bitmap)."""
        s, w = self.state, self.state.words
        mark("update")
        if own_list:
            self._unpack_own_front(queue, counts)
        if self.row_x is not None:
            mark("fold_comm")
            received = self.row_x.enqueue_words({m: self.own_visited for m in self.row_x.peers})
            for m, words in received.items():
                s.visited[m * w:(m + 1) * w] = words

    def _unpack_own_front(self, queue, counts) -> None:
        j = self.graph.comms.j
        bitmap.unpack(self.backend, self.own_front, self.state.group(queue, j), counts[j:j + 1])

    # predecessors ---------------------------------------------------------------------------------
    def _resolves(self, any_bottom_up: bool) -> bool:
        """Whether _resolve_parents has anything to do."""
        return self.graph.grid.C > 1 or (self.by_columns and any_bottom_up)

    def _resolve_enqueue(self, any_bottom_up: bool):
        """enqueue(mark) of the parents' resolution as a graph (every exchange on the device)."""
        def enqueue(mark):
            mark("pred_resolve")
            self._resolve_parents(any_bottom_up)
        return enqueue

    def _resolve_parents(self, any_bottom_up: bool) -> None:
        """Delayed predecessors -> global parent ids of the owned vertices: each grid column's discoverers
        of them (block j of its pred_row; dbfs.line_records), and after any bottom-up level on the CSC's
        columns each grid row's column finds among them (block i of its column_parent). On a grid of one
        column pred_row is the parent array already. The root's parent was set at its visit."""
        backend, s, grid = self.backend, self.state, self.graph.grid
        if self.discoverers is not None:
            resolve_parents(backend, grid, s.pred_col, self.discoverers.entries(), s.parent,
                            rows_found=not self.by_columns)
        if self.by_columns and any_bottom_up:
            resolve_columns(backend, grid, self.side.marker, self.column_finds.entries(),
                            0 if self.column_finds.mapped is None else self.graph.comms.i, s.parent)

