"""The partition cache (--partition-cache DIR): each rank's built CSC block kept on disk and reused by
later runs on the same graph and grid instead of reading the edges and building again (kernel 1).

Key: a BLAKE2b digest of the graph's content key (dbfs.source.GraphSource.content_key: the content
hash a converted file carries, the generator parameters of a generated graph, or a sampled digest),
n, m, the grid R x C, the storage (both directions or out-edges only), whether the graph is a file,
and the cache format (its version, raised where the stored arrays' contents change: 2 since the
row-major copy holds each row's entries of the longest columns first, dbfs.ops.row_order; and the field
names of dbfs.graph.LocalGraph, so a change of the graph state invalidates old entries).
Entry DIR/<key>/: rank<r>.npz per rank (its LocalGraph arrays, and its scalar fields as JSON) and
entry.json, written by rank 0 after every rank has stored its file, holding the key's inputs, the
graph file's size and modification time, and a checksum of every rank's file (CRC32 of each 16 MiB
piece, computed by several threads, digested together). An entry is reused when entry.json matches (a
graph file rewritten in place is stale even if its content key is not) and every rank finds its file
with its checksum; otherwise every rank builds, and the entry is rewritten. A damaged entry (entry.json
or a rank's file truncated, emptied or changed) is reported as a warning and rebuilt. A graph file
rewritten with its size and modification time kept (and no content hash) escapes the key; the run's
construction certificate finds the loaded blocks wrong and the run builds them again (dbfs.bfs_benchmark).
Files are written under temporary names and renamed. A cache that cannot be written (a read-only or full
file system, a path that is not a directory) is a warning: the run goes on with the graph it built, and
no incomplete entry is left behind.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import zipfile
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from dbfs import edgelist, runtime
from dbfs.graph import LocalGraph
from dbfs.ops.sparse import Positions, word_starts

_FORMAT = "dbfs-partition-cache-4"        # 4: a hypersparse block's offsets by its non-empty columns
_NOT_STORED = ("comms", "backend", "columns")   # the columns' Positions: by their words (_COLUMN_WORDS)
_COLUMN_WORDS = "column_words"
_CHECKSUM_PIECE = 16 << 20
# what np.load raises on a damaged .npz besides the checksum mismatch found first
_UNREADABLE = (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile)


def _fields() -> list[str]:
    return [f.name for f in dataclasses.fields(LocalGraph) if f.name not in _NOT_STORED]


def _crc(path: str, offset: int, size: int) -> int:
    with open(path, "rb") as f:
        f.seek(offset)
        return zlib.crc32(f.read(min(_CHECKSUM_PIECE, size - offset)))   # read(n) takes n bytes first


def file_checksum(path: str, threads: int) -> str:
    """The checksum of a file: CRC32 of every 16 MiB piece (threads read and check the pieces, zlib
    releases the GIL) digested together with the file's size."""
    size = os.path.getsize(path)
    with ThreadPoolExecutor(threads) as pool:
        crcs = list(pool.map(lambda offset: _crc(path, offset, size), range(0, size, _CHECKSUM_PIECE)))
    return hashlib.blake2b(json.dumps([size, crcs]).encode(), digest_size=16).hexdigest()


class PartitionCache:
    """Collective object: every rank of `comm` constructs it with the same arguments."""

    def __init__(self, directory: str, source, grid, comm=runtime.WORLD):
        self.comm, self.rank = comm, comm.Get_rank()
        self.threads = edgelist.io_threads(runtime.local_rank()[1])
        problem = None
        if self.rank == 0:
            try:
                os.makedirs(directory, exist_ok=True)
            except FileExistsError:
                problem = f"cannot use the partition cache {directory} (it is not a directory): the graph is built"
            except OSError as e:
                problem = f"cannot use the partition cache {directory} ({e.strerror or e}): the graph is built"
        self.usable = comm.bcast(problem, root=0) is None
        if problem:
            runtime.warn(problem)
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

    def _entry(self) -> tuple[list | None, str | None]:
        """The checksums of the rank files from entry.json when it describes this key's graph, and what is
        wrong with entry.json when it is damaged (None when it is absent, or stale: a description of
        another state of the graph file, written by an earlier run)."""
        try:
            with open(self.entry_file) as f:
                entry = json.load(f)
        except FileNotFoundError:
            return None, None
        except OSError as e:
            return None, f"entry.json: {e.strerror or e}"
        except ValueError as e:
            return None, f"entry.json is not JSON: {e}"
        if not isinstance(entry, dict):
            return None, "entry.json is not an entry description"
        checksums = entry.pop("checksums", None)
        if (entry.keys() != self.entry_info.keys() or not isinstance(checksums, list)
                or len(checksums) != self.comm.Get_size()
                or any(entry[k] != v for k, v in self.entry_info.items() if k != "file")):
            return None, "entry.json does not describe this entry"
        return (checksums, None) if entry["file"] == self.entry_info["file"] else (None, None)

    def load(self, comms, backend) -> LocalGraph | None:
        """Collective: this rank's LocalGraph from the cache, or None on every rank when any rank
        misses (no entry or a stale one: silently; a damaged file: with a warning, and rebuilt)."""
        checksums, problem = self._entry() if self.usable and self.rank == 0 else (None, None)
        checksums, problem = self.comm.bcast((checksums, problem), root=0)
        if problem:
            return self._damaged(problem)
        if checksums is None:
            return None
        arrays = {}
        try:
            if file_checksum(self.rank_file, self.threads) != checksums[self.rank]:
                problem = f"rank {self.rank}: {self.rank_file} does not match its checksum"
            else:
                with np.load(self.rank_file) as stored:
                    arrays = {name: stored[name] for name in stored.files}
                scalars = json.loads(str(arrays.pop("__scalars__")))
        except _UNREADABLE as e:
            problem = f"rank {self.rank}: {e}"
        problems = [p for p in self.comm.allgather(problem) if p]
        if problems:
            return self._damaged(problems[0])
        words = arrays.pop(_COLUMN_WORDS, None)
        graph = LocalGraph(comms=comms, backend=backend, **scalars,
                           **{name: backend.asarray(a) for name, a in arrays.items()})
        if words is not None:                   # the offsets of the non-empty columns, as built
            words = backend.asarray(words)
            starts = backend.xp.empty(words.shape[0] + 1, backend.xp.int32)
            graph.columns = Positions(words, starts, word_starts(backend, words, starts))
        graph.narrow_offsets()
        return graph

    def _damaged(self, problem: str) -> None:
        """Say that the entry is damaged; the run builds the graph (load's None) and stores it again."""
        runtime.warn(f"the partition cache entry {self.path} is damaged ({problem}); rebuilding it")

    def store(self, graph: LocalGraph) -> bool:
        """Collective: write every rank's block, then the entry description with the checksums (rank 0).
        Returns whether the entry was stored; when any rank fails, a warning says why and the entry is
        removed (the run goes on with the graph it has)."""
        if not self.usable:
            return False
        arrays, scalars = {}, {}
        if graph.columns is not None:
            arrays[_COLUMN_WORDS] = graph.backend.asnumpy(graph.columns.words)
        for name in _fields():
            value = getattr(graph, name)
            if name in ("row_ptr", "col_idx") and graph.row_major_shared:
                continue                  # the CSC itself: dbfs.build.add_row_major names it again
            if hasattr(value, "shape") and hasattr(value, "dtype"):
                arrays[name] = graph.backend.asnumpy(value)
            else:
                scalars[name] = value
        problem = None
        if self.rank == 0:
            try:
                os.makedirs(self.path, exist_ok=True)
                edgelist.remove_quietly(self.entry_file)
            except OSError as e:
                problem = f"rank 0: {e.strerror or e}"
        problem = self.comm.bcast(problem, root=0)
        if problem is None and not os.path.isdir(self.path):
            problem = (f"rank {self.rank} does not see the directory {self.path} that rank 0 made (the cache must be "
                       "on a file system that every rank shares)")
        checksum = None
        if problem is None:
            tmp = edgelist.temporary_name(self.rank_file) + ".npz"
            try:
                np.savez(tmp, __scalars__=np.array(json.dumps(scalars)), **arrays)
                checksum = file_checksum(tmp, self.threads)
                os.replace(tmp, self.rank_file)
            except (OSError, TypeError) as e:
                problem = f"rank {self.rank}: {e}"
            finally:
                edgelist.remove_quietly(tmp)
        problems = [p for p in self.comm.allgather(problem) if p]
        checksums = self.comm.gather(checksum, root=0)
        if not problems and self.rank == 0:
            tmp = edgelist.temporary_name(self.entry_file)
            try:
                with open(tmp, "w") as f:
                    json.dump({**self.entry_info, "checksums": checksums}, f)
                os.replace(tmp, self.entry_file)
            except OSError as e:
                problems = [f"rank 0: {e}"]
            finally:
                edgelist.remove_quietly(tmp)
        problems = self.comm.bcast(problems, root=0)
        if problems:                    # every rank is done with its file (the allgather above)
            if self.rank == 0:
                shutil.rmtree(self.path, ignore_errors=True)
                runtime.warn(f"cannot write the partition cache {self.path} ({problems[0]}): the run goes on "
                             "without it")
        return not problems
