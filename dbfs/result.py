"""--save-result OUT.h5: one search's tree written by all ranks, in the graph file's original ids.

Datasets (one row per vertex, row k = dense vertex k): `vertex` int64 (original id), `parent` int64
(original id of the parent, -1 when unreached; the root is its own parent), `level` int32 (-1 when
unreached). Attributes: root (original id), n_vertices, visited, depth, directed (whether the search
followed edge directions), graph (the graph file or the generator parameters).

Method: rank (i, j) owns the dense vertices [lo, hi) of its block (dbfs.grid) and writes exactly those
rows, in place at the datasets' offsets (dbfs.edgelist.write_in_place): nothing is gathered. Without an
id table original ids are dense ids + id_base. With one, a rank reads its own rows' original ids from
the graph file, and the parents' original ids come from the parents' owners: each rank sends its
distinct parent ids to their owners (one Alltoallv), which answer from their rows (a second one).
"""

from __future__ import annotations

import numpy as np
from mpi4py import MPI

from dbfs import edgelist, outputs, runtime
from dbfs.arrays import sorted_unique
from dbfs.errors import DbfsError
from dbfs.runtime import alltoallv_int32

DATASETS = (("vertex", np.dtype("<i8")), ("parent", np.dtype("<i8")), ("level", np.dtype("<i4")))


def _alltoallv_int64(comm: MPI.Comm, values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    pairs = np.ascontiguousarray(values, np.int64).view(np.int32)
    return alltoallv_int32(comm, pairs, 2 * counts).view(np.int64)


def original_parents(comm: MPI.Comm, grid, parent: np.ndarray, own_ids: np.ndarray) -> np.ndarray:
    """Collective: parent (dense ids, -1 unreached) -> original ids, where own_ids holds the original
    ids of this rank's owned vertices and every rank's owners answer for theirs."""
    asked = sorted_unique([parent[parent >= 0]])
    owner = np.asarray(grid.owner_rank(asked), np.int64)
    order = np.argsort(owner, kind="stable")
    counts = np.bincount(owner, minlength=comm.Get_size()).astype(np.int64)
    arrived_counts = np.empty_like(counts)
    comm.Alltoall(counts, arrived_counts)
    questions = _alltoallv_int64(comm, asked[order], counts)
    i, j = grid.coords(comm.Get_rank())
    answers = own_ids[questions - grid.to_global_owned(i, j, 0)]
    replies = _alltoallv_int64(comm, answers, arrived_counts)
    originals = np.empty(len(asked), np.int64)
    originals[order] = replies
    out = np.full(len(parent), -1, np.int64)
    reached = parent >= 0
    out[reached] = originals[np.searchsorted(asked, parent[reached])]
    return out


def check_save_request(args) -> None:
    """Collective: --save-result needs one --root (its target is checked with the run's other outputs)."""
    if args.save_result is None:
        return
    if args.root is None:
        raise DbfsError("--save-result needs a single --root V (the search whose tree is saved)",
                        collective=True)


def check_save_room(args, n_vertices: int, comm: MPI.Comm) -> None:
    """Collective, before the graph is built: the --save-result file system has room for the datasets
    of n_vertices rows (checked by rank 0)."""
    if args.save_result is None:
        return
    size = n_vertices * sum(dtype.itemsize for _, dtype in DATASETS)
    runtime.agree(outputs.space_problem(args.save_result, size) if comm.Get_rank() == 0 else None, comm)


def save_result(path: str, graph, source, root: int, result, comm: MPI.Comm) -> None:
    """Collective: write `result` (a dbfs.bfs.SearchResult of the search from dense `root`) to path."""
    grid = graph.grid
    i, j = grid.coords(comm.Get_rank())
    lo, hi = grid.owned_range(i, j)
    parent = graph.backend.asnumpy(result.parent)[:hi - lo].astype(np.int64)
    level = graph.backend.asnumpy(result.level)[:hi - lo].astype(np.int32)
    info = source.info
    if info is not None and info.has_ids:
        own_ids = info.original_ids(lo, hi)
        parents = original_parents(comm, grid, parent, own_ids)
    else:
        base = info.id_base if info is not None else 0
        own_ids = np.arange(lo, hi, dtype=np.int64) + base
        parents = np.where(parent >= 0, parent + base, -1)
    rows = {"vertex": own_ids, "parent": parents, "level": level}
    attrs = {"root": source.original_ids(np.array([root]))[0], "n_vertices": grid.n_vertices,
             "visited": result.visited, "depth": result.depth, "directed": not source.symmetric,
             "graph": source.describe}

    def fill(fd, offsets):
        for name, dtype in DATASETS:
            edgelist.pwrite_all(fd, rows[name].astype(dtype, copy=False), offsets[name] + lo * dtype.itemsize)

    edgelist.write_in_place(path, [(name, dtype, grid.n_vertices) for name, dtype in DATASETS], attrs,
                            fill, comm, force=True, option="--save-result")
