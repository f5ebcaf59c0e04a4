"""Keyed multiset hash of graph entries u -> v (global ids), from input tuples or from a CSC block: the
two sides of the construction certificate (dbfs.certificate; design.md "Validation").

An entry hashes to two independent keyed 64-bit mixes, mix(u, v, ka, kb) = fmix64(fmix64(u ^ ka) ^
(v + kb)) with MurmurHash3's finaliser fmix64, keyed by (k0, k1) and (k2, k3); a multiset to its
entry count and the two sums of mixes modulo 2^64, which do not depend on the order of the entries or
on how they are spread over ranks and calls. GPU: kernels/certificate.cu (per-thread sums, a warp
reduction and one atomicAdd per warp and word); NumPy twins below with the same contract.
"""

from __future__ import annotations

import numpy as np

from dbfs.arrays import fmix64
from dbfs.kernels import BLOCK_THREADS as THREADS
from dbfs.ops.arrays import TWIN_CHUNK, blocks_for, require_array, require_offsets
from dbfs.ops.sparse import held_args

ENTRIES_PER_THREAD = 16       # CSC entries a thread of hash_entries walks after one binary search


def _add_entries(acc: np.ndarray, u: np.ndarray, v: np.ndarray, keys) -> None:
    """acc += (count, first mix sum, second mix sum) of the entries u -> v (uint64 arrays)."""
    k0, k1, k2, k3 = (np.uint64(k) for k in keys)
    first = fmix64(fmix64(u ^ k0) ^ (v + k1))
    second = fmix64(fmix64(u ^ k2) ^ (v + k3))
    acc += np.array([u.shape[0], first.sum(dtype=np.uint64), second.sum(dtype=np.uint64)], np.uint64)


def _check_acc(acc, keys) -> None:
    require_array("acc", acc, np.uint64)
    if acc.shape[0] != 3 or len(keys) != 4:
        raise ValueError(f"acc must be uint64 [3] and keys four integers, got {acc.shape} and {keys}")


def hash_tuples(backend, src, dst, both_ways: bool, keys, acc) -> None:
    """acc += the hash of the entries of the tuples (src[e], dst[e]) with src[e] != dst[e]: the entry
    src -> dst, and dst -> src as well when both_ways.

      src, dst  int64 [n]   read   global vertex ids
      keys      four integers in [0, 2^64)
      acc       uint64 [3]  read/write   (entries, first mix sum, second mix sum), sums mod 2^64
    GPU: one kernel on the current stream, no host synchronisation.
    """
    _check_acc(acc, keys)
    n = int(src.shape[0])
    if backend.is_gpu:
        require_array("src", src, np.int64)
        require_array("dst", dst, np.int64)
        if n:
            backend.kernel("certificate", "hash_tuples")(
                (blocks_for(n, THREADS),), (THREADS,),
                (src, dst, np.int64(n), np.int32(both_ways), *(np.uint64(k) for k in keys), acc))
        return
    for lo in range(0, n, TWIN_CHUNK):
        a = src[lo:lo + TWIN_CHUNK].view(np.uint64)
        b = dst[lo:lo + TWIN_CHUNK].view(np.uint64)
        kept = a != b
        a, b = a[kept], b[kept]
        _add_entries(acc, a, b, keys)
        if both_ways:
            _add_entries(acc, b, a, keys)


def global_ids(local, segments) -> np.ndarray:
    """NumPy twin of certificate.cu global_id: base + (local // length) * stride + local % length, as
    uint64, for segments = (base, length, stride) (dbfs.grid.Grid.global_col_segments, global_row_segments)."""
    base, length, stride = segments
    local = local.astype(np.int64)
    return (base + (local // length) * stride + local % length).view(np.uint64)


def hash_entries(backend, col_ptr, row_idx, col_segments, row_segments, keys, acc, columns=None) -> None:
    """acc += the hash of the CSC entries global(c) -> global(row_idx[e]) of every column c and entry e
    in col_ptr[c] .. col_ptr[c + 1], the global ids by the block's local-to-global maps.

      col_ptr       int32/int64 [ncols + 1]  read   offsets (of the columns held by the Positions `columns`,
                                                    where given: entry e's column is the member at the
                                                    position whose offsets hold e)
      row_idx       int32 [nnz]        read   local rows
      col_segments  (base, length, stride) of the local columns (Grid.global_col_segments)
      row_segments  the same of the local rows (Grid.global_row_segments)
      keys, acc as in hash_tuples
    GPU: one kernel on the current stream, no host synchronisation.
    """
    _check_acc(acc, keys)
    nnz, ncols = int(row_idx.shape[0]), int(col_ptr.shape[0]) - 1
    if backend.is_gpu:
        offsets = require_offsets("col_ptr", col_ptr)
        require_array("row_idx", row_idx, np.int32)
        if nnz:
            backend.kernel("certificate", "hash_entries", offsets)(
                (blocks_for(-(-nnz // ENTRIES_PER_THREAD), THREADS),), (THREADS,),
                (col_ptr, np.int64(ncols), *held_args(columns),
                 np.int64(0 if columns is None else columns.words.shape[0]), row_idx, np.int64(nnz),
                 *(np.int64(x) for x in col_segments),
                 *(np.int64(x) for x in row_segments), np.int32(ENTRIES_PER_THREAD),
                 *(np.uint64(k) for k in keys), acc))
        return
    for lo in range(0, nnz, TWIN_CHUNK):
        entries = np.arange(lo, min(lo + TWIN_CHUNK, nnz), dtype=np.int64)
        local_columns = np.searchsorted(col_ptr, entries, side="right") - 1
        if columns is not None:                 # positions, whose members are the columns
            local_columns = columns.member(local_columns)
        _add_entries(acc, global_ids(local_columns, col_segments), global_ids(row_idx[entries], row_segments), keys)
