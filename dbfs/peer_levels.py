"""The grid loop's small top-down levels driven by the GPUs: every rank's kernel runs them back to back and
sends its own messages (kernels/peer_levels.cu, dbfs.ops.peer_levels), so a stretch of such levels
costs the host one launch and one wait, not a wait, an allreduce and a dozen launches per level.

Why (bench/NOTES.md, 2026-11-25, the grid's small levels on the device): a 2048 x 2048 lattice has
~3,000 levels of at most a few thousand vertices; the host-driven level costs 150-800 us on 2-4 ranks
against 5.7 us on one GPU, whose loop the device drives.

With `--comm nvshmem` (the ranks of one node, their memory mapped into each other by NVSHMEM) the
kernel's landing buffers, signal words and decision records are symmetric allocations made once per
run, and each rank holds the peer addresses of its own slots on the others (PeerLinks). Where the
landings would take more room than the search state's two frontier queues (many ranks' small blocks:
48 MiB a rank on a 4 x 4 grid, where the queues take 32 at scale 24), there are none: the queues move to
the symmetric heap and the kernels read the peers' lists where their owners keep them (lists_in_place;
bench/NOTES.md, 2026-11-27, the device-driven levels' lists read in place). On the CPU backend the same
levels run in the NumPy twin, the messages through MPI, when a capacity is asked for.

The grid loop enters a stretch before a top-down level whose global frontier has at most `capacity`
vertices and `edge_limit` edges; every level of the stretch then examines at most `edge_limit` entries.
With landings the two are one, which bounds every message and list; where the lists are read in place, the
queues hold any level's lists, so the edges are bounded only by a rank's share of the GPU
(PEER_IN_PLACE_EDGES: bench/NOTES.md, 2026-11-28, the in-place stretch's edges). Rounds number the stretch
levels over the run; a stretch ends with the round of the expand message its last level sent unused, so
the next stretch starts one round later (the kernel advances the round in device memory and reads where
the search stands from its control block, so its launch is the same every time and the grid loop replays
it from a CUDA graph).

LevelTotals gives the grid loop's bulk levels (one CUDA graph each over NVSHMEM) the same decision
records: the level's global frontier size and degree sum summed by the ranks' kernels, so no level
calls MPI (bench/NOTES.md, 2026-11-26, a whole level's totals summed by the ranks' kernels).
"""

from __future__ import annotations

import numpy as np

from dbfs.device_loop import DEFAULT_SMALL_EDGES
from dbfs.exchange import world_ranks
from dbfs.kernels import CTL, CTL_WORDS, PEER_LOG_AT, PEER_LOG_WORDS, PEER_RECORD_WORDS
from dbfs.ops.peer_levels import counter_words, level_totals, peer_levels

# Entries of a device-driven level per rank: a rank's grid examines ~65,000 entries in tens of
# microseconds, less than one host-driven level costs (bench/NOTES.md, 2026-11-25, the grid's small
# levels on the device). The global limit is that times the ranks (bench/NOTES.md, 2026-11-26, the
# stretch's capacity by the ranks), within the one-GPU loop's small-level limit (DEFAULT_SMALL_EDGES)
# and what PEER_LANDING_BYTES of landings hold.
PEER_EDGES_PER_RANK = 1 << 16
PEER_LANDING_BYTES = 64 << 20
# A device-driven level's phases, as its log record times them.
DEVICE_PHASES = ("expand_wait", "expansion", "fold_wait", "update", "decision")
# Per-level records of a search's stretches, kept for the per-level log alone (5.5 MiB a rank; the
# stretches' traffic is summed in the control block: bench/NOTES.md, 2026-11-27, the stretch log only
# where the per-level log is asked for).
LOG_CAPACITY = 1 << 16
# Global frontier edges up to which the kernel runs a top-down level where the lists are read in place,
# which no buffer bounds: a bulk level of sixteen ranks sharing a GPU costs ~0.35 ms, while the kernel's
# levels examine ~10^5 entries a rank in tens of microseconds (bench/NOTES.md, 2026-11-28, the in-place
# stretch's edges).
PEER_IN_PLACE_EDGES = 1 << 22


def default_capacity(grid) -> int:
    """Global frontier edges (and vertices) up to which the grid's top-down levels run in the
    device-driven kernel: PEER_EDGES_PER_RANK a rank, within DEFAULT_SMALL_EDGES and the landings'
    bytes (symmetric_bytes), never below one rank's share; where the lists are then read in place
    (no landings), at least PEER_IN_PLACE_EDGES edges."""
    landings = PEER_LANDING_BYTES // (4 * (2 * grid.R + grid.C))
    bounded = max(PEER_EDGES_PER_RANK, min(PEER_EDGES_PER_RANK * grid.size, DEFAULT_SMALL_EDGES, landings))
    return max(bounded, PEER_IN_PLACE_EDGES) if lists_in_place(grid, bounded) else bounded


def lists_in_place(grid, capacity: int) -> bool:
    """Whether the kernel reads the peers' frontier and fold lists in place, in their frontier queues
    (C + 1 groups of at most b words in use: two own ones, C - 1 others', dbfs.search_state) moved to
    the symmetric heap, instead of landing them: where the queues take no more than the landings would
    (capacity words for each of 2R + C peers' slots)."""
    return (grid.C + 1) * grid.block <= min(capacity, grid.block * grid.C) * (2 * grid.R + grid.C)


def landing_bytes(grid, capacity: int) -> int:
    """The kernel's landings (expand: two per grid row, fold: one per grid column; none where the lists
    are read in place)."""
    if not capacity or lists_in_place(grid, capacity):
        return 0
    return 4 * min(capacity, grid.block * grid.C) * (2 * grid.R + grid.C)


def queue_bytes(grid, capacity: int, slots: int | None = None, segment_slots: int | None = None) -> int:
    """The search state's frontier queues that PeerLinks moves to the symmetric heap (lists_in_place;
    counted in the search state, dbfs.search_state.layout, with its own and other owners' group `slots`
    and `segment_slots`, None: b, at most)."""
    if not capacity or not lists_in_place(grid, capacity):
        return 0
    own, other = (grid.block if n is None else n for n in (slots, segment_slots))
    return 4 * (2 * own + (grid.C - 1) * other)


def symmetric_bytes(grid, capacity: int) -> int:
    """What PeerLinks allocates on a rank's NVSHMEM symmetric heap: the landings, their signal words (two a
    peer) and the decision records (the queues it moves there: queue_bytes)."""
    if not capacity:
        return 0
    return landing_bytes(grid, capacity) + 8 * 2 * (grid.R + grid.C) + 8 * 2 * grid.size * PEER_RECORD_WORDS


def device_bytes(grid, capacity: int, log_levels: bool = False) -> int:
    """What PeerLevels allocates on a rank's device: its symmetric buffers, the level counters, the
    control block, and with the per-level log (log_levels) the log."""
    if not capacity:
        return 0
    return (symmetric_bytes(grid, capacity) + 8 * counter_words(grid.C) + 8 * CTL_WORDS
            + (8 * LOG_CAPACITY * PEER_LOG_WORDS if log_levels else 0))


class PeerLinks:
    """The kernel's message buffers on this rank's symmetric heap and its address tables (collective:
    every rank allocates the same, in the same order): where it reads each column peer's list of a level
    and writes its own for each (by parity), where it writes its fold list for each row peer and reads
    each row peer's, and the peer addresses of its signal words and records. With landings, the lists
    are read from them and written into this rank's slots in the others'; where the lists are read in
    place (lists_in_place), the state's queues move to the heap and the lists are read where their
    owners keep them: a column peer's list of a level in its queue0 or queue1 (by the level's parity in the
    stretch, the same on every rank), a row peer's fold list for this rank in its group j of the other
    owners' groups (`groups`, which a stretch's bulk levels do not use meanwhile)."""

    def __init__(self, backend, comms, state, capacity: int):
        from dbfs import nvshmem
        grid, i, j = comms.grid, comms.i, comms.j
        R, C, P = grid.R, grid.C, grid.size
        world = world_ranks(comms.world)
        self.backend, self.state = backend, state
        self.in_place = lists_in_place(grid, capacity)
        column = [grid.rank(p, j) for p in range(R)]
        row = [grid.rank(i, m) for m in range(C)]

        def at(array, offset_items: int, pe: int | None = None) -> int:
            """The address of item `offset_items` of `array`: here, or (symmetric) in world rank pe's copy."""
            address = array.data.ptr + offset_items * array.itemsize
            return address if pe is None else nvshmem.peer_address(address, world[pe])

        sizes = ((2 * R, np.uint64), (2 * C, np.uint64), (2 * P * PEER_RECORD_WORDS, np.int64))
        if self.in_place:
            self.moved = [nvshmem.move_to_heap(backend, state, name)
                          for name in ("queue0", "queue1") + (("groups",) if C > 1 else ())]
            expand_read = [[0 if p == i else at(queue, 0, column[p]) for p in range(R)]
                           for queue in self.moved[:2]]
            expand_write = [[0] * R, [0] * R]
            segment = state.segment_slots               # group m of rank j's packed groups: m - (m > j)
            fold_read = [0 if m == j else at(state.groups, (j - (j > m)) * segment, row[m]) for m in range(C)]
            fold_write = [0 if m == j else at(state.groups, (m - (m > j)) * segment) for m in range(C)]
            self.arrays = [nvshmem.symmetric(backend, n, dtype) for n, dtype in sizes]
        else:
            self.moved = []
            self.arrays = [nvshmem.symmetric(backend, n, dtype) for n, dtype in (
                (2 * R * capacity, np.uint32), (C * capacity, np.uint32), *sizes)]
            expand_in, fold_in = self.arrays[:2]
            expand_read = [[0 if p == i else at(expand_in, (half * R + p) * capacity) for p in range(R)]
                           for half in (0, 1)]
            expand_write = [[0 if p == i else at(expand_in, (half * R + i) * capacity, column[p]) for p in range(R)]
                            for half in (0, 1)]
            fold_read = [0 if m == j else at(fold_in, m * capacity) for m in range(C)]
            fold_write = [0 if m == j else at(fold_in, j * capacity, row[m]) for m in range(C)]
        expand_signals, fold_signals, records = self.arrays[-3:]

        def table(addresses):
            return backend.asarray(np.array(addresses, np.uint64).ravel())

        self.signals = (expand_signals, fold_signals, records)
        self.tables = (
            table(expand_read), table(expand_write),
            table([0 if p == i else at(expand_signals, i, column[p]) for p in range(R)]),
            table(fold_read), table(fold_write),
            table([0 if m == j else at(fold_signals, j, row[m]) for m in range(C)]),
            table([at(records, grid.rank(i, j) * PEER_RECORD_WORDS, p) for p in range(P)]))

    def kernel_args(self, own_list) -> tuple:
        """The kernel's message arguments for a launch whose own list is `own_list` (queue0 or queue1: with
        the lists read in place, the half the peers' lists of its first level are in)."""
        expand_signals, fold_signals, records = self.signals
        expand_read, expand_write, expand_signal_out, fold_read, fold_write, fold_signal_out, record_out = self.tables
        state, half = self.state, -1
        if self.in_place:
            half = 0 if own_list.data.ptr == state.queue0.data.ptr else 1
        return (expand_read, expand_signals, expand_write, expand_signal_out, np.int32(half), fold_read, fold_signals,
                fold_write, fold_signal_out, records, record_out)

    def close(self) -> None:
        """Collective: the heap's arrays given back (the moved queues last, as the state's)."""
        from dbfs import nvshmem
        for array in reversed(self.arrays + self.moved):
            nvshmem.free(array)
        self.arrays = self.moved = []


class LevelTotals:
    """A bulk level's global frontier size and degree sum summed by the ranks' kernels at the level's
    end (dbfs.ops.peer_levels.level_totals), so the grid loop's whole levels (every exchange on the
    device) need no collective on the host: every rank's record lives on every rank's symmetric heap
    (collective: every rank allocates the same)."""

    def __init__(self, backend, world):
        from dbfs import nvshmem
        P, me, pe = world.Get_size(), world.Get_rank(), world_ranks(world)
        self.backend = backend
        self.records = nvshmem.symmetric(backend, 2 * P * PEER_RECORD_WORDS, np.int64)
        mine = self.records.data.ptr + 8 * me * PEER_RECORD_WORDS
        self.record_out = backend.asarray(np.array([nvshmem.peer_address(mine, pe[p]) for p in range(P)], np.uint64))
        self.rounds = backend.xp.zeros(1, np.uint64)
        self.totals_host = backend.pinned_empty(2, np.int64)

    @staticmethod
    def symmetric_bytes(ranks: int) -> int:
        return 8 * 2 * ranks * PEER_RECORD_WORDS

    @staticmethod
    def device_bytes(ranks: int) -> int:
        """Its symmetric records, the peer table and the round counter (the sums are on the host)."""
        return LevelTotals.symmetric_bytes(ranks) + 8 * ranks + 8

    def enqueue(self, stats, status) -> None:
        """On the stream: the sums of the ranks' stats (COUNT, DEGREES) written to the host, and the
        level's stats handed to `status` (pinned) and cleared (ops.peer_levels.level_totals)."""
        level_totals(self.backend, stats, self.record_out, self.records, self.rounds, self.totals_host, status)

    def read(self) -> tuple[int, int]:
        """After the wait on the level: the global (frontier size, degree sum)."""
        frontier, degrees = self.totals_host.tolist()
        return frontier, degrees

    def close(self) -> None:
        from dbfs import nvshmem
        nvshmem.free(self.records)


class PeerLevels:
    """Stretches of small top-down levels on one rank of a grid (collective: every rank runs each)."""

    def __init__(self, graph, state, capacity: int):
        self.graph, self.state, self.backend = graph, state, graph.backend
        backend, grid = self.backend, graph.grid
        self.capacity = min(capacity, grid.block * grid.C)
        # where the lists are read in place, the queues hold any level's lists: no buffer bounds the edges
        self.edge_limit = capacity if lists_in_place(grid, self.capacity) else self.capacity
        xp = backend.xp
        self.links = PeerLinks(backend, graph.comms, state, self.capacity) if backend.is_gpu else graph.comms
        self.counters = xp.zeros(counter_words(grid.C), xp.int64)
        self.ctl = xp.zeros(CTL_WORDS, xp.int64)
        self.log = xp.zeros(0, xp.int64)       # the per-level log's records, made by the first search asking
        self.ctl_host = backend.pinned_empty(CTL_WORDS, np.int64)
        self.rounds = xp.ones(1, xp.uint64)     # the kernel's levels over the run (advanced by the kernel)
        self.logged = 0                        # records of this search's stretches so far

    def fits(self, frontier: int, frontier_edges: int) -> bool:
        return frontier <= self.capacity and frontier_edges <= self.edge_limit

    def start_search(self) -> None:
        self.logged = 0

    def keep_log(self) -> bool:
        """Make room for the per-level log where there is none; whether it did (the kernel's launches
        captured before then hold the old one)."""
        if self.log.shape[0]:
            return False
        self.log = self.backend.xp.zeros(LOG_CAPACITY * PEER_LOG_WORDS, np.int64)
        return True

    def begin(self, lvl: int, nf: int, mf: int, mu: int, visited: int) -> None:
        """Where the search stands before a stretch from level lvl (the search's figures as the grid loop
        holds them), written to the control block's host copy, which `launch` copies up."""
        for word, value in ((CTL.LEVEL, lvl), (CTL.FRONTIER, nf), (CTL.FRONTIER_EDGES, mf),
                            (CTL.UNVISITED_EDGES, mu), (CTL.VISITED, visited), (CTL.LOGGED, self.logged)):
            self.ctl_host[word] = value

    def launch(self, own_list, spare, own_count, alpha: float, beta: float, host_control: bool = True) -> None:
        """Enqueue the stretch `begin` set up: the control block copied up, the kernel (its records after
        the search's earlier ones), the control block copied back, read by `result` after the loop's next
        wait. The same every time (a CUDA graph may hold it). Without host_control the control block is
        neither copied up nor back: the device sets it up and reads its end (dbfs.level_chain)."""
        if host_control:
            self.backend.copy(self.ctl, self.ctl_host)
        peer_levels(self.backend, self.graph, self.state, self.links, own_list, spare, own_count, self.counters,
                    self.ctl, self.rounds, self.log, self.capacity, self.edge_limit, alpha, beta)
        if host_control:
            self.backend.copy(self.ctl_host, self.ctl)

    def result(self) -> tuple[dict, slice]:
        """After the wait: the stretch's end (the ctl words by name) and which records of the search's log
        (`search_log`) are its levels' (with a log, the search's first LOG_CAPACITY levels have one)."""
        end = dict(zip(vars(CTL), self.ctl_host.tolist()))     # CTL's words in order
        kept = min(end["LOGGED"], self.log.shape[0] // PEER_LOG_WORDS - self.logged)
        records = slice(self.logged, self.logged + kept)
        self.logged += kept
        return end, records

    def search_log(self) -> np.ndarray:
        """After the search: the records of its stretches, one row a level (read once, off its clock)."""
        log = self.backend.asnumpy(self.log[:self.logged * PEER_LOG_WORDS])
        return np.array(log).reshape(self.logged, PEER_LOG_WORDS)

    def level_records(self, end: dict, log: np.ndarray) -> list[dict]:
        """The grid loop's per-level log rows of a stretch (built after the search is timed)."""
        grid = self.graph.grid
        ends = np.concatenate([[end["START_NS"]], log[:, PEER_LOG_AT.END_NS]])
        marks = [PEER_LOG_AT.WAITED_NS, PEER_LOG_AT.EXPANDED_NS, PEER_LOG_AT.FOLDED_NS, PEER_LOG_AT.UPDATED_NS,
                 PEER_LOG_AT.END_NS]
        rows = []
        for k, entry in enumerate(log.tolist()):
            sent = {"expand": entry[PEER_LOG_AT.EXPAND_BYTES], "fold": entry[PEER_LOG_AT.FOLD_BYTES]}
            bounds = [int(ends[k]), *(entry[mark] for mark in marks)]
            seconds = (bounds[-1] - bounds[0]) * 1e-9
            rows.append({"level": entry[PEER_LOG_AT.LEVEL], "direction": "topdown",
                         "frontier": entry[PEER_LOG_AT.FRONTIER], "edges": entry[PEER_LOG_AT.CHECKED],
                         "time": seconds, "host_time": 0.0, "device_time": seconds,
                         "device_phases": {phase: (b - a) * 1e-9 for phase, a, b in
                                           zip(DEVICE_PHASES, bounds, bounds[1:])},
                         "bytes": sum(sent.values()), "bytes_raw": sum(sent.values()), "phase_bytes": sent,
                         "messages": {"expand": grid.R - 1, "fold": grid.C - 1}, "host_syncs": 0, "launches": 0})
        return rows

    def close(self) -> None:
        if self.backend.is_gpu:
            self.links.close()
