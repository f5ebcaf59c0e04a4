"""Graph builder (Graph500 kernel 1): the run's tuples, streamed in chunks, -> each rank's CSC block.

Method (paper 004, sections 2.2 and 3.1): every undirected tuple (a, b) with
a != b becomes the two directed entries a -> b and b -> a (a directed graph, symmetric=False, keeps
only a -> b); entry u -> v belongs to the rank (owner row of v, column block of u) and is stored there
as (local column of u, local row of v), all ownership math being dbfs.grid's. Self-loops are left
out, duplicates stay. The edge list is never resident: the source streams this rank's tuples in
chunks (GraphSource.tuple_chunks: generated on the device, deterministic by edge index, or read from
the graph file) twice.
  1. Count: each chunk's entries go to their owners and are counted per local column into col_ptr,
     and per local row into row_ptr when a row-major copy is built (on a grid of one column, where an
     undirected graph's row lengths are its degrees, by one reduce-scatter of the column lengths
     instead, where the exchange sums on the devices: NCCL, NVSHMEM). On several ranks both directions
     of a chunk travel in one all-to-all: the entries are grouped by owner rank into one send buffer
     by a counting partition (dbfs.ops.owner_groups: one pass over the tuples gives every entry its
     owner, local column and row and counts the owners, then their scan and a scatter; no sort),
     column and row interleaved; the counts go by MPI Alltoall, then one message per peer over the
     run's bulk transport (dbfs.transport.bulk_transport: grouped NCCL send/recv between GPUs of their
     own, on a stream of its own and of the greatest priority while the rank's own group is counted or
     placed in place from the send buffer; with --comm nvshmem on ranks that share a GPU, kernels' copies
     into the receivers' NVSHMEM landings; else a host-staged MPI Alltoallv), and there the rank's own
     group is copied on its device; the received (column, row) pairs are read in place.
     Where the pass counts columns alone and the build goes over NCCL, the entries are not sent at all
     when a histogram over every rank's local columns (4 B a column) fits in what a chunk's routing
     takes anyway (dbfs.memory.counts_at_source): each chunk's entries are counted where they are
     produced, by owner and local column (dbfs.ops.owner_groups.count_by_owner), and after the last chunk
     each rank's block of it goes to that rank in one round of the exchange, which adds the blocks up;
     each chunk's entries per owner are kept (read back once), so pass 2 routes and groups a chunk in
     one kernel (dbfs.ops.owner_groups.group_tuples) and reads no count back.
     Where every local column's offset would make the construction the run's peak (the plan says so:
     hypersparse blocks of many ranks; bench/NOTES.md, 2026-11-28, the build writes a hypersparse
     block's offsets held), the pass keeps its entries' columns instead, marking each column present,
     and counts them at the end at their positions among the non-empty ones (dbfs.ops.sparse.Positions):
     no array over every local column exists, and the block's offsets are built held by position.
  2. Scatter: the counts are scanned in place into segment ends, row_idx is allocated at its exact
     size, the tuples are produced and routed again, and every entry takes the slot below its column's
     cursor, which is col_ptr itself: a column fills from its end and its cursor finishes at the
     column's start, so col_ptr holds the offsets when the pass ends (dbfs.ops.csc_build; no second
     per-column array, no sort); a held column's cursor at its position. Same for the row-major copy.
The owned vertices' degrees (their columns' lengths summed over the grid column) come last: one
reduce-scatter, or for held offsets a ring of one owned block a round.

Row-major copy (bottom-up search, --direction auto; an undirected graph on several ranks may do without
it, dbfs.graph): on a 1x1 grid of an undirected graph the block is symmetric and its CSC is its CSR, so
row_ptr/col_idx name col_ptr/row_idx; on a grid of one column (R x 1, the default on one node with a GPU
a rank) an undirected graph's row of owned vertex o is o's column segments on all the ranks, so after
pass 2 every rank sends each other rank the segments of that rank's owned columns (lengths, then
entries, in rounds of at most dbfs.memory.row_round_words words a receiver) and each row takes them
below its end whole (dbfs.ops.csc_build.append_segments: no atomics); on other grids, and for directed
graphs, both passes also count and scatter every entry by local row. Last, each row's entries of the
longest columns go to its front (dbfs.ops.row_order: the bottom-up step's first tests; a Kronecker
graph's hubs, in its frontier early, find most parents at the first test).

Resident bytes per rank, E = the rank's entries (about 2m/P undirected, m/P directed), b = the owned
block, N'/C local columns, N'/R local rows (dbfs.memory.graph_bytes counts exactly these):
  col_ptr  w (N'/C + 1)  column offsets (or w a non-empty column   the CSC
                         and its Positions, a quarter byte a column)
  row_idx  4 E           local row of every entry                  the CSC
  degree   4 b           owned degrees: TEPS count, direction rule, root sampling (an edge: degree > 0)
  row_ptr  w (N'/R + 1)  row offsets        } the row-major copy, only with --direction auto (and
  col_idx  4 E           local columns      } --row-copy), a grid other than 1x1 or a directed graph
where w is 4 bytes if E fits int32 (dbfs.graph.offset_dtype), else 8; while building, as for twice a
block's even share of the entries, the whole graph's at most (dbfs.graph.building_offsets: 4 bytes up to
Graph500 scale 25 on one or two ranks, 26 on four, 28 on sixteen), widened while counted where a block
needs more.
So on 1x1 an undirected graph takes 8 bytes per input tuple (two 4-byte entries) and 8 per vertex (12
from scale 26 on, where E reaches 2^31).
The search adds its per-vertex state (dbfs.search_state.layout, about 17 B per vertex on 1x1 with
32-bit parents and no per-search copies), the validator its working memory (about 1 B per vertex beside
the state's idle arrays, which it borrows).
Budget per rank on one GPU (1x1, direction auto; `python -m dbfs plan` prints it):
  scale 28: graph 35.0 GiB (row_idx 32.0 at most, col_ptr 2.0, degree 1.0); construction 35.5;
            certificate 36.0; search 39.3 = graph + state 4.3 (the validation's arrays lent by it).
  scale 29: graph 70.0, construction 70.0, certificate 71.0, search 78.5: fits one H100 (a process gets
            about 78.6 GiB of its 80 GB). Measured peaks 39.29 and 78.50 GiB
            (bench/results/2026-11-27-h100-scale29-one-gpu/s28_1.json.xz, s29_1.json.xz).

Construction transients (dbfs.memory.construction_bytes): one chunk of K tuples (src, dst: 16 B a
tuple) and its entries in flight, routed on a GPU by one kernel (dbfs.ops.owner_groups): on one rank
one direction at a time (int32 columns and rows), 24 B a tuple; on several ranks both directions at
once (owner ranks, columns and rows, 24 B a tuple, beside the grouped send buffer, 16; then the send
buffer and the received one, read in place, less than that), 56 B a tuple (36 for a
directed graph); the CPU backend's NumPy twins hold more (dbfs.memory). K is chosen by
dbfs.memory.chunk_edges so that this stays within 5% of the resident graph or within what the search
will add to it (its state and the validation's memory), whichever is more (K at most 2^26, 2^24 where
it sizes an NVSHMEM landing; at least 2^16): construction never sets the run's peak, and several ranks,
for which every chunk costs host waits and collectives, take few chunks. Host staging (host-staged MPI
on a GPU): page-locked send and receive buffers kept for the build, grown to the largest chunk's words
(about 16 K bytes each for balanced owners); only the other ranks' groups cross PCIe. Over NVSHMEM
(--comm nvshmem on GPU ranks that share a GPU): a symmetric landing of 32 K bytes (twice a rank's
average incoming words; dbfs.memory.landing_words), counted with the transients when K is chosen. A
graph file's chunk adds 16 K bytes of tuples read.

Timing: construction_time is the build alone. The tuple producer runs between two device
synchronisations and two barriers per chunk; those intervals (the same on every rank) are summed and
subtracted, and reported as graph_generation (generated, both passes) or graph_load (a file). The
exchange between the ranks is set up before the clock starts and closed after it stops, like MPI
itself (NCCL makes a pair's connections on its first round and takes them down on close: a second each
way on two GPUs); that time is reported beside it (setup_time).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from mpi4py import MPI

from dbfs import memory, runtime
from dbfs.errors import DbfsError
from dbfs.exchange import SignalWords, nccl_communicator, world_ranks
from dbfs.graph import (GridComms, LocalGraph, building_offsets, csc_is_row_major, holds_columns_by_position,
                        widened, widened_dtype)
from dbfs.ops import message
from dbfs.ops.csc_build import (add_counts, append_segments, count_keys, count_nonempty, csr_from_csc, inclusive_scan,
                                 keep_keys, scatter_values, segment_lengths, strided_count)
from dbfs.ops.owner_groups import count_by_owner, group_by_owner, group_tuples, local_entries, route_entries
from dbfs.ops.row_order import longest_columns_first
from dbfs.ops.sparse import Positions, word_starts
from dbfs.progress import Progress
from dbfs.runtime import displacements
from dbfs.source import EdgeArrays
from dbfs.timing import PhaseClock


@dataclass
class BuildReport:
    construction_time: float      # seconds, slowest rank, tuple production excluded
    setup_time: float             # seconds setting up and closing the exchange between the ranks (NCCL's
                                  # communicator), outside construction_time
    producer_time: float          # seconds generating or reading tuples in both passes (synchronised)
    producer_rate: float          # tuples a rank produced per second of its own producing, slowest rank
    chunk_edges: int              # tuples per chunk
    phases: dict                  # seconds per BUILD_PHASES step, slowest rank each
    memory: object = None         # dbfs.memory.Estimate with the exact entry counts (when given a plan)


# Where construction's time goes, per chunk: the ownership math and the grouping by owner rank, the
# count exchange and the entries' round between the ranks, the counting or placing of the entries.
BUILD_PHASES = ("route", "exchange", "place")


class _ProducerClock:
    """Times the tuple producer inside the streaming passes. Around each chunk the device is
    synchronised and the ranks meet, so no build work overlaps the interval and it is the same on
    every rank; `seconds` sums the intervals, `own_seconds` this rank's producing without the waits.
    A DbfsError from the producer (a bad endpoint in a file) is kept and raised on every rank when the
    pass ends; the rank that hit it contributes empty chunks until then."""

    def __init__(self, backend, comm):
        self.backend, self.comm = backend, comm
        self.seconds = self.own_seconds = 0.0
        self.tuples = 0

    def chunks(self, source, chunk_edges: int, label: str):
        """The chunks of this rank's tuples, rank 0's progress through them on stderr under `label`."""
        xp = self.backend.xp
        rounds = source.chunk_rounds(self.comm, chunk_edges)
        stream = source.tuple_chunks(self.backend, self.comm, chunk_edges)
        error = None
        progress = Progress(label, rounds, "chunks", 1)
        for done in range(rounds):
            progress.update(done)
            self.backend.sync()
            self.comm.Barrier()
            start = time.perf_counter()
            chunk = (xp.empty(0, xp.int64), xp.empty(0, xp.int64))
            if error is None:
                try:
                    chunk = next(stream)
                except DbfsError as e:
                    error = str(e)
            self.backend.sync()
            produced = time.perf_counter()
            self.comm.Barrier()
            self.seconds += time.perf_counter() - start
            self.own_seconds += produced - start
            self.tuples += int(chunk[0].shape[0])
            yield chunk
        progress.close()
        runtime.agree(error, self.comm)


def pack_by_owner(backend, grid, src, dst, both_ways: bool, with_rows: bool, counts=None):
    """The send side of one chunk's exchange: the entries of the tuples (src, dst) (with both_ways their
    reverses too; self-loops left out) grouped by owner rank into one int32 buffer, a column (and its
    row, interleaved, with_rows) per entry, by a counting partition (dbfs.ops.owner_groups; no sort);
    returns (buffer, host int64 entries per rank). Without `counts` (the entries per rank, known where the
    counting pass counted the same chunk) they come to the host (one wait) for the groups' starts and
    the count exchange; with them one kernel routes and groups the entries."""
    xp = backend.xp
    if counts is not None:
        send = xp.empty((2 if with_rows else 1) * int(counts.sum()), xp.int32)
        group_tuples(backend, grid, src, dst, both_ways, with_rows, backend.asarray(displacements(counts)), send)
        return send, counts
    counts = xp.zeros(grid.size, xp.int64)
    owner, cols, rows = route_entries(backend, grid, src, dst, both_ways, with_rows, counts)
    counts = backend.asnumpy(counts)
    send = xp.empty((2 if with_rows else 1) * int(counts.sum()), xp.int32)
    group_by_owner(backend, owner, cols, rows, backend.asarray(displacements(counts)), send)
    return send, counts


def sum_blocks(words, blocks: int, b: int):
    """The sum of the `blocks` consecutive int32 blocks of b words in `words`, a new array."""
    total = words[:b].copy()
    for p in range(1, blocks):
        total += words[p * b:(p + 1) * b]
    return total


class _Exchange:
    """Entries grouped by owner rank to their owners: the counts by MPI Alltoall, this rank's own group
    copied on the device, the other groups moved by the transport (the subclass's _move) in one round
    for the whole chunk, one message per peer. sums_on_devices: column_sums stays on the devices (a
    round through host memory costs more than the counting it would replace)."""

    sums_on_devices = False

    def __init__(self, comm: MPI.Comm, backend):
        self.comm, self.backend = comm, backend
        self.me = comm.Get_rank()

    def __call__(self, send, send_counts, width: int):
        """`send`: int32 words grouped by owner rank, send_counts[p] entries of `width` words for rank
        p. Returns the words this rank received, grouped by source rank, on the device, and the host
        int64 count of words from each rank."""
        send_at, recv_at, recv_counts = self._offsets(send_counts, width)
        incoming = self.backend.xp.empty(int(recv_at[-1]), np.int32)
        me = self.me
        if send_at[me + 1] > send_at[me]:
            self.backend.copy(incoming[recv_at[me]:recv_at[me + 1]], send[send_at[me]:send_at[me + 1]])
        self._move(send, send_at, incoming, recv_at)
        return incoming, width * recv_counts

    def _offsets(self, send_counts, width: int):
        """The count exchange: (word offsets of the groups sent, of the groups received, entries received
        from each rank)."""
        recv_counts = np.empty_like(send_counts)
        self.comm.Alltoall(send_counts, recv_counts)
        send_at = width * np.concatenate(([0], np.cumsum(send_counts)))
        recv_at = width * np.concatenate(([0], np.cumsum(recv_counts)))
        return send_at, recv_at, recv_counts

    def begin(self, send, send_counts, width: int):
        """The round of __call__ in two parts: returns (words usable now, arriving), arriving() giving the
        rest once the current stream may use them (None: nothing more). Here the whole round at once;
        `send` must live until arriving() has returned."""
        return self(send, send_counts, width)[0], None

    def sums_in_round(self, words: int) -> bool:
        """Whether column_sums of `words` words a rank (a grid column's R blocks) goes as a round of this
        exchange on the devices (sums_on_devices)."""
        return self.sums_on_devices

    def column_sums(self, grid, i: int, j: int, values):
        """Collective: the sum over grid column j of the ranks' int32 `values` (the column's R owned
        blocks, block p for grid row p), block i of it -- a reduce-scatter along the column as one round
        of this exchange (on the devices where sums_on_devices: the owned degrees, the row counts)."""
        b = grid.block
        counts = np.zeros(self.comm.Get_size(), np.int64)
        counts[[grid.rank(p, j) for p in range(grid.R)]] = b
        return sum_blocks(self(values, counts, 1)[0], grid.R, b)   # from the column's R ranks, in grid-row order

    def close(self) -> None:
        pass


class _HostExchange(_Exchange):
    """The other ranks' groups through one host-staged MPI Alltoallv. On a GPU only those groups cross
    PCIe, through page-locked buffers kept from chunk to chunk (grown when a chunk needs more); on the
    CPU backend MPI reads and writes the arrays themselves."""

    def __init__(self, comm: MPI.Comm, backend):
        super().__init__(comm, backend)
        self.staged = {"send": backend.pinned_empty(0, np.int32), "recv": backend.pinned_empty(0, np.int32)}

    def _move(self, send, send_at, incoming, recv_at):
        backend, me = self.backend, self.me
        outgoing, arriving = send, incoming
        if backend.is_gpu:
            outgoing, arriving = self._buffer("send", send_at[-1]), self._buffer("recv", recv_at[-1])
            for lo, hi in _around(send_at, me):
                backend.copy(outgoing[lo:hi], send[lo:hi])
            backend.sync()
        send_words, recv_words = np.diff(send_at), np.diff(recv_at)
        send_words[me] = recv_words[me] = 0
        self.comm.Alltoallv([outgoing, (send_words, send_at[:-1]), MPI.INT32_T],
                            [arriving, (recv_words, recv_at[:-1]), MPI.INT32_T])
        if backend.is_gpu:
            for lo, hi in _around(recv_at, me):
                backend.copy(incoming[lo:hi], arriving[lo:hi])

    def _buffer(self, name: str, words: int) -> np.ndarray:
        """The page-locked buffer `name`, at least `words` long."""
        if self.staged[name].shape[0] < words:
            self.staged[name] = self.backend.pinned_empty(int(words), np.int32)
        return self.staged[name]


def _around(at, me: int):
    """The non-empty word ranges [lo, hi) of the groups before and after group `me` (offsets `at`)."""
    return [(int(lo), int(hi)) for lo, hi in ((at[0], at[me]), (at[me + 1], at[-1])) if hi > lo]


class _NcclExchange(_Exchange):
    """The other ranks' groups between GPUs: one grouped round of NCCL send/recv, one message per peer,
    on the current stream (the entries never leave the devices); `begin` moves them on a stream of its
    own while the current one works on this rank's own group, read in place from the send buffer. That
    stream has the device's greatest priority: NCCL's few blocks are dispatched as soon as a block of
    the placing kernel's grid (hundreds of thousands of short blocks) retires, not after its last one
    (bench/NOTES.md, 2026-11-27, the round's stream ahead of the placing)."""

    sums_on_devices = True

    def __init__(self, comm: MPI.Comm, backend):
        from cupy.cuda import nccl
        super().__init__(comm, backend)
        self.nccl = nccl
        self.nccl_comm = nccl_communicator(comm, backend)
        self.round_stream = backend.urgent_stream()
        # NCCL connects a pair on its first send/recv: a one-word round with every peer, so no chunk
        # pays it (about a second on two H100: bench/NOTES.md, 2026-11-25, a whole NVSHMEM level)
        words, at = backend.xp.zeros(comm.Get_size(), backend.xp.int32), np.arange(comm.Get_size() + 1)
        self._move(words, at, backend.xp.empty_like(words), at)

    def begin(self, send, send_counts, width: int):
        """The own group now (a view of `send`), the others' words (grouped by source rank, the own
        group left out) from arriving(), which makes the current stream wait for the round."""
        cuda, me = self.backend.xp.cuda, self.me
        send_at, recv_at, _ = self._offsets(send_counts, width)
        own = int(recv_at[me + 1] - recv_at[me])
        recv_at = np.concatenate((recv_at[:me + 1], recv_at[me + 1:] - own))  # the own group takes no room
        incoming = self.backend.xp.empty(int(recv_at[-1]), np.int32)
        grouped = cuda.get_current_stream().record()
        self.round_stream.wait_event(grouped)
        with self.round_stream:
            self._move(send, send_at, incoming, recv_at)
        moved = self.round_stream.record()

        def arriving():
            cuda.get_current_stream().wait_event(moved)
            return incoming
        return send[send_at[me]:send_at[me + 1]], arriving

    def _move(self, send, send_at, incoming, recv_at):
        nccl, me = self.nccl, self.me
        stream = self.backend.xp.cuda.get_current_stream().ptr
        nccl.groupStart()
        for p in range(self.comm.Get_size()):
            if p == me:
                continue
            if send_at[p + 1] > send_at[p]:
                self.nccl_comm.send(send[send_at[p]:].data.ptr, int(send_at[p + 1] - send_at[p]),
                                    nccl.NCCL_INT32, p, stream)
            if recv_at[p + 1] > recv_at[p]:
                self.nccl_comm.recv(incoming[recv_at[p]:].data.ptr, int(recv_at[p + 1] - recv_at[p]),
                                    nccl.NCCL_INT32, p, stream)
        nccl.groupEnd()

    def close(self) -> None:
        self.nccl_comm.destroy()


class _NvshmemExchange(_Exchange):
    """`--comm nvshmem` (ranks of one node, whose memory NVSHMEM maps into each other): every rank
    allgathers the chunk's counts, so each knows where its group lands in each receiver's symmetric
    landing (after the groups of the lower source ranks); a kernel copies each group there, then signals
    the receivers (SignalWords), who wait on the device, so the entries never cross host memory. A chunk that brings
    some rank more words than its landing holds goes host-staged."""

    sums_on_devices = True

    def __init__(self, comm: MPI.Comm, backend, capacity: int):
        from dbfs import nvshmem
        super().__init__(comm, backend)
        self.size, pe = comm.Get_size(), world_ranks(comm)
        self.landing = nvshmem.symmetric(backend, capacity, np.int32)
        self.signals = SignalWords(comm, backend)
        self.bases = nvshmem.peer_addresses(self.landing.data.ptr, pe, self.me)
        self.staged = _HostExchange(comm, backend)

    def sums_in_round(self, words: int) -> bool:
        """Only where the column's blocks fit the landing: a staged round would receive them all on the
        device beside the values, where MPI's reduce-scatter through host memory receives one block."""
        return words <= self.landing.shape[0]

    def __call__(self, send, send_counts, width: int):
        backend, me = self.backend, self.me
        backend.sync()                  # this rank's kernels are done with its landing (the last chunk's)
        counts = np.empty((self.size, self.size), np.int64)
        self.comm.Allgather(np.ascontiguousarray(send_counts, np.int64), counts)
        words = width * counts                          # words[p, q]: from rank p to rank q
        arriving = words.sum(axis=0)
        if int(arriving.max()) > self.landing.shape[0]:
            return self.staged(send, send_counts, width)
        lands_at = np.cumsum(words, axis=0) - words     # where rank p's group starts on rank q
        send_at = np.concatenate(([0], np.cumsum(words[me])))
        receivers = [q for q in range(self.size) if q != me and words[me, q]]
        dests = backend.asarray(self.bases[receivers] + 4 * lands_at[me, receivers].astype(np.uint64))
        for k, q in enumerate(receivers):
            n = int(words[me, q])
            message.put(backend, send[send_at[q]:send_at[q + 1]].view(np.uint32), n, dests[k:k + 1])
        if words[me, me]:
            at = int(lands_at[me, me])
            backend.copy(self.landing[at:at + int(words[me, me])], send[send_at[me]:send_at[me + 1]])
        self.signals.post()
        return self.landing[:int(arriving[me])], words[:, me]

    def close(self) -> None:
        """Collective (the symmetric heap's buffers are given back together)."""
        from dbfs import nvshmem
        self.signals.close()
        nvshmem.free(self.landing)


class _Passes:
    """The two streaming passes of one build: this rank's entries, chunk by chunk."""

    def __init__(self, comms: GridComms, backend, source, row_copy: bool, transport: str, chunk_edges: int,
                 keeps_keys: bool | None = None):
        self.comms, self.grid, self.backend, self.source = comms, comms.grid, backend, source
        self.row_copy, self.chunk_edges = row_copy, chunk_edges
        self.ranks = comms.world.Get_size()
        self.clock = _ProducerClock(backend, comms.world)
        self.phases = PhaseClock(backend, BUILD_PHASES)
        self.exchange = None
        if self.ranks > 1:
            if transport == "nvshmem" and backend.is_gpu:
                self.exchange = _NvshmemExchange(comms.world, backend,
                                                 memory.landing_words(chunk_edges, source.symmetric))
            else:
                self.exchange = (_NcclExchange if transport == "nccl" and backend.is_gpu
                                 else _HostExchange)(comms.world, backend)
        # On a grid of one column an undirected graph's local rows are the owned vertices, whole: the row
        # copy's counts are the degrees, the column lengths summed over the ranks. Where the exchange sums
        # on the devices, that one round replaces counting (and sending) every entry's row in pass 1.
        # A row's entries are also its vertex's column segments on the ranks: the row copy is taken from
        # them after the placing pass (gather_rows), where scattering every entry's row cost an atomic an
        # entry over gigabytes of cursors.
        self.rows_from_peers = memory.rows_from_peers(self.grid, source.symmetric, row_copy)
        self.rows_from_columns = self.rows_from_peers and self.exchange.sums_on_devices
        # Where the counting pass counts columns alone, it may count every entry where it is produced
        # instead of sending it to be counted: a histogram over every rank's columns, summed once.
        self.count_rows = row_copy and not self.rows_from_columns
        self.counts_at_source = not self.count_rows and memory.counts_at_source(
            self.grid, chunk_edges, source.symmetric, row_copy, backend.name, transport)
        self.chunk_owners = None                # each chunk's entries per owner, where pass 1 counted them
        # Elsewhere on several ranks pass 1 may keep its entries' columns (as many words as row_idx will
        # take, which does not exist yet) and count them once every column's presence is known: a
        # hypersparse block's offsets are then built held by the positions of its non-empty columns, and
        # no array over every local column exists (count_kept). It costs time: the run's plan keeps them
        # where every column's offsets would make the construction its peak (keeps_keys; None: wherever
        # it may)
        self.keeps_keys = keeps_keys is not False and memory.counts_kept_keys(
            self.grid, chunk_edges, source.symmetric, row_copy, backend.name, transport)

    def _chunks(self, label: str):
        """The producer's chunks (src, dst) for a pass named `label`."""
        producing = "generating" if self.source.info is None else "reading"
        return self.clock.chunks(self.source, self.chunk_edges, f"construction, {producing} and {label}")

    def _arrivals(self, send, send_counts, width: int):
        """The words one round of the exchange brings this rank, as they become usable (Exchange.begin):
        first those usable now, then, the clock charging the exchange while they arrive, the others."""
        self.phases.switch("exchange")
        parts = list(self.exchange.begin(send, send_counts, width))
        arriving = parts.pop()
        yield parts.pop()                       # popped: nothing here holds the words while the caller works
        if arriving is not None:
            self.phases.switch("exchange")
            yield arriving()

    def entries(self, with_rows: bool, label: str):
        """(local columns, local rows or None, stride) of the entries this rank owns, int32 device
        arrays, entry e's at e * stride: on one rank per chunk and direction, arrays of their own
        (stride 1), the self-loops there with column -1 (row -1); on several ranks per chunk, both
        directions routed together, the received words read in place: (column, row) pairs interleaved
        (columns = words, rows = words[1:], stride 2) or the columns alone (stride 1)."""
        grid = self.grid
        k = -1
        # counted by hand: enumerate keeps its last item (the chunk before) while it fetches the next, which
        # would hold two chunks beside the graph (512 MiB above the estimate at 26 on one rank)
        for src, dst in self._chunks(label):
            k += 1
            self.phases.switch("route")
            if self.exchange is None:
                for u, v in ((src, dst), (dst, src)) if self.source.symmetric else ((src, dst),):
                    yield (*local_entries(self.backend, grid, u, v, with_rows), 1)
                    self.phases.switch("route")
                del u, v                        # the loop's names would keep the chunk past its end
            else:                               # the send buffer lives until the round's words have arrived
                known = self.chunk_owners[k] if self.chunk_owners is not None and with_rows else None
                packed = pack_by_owner(self.backend, grid, src, dst, self.source.symmetric, with_rows, known)
                for words in self._arrivals(*packed, 2 if with_rows else 1):
                    yield (words, words[1:], 2) if with_rows else (words, None, 1)
                    del words
                del packed
            self.phases.switch(None)            # the producer's time is the producer clock's
            del src, dst                        # before the next chunk is produced

    def count(self, col_ptr, row_ptr) -> tuple:
        """Pass 1: entries per local column into col_ptr[:-1] (and per local row into row_ptr[:-1]), the
        offsets widened before a count could pass their dtype (graph.widened); where the pass keeps its keys
        (keeps_keys; col_ptr None), the columns are kept instead and marked in the words of their Positions.
        Returns (col_ptr, row_ptr, the kept columns, a list of arrays; the words), the last two for
        count_kept."""
        label = "counting (pass 1 of 2)"
        xp, kept = self.backend.xp, []
        words = xp.zeros(self.grid.cols_per_rank // 32, xp.uint32) if self.keeps_keys else None
        if self.counts_at_source:
            col_ptr = self._count_at_source(col_ptr, label)
        else:
            received = 0                        # an upper bound of any column's or row's count (self-loops in)
            for cols, rows, stride in self.entries(with_rows=self.count_rows, label=label):
                received += strided_count(cols, stride)
                col_ptr, row_ptr = widened(col_ptr, received), widened(row_ptr, received)
                self.phases.switch("place")
                if self.keeps_keys:
                    kept.append(xp.empty(-(-cols.shape[0] // stride), xp.int32))
                    keep_keys(self.backend, cols, kept[-1], words, stride)
                else:
                    count_keys(self.backend, cols, col_ptr[:-1], stride)
                if self.count_rows:
                    count_keys(self.backend, rows, row_ptr[:-1], stride)
                del cols, rows
        if self.rows_from_columns:                 # the row copy holds the block's entries: as wide
            self.phases.switch("exchange")
            row_ptr = row_ptr.astype(col_ptr.dtype, copy=False)
            lengths = col_ptr[:-1].astype(np.int32)
            row_ptr[:-1] = _column_sums(self.comms, self.backend, self.exchange, lengths)
            del lengths
            self.phases.switch(None)
        return col_ptr, row_ptr, kept, words

    def count_kept(self, kept: list, words, width):
        """Collective: pass 1's kept columns (keeps_keys), marked in `words`, counted into new offsets of
        dtype `width`: where the grid's blocks hold their offsets by the positions of their non-empty
        columns (dbfs.graph.holds_columns_by_position: at most as many as the fullest block's), by position;
        else per local column. Returns (counts [m + 1], their Positions or None, the grid's most entries
        and non-empty columns of a block, host int64); `kept` is emptied as it is read."""
        backend, xp, grid = self.backend, self.backend.xp, self.grid
        starts = xp.empty(words.shape[0] + 1, xp.int32)
        held = Positions(words, starts, word_starts(backend, words, starts))
        largest = np.array([sum(int(keys.shape[0]) for keys in kept), held.count], np.int64)
        self.comms.world.Allreduce(MPI.IN_PLACE, largest, op=MPI.MAX)     # the skew of pass 1 waited once
        self.phases.switch("place")
        if not holds_columns_by_position(grid, int(largest[1])):
            held = words = starts = None
        counts = xp.zeros((grid.cols_per_rank if held is None else held.count) + 1,
                          widened_dtype(width, sum(int(keys.shape[0]) for keys in kept)))
        while kept:
            count_keys(backend, kept.pop(), counts[:-1], positions=held)
        self.phases.switch(None)
        return counts, held, largest

    def _count_at_source(self, col_ptr, label: str):
        """Pass 1 without sending the entries (counts_at_source): every chunk's entries counted by owner
        and local column where they are produced, then this rank's columns summed over the ranks into
        col_ptr, widened first where its entries need it (returned); each chunk's entries per owner kept for
        the placing pass (chunk_owners, read back once)."""
        grid, xp = self.grid, self.backend.xp
        counts = xp.zeros(grid.size * grid.cols_per_rank, np.uint32)
        totals = []
        for src, dst in self._chunks(label):
            self.phases.switch("place")
            totals.append(xp.zeros(grid.size, np.int64))
            count_by_owner(self.backend, grid, src, dst, self.source.symmetric, counts, totals[-1])
            self.phases.switch(None)
            del src, dst
        self.chunk_owners = self.backend.asnumpy(xp.stack(totals)) if totals else None
        world = self.comms.world
        produced = self.chunk_owners.sum(axis=0) if totals else np.zeros(grid.size, np.int64)
        owned = np.empty_like(produced)         # each rank's entries, for the width of its offsets
        world.Allreduce(produced, owned)
        col_ptr = widened(col_ptr, int(owned[world.Get_rank()]))
        # each rank's block to that rank over the exchange's send/recv round (whose connections are made
        # before the clock; NCCL connects a first collective inside it: 0.73 s on two H100, bench/NOTES.md,
        # 2026-11-27, the counting pass without the entries' exchange), then the blocks added up
        block = grid.cols_per_rank
        for words in self._arrivals(counts.view(np.int32), np.full(grid.size, block, np.int64), 1):
            self.phases.switch("place")
            for k in range(words.shape[0] // block):
                add_counts(self.backend, words[k * block:(k + 1) * block].view(np.uint32), col_ptr[:-1])
        self.phases.switch(None)
        return col_ptr

    def scatter(self, col_ptr, row_idx, row_ptr, col_idx, columns=None) -> None:
        """Pass 2: every entry below its column's cursor (and its row's), the cursors being the
        segment ends in col_ptr[:-1] (row_ptr[:-1]; a column's at its position where the Positions
        `columns` hold the offsets), which finish as the segment starts."""
        for cols, rows, stride in self.entries(with_rows=True, label="placing (pass 2 of 2)"):
            self.phases.switch("place")
            scatter_values(self.backend, cols, rows, col_ptr[:-1], row_idx, stride, positions=columns)
            if self.row_copy and not self.rows_from_peers:
                scatter_values(self.backend, rows, cols, row_ptr[:-1], col_idx, stride)
            del cols, rows

    def gather_rows(self, col_ptr, row_idx, row_ptr, col_idx) -> None:
        """The row copy on a grid of one column (rows_from_peers), after the placing pass: owned vertex o
        of rank i is column i*b + o on every rank k, whose segment there holds o's neighbours among k's
        rows (local rows r: this rank's local columns k*b + r). Each row takes those segments below its
        end in row_ptr[:-1] (ends from pass 1, starts when done): its own rank's in place, the others' in
        rounds of at most memory.row_round_words words a receiver (a round: each receiver's next range
        of rows, whose segments' lengths and entries every rank sends it in one message)."""
        backend, xp = self.backend, self.backend.xp
        me, b, ranks = self.comms.i, self.grid.block, self.ranks
        self.phases.switch("route")
        cuts = self._row_rounds(row_ptr, memory.row_round_words(self.chunk_edges))
        rounds = cuts.shape[1] - 1
        # where each receiver's ranges of rows begin and end among this rank's entries (one read-back)
        columns = backend.asarray((np.arange(ranks)[:, None] * b + cuts).ravel())
        bounds = backend.asnumpy(col_ptr[columns]).reshape(cuts.shape)
        self.phases.switch("place")
        append_segments(backend, col_ptr[me * b:(me + 1) * b + 1], row_idx, me * b, row_ptr[:-1], col_idx)
        progress = Progress("construction, the row copy from the column segments", rounds, "rounds", 1)
        for k in range(rounds):
            progress.update(k)
            self.phases.switch("route")
            rows, entries = np.diff(cuts[:, k:k + 2]).ravel(), np.diff(bounds[:, k:k + 2]).ravel()
            rows[me] = entries[me] = 0
            send_at = np.concatenate(([0], np.cumsum(rows + entries)))
            send = xp.empty(int(send_at[-1]), xp.int32)
            for p in np.flatnonzero(rows + entries):
                first, at = p * b + cuts[p, k], int(send_at[p])
                segment_lengths(backend, col_ptr[first:first + rows[p] + 1], send[at:at + rows[p]])
                backend.copy(send[at + rows[p]:send_at[p + 1]], row_idx[bounds[p, k]:bounds[p, k + 1]])
            self.phases.switch("exchange")
            words, received = self.exchange(send, rows + entries, 1)
            del send
            self.phases.switch("place")
            lo, hi = int(cuts[me, k]), int(cuts[me, k + 1])
            received_at = np.cumsum(received) - received
            for p in np.flatnonzero(received):
                at = int(received_at[p])
                starts = xp.zeros(hi - lo + 1, row_ptr.dtype)
                starts[1:] = words[at:at + hi - lo]
                inclusive_scan(backend, starts[1:])
                append_segments(backend, starts, words[at + hi - lo:at + received[p]], p * b, row_ptr[lo:hi], col_idx)
            del words
        progress.close()
        self.phases.switch(None)

    def _row_rounds(self, row_ptr, round_words: int):
        """[ranks, rounds + 1] int64: rank p's rows of round k are cuts[p, k] .. cuts[p, k + 1] - 1, from the
        row ends in row_ptr[:-1]. A round of this rank's rows holds at most half of round_words in entries
        besides its first row's, and half in row lengths (ranks - 1 words a row); every rank has as many
        rounds (the last ones empty where a rank needs fewer)."""
        xp, b = self.backend.xp, self.grid.block
        half = max(1, round_words // 2)
        ends = row_ptr[:-1]
        by_entries = self.backend.asnumpy(xp.searchsorted(ends, xp.arange(half, int(ends[-1]), half), side="right"))
        by_rows = np.arange(max(1, half // self.ranks), b, max(1, half // self.ranks))
        mine = np.sort(np.concatenate(([0, b], by_entries, by_rows)).astype(np.int64))
        mine = mine[np.concatenate(([True], mine[1:] != mine[:-1]))]    # (np.unique would import numpy.ma)
        rounds = np.array(mine.shape[0] - 1, np.int64)
        self.comms.world.Allreduce(MPI.IN_PLACE, rounds, op=MPI.MAX)
        padded = np.concatenate((mine, np.full(int(rounds) + 1 - mine.shape[0], b, np.int64)))
        cuts = np.empty((self.ranks, int(rounds) + 1), np.int64)
        self.comms.world.Allgather(padded, cuts)
        return cuts

    def close(self) -> None:
        if self.exchange is not None:
            self.exchange.close()


def _segment_ends(backend, ptr) -> int:
    """Counts in ptr[:-1] -> their inclusive prefix sums (segment ends); ptr[-1] := the total, returned."""
    inclusive_scan(backend, ptr[:-1])
    if ptr.shape[0] > 1:                        # a block held by its non-empty columns may have none
        ptr[-1:] = ptr[-2:-1]
    return int(ptr[-1])


def build(comms: GridComms, backend, source, row_major: bool = False, transport: str = "mpi",
          chunk_edges: int | None = None, plan=None, offsets=None) -> tuple[LocalGraph, BuildReport]:
    """Collective: this rank's LocalGraph (on the backend's device) from `source`, which streams the
    tuples (dbfs.source.GraphSource or EdgeArrays: n_vertices, n_edges, symmetric, chunk_rounds,
    tuple_chunks).

    row_major adds the row-major copy for the bottom-up search. symmetric=False sources are stored
    one way (u -> v for each tuple, graph.info["directed"]). transport "nccl" (GPU backend) moves the
    entries with NCCL, "nvshmem" (GPU backend, NVSHMEM started) by kernels' copies into symmetric
    landings; any other value stages them through host MPI. chunk_edges defaults to the plan's chunk,
    else dbfs.memory.chunk_edges. plan (a dbfs.memory.Estimate with a limit): once the entries are counted
    it is redone with the largest rank's exact count and the build stops with a DbfsError on every rank,
    before anything more is allocated, when that does not fit; the report carries it; it also says whether
    the counting pass keeps its keys (_Passes; without a plan, wherever it may). offsets: the
    dtype counted and placed in (default dbfs.graph.building_offsets; dbfs.warmup also builds in int64,
    as a larger graph's build does).
    """
    grid, xp, world = comms.grid, backend.xp, comms.world
    row_copy = row_major and not csc_is_row_major(grid, source.symmetric)
    if chunk_edges is None:
        chunk_edges = (plan.inputs["chunk"] if plan is not None else
                       memory.chunk_edges(grid, source.n_edges, source.symmetric, row_copy, backend.name,
                                          transport=transport))
    # the exchange (a communicator whose connections NCCL makes on its first round, a symmetric
    # landing) is set up once per job, like MPI itself, outside construction's time
    world.Barrier()
    setting_up = time.perf_counter()
    passes = _Passes(comms, backend, source, row_copy, transport, chunk_edges,
                     None if plan is None else plan.inputs["keeps_keys"])
    backend.sync()
    world.Barrier()
    started = time.perf_counter()
    setup_seconds = started - setting_up
    # counted and placed at the width of twice a block's even share of the entries (widened while counted
    # where a block passes it), narrowed at the end where that is more than this block needs
    # (LocalGraph.narrow_offsets)
    width = building_offsets(grid.size, source.n_edges, source.symmetric) if offsets is None else offsets
    col_ptr = None if passes.keeps_keys else xp.zeros(grid.cols_per_rank + 1, width)
    row_ptr = xp.zeros(grid.rows_per_rank + 1, width) if row_copy else None
    col_ptr, row_ptr, kept, words = passes.count(col_ptr, row_ptr)
    held = largest = None                       # the Positions of the non-empty columns, where col_ptr is by them
    if passes.keeps_keys:                       # (the entries kept are the block's: no self-loop is routed)
        col_ptr, held, largest = passes.count_kept(kept, words, width)
    del words
    nnz = _segment_ends(backend, col_ptr)
    if row_copy:
        _segment_ends(backend, row_ptr)
    # col_ptr holds the segment ends here: segment k > 0 holds an entry where its end differs from the
    # one before it (count_nonempty over the ends), segment 0 where its end is past 0
    columns = held.count if held is not None else count_nonempty(backend, col_ptr[:-1]) + (int(col_ptr[0]) > 0)
    if plan is not None:
        if largest is None:
            largest = np.array([nnz, columns], np.int64)
            world.Allreduce(MPI.IN_PLACE, largest, op=MPI.MAX)
        plan = plan.with_counts(*(int(n) for n in largest))
        memory.check(plan, world, "memory estimate per rank with the counted entries")
    row_idx = xp.empty(nnz, xp.int32)
    col_idx = xp.empty(nnz, xp.int32) if row_copy else None
    passes.scatter(col_ptr, row_idx, row_ptr, col_idx, held)
    if passes.rows_from_peers:
        passes.gather_rows(col_ptr, row_idx, row_ptr, col_idx)
    if row_copy:
        passes.phases.switch("place")
        longest_columns_first(backend, row_ptr, col_idx, col_ptr, held)
        passes.phases.switch(None)
    filled = int(col_ptr[0]) == 0 and (row_ptr is None or int(row_ptr[0]) == 0)
    runtime.agree(None if filled else
                  f"rank {world.Get_rank()}: the tuples changed between the two construction passes", world)
    degree = _owned_degree(comms, backend, col_ptr, passes.exchange, row_ptr if source.symmetric else None, held)
    graph = LocalGraph(comms=comms, backend=backend, col_ptr=col_ptr, row_idx=row_idx, n_edges=source.n_edges,
                       degree=degree, row_ptr=row_ptr, col_idx=col_idx, info={"directed": not source.symmetric},
                       columns=held)
    graph.nonempty_columns = columns            # counted above: the search state is sized by it
    if row_major and not row_copy:
        add_row_major(graph)
    graph.narrow_offsets()
    backend.sync()
    clock = passes.clock
    built = time.perf_counter()
    build_seconds = built - started - clock.seconds
    passes.close()                              # like its set-up, outside construction's time
    setup_seconds += time.perf_counter() - built
    if plan is not None:                        # with the queue groups' slots and the rows, counted now
        plan = plan.with_counts(*(int(n) for n in largest), graph.group_slots, graph.most_nonempty_rows,
                                graph.segment_slots if graph.grid.C > 1 else None,
                                graph.segment_columns if graph.bottom_up_by_columns else None,
                                graph.bottom_up_step_entries if graph.bottom_up_ready else None)
    rate = clock.tuples / clock.own_seconds if clock.own_seconds > 0 else float("inf")
    phases = passes.phases.totals()
    report = BuildReport(construction_time=world.allreduce(build_seconds, op=MPI.MAX),
                         setup_time=world.allreduce(setup_seconds, op=MPI.MAX),
                         producer_time=world.allreduce(clock.seconds, op=MPI.MAX),
                         producer_rate=world.allreduce(rate, op=MPI.MIN), chunk_edges=chunk_edges,
                         phases={k: world.allreduce(phases[k], op=MPI.MAX) for k in BUILD_PHASES}, memory=plan)
    return graph, report


def build_from_edges(comms: GridComms, backend, src, dst, n_vertices: int | None = None,
                     chunk_edges: int | None = None, symmetric: bool = True, row_major: bool = False,
                     transport: str = "mpi") -> LocalGraph:
    """Collective: build() over tuples in memory, src and dst being this rank's share (any split)."""
    n_vertices = comms.grid.n_vertices if n_vertices is None else n_vertices
    source = EdgeArrays.create(src, dst, n_vertices, symmetric, comms.world)
    return build(comms, backend, source, row_major=row_major, transport=transport, chunk_edges=chunk_edges)[0]


def add_row_major(graph: LocalGraph) -> None:
    """Give a graph without one its row-major copy: the CSC itself on a 1x1 grid of an undirected
    graph, else the transposed block (for blocks loaded from the partition cache); each row's entries
    of the longest columns first, as build() leaves them."""
    if csc_is_row_major(graph.grid, not graph.info.get("directed")):
        graph.row_ptr, graph.col_idx = graph.col_ptr, graph.row_idx
    else:
        graph.row_ptr, graph.col_idx = transpose_csc(graph.backend, graph.col_ptr, graph.row_idx,
                                                     graph.grid.rows_per_rank, graph.columns)
    longest_columns_first(graph.backend, graph.row_ptr, graph.col_idx, graph.col_ptr, graph.columns)


def transpose_csc(backend, col_ptr, row_idx, nrows: int, columns=None):
    """The CSR (row_ptr [nrows+1] as wide as col_ptr, col_idx int32) of a CSC block (its offsets held by
    the Positions `columns` where given), on the same device: rows counted, scanned into row ends,
    entries scattered below them (the same counting sort as build)."""
    xp = backend.xp
    row_ptr = xp.zeros(nrows + 1, col_ptr.dtype)
    count_keys(backend, row_idx, row_ptr[:-1])
    nnz = _segment_ends(backend, row_ptr)
    col_idx = xp.empty(nnz, xp.int32)
    csr_from_csc(backend, col_ptr, row_idx, row_ptr[:-1], col_idx, columns)
    return row_ptr, col_idx


def _owned_degree(comms: GridComms, backend, col_ptr, exchange, row_ptr=None, columns=None):
    """Degree of every owned vertex (non-self-loop entries): its column's length summed over the grid
    column. The column block is the concatenation of the R owned blocks of grid column j in order i,
    so a reduce-scatter along the column hands every rank exactly its own block (_column_sums; on a
    grid of one row, the column lengths themselves; where the Positions `columns` hold the offsets, in
    rounds of one owned block, _held_column_sums). On a grid of one column the local rows are the
    owned vertices and hold their whole rows, so an undirected graph's row copy (row_ptr; None: not
    there, or directed) gives the degrees with no round at all."""
    xp = backend.xp
    if row_ptr is not None and comms.row.Get_size() == 1:
        degree = xp.empty(comms.grid.block, xp.int32)
        segment_lengths(backend, row_ptr, degree)
        return degree
    if columns is not None:
        return _held_column_sums(comms, backend, exchange, col_ptr, columns)
    lengths = xp.empty(comms.grid.cols_per_rank, xp.int32)
    segment_lengths(backend, col_ptr, lengths)
    if comms.col.Get_size() == 1:
        return lengths
    return _column_sums(comms, backend, exchange, lengths)


def _column_sums(comms: GridComms, backend, exchange, values):
    """Collective: the sum over this rank's grid column of the ranks' int32 `values` (the column's R
    owned blocks), this rank's block of it: a round of the build's exchange on the devices where it
    takes one (_Exchange.sums_in_round), else MPI's reduce-scatter through host memory."""
    if exchange.sums_in_round(values.shape[0]):
        return exchange.column_sums(comms.grid, comms.i, comms.j, values)
    mine = np.empty(comms.grid.block, np.int32)
    comms.col.Reduce_scatter_block(backend.asnumpy(values), mine, op=MPI.SUM)
    return backend.asarray(mine)


def _held_column_sums(comms: GridComms, backend, exchange, col_ptr, columns):
    """Collective: the owned degrees of a block whose offsets the Positions `columns` hold: a ring
    reduce-scatter along the grid column, so that no rank holds more than a few owned blocks of lengths
    where every local column's would take N/C. In round s rank (i, j) sends its partial sum of block
    i - 1 - s to rank (i + 1, j) and adds its own lengths of block i - 2 - s to the one it receives from
    rank (i - 1, j) (one round of the build's exchange, every rank of the grid at once); after R - 1
    rounds the partial sum it holds is block i's, whole."""
    grid, i, j = comms.grid, comms.i, comms.j
    b, R, xp = grid.block, grid.R, backend.xp

    def lengths(k: int):
        out = xp.empty(b, xp.int32)
        segment_lengths(backend, col_ptr, out, columns, k * b)
        return out

    partial = lengths((i - 1) % R)
    to_next = np.zeros(grid.size, np.int64)
    to_next[grid.rank((i + 1) % R, j)] = b
    for step in range(R - 1):
        received = exchange(partial, to_next, 1)[0]
        own = lengths((i - step - 2) % R)
        own += received                         # not in place: NVSHMEM's landing is the next round's too
        partial = own
        del received, own
    return partial
