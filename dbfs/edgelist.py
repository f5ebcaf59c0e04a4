"""The HDF5 graph store: one file layout for generated and converted graphs, its writers and readers.

Layout (every dataset 1-D, at the file's root):
  src, dst   int64 [m]   edge i is src[i] -> dst[i], dense vertex ids in [0, n)
  weight     float32 [m] optional (generated graphs with --weights)
  ids        int64 [n]   optional: the original id of dense vertex k, strictly ascending
Attributes: n_vertices (n), n_edges (m), directed (bool; absent means undirected tuples, as Graph500),
id_base (original id = dense id + id_base when there is no `ids`; absent means 0), id_mapping (bool),
source_format, source_file, content_hash; generated graphs carry scale, edgefactor, seed, generator.
Datasets may be contiguous (what `generate` writes) or chunked with the shuffle and deflate filters
(what `convert` writes); readers accept both, and any other storage h5py can read.

Parallel in-place writes (generate, BFS results): rank 0 creates the file under a temporary name beside
the target, with contiguous datasets whose storage is allocated at creation (never filled), and records
each dataset's byte offset. Every rank then writes its own rows straight to those offsets with pwrite;
HDF5 is not involved in the bulk writes, so nothing is gathered and no MPI-IO is needed. After all
ranks have synced, rank 0 renames the file onto the target; any failure removes the temporary file.

Streaming chunked writes (convert, one process): values are cut into chunks of CHUNK_ELEMS, each chunk
is shuffled (the bytes of equal significance together, as HDF5's shuffle filter does) and deflated by
zlib in a thread pool, and stored in order with H5Dwrite_chunk; memory stays bounded by the chunks in
flight. A BLAKE2b digest of every chunk's plain bytes feeds the file's content_hash.

Reading a slice [lo, hi) (each rank reads only its own): contiguous data is read with pread by several
threads; chunked data with those filters is located chunk by chunk (H5Dget_chunk_info_by_coord), read
with pread and inflated/unshuffled by a thread pool (zlib releases the GIL), so one rank uses several
cores. Any other storage falls back to h5py's own reader.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import zlib
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable

import h5py
import numpy as np

from dbfs import outputs, runtime
from dbfs.errors import DbfsError
from graph500.generator import edge_range

EDGE_DATASETS = (("src", np.dtype("<i8")), ("dst", np.dtype("<i8")))
WEIGHT_DATASET = ("weight", np.dtype("<f4"))
IDS_DATASET = "ids"
MAX_ID = 2**63 - 1                 # original ids and the vertex count are int64
DEFAULT_CHUNK_EDGES = 1 << 22
CHUNK_ELEMS = 1 << 20              # chunk length of converted datasets (8 MiB of int64)
DEFLATE_LEVEL = 1
_PIECE_BYTES = 8 << 20             # contiguous reads are split into pieces of this size among threads
_MAX_THREADS = 16
HDF5_OVERHEAD_BYTES = 1 << 20      # metadata of a file written in place (a few KiB), with room to spare


def usable_cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def io_threads(share: int = 1) -> int:
    """Threads for reading and compressing: this process's CPUs divided by `share` (1 to 16)."""
    return max(1, min(_MAX_THREADS, usable_cpus() // share))


# ------------------------------------------------------------------------------- parallel in place
def _datasets(weights: bool):
    return EDGE_DATASETS + ((WEIGHT_DATASET,) if weights else ())


def temporary_name(path: str) -> str:
    """A unique hidden name beside `path` for writing before the final rename."""
    directory, name = os.path.split(os.path.abspath(path))
    return os.path.join(directory, f".{name}.{secrets.token_hex(6)}.tmp")


def remove_quietly(path: str | None) -> None:
    if path is None:
        return
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _create_layout(tmp: str, datasets, attrs: dict) -> dict[str, int]:
    """Create the file with allocated, unfilled contiguous datasets [(name, dtype, length)]; return their
    byte offsets."""
    offsets = {}
    with h5py.File(tmp, "w") as f:
        for name, dtype, length in datasets:
            dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
            dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
            dcpl.set_fill_time(h5py.h5d.FILL_TIME_NEVER)
            dset = f.create_dataset(name, shape=(length,), dtype=dtype, dcpl=dcpl)
            offset = dset.id.get_offset()
            if offset is None and length > 0:
                raise OSError(f"HDF5 did not allocate storage for dataset {name!r}")
            offsets[name] = int(offset or 0)
        for key, value in attrs.items():
            f.attrs[key] = value
    return offsets


def pwrite_all(fd: int, data: np.ndarray, offset: int) -> None:
    view = memoryview(np.ascontiguousarray(data)).cast("B")
    while view:
        written = os.pwrite(fd, view, offset)
        view = view[written:]
        offset += written


def write_in_place(path: str, datasets, attrs: dict, fill: Callable, comm=runtime.WORLD,
                   force: bool = False, option: str = "--out") -> None:
    """Collective: create `path` with contiguous datasets [(name, dtype, length)] and attributes, let
    every rank call fill(fd, offsets) to pwrite its rows (offsets: name -> byte offset of element 0),
    then rename it into place. A file system without room for the datasets is an error before anything
    is written; a failing rank, or an exception from fill, leaves no file behind; OSError from fill
    becomes a DbfsError on every rank."""
    path = outputs.final_path(path)
    size = sum(length * np.dtype(dtype).itemsize for _, dtype, length in datasets) + HDF5_OVERHEAD_BYTES
    outputs.check([outputs.Target(option, path, force, size)], comm=comm)
    rank = comm.Get_rank()
    error = tmp = None
    try:          # from the moment the file exists: an interruption anywhere removes it on every rank
        if rank == 0:
            tmp = temporary_name(path)
            try:
                offsets = _create_layout(tmp, datasets, attrs)
            except (OSError, TypeError, ValueError) as exc:     # h5py reports bad attributes as the latter
                offsets, error = None, f"cannot create {path}: {exc}"
            tmp, offsets = comm.bcast((tmp, offsets), root=0)
        else:
            tmp, offsets = comm.bcast(None, root=0)
        runtime.agree(error, comm)
        try:
            fd = os.open(tmp, os.O_WRONLY)
            try:
                fill(fd, offsets)
                os.fsync(fd)
            finally:
                os.close(fd)
        except FileNotFoundError:
            error = f"cannot write {path}: rank {rank} does not see the file rank 0 created " \
                    "(is the directory shared by all ranks?)"
        except OSError as exc:
            error = f"cannot write {path}: {exc.strerror or exc}"
        runtime.agree(error, comm)
        if rank == 0:
            try:
                os.replace(tmp, path)
            except OSError as exc:
                error = f"cannot rename the finished file onto {path}: {exc.strerror or exc}"
        runtime.agree(error, comm)
    except BaseException:
        remove_quietly(tmp)              # the name is unique to this call; removing it twice is harmless
        raise


def write_edge_list(path: str, n_edges: int, attrs: dict, produce: Callable, comm=runtime.WORLD,
                    force: bool = False, *, weights: bool = False,
                    chunk_edges: int = DEFAULT_CHUNK_EDGES) -> None:
    """Collective: write an edge list of n_edges edges to `path`.

    produce(lo, hi) -> (src, dst) or (src, dst, weight) arrays (NumPy) for the edges [lo, hi); each rank
    calls it only for chunks of at most chunk_edges edges of its own range. An existing `path` is an
    error unless force; an unwritable directory is an error; both are checked on every rank before any
    work (DbfsError, collective). Write failures raise DbfsError on every rank and leave no file.
    """
    if n_edges < 0 or chunk_edges < 1:
        raise ValueError(f"bad edge-list request: {n_edges} edges in chunks of {chunk_edges}")
    lo, hi = edge_range(n_edges, comm.Get_rank(), comm.Get_size())
    layout = _datasets(weights)

    def fill(fd, offsets):
        for start in range(lo, hi, chunk_edges):
            stop = min(start + chunk_edges, hi)
            arrays = produce(start, stop)
            if len(arrays) != len(layout):
                raise ValueError(f"produce returned {len(arrays)} arrays, expected {len(layout)}")
            for (name, dtype), array in zip(layout, arrays):
                data = np.ascontiguousarray(array, dtype=dtype)
                if data.shape != (stop - start,):
                    raise ValueError(f"produce({start}, {stop}) gave {name} of shape {data.shape}")
                pwrite_all(fd, data, offsets[name] + start * dtype.itemsize)

    write_in_place(path, [(name, dtype, n_edges) for name, dtype in layout], attrs, fill, comm, force)


# ---------------------------------------------------------------------------- streaming, chunked
def _encode_chunk(values: np.ndarray) -> tuple[bytes, bytes]:
    """(shuffled and deflated bytes, digest of the plain bytes) of one full chunk."""
    plain = values.view(np.uint8)
    shuffled = plain.reshape(-1, values.itemsize).T.tobytes()
    return zlib.compress(shuffled, DEFLATE_LEVEL), hashlib.blake2b(plain, digest_size=16).digest()


class ChunkStream:
    """Appends int64 values to a new chunked (shuffle + deflate) dataset of an open file; chunks are
    compressed by `pool` and written in order by the calling thread. close() returns the chunk digests."""

    def __init__(self, f: h5py.File, name: str, pool: ThreadPoolExecutor, chunk: int | None = None,
                 in_flight: int = 2 * _MAX_THREADS):
        chunk = chunk or CHUNK_ELEMS
        self.dset = f.create_dataset(name, shape=(0,), maxshape=(None,), chunks=(chunk,),
                                     dtype="<i8", shuffle=True, compression="gzip",
                                     compression_opts=DEFLATE_LEVEL)
        self.pool, self.chunk, self.in_flight = pool, chunk, in_flight
        self.buffer = np.zeros(chunk, "<i8")
        self.filled = 0
        self.total = 0
        self.pending: deque = deque()
        self.stored = 0
        self.digests: list[bytes] = []

    def append(self, values: np.ndarray) -> None:
        values = np.asarray(values, "<i8")
        k = 0
        while k < len(values):
            take = min(self.chunk - self.filled, len(values) - k)
            self.buffer[self.filled:self.filled + take] = values[k:k + take]
            self.filled += take
            k += take
            if self.filled == self.chunk:
                self._submit()
        self.total += len(values)

    def _submit(self) -> None:
        self.pending.append(self.pool.submit(_encode_chunk, self.buffer))
        self.buffer = np.zeros(self.chunk, "<i8")
        self.filled = 0
        while len(self.pending) > self.in_flight:
            self._store_oldest()

    def _store_oldest(self) -> None:
        data, digest = self.pending.popleft().result()
        start = self.stored * self.chunk
        self.dset.resize((start + self.chunk,))
        self.dset.id.write_direct_chunk((start,), data, 0)
        self.digests.append(digest)
        self.stored += 1

    def close(self) -> list[bytes]:
        if self.filled:
            # HDF5 stores the last chunk at full length; the tail past the extent stays zero
            self.pending.append(self.pool.submit(_encode_chunk, self.buffer))
        while self.pending:
            self._store_oldest()
        self.dset.resize((self.total,))
        return self.digests


def content_hash(n_vertices: int, n_edges: int, digests) -> str:
    """The graph's content hash: BLAKE2b over n, m and the digests of the src then dst chunks."""
    h = hashlib.blake2b(digest_size=20)
    h.update(f"dbfs-graph n={n_vertices} m={n_edges} chunk={CHUNK_ELEMS};".encode())
    for d in digests:
        h.update(d)
    return h.hexdigest()


# ---------------------------------------------------------------------------------------- reading
def _open(path: str) -> h5py.File:
    try:
        return h5py.File(path, "r")
    except (OSError, ValueError) as exc:
        reason = "no such file" if not os.path.exists(path) else f"not a readable HDF5 file ({exc})"
        if os.path.isfile(path) and os.path.getsize(path) == 0:
            reason = "the file is empty"
        elif _not_hdf5(path):
            reason += f"; a text edge list or another format is converted first: python -m dbfs convert {path} " \
                      "--out G.h5"
        raise DbfsError(f"cannot read edge list {path}: {reason}") from None


def _not_hdf5(path: str) -> bool:
    """A readable file without the HDF5 signature (which a damaged HDF5 file still has)."""
    try:
        return os.path.isfile(path) and not h5py.is_hdf5(path)
    except OSError:
        return False


def _checked_datasets(f: h5py.File, path: str) -> tuple[int, bool]:
    """(n_edges, has weights) after checking the layout."""
    n_edges = None
    for name, _ in EDGE_DATASETS + (WEIGHT_DATASET,):
        if name not in f:
            if name == WEIGHT_DATASET[0]:
                continue
            raise DbfsError(f"{path} is not a dbfs edge list: dataset {name!r} is missing")
        dset = f[name]
        if not isinstance(dset, h5py.Dataset) or dset.ndim != 1:
            raise DbfsError(f"{path} is not a dbfs edge list: {name!r} is not a 1-D dataset")
        kind = "f" if name == WEIGHT_DATASET[0] else "iu"
        if dset.dtype.kind not in kind:
            raise DbfsError(f"{path}: dataset {name!r} has type {dset.dtype}, expected "
                            + ("floating point" if kind == "f" else "integers"))
        if n_edges is None:
            n_edges = dset.shape[0]
        elif dset.shape[0] != n_edges:
            raise DbfsError(f"{path}: dataset {name!r} has {dset.shape[0]} entries, 'src' has {n_edges}")
    return n_edges, WEIGHT_DATASET[0] in f


def _plain(value):
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, np.ndarray):
        return tuple(_plain(v) for v in value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    return value


def read_attrs(path: str) -> dict:
    """File attributes (as plain Python values) plus n_edges and weights (bool), after layout checks."""
    path = os.fspath(path)
    with _open(path) as f:
        n_edges, weights = _checked_datasets(f, path)
        info = {key: _plain(value) for key, value in f.attrs.items()}
    info.update(n_edges=n_edges, weights=weights)
    return info


def _fast_plan(dset: h5py.Dataset):
    """('contiguous', byte offset) or ('chunked', chunk length, filter ids) when the slice reader can
    read the raw storage itself; None for anything else (compact, external, other filters)."""
    if dset.ndim != 1 or dset.dtype.kind not in "iuf":
        return None
    plist = dset.id.get_create_plist()
    layout = plist.get_layout()
    if layout == h5py.h5d.CONTIGUOUS and plist.get_external_count() == 0:
        offset = dset.id.get_offset()
        return None if offset is None else ("contiguous", int(offset))
    if layout == h5py.h5d.CHUNKED:
        filters = tuple(plist.get_filter(k)[0] for k in range(plist.get_nfilters()))
        if filters in ((), (h5py.h5z.FILTER_DEFLATE,), (h5py.h5z.FILTER_SHUFFLE,),
                       (h5py.h5z.FILTER_SHUFFLE, h5py.h5z.FILTER_DEFLATE)):
            return "chunked", int(plist.get_chunk()[0]), filters
    return None


def read_buffer_bytes(path: str, threads: int, items: int, names=None) -> int:
    """Host bytes the slice reader holds at once reading `items` consecutive elements of the file's
    chunked datasets (`names`; default: the edges and weights): a stored chunk and its decoded elements
    for each chunk decoded at the same time, up to `threads` of them, of the dataset that needs most;
    0 when the datasets are contiguous."""
    needs = [0]
    with _open(path) as f:
        for dset in (f[name] for name in names or [name for name, _ in _datasets(True)] if name in f):
            plan, length = _fast_plan(dset), dset.shape[0]
            if plan and plan[0] == "chunked" and length:
                chunk, stored = plan[1], dset.id.get_chunk_info(0).size
                at_once = min(threads, -(-items // chunk) + 1, -(-length // chunk))
                needs.append(at_once * (chunk * dset.dtype.itemsize + stored))
    return max(needs)


def _pread_into(fd: int, buffer: memoryview, offset: int) -> None:
    while buffer:
        got = os.preadv(fd, [buffer], offset)
        if got == 0:
            raise DbfsError(f"unexpected end of file at byte {offset} (truncated HDF5 file?)")
        buffer = buffer[got:]
        offset += got


def _read_contiguous(fd, pool, out: np.ndarray, file_offset: int) -> None:
    raw = memoryview(out.view(np.uint8))
    pieces = [(a, min(a + _PIECE_BYTES, len(raw))) for a in range(0, len(raw), _PIECE_BYTES)]
    for job in [pool.submit(_pread_into, fd, raw[a:b], file_offset + a) for a, b in pieces]:
        job.result()


def _decode_chunk(fd, where, filters, chunk: int, itemsize: int, out_bytes: np.ndarray, a: int, b: int,
                  name: str) -> None:
    """Read one stored chunk, undo its filters, copy its elements [a, b) into out_bytes ([len, itemsize]);
    `name` says which file and dataset in an error."""
    mask, byte_offset, size = where
    data = bytearray(size)
    _pread_into(fd, memoryview(data), byte_offset)
    for k in reversed(range(len(filters))):
        if mask & (1 << k):
            continue
        if filters[k] == h5py.h5z.FILTER_DEFLATE:
            try:
                data = zlib.decompress(data, bufsize=chunk * itemsize)
            except zlib.error as exc:
                raise DbfsError(f"{name}: corrupt chunk at byte {byte_offset} ({exc})") from None
    if len(data) != chunk * itemsize:
        raise DbfsError(f"{name}: chunk at byte {byte_offset} holds {len(data)} bytes, "
                        f"expected {chunk * itemsize}")
    plain = np.frombuffer(data, np.uint8)
    shuffled = h5py.h5z.FILTER_SHUFFLE in filters and not mask & (1 << filters.index(h5py.h5z.FILTER_SHUFFLE))
    if shuffled:
        planes = plain.reshape(itemsize, chunk)
        for j in range(itemsize):            # plane by plane: a plain transpose copy thrashes the cache
            out_bytes[:, j] = planes[j, a:b]
    else:
        out_bytes[:] = plain.reshape(chunk, itemsize)[a:b]


def _read_chunked(dset, fd, pool, out: np.ndarray, lo: int, hi: int, chunk: int, filters) -> None:
    itemsize = dset.dtype.itemsize
    out_bytes = out.view(np.uint8).reshape(-1, itemsize)
    jobs = []
    for k in range(lo // chunk, (hi - 1) // chunk + 1):
        start = k * chunk
        a, b = max(lo, start) - start, min(hi, start + chunk) - start
        target = out_bytes[start + a - lo:start + b - lo]
        info = dset.id.get_chunk_info_by_coord((start,))
        if info.byte_offset is None:                       # never written: HDF5 returns the fill value
            out[start + a - lo:start + b - lo] = dset.fillvalue
            continue
        jobs.append(pool.submit(_decode_chunk, fd, (info.filter_mask, info.byte_offset, info.size),
                                filters, chunk, itemsize, target, a, b, f"{dset.file.filename}, dataset {dset.name!r}"))
    for job in jobs:
        job.result()


def read_slice(f: h5py.File, name: str, lo: int, hi: int, threads: int | None = None) -> np.ndarray:
    """Elements [lo, hi) of the 1-D dataset `name` of the open file f, in the dataset's dtype."""
    dset = f[name]
    plan = _fast_plan(dset) if hi > lo else None
    if plan is None:
        return dset[lo:hi]
    out = np.empty(hi - lo, dset.dtype)
    fd = os.open(f.filename, os.O_RDONLY)
    try:
        with ThreadPoolExecutor(threads or io_threads()) as pool:
            if plan[0] == "contiguous":
                _read_contiguous(fd, pool, out, plan[1] + lo * dset.dtype.itemsize)
            else:
                _read_chunked(dset, fd, pool, out, lo, hi, plan[1], plan[2])
    finally:
        os.close(fd)
    return out


def read_edge_slice(path: str, lo: int, hi: int, threads: int | None = None):
    """Edges [lo, hi) as (src, dst) int64 arrays, plus float32 weights when the file has them."""
    path = os.fspath(path)
    with _open(path) as f:
        n_edges, weights = _checked_datasets(f, path)
        if not 0 <= lo <= hi <= n_edges:
            raise DbfsError(f"{path}: edge range [{lo}, {hi}) is outside [0, {n_edges})")
        out = tuple(read_slice(f, name, lo, hi, threads).astype(dtype.newbyteorder("="), copy=False)
                    for name, dtype in _datasets(weights))
    return out


# ------------------------------------------------------------------------------- graph information
@dataclass(frozen=True)
class GraphInfo:
    """What a run needs to know about a graph file, with the layout's defaults filled in."""

    path: str
    n_vertices: int
    n_edges: int
    directed: bool
    id_base: int                 # original id = dense id + id_base (when there is no id table)
    has_ids: bool                # dataset `ids` maps dense ids to original ids
    weights: bool
    attrs: dict
    unsigned: bool = False       # src or dst holds unsigned integers

    def original_ids(self, lo: int, hi: int, threads: int | None = None) -> np.ndarray:
        """Original ids (int64) of the dense vertices [lo, hi)."""
        if not self.has_ids:
            return np.arange(lo + self.id_base, hi + self.id_base, dtype=np.int64)
        with _open(self.path) as f:
            return read_slice(f, IDS_DATASET, lo, hi, threads).astype(np.int64, copy=False)

    def unordered_id(self, lo: int, hi: int, threads: int | None = None) -> int | None:
        """The first dense id k in [lo, hi) whose original id is not below the next one's (the id
        table must be strictly ascending, or dense_id finds the wrong vertices), or None."""
        if not self.has_ids or hi <= lo:
            return None
        ids = self.original_ids(lo, min(hi + 1, self.n_vertices), threads)
        bad = np.flatnonzero(ids[1:] <= ids[:-1])
        return lo + int(bad[0]) if len(bad) else None

    def dense_id(self, original: int) -> int | None:
        """The dense id of an original vertex id, or None when the graph has no such vertex."""
        if not self.has_ids:
            dense = original - self.id_base
            return dense if 0 <= dense < self.n_vertices else None
        with _open(self.path) as f:           # binary search reading log2(n) single elements
            ids = f[IDS_DATASET]
            lo, hi = 0, self.n_vertices
            while lo < hi:
                mid = (lo + hi) // 2
                if int(ids[mid]) < original:
                    lo = mid + 1
                else:
                    hi = mid
            return lo if lo < self.n_vertices and int(ids[lo]) == original else None


def _layout_error(path: str, what: str) -> DbfsError:
    return DbfsError(f"{path} is not a dbfs graph: {what}")


def graph_info(path: str) -> GraphInfo:
    """Read and check a graph file's layout and attributes (DbfsError naming the problem)."""
    path = os.fspath(path)
    with _open(path) as f:
        n_edges, weights = _checked_datasets(f, path)
        attrs = {key: _plain(value) for key, value in f.attrs.items()}
        has_ids = IDS_DATASET in f
        if has_ids:
            ids = f[IDS_DATASET]
            if not isinstance(ids, h5py.Dataset) or ids.ndim != 1 or ids.dtype.kind not in "iu":
                raise _layout_error(path, "'ids' is not a 1-D integer dataset")
            n_ids = ids.shape[0]
            if n_ids:
                first_id, last_id = int(ids[0]), int(ids[-1])
        unsigned = any(f[name].dtype.kind == "u" for name, _ in EDGE_DATASETS)
    n = attrs.get("n_vertices")
    if not _is_integer(n) or n < 1:
        raise _layout_error(path, "attribute 'n_vertices' is missing or not a positive integer")
    if attrs.get("n_edges", n_edges) != n_edges:
        raise _layout_error(path, f"attribute n_edges = {attrs['n_edges']} but 'src' holds {n_edges} edges")
    if has_ids and n_ids != n:
        raise _layout_error(path, f"'ids' has {n_ids} entries for {n} vertices")
    if bool(attrs.get("id_mapping", has_ids)) != has_ids:
        raise _layout_error(path, "attribute id_mapping disagrees with the presence of dataset 'ids'")
    _check_attrs(path, attrs, n)
    if has_ids and n_ids:
        _check_id_table(path, first_id, last_id)
    attrs.update(n_edges=n_edges, weights=weights)
    return GraphInfo(path=path, n_vertices=n, n_edges=n_edges, directed=bool(attrs.get("directed", False)),
                     id_base=int(attrs.get("id_base", 0)), has_ids=has_ids, weights=weights, attrs=attrs,
                     unsigned=unsigned)


def _check_attrs(path: str, attrs: dict, n: int) -> None:
    """DbfsError naming the first attribute a run reads whose value is of the wrong kind: SCALE,
    edgefactor (integers from 1; they head the Graph500 block), id_base (original ids are dense ids plus
    id_base: not negative, as -1 marks an unreached vertex in a result, and within int64), directed
    (a boolean or 0/1) and seed (two integers)."""
    for name, low in (("scale", 1), ("edgefactor", 1), ("id_base", 0)):
        value = attrs.get(name, low)
        if not _is_integer(value) or value < low:
            raise _layout_error(path, f"attribute {name!r} = {value!r} is not an integer of at least {low}")
    if attrs.get("id_base", 0) + n - 1 > MAX_ID:
        raise _layout_error(path, f"attribute 'id_base' = {attrs['id_base']} puts original ids past 2^63 - 1")
    directed = attrs.get("directed", False)
    if not (isinstance(directed, bool) or directed in (0, 1)):
        raise _layout_error(path, f"attribute 'directed' = {directed!r} is not a boolean (true, false, 0 or 1)")
    seed = attrs.get("seed", (0, 0))
    if not (isinstance(seed, tuple) and len(seed) == 2 and all(_is_integer(v) for v in seed)):
        raise _layout_error(path, f"attribute 'seed' = {seed!r} is not two integers")


def _is_integer(value) -> bool:
    """An attribute read as a Python int (h5py gives booleans as bool, a subclass of int)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _check_id_table(path: str, first: int, last: int) -> None:
    """DbfsError when the ascending id table's ends lie outside [0, 2^63 - 1] (-1 marks an unreached
    vertex in a result; ids are int64)."""
    if first < 0:
        raise _layout_error(path, f"'ids' holds the negative id {first}: original ids must be at least 0 "
                                  "(-1 marks an unreached vertex in a result)")
    if last > MAX_ID:
        raise _layout_error(path, f"'ids' holds the id {last}, past 2^63 - 1")


def sampled_digest(info: GraphInfo, samples: int = 16, stretch: int = 1024) -> str:
    """A digest of a graph file without a content_hash: its attributes, dataset shapes and `samples`
    evenly spaced stretches of `stretch` edges of src and dst."""
    h = hashlib.blake2b(digest_size=20)
    h.update(repr(sorted(info.attrs.items())).encode())
    m = info.n_edges
    with _open(info.path) as f:
        for name in ("src", "dst"):
            for k in range(samples):
                lo = (m - min(m, stretch)) * k // max(1, samples - 1)
                h.update(np.ascontiguousarray(f[name][lo:lo + stretch], "<i8").tobytes())
    return h.hexdigest()
