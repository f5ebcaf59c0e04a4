"""Launch wrappers of the WS engine kernels (kernels/ws_engine.cuh, ws_refine.cuh) and their NumPy twins.

One iteration over a partition (paper 000, Figure 4): every owned vertex reduces compute_nbr over its
incoming neighbours, starting from init_vertex, and takes the result when is_updated says so; with
refinement on, the updated boundary vertices are appended to the outbox (section IV-B). The GPU
kernels update VertexValues in place while they run, so a warp may see values written earlier in the
same iteration; the twin is synchronous (every vertex reads the values of the previous iteration) and
reduces each row with a pairwise tree (Segments), the order-free analogue of WS's segmented reduction.
Both reach the same fixed point for the monotone programs; for PageRank both approach it within the
program's tolerance. On the CPU backend all methods run this one twin.
"""

from __future__ import annotations

import numpy as np

THREADS = 256          # WS_THREADS and WS_BOX_THREADS in the kernels
METHODS = ("ws", "vwc2", "vwc4", "vwc8", "vwc16", "vwc32")


def lanes_per_vertex(method: str) -> int:
    """Threads launched per vertex: 1 for WS (a warp owns 32 vertices), W for a virtual warp of W."""
    return 1 if method == "ws" else int(method[3:])


def kernel_name(method: str) -> str:
    return "ws_iterate" if method == "ws" else f"vwc_iterate_{method[3:]}"


def iterate(fn, method: str, rowptr, nbrs, edges, values, lo: int, count: int, status, refine: bool,
            out_idx, out_val) -> None:
    """One iteration of partition [lo, lo + count) with kernel `fn` (kernel_name(method) of the program).

      rowptr   uint64 [count + 1]  read   offsets into nbrs/edges, bit 63 of rowptr[v] = boundary vertex
      nbrs     uint32 [entries]    read   global ids of the incoming neighbours
      edges    Edge [entries]      read   only when the program has edge values (else any 1-byte array)
      values   Vertex [n] (bytes)  read/write  all vertices; only the owned ones are written
      status   uint32 [2]          write  status[0] = 1 if any owned vertex was updated (never cleared);
                                          status[1] += vertices appended to the outbox (caller zeroes)
      out_idx  uint32 [>= boundary count], out_val Vertex [same]  write  the outbox, when refine
    On CuPy's current device and stream; no synchronisation; nothing is launched for count = 0.
    """
    if count == 0:
        return
    blocks = -(-count * lanes_per_vertex(method) // THREADS)
    fn((blocks,), (THREADS,), (rowptr, nbrs, edges, values, np.uint32(lo), np.uint32(count), status,
                               np.int32(refine), status[1:], out_idx, out_val))


def apply(fn, idx, val, n: int, values) -> None:
    """ws_apply: values[idx[k]] = val[k] for k < n (inbox unloading; idx distinct). Current stream."""
    if n:
        fn((-(-n // THREADS),), (THREADS,), (idx, val, np.uint32(n), values))


def gather(fn, idx, n: int, values, out) -> None:
    """ws_gather: out[k] = values[idx[k]] for k < n (MS outbox loading). Current stream."""
    if n:
        fn((-(-n // THREADS),), (THREADS,), (idx, np.uint32(n), values, out))


class Segments:
    """Reduction plan of a CSR's rows: the pairs (i, i + s) combined at each tree step s = 1, 2, 4, ...

    At step s, the entry at position k of its row (k a multiple of 2s, k + s < row length) absorbs the
    entry s places later; after the last step each row's first entry holds the reduction of the row.
    """

    def __init__(self, rowptr: np.ndarray):
        rowptr = np.asarray(rowptr, np.int64)
        degree = np.diff(rowptr)
        self.nonempty = degree > 0
        self.heads = rowptr[:-1][self.nonempty]
        position = np.arange(int(rowptr[-1]), dtype=np.int64) - np.repeat(rowptr[:-1], degree)
        length = np.repeat(degree, degree)
        self.steps = []
        step = 1
        widest = int(degree.max()) if degree.size else 0
        while step < widest:
            self.steps.append((np.flatnonzero((position % (2 * step) == 0) & (position + step < length)), step))
            step *= 2

    def reduce(self, items: np.ndarray, op) -> np.ndarray:
        """op-reduction of every non-empty row of `items` (entries in CSR order), in row order."""
        work = items.copy()
        for first, step in self.steps:
            work[first] = op(work[first], work[first + step])
        return work[self.heads]


def iterate_twin(program, segments: Segments, nbrs, edges, values: np.ndarray, lo: int, count: int,
                 marked: np.ndarray, refine: bool):
    """Twin of `iterate` on typed NumPy arrays; returns (any updated, outbox ids, outbox values)."""
    current = values[lo:lo + count]
    shared = program.init(current.copy())
    if segments.heads.size:
        local = program.compute(values[nbrs], edges)
        shared[segments.nonempty] = program.reduce(shared[segments.nonempty], segments.reduce(local, program.reduce))
    updated = program.is_updated(shared, current)
    current[updated] = shared[updated]
    if not refine:
        return bool(updated.any()), None, None
    send = np.flatnonzero(updated & marked)
    return bool(updated.any()), (send + lo).astype(np.uint32), shared[send]
