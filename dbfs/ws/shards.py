"""CuSha's G-Shards and Concatenated Windows (paper 000, Tables V-VI; the CuSha slides, paper 002): the
representations built from a partition's CSR, their launch wrappers (kernels/ws_shards.cuh) and NumPy
twins.

Build, per partition (dbfs.ws.graph.PartitionData), with the array library of its CSR: the owned
vertices [lo, hi) are cut into windows of `window` vertices (WINDOW by default, a multiple of 32);
shard j holds the incoming entries of window j sorted by source (then destination), which is the CSR
slice of the window's rows re-sorted, so shard_ptr[j] = rowptr[j * window]. window_ptr [shards,
shards + 1] gives, inside each shard, where the sources of each window start (and, in its first and
last column, where the remote sources, those of other partitions, end and start again). G-Shards keep
the source of every entry (src); Concatenated Windows keep instead, per window i, the concatenation of
the windows W_i0, W_i1, ... as (cw_src, cw_map), the source and the entry where its copy sits, with
the remote entries as one last range. Weights follow their entries (`perm`: GS entry -> CSR entry).

Every program keeps a copy of the source's value in each entry (src_value, the `SrcValue` of CuSha),
filled at load and refreshed by the window owner when the source changes; on several partitions the
copies of remote sources are refreshed after every exchange (gs_refresh / cw_refresh of the remote
ranges) from the values the exchange brought. Where the shards do not fit the GPU they live in
pinned host memory (mapped: the kernels read and write them over the bus), as in the paper's large runs.

The twin is synchronous, like dbfs.ws.launch.iterate_twin: every entry reads its copy as the previous
iteration left it, each destination reduces its entries with a pairwise tree (Segments over the entries
in destination order), and the copies are refreshed after the update from the window tables, so a
wrong window_ptr or cw_map shows as wrong values.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from dbfs.errors import DbfsError
from dbfs.ws.graph import BOUNDARY_BIT, PartitionData
from dbfs.ws.launch import Segments, ranges

WINDOW = 2048               # vertices per shard: 2048 x (4-byte Vertex + 4-byte word) = 16 KiB of shared memory
THREADS = 256               # WS_SHARD_THREADS
SHARED_LIMIT = 48 * 1024    # dynamic shared memory a block may use without opting in
SHARD_METHODS = ("gs", "cw")


def shared_bytes(window: int, itemsize: int) -> int:
    """Dynamic shared memory of gs_iterate / cw_iterate: the window's values (16-byte aligned) and words."""
    return (window * itemsize + 15) // 16 * 16 + 4 * window


def check_window(window: int, itemsize: int, program: str) -> None:
    if shared_bytes(window, itemsize) > SHARED_LIMIT:
        raise DbfsError(f"program {program}: a shard window of {window} vertices of {itemsize} bytes needs "
                        f"{shared_bytes(window, itemsize)} bytes of shared memory (at most {SHARED_LIMIT}); "
                        "use a smaller --shard-window", collective=True)


@dataclass
class Shards:
    """One partition in G-Shards (method gs) or Concatenated Windows (cw); arrays in one xp (or pinned
    host memory, `on_host`)."""

    method: str
    window: int
    lo: int
    count: int
    shard_ptr: object          # uint64 [shards + 1]: first entry of each shard
    window_ptr: object         # uint32 [shards * (shards + 1)]: window starts inside each shard (relative)
    dest: object               # uint32 [entries]: partition-local destination
    weights: object            # float32 [entries] or None
    marked: object             # uint32 [ceil(count / 32)]: boundary bit of every owned vertex
    src: object = None         # gs: uint32 [entries], the source of every entry
    cw_ptr: object = None      # cw: uint64 [shards + 2]: CW_i = [cw_ptr[i], cw_ptr[i + 1]); then the remote range
    cw_src: object = None      # cw: uint32 [entries]
    cw_map: object = None      # cw: uint32 [entries]: the entry whose copy cw_src[k] refreshes
    on_host: bool = False

    @property
    def shards(self) -> int:
        return int(self.shard_ptr.shape[0]) - 1

    @property
    def entries(self) -> int:
        return int(self.dest.shape[0])

    def arrays(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)
                if f.name not in ("method", "window", "lo", "count", "on_host") and getattr(self, f.name) is not None}

    @property
    def nbytes(self) -> int:
        return sum(int(a.nbytes) for a in self.arrays().values())

    def sources(self):
        """The source of every entry (for edge values): src, or rebuilt from the concatenated windows."""
        if self.src is not None:
            return self.src
        xp = _xp(self.cw_src)
        out = xp.empty(self.entries, xp.uint32)
        out[self.cw_map] = self.cw_src
        return out

    def moved(self, move, on_host: bool) -> "Shards":
        kept = {f.name: getattr(self, f.name) for f in fields(self)}
        kept.update({name: move(a) for name, a in self.arrays().items()}, on_host=on_host)
        return Shards(**kept)


def _xp(array):
    if isinstance(array, np.ndarray):
        return np
    import cupy
    return cupy


def build(part: PartitionData, method: str, window: int = WINDOW) -> Shards:
    """The partition in G-Shards or Concatenated Windows, in the partition's xp."""
    if method not in SHARD_METHODS:
        raise ValueError(f"unknown shard method {method!r}")
    if window < 32 or window % 32:
        raise DbfsError(f"--shard-window must be a positive multiple of 32, got {window}", collective=True)
    xp = part.xp
    lo, hi, count = part.lo, part.hi, part.count
    rowptr = (part.rowptr & ~BOUNDARY_BIT).astype(xp.int64)
    entries = int(part.nbrs.shape[0])
    shards = -(-count // window)
    if shards * (shards + 1) >= 1 << 32 or entries >= 1 << 32:
        raise DbfsError(f"partition of {count} vertices and {entries} entries is too large for shards of "
                        f"{window} vertices; use a larger --shard-window", collective=True)
    row = xp.searchsorted(rowptr[1:], xp.arange(entries, dtype=xp.int64), side="right")
    shard = row // window
    src = part.nbrs.astype(xp.int64)
    # key: shard, source, destination inside the window (bits 31 + log2(window) + shard bits <= 64)
    window_bits = max(int(window - 1).bit_length(), 1)
    if int(shards).bit_length() + 31 + window_bits > 64:
        raise DbfsError(f"too many shards ({shards}) for shards of {window} vertices", collective=True)
    key = (shard << (31 + window_bits)) | (src << window_bits) | (row - shard * window)
    perm = xp.argsort(key)
    del key
    dest = row[perm].astype(xp.uint32)
    src = src[perm]
    shard = shard[perm]
    del row
    shard_ptr = rowptr[xp.minimum(xp.arange(shards + 1, dtype=xp.int64) * window, count)]
    # window starts: first entry of shard j whose source is >= lo + i * window (i = 0 .. shards)
    ordered = (shard << 31) | src                             # sorted
    starts = xp.minimum(lo + xp.arange(shards + 1, dtype=xp.int64) * window, hi)
    query = (xp.arange(shards, dtype=xp.int64)[:, None] << 31) | starts[None, :]
    window_ptr = xp.searchsorted(ordered, query.ravel()).reshape(shards, shards + 1) - shard_ptr[:-1, None]
    del ordered, query
    marked = xp.zeros(-(-count // 32) * 32, xp.uint32)
    marked[:count] = (part.rowptr[:-1] >> np.uint64(63)).astype(xp.uint32)
    marked = (marked.reshape(-1, 32) << xp.arange(32, dtype=xp.uint32)).sum(axis=1, dtype=xp.uint32)
    out = Shards(method=method, window=window, lo=lo, count=count, shard_ptr=shard_ptr.astype(xp.uint64),
                 window_ptr=window_ptr.astype(xp.uint32).ravel(), dest=dest,
                 weights=None if part.weights is None else part.weights[perm], marked=marked)
    if method == "gs":
        out.src = src.astype(xp.uint32)
        return out
    # Concatenated Windows: entry e of shard j in window i goes to cw_start[i, j] + its place in W_ij;
    # remote entries follow in shard order.
    sizes = xp.diff(window_ptr, axis=1)                       # [j, i]
    cw_start = xp.zeros(shards * shards + 1, xp.int64)
    xp.cumsum(sizes.T.ravel(), out=cw_start[1:])
    del sizes
    own_total = int(cw_start[-1])
    own = (src >= lo) & (src < hi)
    i = xp.where(own, (src - lo) // window, 0)
    position = cw_start[i * shards + shard]
    position -= window_ptr[shard, i]
    position -= shard_ptr[shard]
    del i, shard
    position += xp.arange(entries, dtype=xp.int64)
    position[~own] = own_total + xp.arange(entries - int(own.sum()), dtype=xp.int64)
    out.cw_src = xp.empty(entries, xp.uint32)
    out.cw_map = xp.empty(entries, xp.uint32)
    out.cw_src[position] = src.astype(xp.uint32)
    out.cw_map[position] = xp.arange(entries, dtype=xp.uint32)
    window_starts = cw_start[:-1][::max(shards, 1)]
    out.cw_ptr = xp.concatenate((window_starts, xp.array([own_total, entries], xp.int64))).astype(xp.uint64)
    return out


def build_on(part: PartitionData, method: str, window: int = WINDOW) -> Shards:
    """`build` on the partition's GPU (or with NumPy for a CPU partition)."""
    if part.device is None:
        return build(part, method, window)
    import cupy
    with cupy.cuda.Device(part.device):
        return build(part, method, window)


def edge_view(shards: Shards, part: PartitionData) -> PartitionData:
    """The partition as a program's edge_values sees it, in shard order: nbrs = the entries' sources (all
    arrays where the shards are: on the partition's device, or on the host)."""
    xp = _xp(shards.dest)
    degree = part.degree if xp is part.xp else part.degree.get()
    return PartitionData(xp=xp, index=part.index, lo=part.lo, hi=part.hi, rowptr=None, nbrs=shards.sources(),
                         weights=shards.weights, boundary=None, degree=degree, hubs=None, device=part.device)


# ---- launches ------------------------------------------------------------------------------------------
def kernel_name(method: str) -> str:
    return f"{method}_iterate"


def iterate(fn, shards: Shards, ptr, src_value, edges, values, status, refine: bool, out_idx, out_val,
            itemsize: int) -> None:
    """One iteration of the partition with gs_iterate / cw_iterate (fn), one block per shard.

      src_value  Vertex [entries]  read/write  the copies of the sources (device, or pinned host address)
      edges      Edge [entries]    read        in shard order (any 1-byte array without edge values)
      values     Vertex [n]        read/write  all vertices; the partition's own are written
      status, out_idx, out_val     as dbfs.ws.launch.iterate
      ptr(array) -> kernel argument of a shard array (its address when it lies in pinned host memory)
    Current device and stream; no synchronisation; nothing is launched for an empty partition.
    """
    if shards.count == 0:
        return
    s = shards
    args = (ptr(s.shard_ptr), ptr(s.dest), src_value, edges, values, np.uint32(s.lo), np.uint32(s.count),
            np.uint32(s.window), status, np.int32(refine), status[1:], out_idx, out_val, ptr(s.marked))
    if s.method == "gs":
        args += (ptr(s.window_ptr), ptr(s.src), np.uint32(s.shards))
    else:
        args += (ptr(s.cw_ptr), ptr(s.cw_src), ptr(s.cw_map))
    fn((s.shards,), (THREADS,), args, shared_mem=shared_bytes(s.window, itemsize))


def refresh(fn, shards: Shards, ptr, values, src_value, everything: bool) -> None:
    """gs_refresh / cw_refresh (fn): the copies of the remote sources (everything: of all sources) from
    values. Current device and stream."""
    s = shards
    if s.count == 0 and not everything:
        return
    if s.method == "gs":
        if s.shards:
            fn((s.shards,), (THREADS,), (ptr(s.shard_ptr), ptr(s.window_ptr), np.uint32(s.shards), ptr(s.src),
                                         values, src_value, np.int32(everything)))
        return
    begin = 0 if everything else int(s.cw_ptr[-2])
    end = s.entries
    if end > begin:
        fn((-(-(end - begin) // THREADS),), (THREADS,),
           (np.uint64(begin), np.uint64(end), ptr(s.cw_src), ptr(s.cw_map), values, src_value))


# ---- NumPy twin ----------------------------------------------------------------------------------------
class Plan:
    """How the twin walks one partition's shards (host arrays): the entries in destination order with
    their row tree, the write-back (entries, sources) of the owned windows and the remote entries."""

    def __init__(self, shards: Shards):
        s = shards
        self.shards = s
        dest = np.asarray(s.dest, np.int64)
        self.order = np.argsort(dest, kind="stable")
        counts = np.bincount(dest, minlength=s.count)
        ends = np.cumsum(counts)
        self.rows = Segments(ends - counts, ends)
        shard_ptr = np.asarray(s.shard_ptr, np.int64)
        if s.shards == 0:
            self.writeback = self.remote = np.zeros(0, np.int64)
            self.writeback_src = self.remote_src = np.zeros(0, np.int64)
            return
        offsets = np.asarray(s.window_ptr, np.int64).reshape(s.shards, s.shards + 1) + shard_ptr[:-1, None]
        if s.method == "gs":
            # window i of every shard j, in block order (i, then j)
            self.writeback = ranges(offsets[:, :-1].T.ravel(), offsets[:, 1:].T.ravel())
            self.writeback_src = np.asarray(s.src, np.int64)[self.writeback]
            self.remote = np.concatenate((ranges(shard_ptr[:-1], offsets[:, 0]),
                                          ranges(offsets[:, -1], shard_ptr[1:])))
            self.remote_src = np.asarray(s.src, np.int64)[self.remote]
        else:
            own_end = int(s.cw_ptr[-2])
            cw_src, cw_map = np.asarray(s.cw_src, np.int64), np.asarray(s.cw_map, np.int64)
            self.writeback, self.writeback_src = cw_map[:own_end], cw_src[:own_end]
            self.remote, self.remote_src = cw_map[own_end:], cw_src[own_end:]


def load_twin(plan: Plan, values: np.ndarray, src_value: np.ndarray) -> None:
    """Fill every copy from values (twin of refresh with everything)."""
    for entries, sources in ((plan.writeback, plan.writeback_src), (plan.remote, plan.remote_src)):
        src_value[entries] = values[sources]


def refresh_twin(plan: Plan, values: np.ndarray, src_value: np.ndarray) -> None:
    src_value[plan.remote] = values[plan.remote_src]


def iterate_twin(program, plan: Plan, src_value: np.ndarray, edges, values: np.ndarray, marked: np.ndarray,
                 refine: bool):
    """Twin of `iterate`; returns (any updated, outbox ids, outbox values) as dbfs.ws.launch.iterate_twin."""
    s = plan.shards
    current = values[s.lo:s.lo + s.count]
    shared = program.init(current.copy())
    if s.entries:
        local = program.compute(src_value, edges)[plan.order]
        rows = plan.rows.nonempty
        shared[rows] = program.reduce(shared[rows], plan.rows.reduce(local, program.reduce))
    updated = program.is_updated(shared, current)
    current[updated] = shared[updated]
    refreshed = updated[plan.writeback_src - s.lo]
    src_value[plan.writeback[refreshed]] = values[plan.writeback_src[refreshed]]
    if not refine:
        return bool(updated.any()), None, None
    send = np.flatnonzero(updated & marked)
    return bool(updated.any()), (send + s.lo).astype(np.uint32), shared[send]
