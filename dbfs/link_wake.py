"""The NVLinks woken before a search's clock starts (--comm nvshmem).

A link between two GPUs that has carried nothing for a while goes to sleep (the driver's low-power
threshold: 50 ms on the two H200 where it was read), and the first access that needs it waits ~105 us
for it to wake; each link sleeps and wakes on its own, and an access takes one link or another by its
address. Measured on two H100 (NV18): a load from the peer's memory takes 0.9 us, and ~105 us on a link
left idle for 50-100 ms (after 10 ms it was still awake). Between two searches the validation leaves the
links idle that long, so a search's first levels, whose few messages each find another sleeping link,
waited ~105 us three or four times: 0.3-0.45 ms a search on two GPUs, of 11 ms at Kronecker scale 28
(bench/NOTES.md, 2026-11-27, the links' first access after idling).

LinkWake reads a span of every other rank's memory with all its loads in flight at once, spread over
the links (dbfs.ops.peer_sums), after the search's state is reset and before its clock starts: every
link wakes then, together, within a wake's time. Ranks sharing a GPU (CUDA MPS) read each other's memory
on that GPU, which costs a few microseconds and wakes nothing.
"""

from __future__ import annotations

import numpy as np

from dbfs.exchange import world_ranks
from dbfs.ops.peer_sums import peer_sums

# A peer's span: the two H100's links all woke from 256 loads over 32 KiB; twice that, for more links.
SPAN_WORDS = 1 << 13


class LinkWake:
    """A symmetric span on every rank and the addresses of the others' (collective: every rank
    allocates the same)."""

    def __init__(self, backend, world):
        from dbfs import nvshmem
        self.backend = backend
        pe, me = world_ranks(world), world.Get_rank()
        self.span = nvshmem.symmetric(backend, SPAN_WORDS, np.uint64)
        peers = np.delete(nvshmem.peer_addresses(self.span.data.ptr, pe, me), me)
        self.table = backend.asarray(peers)
        self.sums = backend.xp.zeros(peers.shape[0], np.uint64)

    @staticmethod
    def symmetric_bytes() -> int:
        return 8 * SPAN_WORDS

    @staticmethod
    def device_bytes(ranks: int) -> int:
        """Its symmetric span, the peers' addresses and their sums."""
        return LinkWake.symmetric_bytes() + 16 * (ranks - 1)

    def enqueue(self) -> None:
        """Every peer's span read, on the current stream."""
        peer_sums(self.backend, self.table, SPAN_WORDS, self.sums)

    def close(self) -> None:
        from dbfs import nvshmem
        nvshmem.free(self.span)
