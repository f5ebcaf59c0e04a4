"""Graph of the WS mode: the undirected edge list as a CSR of incoming edges, cut into edge-balanced
contiguous vertex ranges with their boundary vertices marked (paper 000, Figure 1 and section IV-B,
data structures and offline Vertex Refinement).

Build: every tuple (a, b) with a != b gives the two entries a -> b and b -> a; self-loops are dropped,
duplicates kept (as in the main mode); a weight follows its tuple into both directions. The entries
are sorted by the packed key (destination << 32 | source), one sort on the device (CuPy) or the host,
so every row lists its neighbours in increasing order and the CSR is the same on every backend.

Partitions: partition p owns the vertices [lo_p, hi_p); the cuts are where the running row length
crosses p/P of all entries (each GPU gets about the same number of edges to read), rounded to
multiples of 32 so that no warp's 32 vertices straddle two partitions. A vertex of p is a boundary
vertex when it appears as a neighbour in another partition's rows: it is marked in bit 63 of p's
local row offsets (where the kernels test it) and listed in p's boundary list (what the MS baseline
sends every iteration; Vertex Refinement sends only the part updated in the iteration).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dbfs.errors import DbfsError

BOUNDARY_BIT = np.uint64(1 << 63)
MAX_VERTICES = 1 << 31


@dataclass
class CSR:
    """The whole graph on one device: rows = destinations, nbrs = their sources (u32 ids)."""

    xp: object
    n: int                 # vertices
    rowptr: object         # xp int64 [n + 1]
    nbrs: object           # xp uint32 [entries]
    weights: object        # xp float32 [entries] or None
    n_tuples: int          # input tuples, self-loops and duplicates included

    @property
    def entries(self) -> int:
        return int(self.nbrs.shape[0])

    @property
    def degree(self):
        return self.rowptr[1:] - self.rowptr[:-1]


def build_csr(xp, n: int, src, dst, weights=None) -> CSR:
    """CSR of the undirected tuple list (src, dst int64 arrays in xp, optional float32 weights)."""
    if not 1 <= n <= MAX_VERTICES:
        raise DbfsError(f"the WS mode handles 1 .. 2^31 vertices, the graph has {n}", collective=True)
    n_tuples = int(src.shape[0])
    if n_tuples and (int(xp.minimum(src.min(), dst.min())) < 0 or int(xp.maximum(src.max(), dst.max())) >= n):
        raise DbfsError(f"an edge endpoint lies outside the vertex range 0 .. {n - 1}", collective=True)
    keep = src != dst
    a, b = src[keep], dst[keep]
    key = xp.concatenate(((b << 32) | a, (a << 32) | b))
    del a, b
    if weights is None:
        key = xp.sort(key)
        sorted_weights = None
    else:
        order = xp.argsort(key, kind="stable") if xp is np else xp.argsort(key)
        key = key[order]
        kept = weights[keep].astype(xp.float32, copy=False)
        sorted_weights = xp.concatenate((kept, kept))[order]
        del order, kept
    rowptr = xp.zeros(n + 1, xp.int64)
    xp.cumsum(xp.bincount(key >> 32, minlength=n), out=rowptr[1:])
    nbrs = (key & 0xFFFFFFFF).astype(xp.uint32)
    return CSR(xp=xp, n=n, rowptr=rowptr, nbrs=nbrs, weights=sorted_weights, n_tuples=n_tuples)


def cut_points(rowptr: np.ndarray, parts: int) -> np.ndarray:
    """int64 [parts + 1] vertex bounds: edge-balanced, interior cuts on multiples of 32 (host rowptr)."""
    n = rowptr.shape[0] - 1
    targets = (int(rowptr[-1]) * np.arange(1, parts, dtype=np.int64)) // parts
    cuts = np.searchsorted(rowptr, targets, side="left")
    cuts = (cuts + 16) // 32 * 32
    bounds = np.clip(np.concatenate(([0], cuts, [n])), 0, n)
    return np.maximum.accumulate(bounds).astype(np.int64)


def boundary_mask(csr: CSR, bounds: np.ndarray):
    """xp bool [n]: the vertex is read by a partition other than its owner (offline refinement)."""
    xp = csr.xp
    mask = xp.zeros(csr.n, bool)
    rowptr = csr.rowptr
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        cols = csr.nbrs[int(rowptr[lo]):int(rowptr[hi])]
        mask[cols[(cols < lo) | (cols >= hi)]] = True
    return mask


@dataclass
class PartitionData:
    """Partition p's share of the CSR, in the xp of the device that holds it."""

    xp: object
    index: int
    lo: int
    hi: int
    rowptr: object         # uint64 [hi - lo + 1]: offsets from the partition's first entry, bit 63 = boundary
    nbrs: object           # uint32 [entries of the partition]
    weights: object        # float32 [entries of the partition] or None
    boundary: object       # uint32 sorted global ids of the marked vertices
    degree: object         # int64 [n]: the degree of every vertex of the graph (for edge values)
    device: int | None = None

    @property
    def count(self) -> int:
        return self.hi - self.lo

    def require_weights(self, algorithm: str):
        if self.weights is None:
            raise DbfsError(f"{algorithm} needs edge weights and the graph has none (write them with "
                            "`python -m dbfs generate --weights`, or use --scale)", collective=True)
        return self.weights

    def to_device(self, device: int) -> "PartitionData":
        """A copy with every array on GPU `device`."""
        import cupy

        def move(array):
            return None if array is None else copy_to_device(array, device)
        return PartitionData(xp=cupy, index=self.index, lo=self.lo, hi=self.hi, rowptr=move(self.rowptr),
                             nbrs=move(self.nbrs), weights=move(self.weights), boundary=move(self.boundary),
                             degree=move(self.degree), device=device)


def copy_to_device(array, device: int):
    """A copy of the CuPy array `array` on GPU `device` (a peer copy where the devices allow it)."""
    import cupy
    with cupy.cuda.Device(device):
        out = cupy.empty(array.shape, array.dtype)
        if array.nbytes:
            out.data.copy_from_device(array.data, array.nbytes)
    return out


def split(csr: CSR, parts: int) -> list[PartitionData]:
    """Cut the CSR into `parts` edge-balanced partitions with marked boundaries (slices of the CSR)."""
    xp = csr.xp
    host_rowptr = np.asarray(csr.rowptr.get() if xp is not np else csr.rowptr)
    bounds = cut_points(host_rowptr, parts)
    marked = boundary_mask(csr, bounds) if parts > 1 else xp.zeros(csr.n, bool)
    degree = csr.degree
    out = []
    for p, (lo, hi) in enumerate(zip(bounds[:-1].tolist(), bounds[1:].tolist())):
        first, last = int(host_rowptr[lo]), int(host_rowptr[hi])
        rowptr = (csr.rowptr[lo:hi + 1] - first).astype(xp.uint64)
        rowptr[:-1] |= marked[lo:hi].astype(xp.uint64) * BOUNDARY_BIT
        boundary = (xp.flatnonzero(marked[lo:hi]) + lo).astype(xp.uint32)
        out.append(PartitionData(xp=xp, index=p, lo=lo, hi=hi, rowptr=rowptr, nbrs=csr.nbrs[first:last],
                                 weights=None if csr.weights is None else csr.weights[first:last],
                                 boundary=boundary, degree=degree))
    return out
