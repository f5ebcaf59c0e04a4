"""HDF5 edge-list files written in parallel by all ranks, without parallel HDF5 and without gathering.

Layout: root datasets `src` and `dst` (int64) and optionally `weight` (float32), edge i at index i, plus
file attributes (for generated graphs: scale, edgefactor, seed, n_vertices, generator).

Method: rank 0 creates the file under a temporary name beside the target, with contiguous datasets whose
storage is allocated at creation (and never filled), and records each dataset's byte offset in the file.
Every rank then writes its balanced range [lo, hi) of edges, chunk by chunk as `produce` makes them,
straight to those offsets with pwrite; HDF5 is not involved in the bulk writes, so no rank ever holds
more than one chunk and no MPI-IO is needed. After all ranks have synced, rank 0 renames the file onto
the target. Any failure removes the temporary file, so a partial edge list is never left behind.
"""

from __future__ import annotations

import os
import secrets
from typing import Callable

import h5py
import numpy as np

from dbfs import runtime
from dbfs.errors import DbfsError
from graph500.generator import edge_range

EDGE_DATASETS = (("src", np.dtype("<i8")), ("dst", np.dtype("<i8")))
WEIGHT_DATASET = ("weight", np.dtype("<f4"))
DEFAULT_CHUNK_EDGES = 1 << 22


def _datasets(weights: bool):
    return EDGE_DATASETS + ((WEIGHT_DATASET,) if weights else ())


def _target_problem(path: str, force: bool) -> str | None:
    directory = os.path.dirname(path)
    if os.path.isdir(path):
        return f"{path} is a directory"
    if os.path.lexists(path) and not force:
        return f"{path} already exists (use --force to replace it)"
    if not os.path.isdir(directory):
        return f"cannot write {path}: directory {directory} does not exist"
    if not os.access(directory, os.W_OK | os.X_OK):
        return f"cannot write {path}: directory {directory} is not writable"
    return None


def check_target(path: str, force: bool = False, comm=runtime.WORLD) -> None:
    """Collective: DbfsError on every rank when `path` cannot be written (exists without force, is a
    directory, or its directory is missing or not writable)."""
    runtime.agree(_target_problem(os.path.abspath(os.fspath(path)), force), comm)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _create_layout(tmp: str, n_edges: int, attrs: dict, weights: bool) -> dict[str, int]:
    """Create the file with allocated, unfilled contiguous datasets; return their byte offsets."""
    offsets = {}
    with h5py.File(tmp, "w") as f:
        for name, dtype in _datasets(weights):
            dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
            dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
            dcpl.set_fill_time(h5py.h5d.FILL_TIME_NEVER)
            dset = f.create_dataset(name, shape=(n_edges,), dtype=dtype, dcpl=dcpl)
            offset = dset.id.get_offset()
            if offset is None and n_edges > 0:
                raise OSError(f"HDF5 did not allocate storage for dataset {name!r}")
            offsets[name] = int(offset or 0)
        for key, value in attrs.items():
            f.attrs[key] = value
    return offsets


def _pwrite_all(fd: int, data: np.ndarray, offset: int) -> None:
    view = memoryview(data).cast("B")
    while view:
        written = os.pwrite(fd, view, offset)
        view = view[written:]
        offset += written


def _write_range(tmp: str, offsets: dict[str, int], lo: int, hi: int, produce, weights: bool,
                 chunk_edges: int) -> None:
    fd = os.open(tmp, os.O_WRONLY)
    try:
        for start in range(lo, hi, chunk_edges):
            stop = min(start + chunk_edges, hi)
            arrays = produce(start, stop)
            if len(arrays) != len(_datasets(weights)):
                raise ValueError(f"produce returned {len(arrays)} arrays, expected {len(_datasets(weights))}")
            for (name, dtype), array in zip(_datasets(weights), arrays):
                data = np.ascontiguousarray(array, dtype=dtype)
                if data.shape != (stop - start,):
                    raise ValueError(f"produce({start}, {stop}) gave {name} of shape {data.shape}")
                _pwrite_all(fd, data, offsets[name] + start * dtype.itemsize)
        os.fsync(fd)
    finally:
        os.close(fd)


def write_edge_list(path: str, n_edges: int, attrs: dict, produce: Callable, comm=runtime.WORLD,
                    force: bool = False, *, weights: bool = False,
                    chunk_edges: int = DEFAULT_CHUNK_EDGES) -> None:
    """Collective: write an edge list of n_edges edges to `path`.

    produce(lo, hi) -> (src, dst) or (src, dst, weight) arrays (NumPy) for the edges [lo, hi); each rank
    calls it only for chunks of at most chunk_edges edges of its own range. An existing `path` is an
    error unless force; an unwritable directory is an error; both are checked on every rank before any
    work (DbfsError, collective). Write failures raise DbfsError on every rank and leave no file.
    """
    path = os.path.abspath(os.fspath(path))
    if n_edges < 0 or chunk_edges < 1:
        raise ValueError(f"bad edge-list request: {n_edges} edges in chunks of {chunk_edges}")
    check_target(path, force, comm)

    rank, size = comm.Get_rank(), comm.Get_size()
    tmp = None
    error = None
    if rank == 0:
        directory, name = os.path.split(path)
        tmp = os.path.join(directory, f".{name}.{secrets.token_hex(6)}.tmp")
        try:
            offsets = _create_layout(tmp, n_edges, attrs, weights)
        except (OSError, TypeError, ValueError) as exc:     # h5py reports bad attributes as the latter
            _remove(tmp)
            offsets, error = None, f"cannot create {path}: {exc}"
        tmp, offsets = comm.bcast((tmp, offsets), root=0)
    else:
        tmp, offsets = comm.bcast(None, root=0)
    runtime.agree(error, comm)

    try:
        lo, hi = edge_range(n_edges, rank, size)
        try:
            _write_range(tmp, offsets, lo, hi, produce, weights, chunk_edges)
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
                error = f"cannot rename the finished edge list onto {path}: {exc.strerror or exc}"
        runtime.agree(error, comm)
    except BaseException:
        _remove(tmp)                     # the name is unique to this call; removing it twice is harmless
        raise


def _open(path: str) -> h5py.File:
    try:
        return h5py.File(path, "r")
    except (OSError, ValueError) as exc:
        reason = "no such file" if not os.path.exists(path) else f"not a readable HDF5 file ({exc})"
        raise DbfsError(f"cannot read edge list {path}: {reason}") from None


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


def read_edge_slice(path: str, lo: int, hi: int):
    """Edges [lo, hi) as (src, dst) int64 arrays, plus float32 weights when the file has them."""
    path = os.fspath(path)
    with _open(path) as f:
        n_edges, weights = _checked_datasets(f, path)
        if not 0 <= lo <= hi <= n_edges:
            raise DbfsError(f"{path}: edge range [{lo}, {hi}) is outside [0, {n_edges})")
        out = tuple(f[name][lo:hi].astype(dtype.newbyteorder("="), copy=False)
                    for name, dtype in _datasets(weights))
    return out
