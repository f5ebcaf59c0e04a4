"""Graph builder (Graph500 kernel 1): an edge-tuple list spread over the ranks -> each rank's CSC block.

Method (paper 004, sections 2.2 and 3.1; the ownership math in dbfs.grid): every undirected tuple
(a, b) with a != b becomes the two directed entries a -> b and b -> a; entry u -> v belongs to the
rank (owner row of v, column block of u) and is stored there as the int32 pair (local column of u,
local row of v). Entries travel to their owners in one all-to-all per chunk of tuples: an MPI
Alltoallv staged through host memory, or with the `nccl` transport grouped NCCL send/recv between the
GPUs (the counts go by MPI first); then each rank assembles its CSC by a counting sort over columns (a
stable argsort on the CPU, an atomic scatter kernel, kernels/csc_build.cu, on the GPU). Self-loops
are left out of the CSC; duplicates stay. The tuple list itself is not modified. A directed graph
(symmetric=False) keeps only the entry a -> b of each tuple. For the bottom-up search
(direction-optimizing BFS) the builder also makes the row-major copy (CSR) of the block by
transposing the CSC on its device.
"""

from __future__ import annotations

import numpy as np
from mpi4py import MPI

from dbfs import runtime
from dbfs.exchange import nccl_communicator
from dbfs.graph import GridComms, LocalGraph
from dbfs.runtime import alltoallv_int32

DEFAULT_CHUNK = 1 << 25


def memory_estimate(grid, n_edges: int, gen_bytes_per_edge: int = 16, row_major: bool = False) -> dict:
    """Peak bytes per rank of building and searching, assuming tuples spread evenly over the ranks;
    row_major adds the CSR copy and the bottom-up bitmaps."""
    P = grid.size
    local_tuples = -(-n_edges // P)
    entries = 2 * local_tuples
    b, nrows, ncols = grid.block, grid.rows_per_rank, grid.cols_per_rank
    parts = {
        "edge list slice": gen_bytes_per_edge * local_tuples,
        "entries in transit": 8 * entries,
        "csc": 4 * entries + 8 * (ncols + 1),
        "bfs state": nrows // 8 + 4 * b + 4 * nrows + 4 * b + 4 * nrows + 4 * ncols + 8 * b
                     + 4 * b + 8 * (grid.R + grid.C) * b + 8 * ncols + (2 * grid.C - 1) * b // 8,
    }
    if row_major:
        parts["csr"] = 4 * entries + 8 * (nrows + 1)
        parts["bfs state"] += ncols // 8 + b // 8
    build_peak = max(parts["edge list slice"] + parts["entries in transit"],
                     parts["entries in transit"] + parts["csc"], parts["csc"] + parts.get("csr", 0))
    parts["peak"] = int(1.15 * (build_peak + parts["bfs state"]))
    return parts


def _directed_entries(grid, xp, src, dst, symmetric: bool = True):
    """The non-self-loop tuples as entries (owner rank, local column, local row): both directions, or
    only src -> dst when not symmetric (a directed graph)."""
    keep = src != dst
    src, dst = src[keep], dst[keep]
    u = xp.concatenate((src, dst)) if symmetric else src
    v = xp.concatenate((dst, src)) if symmetric else dst
    del src, dst, keep
    i, _ = grid.owner(v)
    dest = grid.rank(i, grid.col_block(u))
    cols = grid.to_local_col(u).astype(xp.int32)
    rows = grid.to_local_row(v).astype(xp.int32)
    return dest, cols, rows


def _by_destination(backend, dest, ranks: int):
    """The permutation that groups entries by destination rank, and the host count per rank."""
    xp = backend.xp
    order = xp.argsort(dest, kind="stable") if xp is np else xp.argsort(dest)
    return order, backend.asnumpy(xp.bincount(dest, minlength=ranks)).astype(np.int64)


class _HostPairExchange:
    """All-to-all of (col, row) pairs through one host-staged MPI Alltoallv."""

    def __init__(self, comm: MPI.Comm, backend):
        self.comm, self.backend = comm, backend

    def __call__(self, dest, cols, rows):
        """Send each (col, row) pair to rank `dest`; returns the pairs this rank received (device
        arrays)."""
        backend, xp = self.backend, self.backend.xp
        order, counts = _by_destination(backend, dest, self.comm.Get_size())
        pairs = backend.asnumpy(xp.stack((cols[order], rows[order]), axis=1)).ravel()
        pairs = alltoallv_int32(self.comm, pairs, 2 * counts).reshape(-1, 2)
        # contiguous columns: the GPU scatter kernel reads plain int32 arrays
        return (backend.asarray(np.ascontiguousarray(pairs[:, 0])),
                backend.asarray(np.ascontiguousarray(pairs[:, 1])))

    def close(self) -> None:
        pass


class _NcclPairExchange:
    """All-to-all of (col, row) pairs between GPUs: counts by MPI Alltoall, then one grouped round of
    NCCL send/recv per array on the current stream (the pairs never leave the devices)."""

    def __init__(self, comm: MPI.Comm, backend):
        from cupy.cuda import nccl
        self.comm, self.backend, self.nccl = comm, backend, nccl
        self.nccl_comm = nccl_communicator(comm, backend)

    def __call__(self, dest, cols, rows):
        xp, me = self.backend.xp, self.comm.Get_rank()
        order, send_counts = _by_destination(self.backend, dest, self.comm.Get_size())
        recv_counts = np.empty_like(send_counts)
        self.comm.Alltoall(send_counts, recv_counts)
        send_at = np.concatenate(([0], np.cumsum(send_counts)))
        recv_at = np.concatenate(([0], np.cumsum(recv_counts)))
        received = []
        for outgoing in (cols[order], rows[order]):
            incoming = xp.empty(int(recv_at[-1]), xp.int32)
            incoming[recv_at[me]:recv_at[me + 1]] = outgoing[send_at[me]:send_at[me + 1]]
            self._exchange(outgoing, send_at, incoming, recv_at)
            received.append(incoming)
        return tuple(received)

    def _exchange(self, outgoing, send_at, incoming, recv_at):
        nccl, me = self.nccl, self.comm.Get_rank()
        stream = self.backend.xp.cuda.get_current_stream().ptr
        nccl.groupStart()
        for p in range(self.comm.Get_size()):
            if p == me:
                continue
            if send_at[p + 1] > send_at[p]:
                self.nccl_comm.send(outgoing[send_at[p]:].data.ptr, int(send_at[p + 1] - send_at[p]),
                                    nccl.NCCL_INT32, p, stream)
            if recv_at[p + 1] > recv_at[p]:
                self.nccl_comm.recv(incoming[recv_at[p]:].data.ptr, int(recv_at[p + 1] - recv_at[p]),
                                    nccl.NCCL_INT32, p, stream)
        nccl.groupEnd()

    def close(self) -> None:
        self.nccl_comm.destroy()


def _assemble_csc(backend, ncols: int, chunks):
    """Counting sort of (col, row) chunks into (col_ptr int64 [ncols+1], row_idx int32)."""
    xp = backend.xp
    deg = xp.zeros(ncols, xp.int64)
    for cols, _ in chunks:
        deg += xp.bincount(cols, minlength=ncols)
    col_ptr = xp.zeros(ncols + 1, xp.int64)
    xp.cumsum(deg, out=col_ptr[1:])
    nnz = int(col_ptr[-1])
    if not backend.is_gpu:
        cols = np.concatenate([c for c, _ in chunks]) if chunks else np.empty(0, np.int32)
        rows = np.concatenate([r for _, r in chunks]) if chunks else np.empty(0, np.int32)
        return col_ptr, rows[np.argsort(cols, kind="stable")].astype(np.int32, copy=False), deg
    row_idx = xp.empty(nnz, xp.int32)
    cursor = col_ptr[:-1].astype(xp.uint64)
    scatter = backend.module("csc_build").get_function("csc_scatter")
    while chunks:
        cols, rows = (xp.ascontiguousarray(a) for a in chunks.pop(0))
        n = int(cols.shape[0])
        if n:
            blocks = min(65535 * 4, -(-n // 256))
            scatter((blocks,), (256,), (cols, rows, np.int64(n), cursor, row_idx))
    return col_ptr, row_idx, deg


def build_from_edges(comms: GridComms, backend, src, dst, n_vertices: int | None = None,
                     chunk: int = DEFAULT_CHUNK, symmetric: bool = True,
                     row_major: bool = False, transport: str = "mpi") -> LocalGraph:
    """Collective. src, dst: this rank's share of the tuple list (int64, any split among the ranks).

    Returns this rank's LocalGraph (CSC on the backend's device, and its CSR copy with row_major).
    n_vertices only checks the ids. symmetric=False stores only u -> v for each tuple (u, v): a
    directed graph, traversed along out-edges (graph.info["directed"]). transport "nccl" (GPU
    backend) moves the entries with NCCL; any other value stages them through host MPI.
    """
    grid, xp, world = comms.grid, backend.xp, comms.world
    n_vertices = grid.n_vertices if n_vertices is None else n_vertices
    n_local = int(len(src))
    runtime.agree(_id_range_error(xp, src, dst, n_vertices, chunk), world)
    n_edges = world.allreduce(n_local)
    n_rounds = world.allreduce(-(-n_local // chunk), op=MPI.MAX)
    chunks = []
    exchange = None
    if world.Get_size() > 1:
        exchange = (_NcclPairExchange if transport == "nccl" and backend.is_gpu
                    else _HostPairExchange)(world, backend)
    for k in range(n_rounds):
        s = xp.asarray(src[k * chunk:(k + 1) * chunk], dtype=xp.int64)
        d = xp.asarray(dst[k * chunk:(k + 1) * chunk], dtype=xp.int64)
        dest, cols, rows = _directed_entries(grid, xp, s, d, symmetric)
        del s, d
        chunks.append(exchange(dest, cols, rows) if exchange else (cols, rows))
        del dest, cols, rows
    if exchange:
        exchange.close()
    col_ptr, row_idx, deg = _assemble_csc(backend, grid.cols_per_rank, chunks)
    degree = _owned_degree(comms, backend, deg)
    graph = LocalGraph(comms=comms, backend=backend, col_ptr=col_ptr, row_idx=row_idx, n_edges=n_edges,
                       has_edge=degree > 0, degree=degree, info={"directed": not symmetric})
    if row_major:
        graph.row_ptr, graph.col_idx = transpose_csc(backend, col_ptr, row_idx, grid.rows_per_rank)
    return graph


def transpose_csc(backend, col_ptr, row_idx, nrows: int):
    """The CSR (row_ptr int64 [nrows+1], col_idx int32) of a CSC block, on the same device."""
    xp = backend.xp
    ncols = int(col_ptr.shape[0]) - 1
    row_ptr = xp.zeros(nrows + 1, xp.int64)
    xp.cumsum(xp.bincount(row_idx, minlength=nrows), out=row_ptr[1:])
    if not backend.is_gpu:
        cols = np.repeat(np.arange(ncols, dtype=np.int32), np.diff(col_ptr))
        return row_ptr, cols[np.argsort(row_idx, kind="stable")]
    nnz = int(row_idx.shape[0])
    col_idx = xp.empty(nnz, xp.int32)
    if nnz:
        cursor = row_ptr[:-1].astype(xp.uint64)
        blocks = min(65535 * 4, -(-nnz // 256))
        backend.kernel("csc_build", "csr_from_csc")(
            (blocks,), (256,), (col_ptr, np.int32(ncols), row_idx, np.int64(nnz), cursor, col_idx))
    return row_ptr, col_idx


def _id_range_error(xp, src, dst, n_vertices: int, chunk: int) -> str | None:
    for k in range(0, len(src), chunk):
        s, d = xp.asarray(src[k:k + chunk]), xp.asarray(dst[k:k + chunk])
        lo, hi = int(min(s.min(), d.min())), int(max(s.max(), d.max()))
        if lo < 0 or hi >= n_vertices:
            return f"edge endpoint {lo if lo < 0 else hi} outside [0, {n_vertices})"
    return None


def _owned_degree(comms: GridComms, backend, deg):
    """Degree of every owned vertex (non-self-loop entries): its column's length summed over the grid
    column. The column block is the concatenation of the R owned blocks of grid column j in order i,
    so a reduce-scatter along the column communicator hands every rank exactly its own block."""
    b = comms.grid.block
    local = backend.asnumpy(deg).astype(np.int32)
    mine = np.empty(b, np.int32)
    comms.col.Reduce_scatter_block(local, mine, op=MPI.SUM)
    return backend.asarray(mine)
