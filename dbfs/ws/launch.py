"""Launch wrappers of the WS engine kernels (kernels/ws_engine.cuh, ws_refine.cuh) and their NumPy twins.

One iteration over a partition (paper 000, Figure 4): every owned vertex reduces compute_nbr over its
incoming neighbours, starting from init_vertex, and takes the result when is_updated says so; with
refinement on, the updated boundary vertices are appended to the outbox (section IV-B). With the WS
method the rows of the partition's hubs (dbfs.ws.graph.Hubs) are first reduced slice by slice, one
warp per slice (ws_hub_slices), and the warp that owns a hub combines its slices' partial results
before deciding is_updated; the other rows are reduced by Warp Segmentation (section II). The GPU
kernels update VertexValues in place while they run, so a warp may see values written earlier in the
same iteration; the twin is synchronous (every vertex reads the values of the previous iteration) and
reduces each row, each hub slice and each hub's partials with a pairwise tree (Segments), the
order-free analogue of WS's segmented reduction. Both reach the same fixed point for the monotone
programs; for PageRank both approach it within the program's tolerance. On the CPU backend all methods
run this one twin, hub split included.
"""

from __future__ import annotations

import numpy as np

THREADS = 256          # WS_THREADS and WS_BOX_THREADS in the kernels
NULL = np.uintp(0)     # a null pointer argument (8 bytes, as every pointer)
METHODS = ("ws", "vwc2", "vwc4", "vwc8", "vwc16", "vwc32")


def lanes_per_vertex(method: str) -> int:
    """Threads launched per vertex: 1 for WS (a warp owns 32 vertices), W for a virtual warp of W."""
    return 1 if method == "ws" else int(method[3:])


def kernel_name(method: str) -> str:
    return "ws_iterate" if method == "ws" else f"vwc_iterate_{method[3:]}"


def hub_slices(fn, hubs, nbrs, edges, values, partials, active_bits=None) -> None:
    """ws_hub_slices: partials[s] = the reduction of compute_nbr over slice s of the hubs' rows (one warp
    per slice; hubs is the partition's dbfs.ws.graph.Hubs, partials Vertex [>= hubs.slices]); with
    active_bits (uint32 words of the partition's vertices, dbfs.ws.frontier), only the slices of hubs in
    an active group. Current stream; nothing is launched when the partition has no hub."""
    if hubs.slices:
        fn((-(-hubs.slices * 32 // THREADS),), (THREADS,),
           (hubs.slice_begin, hubs.slice_end, np.uint32(hubs.slices), nbrs, edges, values, partials,
            hubs.slice_vertex, NULL if active_bits is None else active_bits))


def iterate(fn, method: str, rowptr, nbrs, edges, values, lo: int, count: int, status, refine: bool,
            out_idx, out_val, hubs=None, partials=None, groups=None, group_count=None,
            changed_bits=None) -> None:
    """One iteration of partition [lo, lo + count) with kernel `fn` (kernel_name(method) of the program).

      rowptr   uint64 [count + 1]  read   offsets into nbrs/edges, bit 63 of rowptr[v] = boundary vertex
      nbrs     uint32 [entries]    read   global ids of the incoming neighbours
      edges    Edge [entries]      read   only when the program has edge values (else any 1-byte array)
      values   Vertex [n] (bytes)  read/write  all vertices; only the owned ones are written
      status   uint32 [2]          write  status[0] = 1 if any owned vertex was updated (never cleared);
                                          status[1] += vertices appended to the outbox (caller zeroes)
      out_idx  uint32 [>= boundary count], out_val Vertex [same]  write  the outbox, when refine: device
                                          arrays, or the addresses of pinned (mapped) host buffers
      hubs, partials  WS only: the partition's Hubs and what hub_slices wrote for them this iteration
      groups, group_count  uint32 [groups], uint32 [1]  read  the active list (dbfs.ws.frontier): only the
                                          listed groups of 32 vertices are processed; None: every vertex
      changed_bits  uint32 [groups]       or-ed  bit v of the updated vertices (caller zeroes); or None
    On CuPy's current device and stream; no synchronisation; nothing is launched for count = 0 (the grid
    covers every vertex, with a list too: warps past the list's length return at once).
    """
    if count == 0:
        return
    blocks = -(-(-(-count // 32) * 32) * lanes_per_vertex(method) // THREADS)
    args = (rowptr, nbrs, edges, values, np.uint32(lo), np.uint32(count), status, np.int32(refine), status[1:],
            out_idx, out_val, NULL if groups is None else groups, NULL if group_count is None else group_count,
            NULL if changed_bits is None else changed_bits)
    if method == "ws":
        args += (np.uint32(min(hubs.degree, 0xFFFFFFFF)), np.uint32(hubs.slice), hubs.warp_slice, partials)
    fn((blocks,), (THREADS,), args)


def apply(fn, idx, val, n: int, values) -> None:
    """ws_apply: values[idx[k]] = val[k] for k < n (inbox unloading; idx distinct). Current stream."""
    if n:
        fn((-(-n // THREADS),), (THREADS,), (idx, val, np.uint32(n), values))


def gather(fn, idx, n: int, values, out) -> None:
    """ws_gather: out[k] = values[idx[k]] for k < n (MS outbox loading). Current stream."""
    if n:
        fn((-(-n // THREADS),), (THREADS,), (idx, np.uint32(n), values, out))


def ranges(begin, end) -> np.ndarray:
    """The concatenation of arange(b, e) over the pairs (b, e) of two NumPy arrays (int64)."""
    return ranges_with_owner(np, np.asarray(begin, np.int64), np.asarray(end, np.int64))[1]


def ranges_with_owner(xp, begin, end):
    """(owner, index) over NumPy or CuPy int64 arrays: index the concatenation of arange(begin[k], end[k])
    over k (empty or reversed pairs add nothing), owner[i] the k that index[i] came from."""
    length = xp.maximum(end - begin, 0)
    total = int(length.sum()) if length.shape[0] else 0
    cum = xp.cumsum(length)
    k = xp.arange(total, dtype=xp.int64)
    owner = xp.searchsorted(cum, k, side="right")
    return owner, begin[owner] + k - (cum - length)[owner]


class Segments:
    """Reduction plan of rows given as disjoint ranges [begin, end) of an item array: the pairs
    (i, i + s) combined at each tree step s = 1, 2, 4, ...

    At step s, the entry at position k of its row (k a multiple of 2s, k + s < row length) absorbs the
    entry s places later; after the last step each row's first entry holds the reduction of the row.
    """

    def __init__(self, begin: np.ndarray, end: np.ndarray):
        begin, end = np.asarray(begin, np.int64), np.asarray(end, np.int64)
        self.nonempty = end > begin
        self.heads = begin[self.nonempty]
        length = (end - begin)[self.nonempty]
        row_start = np.cumsum(length) - length
        position = np.arange(int(length.sum()), dtype=np.int64) - np.repeat(row_start, length)
        index = np.repeat(self.heads, length) + position
        length = np.repeat(length, length)
        self.steps = []
        step = 1
        widest = int(length.max()) if length.size else 0
        while step < widest:
            self.steps.append((index[(position % (2 * step) == 0) & (position + step < length)], step))
            step *= 2

    def reduce(self, items: np.ndarray, op) -> np.ndarray:
        """op-reduction of every non-empty row of `items`, in row order."""
        work = items.copy()
        for first, step in self.steps:
            work[first] = op(work[first], work[first + step])
        return work[self.heads]


class Plan:
    """How the twin reduces one partition: its ordinary rows, its hubs' slices and each hub's partials.

    The partials of a hub are found as the kernel finds them: from warp_slice of the hub's warp plus the
    slices of the hubs before it in that warp.
    """

    def __init__(self, rowptr: np.ndarray, hubs):
        rowptr = np.asarray(rowptr, np.int64)
        begin, end = rowptr[:-1], rowptr[1:].copy()
        vertices = hubs.vertices.astype(np.int64)
        end[vertices] = begin[vertices]                       # hub rows are empty in the warps' walk
        self.rows = Segments(begin, end)
        self.hubs = vertices
        self.slices = Segments(hubs.slice_begin, hubs.slice_end)
        degree = rowptr[vertices + 1] - rowptr[vertices]
        per_hub = (degree + hubs.slice - 1) // hubs.slice
        before = np.cumsum(per_hub) - per_hub
        warp = vertices // 32
        first_in_warp = np.searchsorted(vertices, 32 * warp)
        start = hubs.warp_slice[warp].astype(np.int64) + before - before[first_in_warp]
        self.partials = Segments(start, start + per_hub)


def iterate_twin(program, plan: Plan, nbrs, edges, values: np.ndarray, lo: int, count: int,
                 marked: np.ndarray, refine: bool, active: np.ndarray | None = None):
    """Twin of `iterate` on typed NumPy arrays; returns (any updated, outbox ids, outbox values, updated
    mask). active: bool [count], the vertices of the listed groups (None: all); only they may update."""
    current = values[lo:lo + count]
    shared = program.init(current.copy())
    if nbrs.size:
        local = program.compute(values[nbrs], edges)
        rows = plan.rows.nonempty
        if rows.any():
            shared[rows] = program.reduce(shared[rows], plan.rows.reduce(local, program.reduce))
        if plan.hubs.size:
            partials = plan.slices.reduce(local, program.reduce)
            hubs = plan.hubs
            shared[hubs] = program.reduce(shared[hubs], plan.partials.reduce(partials, program.reduce))
    updated = program.is_updated(shared, current)
    if active is not None:
        updated &= active
    current[updated] = shared[updated]
    if not refine:
        return bool(updated.any()), None, None, updated
    send = np.flatnonzero(updated & marked)
    return bool(updated.any()), (send + lo).astype(np.uint32), shared[send], updated
