"""Expand and fold exchanges: non-blocking point-to-point MPI between the ranks of one grid line.

Method (paper 004, section 3.3): each round (1) starts the sends, (2) waits for the receives posted in
the previous round, (3) posts the receives of the next round. Receives are therefore always posted
ahead of the matching sends, and buffers are allocated once per run. Messages carry vertex offsets
within a block of b vertices (the sender's block for expand, the receiver's for fold), so the same
exchange serves both phases.

A message is a small header [encoding, count] followed by the payload produced by a Codec. The codec
is the replaceable piece: ListCodec sends 32-bit offsets (section 3.3); other encodings plug in here.
MPI here is not CUDA-aware, so device data is staged through pinned host buffers.
"""

from __future__ import annotations

import numpy as np
from mpi4py import MPI

HEADER_WORDS = 2


class ListCodec:
    """Offsets as a list of uint32 words."""

    kind = 0

    @staticmethod
    def capacity_words(block: int) -> int:
        return block

    @staticmethod
    def encode(backend, offsets, out: np.ndarray) -> int:
        """Write the offsets (device or host int32 array) into out; return the payload words."""
        n = int(offsets.shape[0])
        if n:
            if backend.is_gpu:
                offsets.get(out=out[:n].view(np.int32))
            else:
                out[:n] = offsets
        return n

    @staticmethod
    def decode(backend, payload: np.ndarray, count: int, into) -> int:
        """Copy `count` offsets of a received payload into the device array `into`; return count."""
        if count:
            if backend.is_gpu:
                into[:count].set(payload[:count].view(np.int32))
            else:
                into[:count] = payload[:count]
        return count


class PeerExchange:
    """Repeated exchanges with every other rank of `comm`, each message at most `block` offsets."""

    def __init__(self, comm: MPI.Comm, backend, block: int, tag: int, codec=ListCodec):
        self.comm, self.backend, self.block, self.tag, self.codec = comm, backend, block, tag, codec
        me = comm.Get_rank()
        self.peers = [p for p in range(comm.Get_size()) if p != me]
        words = HEADER_WORDS + codec.capacity_words(block)
        self.send_buf = {p: backend.pinned_empty(words, np.uint32) for p in self.peers}
        self.recv_buf = {p: backend.pinned_empty(words, np.uint32) for p in self.peers}
        self.recv_req = {}
        self.bytes_sent = 0
        self._post_receives()

    def _post_receives(self):
        for p in self.peers:
            self.recv_req[p] = self.comm.Irecv([self.recv_buf[p], MPI.UINT32_T], source=p, tag=self.tag)

    def exchange(self, outgoing: dict, into, start: int = 0) -> np.ndarray:
        """One round. outgoing: peer -> int32 array (device or host) to send to that peer.

        Received entries are written contiguously into the device array `into` from `start`, grouped
        by sender in `comm` rank order. Returns seg (int64 [comm size + 1]): the group of rank p is
        into[seg[p]:seg[p+1]] (empty for this rank itself).
        """
        send_req = []
        for p in self.peers:
            buf = self.send_buf[p]
            n = self.codec.encode(self.backend, outgoing[p], buf[HEADER_WORDS:])
            buf[0], buf[1] = self.codec.kind, n
            send_req.append(self.comm.Isend([buf[:HEADER_WORDS + n], MPI.UINT32_T], dest=p, tag=self.tag))
            self.bytes_sent += 4 * (HEADER_WORDS + n)
        MPI.Request.Waitall(list(self.recv_req.values()))
        seg = np.full(self.comm.Get_size() + 1, start, np.int64)
        at = start
        for p in range(self.comm.Get_size()):
            seg[p] = at
            if p in self.recv_buf:
                buf = self.recv_buf[p]
                at += self.codec.decode(self.backend, buf[HEADER_WORDS:], int(buf[1]), into[at:])
        seg[-1] = at
        self._post_receives()
        MPI.Request.Waitall(send_req)
        return seg

    def close(self) -> None:
        """Cancel the receives posted for a round that will not come."""
        for req in self.recv_req.values():
            req.Cancel()
        MPI.Request.Waitall(list(self.recv_req.values()))
        self.recv_req = {}
