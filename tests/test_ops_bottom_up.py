"""Operators of the direction-optimizing BFS and of the message encodings: offset sets as lists and
bitmaps (dbfs.ops.bitmap), the bottom-up segment search and commit (dbfs.ops.bottom_up), and parent
resolution of vertices found bottom-up. NumPy twins against brute force, GPU kernels against the twins
(identical outputs: both take the first frontier entry of a row in CSR order)."""

from __future__ import annotations

import numpy as np
import pytest

from dbfs.backend import Backend
from dbfs.build import transpose_csc
from dbfs.ops import bitmap, bottom_up
from dbfs.ops.predecessors import resolve_parents

CPU = Backend("cpu")


def gpu_backend():
    return Backend("gpu", 0)


def random_offsets(rng, nbits, n):
    return rng.integers(0, nbits, n).astype(np.int32)


def random_bits(rng, nbits, density):
    bits = rng.random(nbits) < density
    return np.packbits(bits, bitorder="little").view(np.uint32).copy(), np.flatnonzero(bits)


@pytest.mark.parametrize("nbits, n", [(32, 0), (64, 5), (4096, 4096), (1 << 16, 300)])
def test_pack_unpack_round_trip(nbits, n):
    rng = np.random.default_rng(nbits + n)
    offsets = random_offsets(rng, nbits, n)
    words = np.full(nbits // 32, 0xDEADBEEF, np.uint32)
    bitmap.pack(CPU, offsets, words)
    expected = np.zeros(nbits, bool)
    expected[offsets] = True
    assert np.array_equal(np.unpackbits(words.view(np.uint8), bitorder="little").astype(bool), expected)
    out, counter = np.full(nbits, -1, np.int32), np.zeros(1, np.int32)
    bitmap.unpack(CPU, words, out, counter)
    assert counter[0] == expected.sum()
    assert np.array_equal(out[:counter[0]], np.flatnonzero(expected))


def random_block(rng, nrows, ncols, nnz, heavy_rows=()):
    """A CSC block and its CSR, with a few rows of very high degree (warp-cooperative path)."""
    rows = [rng.integers(0, nrows, nnz)]
    cols = [rng.integers(0, ncols, nnz)]
    for row, degree in heavy_rows:
        rows.append(np.full(degree, row))
        cols.append(rng.integers(0, ncols, degree))
    rows, cols = np.concatenate(rows).astype(np.int32), np.concatenate(cols)
    order = np.argsort(cols, kind="stable")
    col_ptr = np.zeros(ncols + 1, np.int64)
    np.cumsum(np.bincount(cols, minlength=ncols), out=col_ptr[1:])
    row_ptr, col_idx = transpose_csc(CPU, col_ptr, rows[order], nrows)
    return row_ptr, col_idx


def brute_force_parents(row_ptr, col_idx, frontier_bits, rows):
    """For each row: the set of its frontier neighbours."""
    return {int(r): {int(u) for u in col_idx[row_ptr[r]:row_ptr[r + 1]] if frontier_bits[u]} for r in rows}


@pytest.mark.parametrize("density", [0.001, 0.05, 0.5])
def test_search_segment_numpy_matches_brute_force(density):
    rng = np.random.default_rng(int(density * 1000))
    b, C, ncols, m = 256, 3, 512, 1
    row_ptr, col_idx = random_block(rng, C * b, ncols, 6000, heavy_rows=[(m * b + 5, 300)])
    frontier, front_ids = random_bits(rng, ncols, density)
    state, _ = random_bits(rng, b, 0.3)
    before = state.copy()
    pred_row = np.full(C * b, -1, np.int32)
    stats = np.zeros(3, np.int64)
    bottom_up.search_segment(CPU, row_ptr, col_idx, m * b, frontier, state, pred_row, stats)

    frontier_bits = np.zeros(ncols, bool)
    frontier_bits[front_ids] = True
    was = np.unpackbits(before.view(np.uint8), bitorder="little").astype(bool)
    now = np.unpackbits(state.view(np.uint8), bitorder="little").astype(bool)
    parents = brute_force_parents(row_ptr, col_idx, frontier_bits, m * b + np.flatnonzero(~was))
    assert np.array_equal(now & ~was, np.isin(np.arange(b), [r - m * b for r, p in parents.items() if p]))
    assert np.all(now[was])
    for r, candidates in parents.items():
        assert (pred_row[r] in candidates) if candidates else pred_row[r] == -1
    outside = np.ones(C * b, bool)
    outside[m * b + np.flatnonzero(~was)] = False
    assert np.all(pred_row[outside] == -1)
    assert stats[2] <= sum(row_ptr[r + 1] - row_ptr[r] for r in parents) and stats[2] > 0


def test_commit_numpy():
    rng = np.random.default_rng(5)
    b = 1024
    visited, visited_ids = random_bits(rng, b, 0.3)
    state = visited | random_bits(rng, b, 0.2)[0]
    degree = rng.integers(0, 50, b).astype(np.int32)
    level, pred_col = np.full(b, -1, np.int32), np.full(b, -1, np.int32)
    level[visited_ids] = 1
    pred_col[visited_ids] = 0
    nxt, stats = np.zeros(b // 32, np.uint32), np.zeros(3, np.int64)
    old = visited.copy()
    bottom_up.commit(CPU, state, visited, nxt, level, pred_col, degree, 3, stats)
    fresh = np.flatnonzero(np.unpackbits((state & ~old).view(np.uint8), bitorder="little"))
    assert np.array_equal(visited, state) and np.array_equal(nxt, state & ~old)
    assert np.all(level[fresh] == 3) and np.all(pred_col[fresh] == bottom_up.BOTTOM_UP)
    assert stats.tolist() == [fresh.shape[0], int(degree[fresh].sum()), 0]
    assert np.all(level[visited_ids] == 1)


def test_resolve_parents_bottom_up_takes_the_finder():
    b, C, cols = 64, 3, 1000
    pred_col = np.full(b, -1, np.int32)
    gathered = np.full(C * b, -1, np.int32)
    pred_col[:C] = bottom_up.BOTTOM_UP
    for o in range(C):
        gathered[o * b + o] = 10 + o            # only column o found offset o
    pred_col[10] = 1                            # a top-down discovery by column 1
    gathered[1 * b + 10] = 7
    gathered[0 * b + 10] = 99                   # another column's candidate: not the recorded one
    parent = np.empty(b, np.int64)
    resolve_parents(CPU, pred_col, gathered, b, cols, parent)
    assert parent[:C].tolist() == [o * cols + 10 + o for o in range(C)]
    assert parent[10] == cols + 7 and np.all(parent[C:10] == -1)


@pytest.mark.gpu
@pytest.mark.parametrize("nbits, n", [(32, 0), (1 << 20, 1000), (1 << 20, 900_000)])
def test_gpu_bitmap_matches_numpy(nbits, n):
    import cupy
    rng = np.random.default_rng(n)
    offsets = random_offsets(rng, nbits, n)
    expected = np.empty(nbits // 32, np.uint32)
    bitmap.pack(CPU, offsets, expected)
    words = cupy.full(nbits // 32, 7, cupy.uint32)
    bitmap.pack(gpu_backend(), cupy.asarray(offsets), words)
    assert np.array_equal(cupy.asnumpy(words), expected)
    out, counter = cupy.full(nbits, -1, cupy.int32), cupy.zeros(1, cupy.int32)
    bitmap.unpack(gpu_backend(), words, out, counter)
    k = int(counter[0])
    assert k == len(np.unique(offsets))
    assert np.array_equal(np.sort(cupy.asnumpy(out[:k])), np.unique(offsets))


@pytest.mark.gpu
@pytest.mark.parametrize("density", [0.0005, 0.02, 0.4])
def test_gpu_bottom_up_matches_numpy(density):
    import cupy
    rng = np.random.default_rng(int(density * 10000))
    b, C, ncols, m = 1 << 14, 2, 1 << 15, 1
    row_ptr, col_idx = random_block(rng, C * b, ncols, 400_000,
                                    heavy_rows=[(m * b + 3, 5000), (m * b + 40, 33), (m * b + 41, 2000)])
    frontier, _ = random_bits(rng, ncols, density)
    state, _ = random_bits(rng, b, 0.3)
    degree = rng.integers(0, 100, b).astype(np.int32)
    host = dict(state=state.copy(), pred_row=np.full(C * b, -1, np.int32), stats=np.zeros(3, np.int64),
                visited=state.copy(), next=np.zeros(b // 32, np.uint32), level=np.full(b, -1, np.int32),
                pred_col=np.full(b, -1, np.int32))
    dev = {k: cupy.asarray(v) for k, v in host.items()}
    for backend, s in ((CPU, host), (gpu_backend(), dev)):
        xp = backend.xp
        bottom_up.search_segment(backend, xp.asarray(row_ptr), xp.asarray(col_idx), m * b,
                                 xp.asarray(frontier), s["state"], s["pred_row"], s["stats"])
        bottom_up.commit(backend, s["state"], s["visited"], s["next"], s["level"], s["pred_col"],
                         xp.asarray(degree), 4, s["stats"])
    for k, v in host.items():
        assert np.array_equal(cupy.asnumpy(dev[k]), v), k


@pytest.mark.gpu
def test_gpu_transpose_matches_numpy():
    import cupy
    rng = np.random.default_rng(9)
    nrows, ncols = 5000, 3000
    cols = np.sort(rng.integers(0, ncols, 100_000))
    rows = rng.integers(0, nrows, 100_000).astype(np.int32)
    col_ptr = np.zeros(ncols + 1, np.int64)
    np.cumsum(np.bincount(cols, minlength=ncols), out=col_ptr[1:])
    row_ptr, col_idx = transpose_csc(CPU, col_ptr, rows, nrows)
    g_ptr, g_idx = transpose_csc(gpu_backend(), cupy.asarray(col_ptr), cupy.asarray(rows), nrows)
    assert np.array_equal(cupy.asnumpy(g_ptr), row_ptr)
    g_idx = cupy.asnumpy(g_idx)
    for r in rng.integers(0, nrows, 200):
        assert np.array_equal(np.sort(g_idx[row_ptr[r]:row_ptr[r + 1]]), col_idx[row_ptr[r]:row_ptr[r + 1]])
