"""Expand and fold exchanges: rounds of point-to-point messages between the ranks of one grid line.

Method (paper 004, section 3.3): receives are posted ahead of the matching sends and buffers are made
once per run; all ranks of a line run the same sequence of rounds, which keeps the k-th message from a
peer matched with the k-th receive. A message carries a set of offsets within a block of b vertices
(the sender's block for expand, the receiver's for fold and for the bottom-up rotation).

Encoding (paper 004, section 5): a message is a list of 32-bit offsets or a bitmap of the b/32 words of
the block, whichever is smaller (`adaptive`: bitmap when 32 * count > b, i.e. when b/8 bitmap bytes
are fewer than 4 * count list bytes), chosen per message, or always one form (`list`, `bitmap`). A
3-word head [form, count, payload words] precedes the payload.

Two kinds of round:
- LevelExchange, a level's expand, fold and rotation: kernels encode the messages on the device and
  write their heads (dbfs.ops.message), so the host never reads a count before a round; per transport
  the messages travel staged through pinned host memory at their exact size (`mpi`), from device
  buffers (`mpi-cuda`), as NCCL sends on the stream (`nccl`; the expand's at the sizes the level's
  allgather gave, the fold's at whole capacity), or put by dbfs's kernels
  into the receiver's NVSHMEM symmetric memory with a signal (`nvshmem`);
- Exchange, the rounds of whole bitmaps and sparse blocks made once a search (the switch back to
  top-down, the predecessors): `round`/`transfer` with `mpi` (device<->host copies on their own stream),
  `mpi-cuda`, or NCCL with a header round first. Which transport may run is dbfs.transport's decision.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mpi4py import MPI

from dbfs import runtime, transport
from dbfs.errors import DbfsError
from dbfs.kernels import HEAD, HEAD_WORDS
from dbfs.ops import bitmap, message
from dbfs.workspace import Workspace, allocated_bytes

LIST, BITMAP, WORDS = 0, 1, 2
ENCODINGS = ("adaptive", "list", "bitmap")
HEADER_WORDS = HEAD_WORDS
HEADER_BYTES = 4 * HEADER_WORDS


@dataclass
class OffsetSet:
    """`count` offsets in [0, block) on the device: an int32 list, a uint32 bitmap, or both. A bitmap
    whose size nobody counted (count None) always travels as a bitmap, with count 0 in its header."""

    count: int | None
    list: object = None
    bitmap: object = None


@dataclass
class Message:
    """A received set: `payload` (uint32 device view) is a list (kind LIST) or a bitmap (BITMAP)."""

    kind: int
    count: int
    payload: object


def wire_kind(encoding: str, count: int, block: int) -> int:
    if encoding == "list":
        return LIST
    if encoding == "bitmap":
        return BITMAP
    return BITMAP if 32 * count > block else LIST


class Exchange:
    """Rounds of messages among the ranks of `comm` (a grid row or column), each a set of offsets in a
    block of `block` vertices (a multiple of 32)."""

    def __init__(self, comm: MPI.Comm, backend, block: int, encoding: str = "adaptive",
                 transport: str = "mpi", memory=None, scratch: bool = True):
        """memory: the dbfs.workspace.Workspace whose lenders hold the send scratch and the receive
        blocks (an NVSHMEM landing stays on the symmetric heap); None: their own arrays. scratch: a send
        scratch a peer, where a round re-encodes an OffsetSet or a dense record is packed
        (dbfs.line_records); without it only bitmaps and word arrays are sent."""
        if encoding not in ENCODINGS:
            raise DbfsError(f"unknown encoding {encoding!r} ({', '.join(ENCODINGS)})", collective=True)
        self.backend, self.block, self.encoding = backend, block, encoding
        self.comm = comm.Dup()
        me = self.comm.Get_rank()
        self.peers = [p for p in range(self.comm.Get_size()) if p != me]
        xp = backend.xp
        memory = memory or Workspace(backend)
        self.send_scratch = {p: memory.empty(block, xp.uint32) for p in self.peers} if scratch else {}
        self.counter = xp.zeros(1, xp.int32)
        self.transport = make_transport(transport, self.comm, backend, self.peers, block, memory)
        self.recv_dev = self.transport.recv_dev

    @staticmethod
    def lent_requests(peers: int, block: int, transport: str, cpu: bool, scratch: bool = True) -> list:
        """The bytes of the arrays an Exchange takes from its `memory`, in order: the send scratch (where
        it has one), and the receive blocks but where they are an NVSHMEM landing (on the symmetric heap)."""
        landing_kept = transport == "nvshmem" and not cpu
        return [4 * block] * ((peers if scratch else 0) + (0 if landing_kept else peers))

    @staticmethod
    def buffer_bytes(peers: int, block: int, transport: str, cpu: bool, lenders=(), scratch: bool = True) -> int:
        """What an Exchange over a line of peers + 1 ranks allocates with its transport: device buffers
        (and host staging on the CPU backend, where host memory is the device's), less what lenders of
        those byte sizes hold (its `memory`)."""
        landing_kept = transport == "nvshmem" and not cpu   # NvshmemPuts: its landing on the heap
        total = (allocated_bytes(lenders, Exchange.lent_requests(peers, block, transport, cpu, scratch))
                 + (4 * block * peers if landing_kept else 0) + 4)   # the counter
        if transport == "nvshmem" and not cpu:      # NvshmemPuts: signal words, peer addresses
            total += 8 * (2 * (peers + 1) + peers)
        elif transport in ("mpi", "nvshmem") and cpu:   # HostStagedMPI: pinned send and receive buffers
            total += 2 * peers * 4 * (HEADER_WORDS + block)
        elif transport == "mpi-cuda":               # CudaAwareMPI: landing buffers
            total += 4 * block * peers
        elif transport == "nccl":                   # NcclTransport: device headers
            total += 2 * 4 * HEADER_WORDS * max(1, peers)
        return total

    def round(self, outgoing: dict, sources):
        """Send outgoing[p] (an OffsetSet) to each peer p in it; receive one message from each rank in
        `sources`. Returns ({source: Message}, bytes sent, bytes the same sends take as lists (as
        sent for uncounted bitmaps))."""
        sends, sent, raw = {}, 0, 0
        for p, offsets in outgoing.items():
            if offsets.count is None:
                sends[p] = (BITMAP, 0, offsets.bitmap)
                raw += HEADER_BYTES + 4 * int(offsets.bitmap.shape[0])
            else:
                kind = wire_kind(self.encoding, offsets.count, self.block)
                sends[p] = (kind, offsets.count, self._payload(p, kind, offsets))
                raw += HEADER_BYTES + 4 * offsets.count
            sent += HEADER_BYTES + 4 * int(sends[p][2].shape[0])
        received = self.transport.round(sends, list(sources))
        return ({p: Message(kind, count, self.recv_dev[p][:words])
                 for p, (kind, count, words) in received.items()}, sent, raw)

    def transfer(self, outgoing: dict, sources) -> dict:
        """One round of plain word arrays (uint32 device arrays of at most `block` words) through the
        same transport; returns {source: received uint32 device view}."""
        received = self.transport.round({p: (WORDS, 0, words) for p, words in outgoing.items()},
                                        list(sources))
        return {p: self.recv_dev[p][:n] for p, (_, _, n) in received.items()}

    def enqueue_words(self, outgoing: dict) -> dict:
        """The peers' memory mapped (NVSHMEM): one round of plain word arrays, each peer sending this
        rank as many words as it receives from it, as kernels alone (no host wait: a CUDA graph can hold
        it); every peer must have read its landing of the previous round (a collective since). Returns
        {peer: the words it sent, a device view}."""
        if isinstance(self.transport, NvshmemPuts):
            self.transport.enqueue(outgoing)
        else:                                   # a host round (the CPU tests force this path)
            self.transfer(outgoing, list(outgoing))
        return {p: self.recv_dev[p][:int(words.shape[0])] for p, words in outgoing.items()}

    def _payload(self, peer: int, kind: int, offsets: OffsetSet):
        scratch = self.send_scratch[peer]
        if kind == LIST:
            if offsets.list is not None:
                return offsets.list[:offsets.count].view(np.uint32)
            bitmap.unpack(self.backend, offsets.bitmap, scratch.view(np.int32), self.counter)
            return scratch[:offsets.count]
        if offsets.bitmap is not None:
            return offsets.bitmap
        words = scratch[:self.block // 32]
        bitmap.pack(self.backend, offsets.list, offsets.count, words)
        return words

    def close(self) -> None:
        self.transport.close()
        self.comm.Free()


def make_transport(name: str, comm, backend, peers, block: int, memory):
    """Collective: the transport object of a whole-message Exchange, with its device receive buffer
    (`recv_dev`, `block` words) per peer, from `memory` (a Workspace) but for an NVSHMEM landing
    (refusals: dbfs.transport.problem)."""
    runtime.agree(transport.problem(name, backend, comm), comm)
    if name == "nvshmem" and backend.is_gpu:
        return NvshmemPuts(comm, backend, peers, block)
    recv_dev = {p: memory.empty(block, backend.xp.uint32) for p in peers}
    if name == "mpi-cuda":
        return CudaAwareMPI(comm, backend, peers, recv_dev)
    if name == "nccl":
        return NcclTransport(comm, backend, peers, recv_dev)
    return HostStagedMPI(comm, backend, peers, recv_dev)


def world_ranks(comm) -> dict:
    """{rank of comm: its MPI_COMM_WORLD rank} (NVSHMEM's PE number)."""
    size = comm.Get_size()
    return dict(enumerate(comm.Get_group().Translate_ranks(list(range(size)), MPI.COMM_WORLD.Get_group())))


def nccl_communicator(comm, backend):
    """Collective over the MPI communicator `comm`: an NCCL communicator of the same ranks (the
    transport was checked: one GPU per rank)."""
    from cupy.cuda import nccl
    uid = nccl.get_unique_id() if comm.Get_rank() == 0 else None
    return nccl.NcclCommunicator(comm.Get_size(), comm.bcast(uid, root=0), comm.Get_rank())


class HostStagedMPI:
    """Isend/Irecv of pinned host copies; device->host copies of all sends, then host->device copies
    of each receive as soon as it completes, on a copy stream the compute stream then waits for."""

    def __init__(self, comm, backend, peers, recv_dev):
        self.comm, self.backend, self.recv_dev = comm, backend, recv_dev
        words = HEADER_WORDS + max((int(a.shape[0]) for a in recv_dev.values()), default=0)
        self.send_buf = {p: backend.pinned_empty(words, np.uint32) for p in peers}
        self.recv_buf = {p: backend.pinned_empty(words, np.uint32) for p in peers}
        self.recv_req = {p: self._post(p) for p in peers}
        if backend.is_gpu:
            self.copy_stream = backend.xp.cuda.Stream(non_blocking=True)

    def _post(self, p):
        return self.comm.Irecv([self.recv_buf[p], MPI.UINT32_T], source=p, tag=0)

    def round(self, sends: dict, sources: list) -> dict:
        gpu = self.backend.is_gpu
        if gpu and sends:
            self.copy_stream.wait_event(self.backend.xp.cuda.get_current_stream().record())
        for p, (kind, count, payload) in sends.items():
            buf, n = self.send_buf[p], int(payload.shape[0])
            buf[:HEADER_WORDS] = (kind, count, n)
            if gpu:
                self.backend.copy(buf[HEADER_WORDS:HEADER_WORDS + n], payload, self.copy_stream)
            else:
                buf[HEADER_WORDS:HEADER_WORDS + n] = payload
        if gpu and sends:
            self.backend.sync(self.copy_stream)
        send_req = [self.comm.Isend([self.send_buf[p][:HEADER_WORDS + int(payload.shape[0])],
                                     MPI.UINT32_T], dest=p, tag=0)
                    for p, (_, _, payload) in sends.items()]
        received, pending = {}, list(sources)
        while pending:
            k = MPI.Request.Waitany([self.recv_req[p] for p in pending])
            p = pending.pop(k)
            buf = self.recv_buf[p]
            kind, count, n = (int(x) for x in buf[:HEADER_WORDS])
            if gpu:
                self.backend.copy(self.recv_dev[p][:n], buf[HEADER_WORDS:HEADER_WORDS + n], self.copy_stream)
            else:
                self.recv_dev[p][:n] = buf[HEADER_WORDS:HEADER_WORDS + n]
            received[p] = (kind, count, n)
        if gpu and sources:
            # the pinned receive buffers are reposted below: their copies must have finished
            self.backend.sync(self.copy_stream)
        for p in sources:
            self.recv_req[p] = self._post(p)
        MPI.Request.Waitall(send_req)
        return received

    def close(self) -> None:
        _cancel(list(self.recv_req.values()))
        self.recv_req = {}


class SignalWords:
    """NVSHMEM (collective over `comm`): a signal word per rank of `comm` on this rank's symmetric heap
    (word p is rank p's to set) and the address of this rank's word on every peer. `post`, queued after
    a round's puts (their kernel's end has completed them), sets this rank's word on every peer to the
    next round and waits on the device until every peer has set its word here to it. The rounds are
    counted on the device (`rounds`), so a post can be captured into a CUDA graph and replayed."""

    def __init__(self, comm, backend):
        from dbfs import nvshmem
        self.backend, self.me = backend, comm.Get_rank()
        pe, size = world_ranks(comm), comm.Get_size()
        self.words = nvshmem.symmetric(backend, size, np.uint64)
        self.rounds = backend.xp.zeros(1, np.uint64)
        mine, self.skip = self.words.data.ptr + 8 * self.me, self.me
        self.on_peers = backend.asarray(nvshmem.peer_addresses(mine, pe, self.me))

    def post(self) -> None:
        message.post(self.backend, self.on_peers, self.words, self.skip, self.rounds)

    def close(self) -> None:
        """Collective (the symmetric heap's buffers are given back together)."""
        from dbfs import nvshmem
        nvshmem.free(self.words)


class NvshmemPuts:
    """`--comm nvshmem`: each payload copied by a kernel straight into its receiver's slot of a
    symmetric landing buffer (through NVSHMEM's mapping of the receiver's memory), then the peers
    signalled (SignalWords); each rank waits for its signals on the device, so the data never crosses
    host memory. The heads go by one MPI Alltoall, which every rank joins once its kernels are done:
    when it returns, every peer has finished reading its landing slots of the last round."""

    def __init__(self, comm, backend, peers, block: int):
        from dbfs import nvshmem
        self.comm, self.backend = comm, backend
        me, pe = comm.Get_rank(), world_ranks(comm)
        # slot k of a rank's landing holds its k-th peer's message (peers in rank order, itself left out)
        self.landing = nvshmem.symmetric(backend, max(1, len(peers)) * block, np.uint32)
        self.signals = SignalWords(comm, backend)
        self.recv_dev = {p: self.landing[k * block:(k + 1) * block] for k, p in enumerate(peers)}

        def slot_on(p: int) -> int:
            return nvshmem.peer_address(self.landing.data.ptr + 4 * block * (me - (me > p)), pe[p])

        self.dest = {p: backend.asarray(np.array([slot_on(p)], np.uint64)) for p in peers}

    def round(self, sends: dict, sources: list) -> dict:
        self.backend.sync()
        heads = np.zeros((self.comm.Get_size(), HEADER_WORDS), np.int64)
        for p, (kind, count, payload) in sends.items():
            heads[p] = (kind, count, int(payload.shape[0]))
        arrived = np.empty_like(heads)
        self.comm.Alltoall(heads, arrived)
        self.enqueue({p: payload for p, (_, _, payload) in sends.items()})
        return {p: tuple(int(x) for x in arrived[p]) for p in sources}

    def enqueue(self, sends: dict) -> None:
        """A round whose sizes the receivers know (`round` tells them first; Exchange.enqueue_words's
        callers know them anyway): the non-empty payloads put and the signal round, on the stream."""
        for p, words in sends.items():
            n = int(words.shape[0])
            if n:
                message.put(self.backend, words, n, self.dest[p])
        self.signals.post()

    def close(self) -> None:
        """Collective (the symmetric heap's buffers are given back together)."""
        from dbfs import nvshmem
        self.signals.close()
        nvshmem.free(self.landing)


def _cancel(requests) -> None:
    """Cancel receives posted for a round that will not come, and complete them."""
    for req in requests:
        req.Cancel()
    MPI.Request.Waitall(requests)


class CudaAwareMPI:
    """Isend/Irecv of device buffers (a CUDA-aware MPI): headers from host memory, payloads straight
    from device memory into device landing buffers, receives of both posted ahead. A landing buffer
    is copied out before its receive is reposted, so a peer's next message cannot overwrite a payload
    that is still being decoded."""

    def __init__(self, comm, backend, peers, recv_dev):
        self.comm, self.backend, self.recv_dev = comm, backend, recv_dev
        self.landing = {p: backend.xp.empty_like(recv_dev[p]) for p in peers}
        self.send_hdr = {p: np.empty(HEADER_WORDS, np.uint32) for p in peers}
        self.recv_hdr = {p: np.empty(HEADER_WORDS, np.uint32) for p in peers}
        self.recv_req = {p: self._post(p) for p in peers}

    def _post(self, p):
        return (self.comm.Irecv([self.recv_hdr[p], MPI.UINT32_T], source=p, tag=0),
                self.comm.Irecv([self.landing[p], MPI.UINT32_T], source=p, tag=1))

    def round(self, sends: dict, sources: list) -> dict:
        self.backend.sync()   # MPI does not order itself after the kernels that wrote the payloads
        send_req = []
        for p, (kind, count, payload) in sends.items():
            self.send_hdr[p][:] = (kind, count, int(payload.shape[0]))
            send_req.append(self.comm.Isend([self.send_hdr[p], MPI.UINT32_T], dest=p, tag=0))
            send_req.append(self.comm.Isend([payload, MPI.UINT32_T], dest=p, tag=1))
        MPI.Request.Waitall([r for p in sources for r in self.recv_req[p]])
        received = {p: tuple(int(x) for x in self.recv_hdr[p]) for p in sources}
        for p, (_, _, n) in received.items():
            self.recv_dev[p][:n] = self.landing[p][:n]
        self.backend.sync()
        for p in sources:
            self.recv_req[p] = self._post(p)
        MPI.Request.Waitall(send_req)
        return received

    def close(self) -> None:
        _cancel([r for pair in self.recv_req.values() for r in pair])
        self.recv_req = {}


class NcclTransport:
    """NCCL send/recv on the compute stream: one grouped round of 3-word headers (read back to size
    the payloads), then one grouped round of payloads into the device receive buffers."""

    def __init__(self, comm, backend, peers, recv_dev):
        from cupy.cuda import nccl
        self.nccl, self.backend, self.recv_dev, self.peers = nccl, backend, recv_dev, peers
        self.comm = nccl_communicator(comm, backend)
        xp, n = backend.xp, max(1, len(peers))
        self.index = {p: k for k, p in enumerate(peers)}
        self.send_hdr_host = backend.pinned_empty(HEADER_WORDS * n, np.uint32)
        self.recv_hdr_host = backend.pinned_empty(HEADER_WORDS * n, np.uint32)
        self.send_hdr = xp.empty(HEADER_WORDS * n, xp.uint32)
        self.recv_hdr = xp.empty(HEADER_WORDS * n, xp.uint32)

    def _hdr(self, array, p):
        k = HEADER_WORDS * self.index[p]
        return array[k:k + HEADER_WORDS]

    def round(self, sends: dict, sources: list) -> dict:
        nccl, u32 = self.nccl, self.nccl.NCCL_UINT32
        stream = self.backend.xp.cuda.get_current_stream()
        for p, (kind, count, payload) in sends.items():
            self._hdr(self.send_hdr_host, p)[:] = (kind, count, int(payload.shape[0]))
        self.backend.copy(self.send_hdr, self.send_hdr_host, stream)
        nccl.groupStart()
        for p in sends:
            self.comm.send(self._hdr(self.send_hdr, p).data.ptr, HEADER_WORDS, u32, p, stream.ptr)
        for p in sources:
            self.comm.recv(self._hdr(self.recv_hdr, p).data.ptr, HEADER_WORDS, u32, p, stream.ptr)
        nccl.groupEnd()
        self.backend.copy(self.recv_hdr_host, self.recv_hdr, stream)
        self.backend.sync(stream)
        received = {p: tuple(int(x) for x in self._hdr(self.recv_hdr_host, p)) for p in sources}
        nccl.groupStart()
        for p, (_, _, payload) in sends.items():
            if payload.shape[0]:
                self.comm.send(payload.data.ptr, int(payload.shape[0]), u32, p, stream.ptr)
        for p, (_, _, n) in received.items():
            if n:
                self.comm.recv(self.recv_dev[p].data.ptr, n, u32, p, stream.ptr)
        nccl.groupEnd()
        return received

    def close(self) -> None:
        self.comm.destroy()


class LevelExchange:
    """One of a level's exchanges among the ranks of a grid line (a grid column: expand; a grid row:
    fold; either line: the bottom-up frontier's gather and, with `rotation`, the bottom-up rotation of
    segments), everything made once per run: a device message buffer per outgoing message (`shared`: one
    message for every peer, the own frontier; `out`: another exchange's shared buffer, the same message
    sent along the other line), host staging, landing buffers (a bitmap of the block bounds every
    message), and the SourceTable the decoding kernels read. Kernels encode the messages
    (dbfs.ops.message) and write their heads, so no round needs a header exchange:

    - `mpi`: a kernel stages the messages into pinned host memory at their exact size; after the
      level's wait, `send` posts them (buffer-based Isend) and waits for the receives, which were posted
      ahead at full capacity into pinned host buffers that the decoding kernels read through their
      mapped addresses -- no copy up, no decoding launch per peer;
    - `mpi-cuda`: the same, with the payloads sent from and received into device buffers;
    - `nccl`: messages sent and received on the compute stream, no wait at all: the expand's at their
      sizes, which the level's closing allgather gave every rank (`expect`), the fold's (encoded
      mid-level) at whole capacity;
    - `nvshmem`: every message is read where its sender encoded it, through NVSHMEM's mapping of the
      sender's memory: a round is a kernel that sets the receivers' signal words to the round and waits
      on the device for the peers' signals (dbfs.nvshmem, dbfs.ops.message post), no landing exists, and
      nothing crosses host memory. A message of its own for each peer (the fold's) is read within the
      level that encodes it, and its sender encodes the next only after the level's allreduce. A shared
      message (the own frontier's) is read at the level after the one that encoded it, while its sender
      may already encode the next: it has two buffers (`outs`), and the caller names the half each
      encoding writes and each round reads (`out_of`, `sources_of`), the other one after every round
      that read one. The message encoded into a half after such a round replaces one read two rounds
      before, at an earlier level, whose allreduce every reader had joined after decoding it.
    A message's MPI receive is posted again once its decoding kernels have run (`after_wait`)."""

    def __init__(self, comm: MPI.Comm, backend, block: int, encoding: str, transport: str, shared: bool,
                 tag: int, rotation: bool = False, out: "LevelExchange | None" = None):
        self.backend, self.block, self.tag = backend, block, tag
        self.comm = comm.Dup()
        self.me, self.size = self.comm.Get_rank(), self.comm.Get_size()
        size = self.size
        self.peers = [p for p in range(size) if p != self.me]
        self.stride = HEADER_WORDS + message.capacity(block, encoding)
        self.shared = shared
        # NCCL can move a shared message at its size when the level's allgather told every receiver
        # the sizes (expect); without them it moves whole capacities
        self.sized = transport == "nccl" and shared and backend.is_gpu
        self.expected = None
        self.staged = transport == "mpi" or not backend.is_gpu
        self.shmem = transport == "nvshmem"
        self.mpi = transport in ("mpi", "mpi-cuda") or not backend.is_gpu
        self.symmetric, self.signals = [], None
        self.pe = world_ranks(self.comm)
        messages = 1 if shared else size
        halves = 2 if self.shmem and shared else 1
        # the message buffers (another exchange's where it sends the same message along another line)
        self.outs = out.outs if out is not None else [self._device(messages * self.stride, np.uint32)
                                                      for _ in range(halves)]
        # a shared message's two halves staged apart, so a level's sends are counted after the next launch
        self.out_host = backend.pinned_empty(halves * messages * self.stride, np.uint32)
        # what each peer's message is read from, a table per buffer of the messages
        if self.shmem:                          # peer p's message to this rank, where p encoded it
            from dbfs import nvshmem
            at = slice(0 if shared else self.me * self.stride, (1 if shared else self.me + 1) * self.stride)
            readings = [{p: nvshmem.peer_array(backend, out, self.pe[p])[at] for p in self.peers} for out in self.outs]
            self.signals = SignalWords(self.comm, backend)
        else:                                   # the receives' buffers (MPI: pinned host memory)
            self.landing_of = {p: backend.pinned_empty(self.stride, np.uint32) if self.staged
                               else backend.xp.zeros(self.stride, backend.xp.uint32) for p in self.peers}
            readings = [self.landing_of]
        self.tables = [message.SourceTable(backend, [self.outgoing(self.me, half) if p == self.me and shared
                                                     else reading.get(p) for p in range(size)])
                       for half, reading in enumerate(readings)]
        self.nccl = None
        if transport == "nccl" and backend.is_gpu:
            self.nccl = nccl_communicator(self.comm, backend)
        self.rotation = self._rotation_buffers(block // 32) if rotation else None
        self.recv_req, self.consumed, self.send_req = {}, False, []
        self._post()

    def _device(self, n: int, dtype):
        """A zeroed device array; on the symmetric heap (collective) for NVSHMEM."""
        if self.shmem:
            from dbfs import nvshmem
            array = nvshmem.symmetric(self.backend, n, dtype)
            self.symmetric.append(array)
            return array
        return self.backend.xp.zeros(n, dtype)

    def _rotation_buffers(self, words: int):
        """The rotation's staging: pinned out and in segments (MPI) or a landing segment (NCCL). (Under
        NVSHMEM nothing rotates: the segments are searched in place, dbfs.grid_loop.segments_in_place.)"""
        backend = self.backend
        if self.shmem:
            raise ValueError("--comm nvshmem rotates no segment: a bottom-up level searches them in place")
        if self.mpi:
            return backend.pinned_empty(words, np.uint32), backend.pinned_empty(words, np.uint32)
        return (backend.xp.zeros(words, backend.xp.uint32),)

    @staticmethod
    def buffer_bytes(size: int, block: int, encoding: str, transport: str, shared: bool,
                     rotation: bool = False, cpu: bool = False, own_out: bool = True) -> tuple[int, int]:
        """(device, pinned host) bytes of a LevelExchange over a line of `size` ranks (on the CPU backend
        every transport stages like `mpi`); own_out=False: its message buffer is another's (`out`)."""
        stride = 4 * (HEADER_WORDS + message.capacity(block, encoding))
        messages, peers, segment = (1 if shared else size), size - 1, block // 8
        device, host = (messages * stride if own_out else 0), messages * stride
        if transport == "mpi" or cpu:
            host += peers * stride + (2 * segment if rotation else 0)
        elif transport == "nvshmem":
            # a shared message's second half (every message is read where it was encoded), signal words
            # and round counters (the counters off the symmetric heap); no rotation
            device += (stride if shared and own_out else 0) + 8 * size + 8
            host += stride if shared else 0                 # its staged head too (`stage`)
        else:
            device += peers * stride + (segment if rotation else 0)
            host += 2 * segment if rotation and transport == "mpi-cuda" else 0
        return device, host

    def out_of(self, half: int = 0):
        """The device message buffer the encoding kernels write: under NVSHMEM a shared message's `half`
        (see the class docstring), else the one buffer."""
        return self.outs[half % len(self.outs)]

    def sources_of(self, half: int = 0) -> "message.SourceTable":
        """The SourceTable of the messages a round brings (a shared message's `half` under NVSHMEM)."""
        return self.tables[half % len(self.tables)]

    def outgoing(self, peer: int, half: int = 0):
        """The device message buffer for `peer` (the shared one when every peer gets the same)."""
        y = 0 if self.shared else peer
        return self.out_of(half)[y * self.stride:(y + 1) * self.stride]

    def _post(self) -> None:
        if self.mpi:
            self.recv_req = {p: self.comm.Irecv([self.landing_of[p], MPI.UINT32_T], source=p, tag=self.tag)
                             for p in self.peers}

    @property
    def needs_wait(self) -> bool:
        """Whether `send` needs the encoding kernels to have finished (MPI sends from the host)."""
        return self.mpi

    def finish_sends(self) -> None:
        """Wait for the previous round's sends: out_host may be staged again (before `stage`)."""
        MPI.Request.Waitall(self.send_req)
        self.send_req = []

    def stage(self, half: int = 0) -> None:
        """Queue the copy of the encoded messages' heads (and, host-staged, payloads) to out_host (its `half`),
        from the buffer `out_of(half)`; the previous round's sends must be finished (`finish_sends`)."""
        message.stage(self.backend, self.out_of(half), self.stride, -1 if self.shared else self.me,
                      self._host_half(half), self.stride, 1 if self.shared else self.size, payload_too=self.staged)

    @property
    def on_device(self) -> bool:
        """Whether a round is kernels alone, nothing of it read or counted on the host (NVSHMEM): a level
        whose exchanges all are can be captured whole (`enqueue_send`, then `sent`)."""
        return self.shmem and not self.mpi

    def send(self) -> tuple[int, int]:
        """Send every peer its message and receive one from each (after the wait `needs_wait` asks for,
        if any); returns (messages, bytes) sent. The received messages are then in `sources` (for NCCL
        and NVSHMEM: once the compute stream gets there)."""
        if not self.mpi:
            self.enqueue_send()
            return self.sent()
        for p in self.peers:
            n = self._staged_words(p)
            payload = (self.out_host[(0 if self.shared else p) * self.stride:][:n] if self.staged
                       else self.outgoing(p)[:n])
            self.send_req.append(self.comm.Isend([payload, MPI.UINT32_T], dest=p, tag=self.tag))
        MPI.Request.Waitall(list(self.recv_req.values()))
        self.consumed = True
        return len(self.peers), self.staged_bytes()

    def own_words(self) -> int:
        """Head and payload words of this round's shared message (staged and waited for)."""
        return self._staged_words(self.me)

    def expect(self, words: dict) -> None:
        """The head and payload words of each peer's next message (until then: whole capacities)."""
        self.expected = words

    def _host_half(self, half: int):
        """The part of out_host that `half` of the message buffers is staged to (see out_of)."""
        return self.out_host[half % len(self.outs) * (len(self.out_host) // len(self.outs)):]

    def _staged(self, peer: int):
        """This round's message to `peer` in out_host, from its head on."""
        return self.out_host[(0 if self.shared else peer) * self.stride:]

    def _staged_words(self, peer: int) -> int:
        """Head and payload words of this round's message to `peer`, from its head in out_host."""
        return message.size(self._staged(peer))

    def staged_bytes(self, half: int = 0) -> int:
        """Bytes of this round's messages (in `half`), from their heads in out_host (staged and waited for),
        every head's size read in one conversion."""
        sizes = self._host_half(half)[HEAD.SIZE::self.stride].tolist()
        return 4 * sum(HEAD_WORDS + sizes[0 if self.shared else p] for p in self.peers)

    def staged_heads(self, half: int = 0) -> tuple[int, int, int, int, int, int]:
        """What a kernel reads to count this round's bytes as staged_bytes does (dbfs.ops.schedule): the
        address of the heads staged to `half` (pinned), the stride, the slots, the slot sent to no peer
        (-1: none), how many peers each slot's message goes to, and the messages."""
        heads = self._host_half(half).ctypes.data
        if self.shared:
            return heads, self.stride, 1, -1, len(self.peers), len(self.peers)
        return heads, self.stride, self.size, self.me, 1, len(self.peers)

    def list_bytes(self) -> int:
        """Bytes this round's messages would take as lists (head and one word an offset), from their
        heads in out_host (staged and waited for)."""
        return sum(4 * (HEADER_WORDS + int(self._staged(p)[HEAD.COUNT])) for p in self.peers)

    def sent(self, half: int = 0) -> tuple[int, int | None]:
        """(messages, bytes) of the round `enqueue_send` queued (its messages in `half`); the bytes None
        where only the level's wait will tell (a fold's heads are staged in the level)."""
        if self.shmem or self.expected is not None:  # exact sizes, known once staged and waited for
            return len(self.peers), self.staged_bytes(half) if self.shared else None
        return len(self.peers), 4 * self.stride * len(self.peers)

    def enqueue_barrier(self) -> None:
        """NVSHMEM: a round of signals alone, on the device: it ends once every peer of the line has
        queued the same round after its kernels before it, which have ended (their stores into this
        rank's memory among them)."""
        self.signals.post()

    def enqueue_send(self) -> None:
        """The round on the compute stream (NCCL, NVSHMEM)."""
        if self.shmem:
            self.signals.post()
            return
        nccl, stream = self.nccl_api(), self.backend.xp.cuda.get_current_stream()
        sized = self.expected is not None
        own = self.own_words() if sized else self.stride
        nccl.groupStart()
        for p in self.peers:
            self.nccl.send(self.outgoing(p).data.ptr, own, nccl.NCCL_UINT32, p, stream.ptr)
            self.nccl.recv(self.landing_of[p].data.ptr, self.expected[p] if sized else self.stride,
                           nccl.NCCL_UINT32, p, stream.ptr)
        nccl.groupEnd()
        self.backend.launches += 1

    def rotate(self, segment, wait):
        """A bottom-up level's sub-step: `segment` (uint32, block/32 words) goes to the next rank of the
        line; returns the previous rank's (its landing buffer, or `segment` itself where it came
        through host memory); `wait` waits on the device (host-staged transports need the segment in
        host memory; the others do not call it)."""
        backend, succ, pred = self.backend, (self.me + 1) % self.size, (self.me - 1) % self.size
        words = segment.shape[0]
        if self.mpi:
            out_host, in_host = self.rotation
            backend.copy(out_host, segment)
            wait()
            self.comm.Sendrecv([out_host, MPI.UINT32_T], dest=succ, sendtag=self.tag + 1,
                               recvbuf=[in_host, MPI.UINT32_T], source=pred, recvtag=self.tag + 1)
            backend.copy(segment, in_host)
            return segment
        (landing,) = self.rotation
        nccl, stream = self.nccl_api(), backend.xp.cuda.get_current_stream().ptr
        nccl.groupStart()
        self.nccl.send(segment.data.ptr, words, nccl.NCCL_UINT32, succ, stream)
        self.nccl.recv(landing.data.ptr, words, nccl.NCCL_UINT32, pred, stream)
        nccl.groupEnd()
        backend.launches += 1
        return landing

    def after_wait(self) -> None:
        """After a wait on the device that followed the decoding of the last round: post its receives
        again."""
        if self.consumed:
            self.consumed = False
            self._post()

    @staticmethod
    def nccl_api():
        from cupy.cuda import nccl
        return nccl

    def close(self) -> None:
        """Collective (the symmetric heap's buffers are given back together)."""
        if self.recv_req and not self.consumed:
            _cancel(list(self.recv_req.values()))
        MPI.Request.Waitall(self.send_req)
        self.recv_req, self.send_req = {}, []
        if self.nccl is not None:
            self.nccl.destroy()
        if self.signals is not None:
            self.signals.close()
        if self.symmetric:
            from dbfs import nvshmem
            for array in reversed(self.symmetric):
                nvshmem.free(array)
        self.comm.Free()
