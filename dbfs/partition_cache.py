"""The partition cache (--partition-cache DIR): each rank's built CSC block kept on disk and reused by
later runs on the same graph and grid instead of reading the edges and building again (kernel 1).

Key: a BLAKE2b digest of the graph's content key (dbfs.source.GraphSource.content_key: the content
hash a converted file carries, the generator parameters of a generated graph, or a sampled digest),
n, m, the grid R x C, the storage (both directions or out-edges only), whether the graph is a file,
and the cache format (the field names of dbfs.graph.LocalGraph, so a change of the graph state
invalidates old entries).
Entry DIR/<key>/: rank<r>.npz per rank (its LocalGraph arrays, and its scalar fields as JSON) and
entry.json, written by rank 0 after every rank has stored its file, holding the key's inputs and the
graph file's size and modification time. An entry is reused when entry.json matches (a graph file
rewritten in place is stale even if its content key is not) and every rank finds its file; otherwise
every rank builds, and the entry is rewritten. Files are written under temporary names and renamed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os

import numpy as np

from dbfs import edgelist, runtime
from dbfs.graph import LocalGraph

_FORMAT = "dbfs-partition-cache-1"
_NOT_STORED = ("comms", "backend")


def _fields() -> list[str]:
    return [f.name for f in dataclasses.fields(LocalGraph) if f.name not in _NOT_STORED]


class PartitionCache:
    """Collective object: every rank of `comm` constructs it with the same arguments."""

    def __init__(self, directory: str, source, grid, comm=runtime.WORLD):
        self.comm, self.rank = comm, comm.Get_rank()
        error = None
        if self.rank == 0:
            try:
                os.makedirs(directory, exist_ok=True)
            except OSError as e:
                error = f"cannot use --partition-cache {directory}: {e.strerror or e}"
        runtime.agree(error, comm)
        described = None
        if self.rank == 0:
            described = {"format": _FORMAT, "fields": _fields(), "graph": source.content_key(),
                         "n_vertices": source.n_vertices, "n_edges": source.n_edges,
                         "grid": [grid.R, grid.C], "symmetric": source.symmetric,
                         "file": source.file_stamp()}
        self.entry_info = comm.bcast(described, root=0)
        keyed = {k: v for k, v in self.entry_info.items() if k != "file"}
        keyed["from_file"] = self.entry_info["file"] is not None
        key = hashlib.blake2b(json.dumps(keyed, sort_keys=True).encode(), digest_size=16).hexdigest()
        self.path = os.path.join(os.path.abspath(directory), key)
        self.rank_file = os.path.join(self.path, f"rank{self.rank}.npz")
        self.entry_file = os.path.join(self.path, "entry.json")

    def _entry_matches(self) -> bool:
        try:
            with open(self.entry_file) as f:
                return json.load(f) == self.entry_info
        except (OSError, ValueError):
            return False

    def load(self, comms, backend) -> LocalGraph | None:
        """Collective: this rank's LocalGraph from the cache, or None on every rank when any rank
        misses (no entry, a stale one, or an unreadable file)."""
        valid = self.comm.bcast(self._entry_matches() if self.rank == 0 else None, root=0)
        arrays, problem = {}, None
        if valid:
            try:
                with np.load(self.rank_file) as stored:
                    arrays = {name: stored[name] for name in stored.files}
                scalars = json.loads(str(arrays.pop("__scalars__")))
            except (OSError, ValueError, KeyError) as e:
                problem = f"rank {self.rank}: {e}"
        problems = [p for p in self.comm.allgather(problem) if p]
        if problems:
            runtime.log(f"partition cache {self.path} is unreadable ({problems[0]}); rebuilding")
        if not valid or problems:
            return None
        return LocalGraph(comms=comms, backend=backend, **scalars,
                          **{name: backend.asarray(a) for name, a in arrays.items()})

    def store(self, graph: LocalGraph) -> None:
        """Collective: write every rank's block, then the entry description (rank 0)."""
        arrays, scalars = {}, {}
        for name in _fields():
            value = getattr(graph, name)
            if name in ("row_ptr", "col_idx") and graph.row_major_shared:
                continue                  # the CSC itself: dbfs.build.add_row_major names it again
            if hasattr(value, "shape") and hasattr(value, "dtype"):
                arrays[name] = graph.backend.asnumpy(value)
            else:
                scalars[name] = value
        error = None
        if self.rank == 0:
            try:
                os.makedirs(self.path, exist_ok=True)
                edgelist.remove_quietly(self.entry_file)
            except OSError as e:
                error = f"cannot write the partition cache {self.path}: {e.strerror or e}"
        runtime.agree(error, self.comm)
        tmp = edgelist.temporary_name(self.rank_file) + ".npz"
        try:
            np.savez(tmp, __scalars__=np.array(json.dumps(scalars)), **arrays)
            os.replace(tmp, self.rank_file)
        except (OSError, TypeError) as e:
            error = f"cannot write the partition cache {self.rank_file}: {e}"
        finally:
            edgelist.remove_quietly(tmp)
        runtime.agree(error, self.comm)
        if self.rank == 0:
            tmp = edgelist.temporary_name(self.entry_file)
            try:
                with open(tmp, "w") as f:
                    json.dump(self.entry_info, f)
                os.replace(tmp, self.entry_file)
            except OSError as e:
                error = f"cannot write the partition cache {self.entry_file}: {e.strerror or e}"
            finally:
                edgelist.remove_quietly(tmp)
        runtime.agree(error, self.comm)

