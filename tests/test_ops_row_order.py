"""The rows' entries of the longest columns first (dbfs.ops.row_order): the NumPy twin against a plain
per-row selection, the GPU kernel against the twin (identical arrays)."""

from __future__ import annotations

import numpy as np
import pytest

from dbfs.backend import Backend
from dbfs.kernels import THREAD_EDGES
from dbfs.ops import arrays
from dbfs.ops.row_order import longest_columns_first
from dbfs.ops.sparse import held_offsets

pytestmark = pytest.mark.one_rank

CPU = Backend("cpu")


def block(rng, nrows, ncols, nnz, long_rows=()):
    """row_ptr, col_idx (rows in arbitrary order inside) and col_ptr of a block with skewed column
    lengths (many repeated lengths: ties) and a few rows longer than a warp."""
    rows = [rng.integers(0, nrows, nnz)]
    cols = [np.minimum(rng.zipf(1.5, nnz), ncols) - 1]
    for row, length in long_rows:
        rows.append(np.full(length, row))
        cols.append(rng.integers(0, ncols, length))
    rows, cols = np.concatenate(rows), np.concatenate(cols).astype(np.int32)
    shuffle = rng.permutation(rows.shape[0])
    rows, cols = rows[shuffle], cols[shuffle]
    order = np.argsort(rows, kind="stable")
    row_ptr = np.zeros(nrows + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=nrows), out=row_ptr[1:])
    col_ptr = np.zeros(ncols + 1, np.int64)
    np.cumsum(np.bincount(cols, minlength=ncols), out=col_ptr[1:])
    return row_ptr, cols[order].copy(), col_ptr


def plain_order(entries, col_ptr):
    """One row by the contract: the THREAD_EDGES longest columns' entries (ties: the earlier), then
    the k-th chosen trades places with position k."""
    entries = list(entries)
    length = [int(col_ptr[c + 1] - col_ptr[c]) for c in entries]
    chosen = sorted(range(len(entries)), key=lambda e: (-length[e], e))[:THREAD_EDGES]
    where = list(range(len(entries)))             # where[e]: the position of original entry e
    at = {e: e for e in range(len(entries))}      # at[position] = original entry there
    for k, e in enumerate(chosen):
        p = where[e]
        other = at[k]
        entries[k], entries[p] = entries[p], entries[k]
        at[k], at[p] = e, other
        where[e], where[other] = k, p
    return entries


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_twin_matches_plain_selection(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    monkeypatch.setattr(arrays, "TWIN_CHUNK", 64)         # many groups of rows
    row_ptr, col_idx, col_ptr = block(rng, 300, 500, 3000, long_rows=[(7, 90), (250, 40)])
    expected = np.concatenate([plain_order(col_idx[row_ptr[r]:row_ptr[r + 1]], col_ptr) for r in range(300)])
    before = col_idx.copy()
    longest_columns_first(CPU, row_ptr, col_idx, col_ptr)
    assert np.array_equal(col_idx, expected)
    for r in range(300):                                  # the same entries in every row
        s = slice(row_ptr[r], row_ptr[r + 1])
        assert np.array_equal(np.sort(col_idx[s]), np.sort(before[s]))


def test_front_is_longest_first():
    rng = np.random.default_rng(5)
    row_ptr, col_idx, col_ptr = block(rng, 1000, 2000, 20_000)
    longest_columns_first(CPU, row_ptr, col_idx, col_ptr)
    length = np.diff(col_ptr)[col_idx]
    for r in range(1000):
        row = length[row_ptr[r]:row_ptr[r + 1]]
        front = row[:THREAD_EDGES]
        assert np.all(np.diff(front) <= 0)
        assert row.shape[0] <= THREAD_EDGES or front[-1] >= row[THREAD_EDGES:].max()


def test_columns_held_by_position_give_the_same_order():
    """The column lengths read through the Positions of the non-empty columns (a hypersparse block's
    offsets, dbfs.ops.sparse.held_offsets): the order of every column's offsets."""
    rng = np.random.default_rng(6)
    row_ptr, col_idx, col_ptr = block(rng, 300, 32 * 40, 3000, long_rows=[(7, 90)])
    offsets, held = held_offsets(CPU, col_ptr)
    dense, by_position = col_idx.copy(), col_idx.copy()
    longest_columns_first(CPU, row_ptr, dense, col_ptr)
    longest_columns_first(CPU, row_ptr, by_position, offsets, held)
    assert held.count < 32 * 40 and np.array_equal(by_position, dense)


def test_empty_and_single_rows_unchanged():
    row_ptr = np.array([0, 0, 1, 1, 3], np.int64)
    col_idx = np.array([2, 0, 1], np.int32)
    col_ptr = np.array([0, 1, 4, 5], np.int64)              # column 1 the longest
    longest_columns_first(CPU, row_ptr, col_idx, col_ptr)
    assert col_idx.tolist() == [2, 1, 0]


@pytest.mark.gpu
@pytest.mark.parametrize("seed", [0, 1])
def test_gpu_matches_numpy(seed):
    import cupy
    rng = np.random.default_rng(seed)
    row_ptr, col_idx, col_ptr = block(rng, 40_000, 30_000, 600_000,
                                      long_rows=[(3, 5000), (33, 33), (34, 64), (39_999, 100_000)])
    host = col_idx.copy()
    longest_columns_first(CPU, row_ptr, host, col_ptr)
    dev = cupy.asarray(col_idx)
    gpu = Backend("gpu", 0)
    longest_columns_first(gpu, cupy.asarray(row_ptr), dev, cupy.asarray(col_ptr))
    assert np.array_equal(cupy.asnumpy(dev), host)
    padded = np.concatenate((col_ptr, np.full(16, col_ptr[-1])))     # 30,016 columns: whole words
    offsets, held = held_offsets(gpu, cupy.asarray(padded))     # the lengths through the non-empty columns
    dev = cupy.asarray(col_idx)
    longest_columns_first(gpu, cupy.asarray(row_ptr), dev, cupy.asarray(offsets), held)
    assert held.count < 30_000 and np.array_equal(cupy.asnumpy(dev), host)
