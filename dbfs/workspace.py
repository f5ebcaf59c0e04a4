"""Device memory lent by arrays that sit idle for a while (design.md "Memory": a rank's memory grows
with what it owns, not with what its phases ask one after the other).

After a search, its expansion scratch, frontier queues and gathers hold nothing the result needs, so
the validation's gathered levels and parents are carved out of them; the predecessor exchanges'
buffers likewise out of the expansion's degree scan, idle whenever they run (dbfs.grid_loop).

Method: best fit. Each request, in the order made, takes the lender with the least room left that
holds it (the largest first among equals), at ALIGN-byte boundaries; a request that no lender holds is
allocated and counted. `placement` replays the same rule over sizes alone, which is how dbfs.memory
counts exactly what a run allocates.
"""

from __future__ import annotations

import numpy as np

ALIGN = 256


def _aligned(size: int) -> int:
    return -(-size // ALIGN) * ALIGN


def placement(capacities, requests) -> list:
    """For each request (bytes, in order), the index of the lender (capacities in bytes, largest first
    as Workspace orders them) it is carved from, or None where it is allocated."""
    used = [0] * len(capacities)
    places = []
    for size in requests:
        rooms = [(capacity - used[k], k) for k, capacity in enumerate(capacities) if used[k] + size <= capacity]
        place = min(rooms)[1] if rooms else None
        if place is not None:
            used[place] += _aligned(size)
        places.append(place)
    return places


def lender_bytes(requests) -> int:
    """The bytes one lender needs to hold every request of `requests` at once."""
    return sum(_aligned(size) for size in requests)


def allocated_bytes(capacities, requests) -> int:
    """What the requests allocate beside the lenders (placement's None entries)."""
    order = sorted(capacities, reverse=True)
    return sum(size for size, place in zip(requests, placement(order, requests)) if place is None)


class Workspace:
    """Typed arrays carved out of `lenders` (contiguous device arrays of the backend, idle while the
    workspace's arrays live), or allocated where none has room; `allocated` counts the bytes of the
    latter."""

    def __init__(self, backend, lenders=()):
        self.xp = backend.xp
        self.lenders = sorted((a.reshape(-1).view(np.uint8) for a in lenders), key=lambda a: -a.size)
        self.used = [0] * len(self.lenders)
        self.allocated = 0

    def empty(self, n: int, dtype):
        dtype = np.dtype(dtype)
        size = n * dtype.itemsize
        place = placement([a.size - used for a, used in zip(self.lenders, self.used)], [size])[0]
        if place is None:
            self.allocated += size
            return self.xp.empty(n, dtype)
        start = self.used[place]
        self.used[place] += _aligned(size)
        return self.lenders[place][start:start + size].view(dtype)

    def zeros(self, n: int, dtype):
        array = self.empty(n, dtype)
        array.fill(0)
        return array
