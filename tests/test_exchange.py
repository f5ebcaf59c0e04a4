"""Exchanges among the ranks of a communicator: every encoding delivers the same sets, adaptive takes
the smaller form per message, ring rounds (the bottom-up rotation) keep messages matched, transports
that cannot run say why. The tests that exchange messages need two ranks or more (a single rank has no
peers) and skip on one."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from mpi4py import MPI

from dbfs.backend import Backend, gpu_count
from dbfs.errors import DbfsError
from dbfs.exchange import BITMAP, HEADER_BYTES, LIST, Exchange, OffsetSet, wire_kind
from dbfs.ops import bitmap
from dbfs.transport import shares_a_gpu

WORLD = MPI.COMM_WORLD
BLOCK = 4096
needs_peers = pytest.mark.skipif(WORLD.Get_size() < 2, reason="one rank has no peers: nothing to exchange")


def message_sets(rank, peer, round_no):
    """The offsets rank sends to peer in a round: empty, sparse or dense depending on the pair."""
    rng = np.random.default_rng(1000 * round_no + 10 * rank + peer)
    n = (0, 17, BLOCK // 32, BLOCK // 32 + 1, 3000)[(rank + peer + round_no) % 5]
    return np.unique(rng.integers(0, BLOCK, n)).astype(np.int32)


def run_rounds(backend, encoding, transport="mpi", rounds=5):
    xp = backend.xp
    x = Exchange(WORLD, backend, BLOCK, encoding, transport)
    me = WORLD.Get_rank()
    try:
        for k in range(rounds):
            outgoing = {p: OffsetSet(len(s), list=xp.asarray(s)) for p in x.peers
                        for s in [message_sets(me, p, k)]}
            received, sent, raw = x.round(outgoing, x.peers)
            assert raw == sum(HEADER_BYTES + 4 * o.count for o in outgoing.values())
            forms = [wire_kind(encoding, o.count, BLOCK) for o in outgoing.values()]
            assert sent == sum(HEADER_BYTES + (4 * o.count if f == LIST else BLOCK // 8)
                               for o, f in zip(outgoing.values(), forms))
            if encoding == "adaptive":
                assert all(f == (BITMAP if 4 * o.count > BLOCK // 8 else LIST)
                           for o, f in zip(outgoing.values(), forms))
            for p, message in received.items():
                expected = message_sets(p, me, k)
                assert message.count == len(expected)
                out, counter = xp.full(BLOCK, -1, xp.int32), xp.zeros(1, xp.int32)
                if message.kind == LIST:
                    out[:message.count] = message.payload.view(np.int32)
                else:
                    bitmap.unpack(backend, message.payload, out, counter)
                assert np.array_equal(np.sort(backend.asnumpy(out[:message.count])), expected)
                words = xp.zeros(BLOCK // 32, xp.uint32)
                if message.kind == BITMAP:
                    words[:] = message.payload
                else:
                    bitmap.pack(backend, message.payload.view(np.int32), message.count, words)
                bits = np.unpackbits(backend.asnumpy(words).view(np.uint8), bitorder="little")
                assert np.array_equal(np.flatnonzero(bits), expected)
    finally:
        x.close()


@needs_peers
@pytest.mark.parametrize("encoding", ["list", "bitmap", "adaptive"])
def test_every_encoding_delivers_the_sets(encoding):
    run_rounds(Backend("cpu"), encoding)


@needs_peers
def test_ring_rounds_stay_matched():
    """Rounds that send to the next rank only, between all-to-all rounds, as the rotation does; an
    uncounted bitmap travels as a bitmap even under the list encoding."""
    backend, size, me = Backend("cpu"), WORLD.Get_size(), WORLD.Get_rank()
    x = Exchange(WORLD, backend, BLOCK, "list")
    try:
        for k in range(2 * size):
            if k % 3 == 2:
                received, _, _ = x.round({p: OffsetSet(1, list=np.array([p], np.int32)) for p in x.peers},
                                         x.peers)
                assert all(m.count == 1 and m.payload[0] == me for m in received.values())
                continue
            words = np.zeros(BLOCK // 32, np.uint32)
            words[k % (BLOCK // 32)] = me + 1
            received, sent, raw = x.round({(me + 1) % size: OffsetSet(None, bitmap=words)},
                                          [(me - 1) % size])
            assert sent == raw == HEADER_BYTES + BLOCK // 8
            got = received[(me - 1) % size].payload
            assert got[k % (BLOCK // 32)] == (me - 1) % size + 1 and int(got.sum()) == (me - 1) % size + 1
    finally:
        x.close()


def test_device_transports_refuse_the_cpu_backend():
    for transport in ("nccl", "mpi-cuda", "nvshmem"):
        with pytest.raises(DbfsError, match="CPU backend"):
            Exchange(WORLD, Backend("cpu"), BLOCK, "adaptive", transport)
    with pytest.raises(DbfsError, match="unknown transport"):
        Exchange(WORLD, Backend("cpu"), BLOCK, "adaptive", "carrier-pigeon")
    with pytest.raises(DbfsError, match="unknown encoding"):
        Exchange(WORLD, Backend("cpu"), BLOCK, "gzip")


@pytest.mark.one_rank
@pytest.mark.parametrize("size", [2, 4, 64])
def test_an_nvshmem_level_exchange_holds_no_landing(size):
    """Under NVSHMEM a level exchange's messages are read where they were encoded: a shared message (the
    own frontier's) takes two buffers, its halves, or none where it sends another exchange's; one for each
    peer (the fold's) takes its C messages; beside them only the signal words grow with the line. On the
    host a shared message is staged by half too (its sends are counted after the next launch)."""
    from dbfs.exchange import LevelExchange
    from dbfs.ops import message
    block = 1 << 20
    stride, signals = 4 * (HEADER_BYTES // 4 + message.capacity(block, "adaptive")), 8 * size + 8
    assert LevelExchange.buffer_bytes(size, block, "adaptive", "nvshmem", True) == (2 * stride + signals, 2 * stride)
    assert LevelExchange.buffer_bytes(size, block, "adaptive", "nvshmem", True, own_out=False) == (
        signals, 2 * stride)
    assert LevelExchange.buffer_bytes(size, block, "adaptive", "nvshmem", False) == (
        size * stride + signals, size * stride)


@pytest.mark.gpu
@needs_peers
@pytest.mark.parametrize("transport", ["mpi", "nccl", "mpi-cuda"])
@pytest.mark.parametrize("encoding", ["list", "adaptive"])
def test_gpu_transports_deliver_the_sets(transport, encoding):
    from dbfs import runtime
    if transport == "mpi-cuda" and not runtime.mpi_cuda_aware():
        with pytest.raises(DbfsError, match="does not report CUDA support"):
            Exchange(WORLD, Backend("gpu", 0), BLOCK, encoding, transport)
        return
    local = WORLD.Split_type(MPI.COMM_TYPE_SHARED).Get_rank()
    backend = Backend("gpu", local % gpu_count())
    if transport == "nccl" and shares_a_gpu(WORLD, backend):
        with pytest.raises(DbfsError, match="one GPU per rank"):
            Exchange(WORLD, backend, BLOCK, encoding, transport)
        return
    run_rounds(backend, encoding, transport)


def test_shares_a_gpu_finds_ranks_on_one_device():
    """The test ranks all run on one node: on one device number they share it, on their own rank's
    number they do not; the CPU backend shares nothing."""
    one_gpu = SimpleNamespace(is_gpu=True, device=0)
    own_gpu = SimpleNamespace(is_gpu=True, device=WORLD.Get_rank())
    assert shares_a_gpu(WORLD, one_gpu) == (WORLD.Get_size() > 1)
    assert not shares_a_gpu(WORLD, own_gpu)
    assert not shares_a_gpu(WORLD, Backend("cpu"))
