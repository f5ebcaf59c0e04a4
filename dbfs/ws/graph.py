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

Hubs (for the WS method): a row with more than `hub_degree` neighbours (default HUB_DEGREE) is a hub.
Warp Segmentation walks a warp's 32 rows one dependent step of 32 * WS_CHUNKS edges after the other,
so the warp that owns a row of 750K neighbours (scale 24) would walk for thousands of steps and bound
the whole iteration. A hub's row is instead cut into slices of `hub_slice` edges that separate warps
reduce in parallel (kernels/ws_engine.cuh, ws_hub_slices); the owning warp only combines their
partial results. Per partition, computed once with the array library of the CSR (on the device for
CuPy): the hub rows, the slices as [begin, end) edge offsets numbered in row order (a hub's slices are
consecutive), and per warp of 32 rows the number of the first slice of its hubs (`warp_slice`), from
which the owning warp finds its hubs' partials without a search.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dbfs.errors import DbfsError
from dbfs.source import check_endpoints

BOUNDARY_BIT = np.uint64(1 << 63)
MAX_VERTICES = 1 << 31
# Rows longer than 8 steps of the warp walk (32 * WS_CHUNKS edges each) are hubs, cut into slices of
# the same length. Such a row fills every chunk with one 32-lane segment, so WS pays its five-step
# shuffle reduction per chunk where a slice warp pays one reduction per edge and a single tree per
# slice. In the scale-24 Kronecker graph no warp then walks more than 3.4K edges (740K without the
# split), while hubs stay rare (55K, 0.3% of the vertices, holding 47% of the entries; at most 3 in a
# warp), so the combine in the owning warp, a few dependent steps per hub, costs little.
HUB_DEGREE = 1024
HUB_SLICE = 1024


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


def build_csr(xp, n: int, src, dst, weights=None, where: str | None = None) -> CSR:
    """CSR of the undirected tuple list (src, dst int64 arrays in xp, optional float32 weights); an
    endpoint outside [0, n) is refused, naming the graph file `where` and the endpoint when given."""
    if not 1 <= n <= MAX_VERTICES:
        raise DbfsError(f"the WS mode handles 1 .. 2^31 vertices, the graph has {n}", collective=True)
    n_tuples = int(src.shape[0])
    if where is not None:
        check_endpoints(src, dst, n, where)
    elif n_tuples and (int(xp.minimum(src.min(), dst.min())) < 0 or int(xp.maximum(src.max(), dst.max())) >= n):
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
class Hubs:
    """The hub rows of one partition and their slices (arrays in the partition's xp)."""

    degree: int            # rows with more neighbours than this are hubs
    slice: int             # edges per slice (the last slice of a row may be shorter)
    vertices: object       # uint32 [hubs]: local row indices, increasing
    slice_begin: object    # uint64 [slices]: first edge of each slice (partition offsets)
    slice_end: object      # uint64 [slices]: one past its last edge
    warp_slice: object     # uint32 [warps + 1]: first slice of the hubs of rows 32w .. 32w + 31
    slice_vertex: object   # uint32 [slices]: the hub (local row) each slice belongs to

    @property
    def slices(self) -> int:
        return int(self.slice_begin.shape[0])

    def map(self, move) -> "Hubs":
        """A copy with every array replaced by move(array)."""
        return Hubs(degree=self.degree, slice=self.slice, vertices=move(self.vertices),
                    slice_begin=move(self.slice_begin), slice_end=move(self.slice_end),
                    warp_slice=move(self.warp_slice), slice_vertex=move(self.slice_vertex))


def find_hubs(xp, rowptr, degree: int, slice_edges: int) -> Hubs:
    """Hubs of a partition from its row offsets (xp int64 [count + 1], starting at 0)."""
    if degree < 0 or slice_edges < 1:
        raise ValueError(f"hub degree must be >= 0 and hub slice >= 1, got {degree} and {slice_edges}")
    count = rowptr.shape[0] - 1
    begin, end = rowptr[:-1], rowptr[1:]
    vertices = xp.flatnonzero(end - begin > degree)
    row_begin, row_end = begin[vertices], end[vertices]
    per_hub = (row_end - row_begin + slice_edges - 1) // slice_edges
    first = xp.zeros(vertices.shape[0] + 1, xp.int64)
    xp.cumsum(per_hub, out=first[1:])
    s = xp.arange(int(first[-1]), dtype=xp.int64)
    hub = xp.searchsorted(first, s, side="right") - 1
    slice_begin = row_begin[hub] + (s - first[hub]) * slice_edges
    slice_end = xp.minimum(slice_begin + slice_edges, row_end[hub])
    warps = -(-count // 32)
    warp_first_hub = xp.searchsorted(vertices, 32 * xp.arange(warps + 1, dtype=xp.int64))
    return Hubs(degree=degree, slice=slice_edges, vertices=vertices.astype(xp.uint32),
                slice_begin=slice_begin.astype(xp.uint64), slice_end=slice_end.astype(xp.uint64),
                warp_slice=first[warp_first_hub].astype(xp.uint32), slice_vertex=vertices[hub].astype(xp.uint32))


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
    hubs: Hubs
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
                             degree=move(self.degree), hubs=self.hubs.map(move), device=device)


def copy_to_device(array, device: int):
    """A copy of the CuPy array `array` on GPU `device` (a peer copy where the devices allow it)."""
    import cupy
    with cupy.cuda.Device(device):
        out = cupy.empty(array.shape, array.dtype)
        if array.nbytes:
            out.data.copy_from_device(array.data, array.nbytes)
    return out


def split(csr: CSR, parts: int, hub_degree: int = HUB_DEGREE, hub_slice: int = HUB_SLICE) -> list[PartitionData]:
    """Cut the CSR into `parts` edge-balanced partitions with marked boundaries (slices of the CSR) and
    their hubs (rows of more than hub_degree neighbours, cut into slices of hub_slice edges)."""
    xp = csr.xp
    host_rowptr = np.asarray(csr.rowptr.get() if xp is not np else csr.rowptr)
    bounds = cut_points(host_rowptr, parts)
    marked = boundary_mask(csr, bounds) if parts > 1 else xp.zeros(csr.n, bool)
    degree = csr.degree
    out = []
    for p, (lo, hi) in enumerate(zip(bounds[:-1].tolist(), bounds[1:].tolist())):
        first, last = int(host_rowptr[lo]), int(host_rowptr[hi])
        offsets = csr.rowptr[lo:hi + 1] - first
        rowptr = offsets.astype(xp.uint64)
        rowptr[:-1] |= marked[lo:hi].astype(xp.uint64) * BOUNDARY_BIT
        boundary = (xp.flatnonzero(marked[lo:hi]) + lo).astype(xp.uint32)
        out.append(PartitionData(xp=xp, index=p, lo=lo, hi=hi, rowptr=rowptr, nbrs=csr.nbrs[first:last],
                                 weights=None if csr.weights is None else csr.weights[first:last],
                                 boundary=boundary, degree=degree,
                                 hubs=find_hubs(xp, offsets, hub_degree, hub_slice)))
    return out
