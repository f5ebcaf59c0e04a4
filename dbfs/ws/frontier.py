"""Active lists for the WS and VWC methods (`--frontier`), after SIMD-X's just-in-time task management
(paper 001, section 4): launch wrappers of kernels/ws_frontier.cuh and their NumPy twin.

  all     every vertex every iteration (the paper-000 engine)
  online  the online filter: while the neighbours of the updated vertices are marked, the thread that
          activates a group of 32 vertices records it in its bin (THRESHOLD entries); the bins,
          concatenated, are the next list (unsorted). Where a bin overflowed, the next iteration
          processes every vertex (this filter alone has nothing better).
  ballot  the ballot filter: a warp-ballot scan of the marks gives the sorted list of active groups
  jit     SIMD-X's rule: the online filter, and the ballot filter in the iterations where a bin overflowed

A vertex is active when a neighbour changed in the previous iteration (its own marks, ws_mark) or was
received from another partition (ws_mark_remote, through `remote_index`); the list holds groups of 32
vertices (a WS warp's unit; VWC runs the group's vertices W lanes each), every vertex of a listed group
is computed. The first iteration processes every vertex. Results stay exact: a vertex none of whose
neighbours changed would compute its previous result again, which is_updated has already judged.

The twin marks synchronously and models the bins: a mark is attributed to the thread that walks it
(warp = the item's place in the list modulo the grid's warps, lane = the entry's place in the row
modulo 32, a hub's row walked as one item); the GPU's attribution follows the order of its atomics, so
the two may switch filters in different iterations; the values do not depend on it.
"""

from __future__ import annotations

import numpy as np

from dbfs.ws.graph import BOUNDARY_BIT
from dbfs.ws.launch import NULL, ranges

FILTERS = ("all", "online", "ballot", "jit")
THRESHOLD = 64               # entries per thread bin (SIMD-X's overflow threshold)
MARK_BLOCKS = 512            # WS_MARK_BLOCKS
BIN_THREADS = MARK_BLOCKS * 256


def filter_used(mode: str, first: bool, overflow: bool) -> str:
    """Which filter built an iteration's list."""
    if mode == "all" or first:
        return "all"
    if mode == "ballot":
        return "ballot"
    if overflow:
        return "all" if mode == "online" else "ballot"
    return "online"


def remote_index(part):
    """(keys, key_ptr, rows) in the partition's xp: the sorted remote vertices its rows read, and per key
    the local rows that read it (key_ptr uint64 [keys + 1], rows uint32)."""
    xp = part.xp
    rowptr = (part.rowptr & ~BOUNDARY_BIT).astype(xp.int64)
    entries = int(part.nbrs.shape[0])
    row = xp.searchsorted(rowptr[1:], xp.arange(entries, dtype=xp.int64), side="right")
    nbrs = part.nbrs.astype(xp.int64)
    remote = (nbrs < part.lo) | (nbrs >= part.hi)
    pairs = xp.unique((nbrs[remote] << 32) | row[remote])
    vertex = pairs >> 32
    keys, first = xp.unique(vertex, return_index=True)
    key_ptr = xp.concatenate((first, xp.array([pairs.shape[0]]))).astype(xp.uint64)
    return keys.astype(xp.uint32), key_ptr, (pairs & 0xFFFFFFFF).astype(xp.uint32)


class DeviceFrontier:
    """One GPU partition's marks, bins and list (CuPy, on the current device)."""

    def __init__(self, part, functions: dict, threshold: int = THRESHOLD):
        import cupy
        self.cupy, self.part, self.fn, self.threshold = cupy, part, functions, threshold
        self.groups = -(-part.count // 32)
        words = max(self.groups, 1)
        self.bits = [cupy.zeros(words, np.uint32), cupy.zeros(words, np.uint32)]
        self.next = 0
        self.changed = cupy.zeros(words, np.uint32)
        self.list = cupy.zeros(words, np.uint32)
        self.list_len = cupy.zeros(1, np.uint32)
        self.bins = cupy.zeros(max(threshold, 1) * BIN_THREADS, np.uint32)
        self.bin_count = cupy.zeros(BIN_THREADS, np.uint32)
        self.overflow = cupy.zeros(1, np.uint32)
        self.warp_count = cupy.zeros(BIN_THREADS // 32, np.uint32)
        self.offsets = cupy.zeros(BIN_THREADS // 32 + 1, np.uint64)
        self.keys, self.key_ptr, self.rows = remote_index(part)

    @property
    def active_bits(self):
        """The marks the current list was built from (for the hub pass)."""
        return self.bits[1 - self.next]

    def start(self) -> None:
        for array in (self.bits[self.next], self.bin_count, self.overflow):
            array.fill(0)

    def mark(self, listed: bool, bins: bool) -> None:
        """ws_mark after an iteration over the list (listed) or every group; bins: record activations."""
        d, hubs = self.part, self.part.hubs
        self.fn["ws_mark"]((MARK_BLOCKS,), (256,), (
            self.list if listed else NULL, self.list_len, np.uint32(self.groups), self.changed, d.rowptr, d.nbrs,
            np.uint32(d.lo), np.uint32(d.count), np.uint32(min(hubs.degree, 0xFFFFFFFF)), hubs.slice_begin,
            hubs.slice_end, hubs.slice_vertex, np.uint32(hubs.slices), self.bits[self.next],
            self.bins if bins else NULL, self.bin_count, np.uint32(self.threshold), self.overflow))

    def mark_remote(self, idx, first: int, n: int, bins: bool) -> None:
        """ws_mark_remote for the n received vertices idx[0 .. n) (or first .. first + n)."""
        if n and self.keys.shape[0]:
            self.fn["ws_mark_remote"]((MARK_BLOCKS,), (256,), (
                NULL if idx is None else idx, np.uint32(first), np.uint32(n), self.keys, np.uint32(self.keys.shape[0]),
                self.key_ptr, self.rows, self.bits[self.next], self.bins if bins else NULL, self.bin_count,
                np.uint32(self.threshold), self.overflow))

    def build(self, mode: str, status) -> None:
        """The list of the coming iteration from the marks and bins; status[2] = overflow, status[3] =
        its length. The marks become the active bits; fresh marks, bins and flag for the next round."""
        cupy, fn = self.cupy, self.fn
        nxt = self.bits[self.next]
        self.list_len.fill(0)
        if mode in ("online", "jit"):
            fn["ws_filter_online"]((MARK_BLOCKS,), (256,), (self.bins, self.bin_count, np.uint32(self.threshold),
                                                            self.overflow, self.list, self.list_len))
        if mode == "online":
            fn["ws_filter_all"]((-(-self.groups // 256) or 1,), (256,),
                                (self.overflow, np.uint32(self.groups), self.list, self.list_len))
        if mode in ("ballot", "jit"):
            only = np.int32(mode == "jit")
            fn["ws_ballot_count"]((MARK_BLOCKS,), (256,), (nxt, np.uint32(self.groups), self.overflow, only,
                                                           self.warp_count))
            self.offsets[1:] = cupy.cumsum(self.warp_count, dtype=np.uint64)
            fn["ws_ballot_write"]((MARK_BLOCKS,), (256,), (nxt, np.uint32(self.groups), self.overflow, only,
                                                           self.offsets, self.list, self.list_len))
        status[2:3] = self.overflow
        status[3:4] = self.list_len
        self.next = 1 - self.next
        self.start()


class TwinFrontier:
    """The twin of DeviceFrontier for one CPU partition (NumPy, synchronous)."""

    def __init__(self, part, threshold: int = THRESHOLD):
        self.part, self.threshold = part, threshold
        self.groups = -(-part.count // 32)
        self.rowptr = (part.rowptr & ~BOUNDARY_BIT).astype(np.int64)
        self.keys, self.key_ptr, self.rows = (np.asarray(a) for a in remote_index(part))
        self.key_ptr = self.key_ptr.astype(np.int64)
        self.list = None
        self.start()

    def start(self) -> None:
        self.marks = np.zeros(self.groups * 32, bool)
        self.activated = []          # (thread, group) in the order the bins receive them
        self.bin_count = np.zeros(BIN_THREADS, np.int64)
        self.overflow = False

    def active(self) -> np.ndarray | None:
        """bool [count]: the vertices of the listed groups (None: every vertex)."""
        if self.list is None:
            return None
        mask = np.zeros(self.groups * 32, bool)
        mask.reshape(-1, 32)[self.list] = True
        return mask[:self.part.count]

    def _activate(self, local: np.ndarray, thread: np.ndarray, bins: bool) -> None:
        """Marks `local` in order, thread[k] walking mark k."""
        group = local // 32
        fresh = ~self.marks.reshape(-1, 32).any(axis=1)[group]
        self.marks[local] = True
        if not bins:
            return
        groups, first = np.unique(group[fresh], return_index=True)
        order = np.argsort(first, kind="stable")
        owners = thread[fresh][first[order]]
        self.activated += list(zip(owners.tolist(), groups[order].tolist()))
        np.add.at(self.bin_count, owners, 1)
        self.overflow |= bool((self.bin_count > self.threshold).any())

    def mark(self, updated: np.ndarray, bins: bool) -> None:
        """The neighbours of the updated vertices (bool [count]) of the iteration over self.list."""
        listed = np.arange(self.groups) if self.list is None else np.asarray(self.list, np.int64)
        place = np.full(self.groups, -1, np.int64)
        place[listed] = np.arange(listed.shape[0])
        vertices = np.flatnonzero(updated)
        vertices = vertices[np.argsort(place[vertices // 32], kind="stable")]
        begin, end = self.rowptr[vertices], self.rowptr[vertices + 1]
        entries = ranges(begin, end)
        lane = (entries - np.repeat(begin, end - begin)) % 32
        warp = np.repeat(place[vertices // 32], end - begin) % (BIN_THREADS // 32)
        local = self.part.nbrs[entries].astype(np.int64) - self.part.lo
        own = (local >= 0) & (local < self.part.count)
        self._activate(local[own], (warp * 32 + lane)[own], bins)

    def mark_remote(self, idx: np.ndarray, bins: bool) -> None:
        """The owned readers of the received vertices idx (in order)."""
        at = np.searchsorted(self.keys, idx)
        found = at < self.keys.shape[0]
        found[found] = self.keys[at[found]] == idx[found]
        k = np.flatnonzero(found)
        begin, end = self.key_ptr[at[k]], self.key_ptr[at[k] + 1]
        rows = self.rows[ranges(begin, end)].astype(np.int64)
        self._activate(rows, np.repeat(k % BIN_THREADS, end - begin), bins)

    def build(self, mode: str) -> bool:
        """The list of the coming iteration; returns whether a bin overflowed."""
        overflow = self.overflow
        if mode in ("online", "jit") and not overflow:
            self.list = np.array(sorted(self.activated, key=lambda a: a[0]), np.int64).reshape(-1, 2)[:, 1]
        elif mode == "online":
            self.list = np.arange(self.groups)
        else:
            self.list = np.flatnonzero(self.marks.reshape(-1, 32).any(axis=1))
        self.start()
        return overflow
