"""Operators of the direction-optimizing BFS and of the message encodings: offset sets as lists and
bitmaps (dbfs.ops.bitmap), the bottom-up segment search and commit (dbfs.ops.bottom_up), and parent
resolution of vertices found bottom-up. NumPy twins against brute force, GPU kernels against the twins
(identical outputs: both take the first frontier entry of a row in CSR order)."""

from __future__ import annotations

import numpy as np
import pytest

from dbfs.backend import Backend
from dbfs.build import transpose_csc
from dbfs.grid import Grid
from dbfs.kernels import (BOTTOM_UP, CTL, CTL_WORDS, FORM, STAT, STAT_WORDS, STEP, SUMMARY, SUMMARY_SPARSE,
                          SUMMARY_TALLY_WORDS)
from dbfs.ops import arrays, bitmap, bottom_up
from dbfs.ops.predecessors import resolve_parents
from dbfs.ops.sparse import held_offsets

pytestmark = pytest.mark.one_rank

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
    bitmap.pack(CPU, offsets, n, words)
    expected = np.zeros(nbits, bool)
    expected[offsets] = True
    assert np.array_equal(np.unpackbits(words.view(np.uint8), bitorder="little").astype(bool), expected)
    out, counter = np.full(nbits, -1, np.int32), np.zeros(1, np.int32)
    bitmap.unpack(CPU, words, out, counter)
    assert counter[0] == expected.sum()
    assert np.array_equal(out[:counter[0]], np.flatnonzero(expected))
    col_ptr = column_offsets(rng, nbits)
    kept = np.flatnonzero(expected & (np.diff(col_ptr) > 0))
    for offsets, columns in ((col_ptr, None), held_offsets(CPU, col_ptr)):   # every column's, the held ones'
        bitmap.unpack(CPU, words, out, counter, col_ptr=offsets, columns=columns)
        assert counter[0] == kept.shape[0] and np.array_equal(out[:counter[0]], kept)


def column_offsets(rng, ncols):
    """col_ptr of a block whose columns are empty with probability one half."""
    return np.concatenate([[0], np.cumsum(rng.integers(0, 2, ncols) * rng.integers(1, 4, ncols))]).astype(np.int64)


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
def test_search_segment_numpy_steps_change_nothing(density, monkeypatch):
    """The twin's steps of TWIN_ITEMS rows and groups of about TWIN_CHUNK entries bound its temporaries
    only: one word a step and a few entries a group (the heavy row a group of its own) give the same
    state, parents and count as one step for everything."""
    rng = np.random.default_rng(7)
    b, ncols = 256, 512
    row_ptr, col_idx = random_block(rng, 2 * b, ncols, 6000, heavy_rows=[(b + 5, 300)])
    frontier, _ = random_bits(rng, ncols, density)
    before, _ = random_bits(rng, b, 0.3)
    results = []
    for items, entries in ((1 << 20, 1 << 20), (32, 7)):
        monkeypatch.setattr(bottom_up, "TWIN_ITEMS", items)
        monkeypatch.setattr(arrays, "TWIN_CHUNK", entries)
        state, pred_row = np.zeros_like(before), np.full(2 * b, -1, np.int32)
        stats = np.zeros(STAT_WORDS, np.int64)
        bottom_up.search_segment(CPU, row_ptr, col_idx, b, frontier, before, state, pred_row, stats)
        results.append((state, pred_row, int(stats[STAT.CHECKED])))
    assert np.array_equal(results[0][0], results[1][0]) and np.array_equal(results[0][1], results[1][1])
    assert results[0][2] == results[1][2]


def test_search_segment_by_position_writes_the_dense_finds_at_their_positions():
    """pred_row and the rows' offsets held by the positions of the rows with an entry."""
    rng = np.random.default_rng(3)
    b, C, ncols = 256, 3, 512
    row_ptr, col_idx = random_block(rng, C * b, ncols, 300, heavy_rows=[(b + 5, 300)])
    frontier, _ = random_bits(rng, ncols, 0.3)
    before, _ = random_bits(rng, b, 0.3)
    held_ptr, held = held_offsets(CPU, row_ptr)   # the offsets too (a hypersparse block's columns)
    assert held.count < C * b                   # rows without an entry are not held
    finds = []
    for ptr, found_at in ((row_ptr, None), (held_ptr, held)):
        state, stats = np.zeros_like(before), np.zeros(STAT_WORDS, np.int64)
        pred_row = np.full(C * b if found_at is None else held.count, -1, np.int32)
        bottom_up.search_segment(CPU, ptr, col_idx, b, frontier, before, state, pred_row, stats,
                                 found_at=found_at, rows_held=found_at)
        finds.append(pred_row)
    nonempty = np.flatnonzero(np.diff(row_ptr))
    assert np.array_equal(finds[0][nonempty], finds[1]) and (finds[0][np.diff(row_ptr) == 0] == -1).all()


def test_search_segment_shared_keeps_what_other_ranks_set():
    """shared (the owner's state, searched by the grid row's ranks at once): the search ORs the rows it
    finds into the owner's state, so the rows another rank found there meanwhile stay found; a plain search
    stores the state it read, with its finds, over them."""
    rng = np.random.default_rng(5)
    b, ncols = 256, 512
    row_ptr, col_idx = random_block(rng, 2 * b, ncols, 3000)
    frontier, _ = random_bits(rng, ncols, 0.05)
    before, _ = random_bits(rng, b, 0.3)
    others, _ = random_bits(rng, b, 0.1)
    states = []
    for shared in (False, True):
        state = others.copy()
        bottom_up.search_segment(CPU, row_ptr, col_idx, b, frontier, before, state, np.full(2 * b, -1, np.int32),
                                 np.zeros(STAT_WORDS, np.int64), shared=shared)
        states.append(state)
    assert np.array_equal(states[1], others | (states[0] & ~before)) and (states[0] & others != others).any()


@pytest.mark.parametrize("stale", [False, True], ids=["in-turn", "stale-reads"])
def test_segment_searched_in_place_ends_as_the_rotation_does(stale):
    """A grid row's C blocks search one owner's segment: with the rotation (each block's search from the
    state the one before left) and in place (shared), where a block may read the state before the
    others' finds have reached it (stale). The final state is the same -- the owner's visited rows and
    every other row with a frontier neighbour in some block -- and every parent a block records is a
    frontier neighbour of its row in that block; in place, a row may be found by several blocks."""
    rng = np.random.default_rng(11)
    b, C, ncols = 256, 4, 512
    blocks = [random_block(rng, C * b, ncols, 2500) for _ in range(C)]
    fronts = [random_bits(rng, ncols, 0.02) for _ in range(C)]
    visited, _ = random_bits(rng, b, 0.3)
    m = 2                                       # the owner's segment: local rows m*b .. (m+1)*b - 1

    def search(k, state_in, state_out, shared):
        pred_row = np.full(C * b, -1, np.int32)
        bottom_up.search_segment(CPU, *blocks[k], m * b, fronts[k][0], state_in, state_out, pred_row,
                                 np.zeros(STAT_WORDS, np.int64), shared=shared)
        return pred_row

    state = visited.copy()
    for k in range(C):
        search(k, state.copy(), state, shared=False)
    rotated = state

    segment = visited.copy()
    snapshot = segment.copy()                   # what a block reads before any other's finds (stale)
    finds = [search(k, snapshot.copy() if stale else segment.copy(), segment, shared=True) for k in range(C)]
    assert np.array_equal(segment, rotated)
    was = np.unpackbits(visited.view(np.uint8), bitorder="little").astype(bool)
    for k, pred_row in enumerate(finds):
        frontier_bits = np.zeros(ncols, bool)
        frontier_bits[fronts[k][1]] = True
        found = np.flatnonzero(pred_row >= 0)
        assert not was[found - m * b].any()
        parents = brute_force_parents(*blocks[k], frontier_bits, found)
        assert all(pred_row[r] in parents[r] for r in found)
    if stale:                                   # several blocks found some rows at once
        assert (sum((pred_row >= 0).astype(int) for pred_row in finds) > 1).any()


def test_search_segments_finds_every_segment_row_with_a_frontier_neighbour():
    """search_segments (the sub-steps of a level searched in the segments' owners' memory): a row is
    searched where its bit is clear in both its segment's state and its owner's visited bits; the state
    ends as it was plus every such row with a frontier neighbour in the block (the visited bits are not
    copied into it), each found row's parent one of those neighbours."""
    rng = np.random.default_rng(12)
    b, C, ncols = 256, 4, 512
    row_ptr, col_idx = random_block(rng, C * b, ncols, 5000, heavy_rows=[(2 * b + 9, 400)])
    frontier, front_cols = random_bits(rng, ncols, 0.03)
    frontier_bits = np.zeros(ncols, bool)
    frontier_bits[front_cols] = True
    order = [2, 3, 0]                           # the sub-steps' segments, as a rank after its own (1) takes them
    visited = {m: random_bits(rng, b, 0.3)[0] for m in order}
    befores = {m: random_bits(rng, b, 0.05)[0] for m in order}     # rows found earlier in the search
    states = {m: befores[m].copy() for m in order}
    pred_row = np.full(C * b, -1, np.int32)
    stats = np.zeros(STAT_WORDS, np.int64)
    steps = bottom_up.SegmentSteps(CPU, [states[m] for m in order], [visited[m] for m in order],
                                   [m * b for m in order])
    bottom_up.search_segments(CPU, row_ptr, col_idx, steps, frontier, pred_row, stats)
    for m in order:
        was = np.unpackbits((befores[m] | visited[m]).view(np.uint8), bitorder="little").astype(bool)
        now = np.unpackbits(states[m].view(np.uint8), bitorder="little").astype(bool)
        rows = m * b + np.flatnonzero(~was)
        parents = brute_force_parents(row_ptr, col_idx, frontier_bits, rows)
        found = {int(r) for r in rows if parents[r]}
        assert np.array_equal(states[m], befores[m] | np.packbits(
            np.isin(m * b + np.arange(b), list(found)), bitorder="little").view(np.uint32))
        assert found == {int(r) for r in m * b + np.flatnonzero(now & ~was)}
        assert all(pred_row[r] in parents[r] for r in rows if parents[r])
        assert (pred_row[m * b + np.flatnonzero(was)] == -1).all()
    assert (pred_row[b:2 * b] == -1).all() and stats[STAT.CHECKED] > 0


def test_segment_steps_refuse_segments_of_different_lengths():
    with pytest.raises(ValueError, match="differ in length"):
        bottom_up.SegmentSteps(CPU, [np.zeros(4, np.uint32), np.zeros(5, np.uint32)], [np.zeros(4, np.uint32)] * 2,
                               [0, 128])
    with pytest.raises(ValueError, match="differ in length"):
        bottom_up.SegmentSteps(CPU, [np.zeros(4, np.uint32)], [np.zeros(5, np.uint32)], [0])
    with pytest.raises(ValueError, match="without its owner's visited bits"):
        bottom_up.SegmentSteps(CPU, [np.zeros(4, np.uint32)] * 2, [np.zeros(4, np.uint32)], [0, 128])


def test_search_segment_refuses_finds_held_apart_from_the_pointers():
    """The _held kernels take one Positions for both where both are held."""
    rng = np.random.default_rng(4)
    row_ptr, col_idx = random_block(rng, 64, 64, 100)
    held_ptr, held = held_offsets(CPU, row_ptr)
    _, other = held_offsets(CPU, row_ptr)
    state = np.zeros(2, np.uint32)
    with pytest.raises(ValueError, match="different Positions"):
        bottom_up.search_segment(CPU, held_ptr, col_idx, 0, np.zeros(2, np.uint32), state, state,
                                 np.full(held.count, -1, np.int32), np.zeros(STAT_WORDS, np.int64),
                                 found_at=other, rows_held=held)


@pytest.mark.parametrize("density", [0.001, 0.05, 0.5])
def test_search_segment_numpy_matches_brute_force(density):
    rng = np.random.default_rng(int(density * 1000))
    b, C, ncols, m = 256, 3, 512, 1
    row_ptr, col_idx = random_block(rng, C * b, ncols, 6000, heavy_rows=[(m * b + 5, 300)])
    frontier, front_ids = random_bits(rng, ncols, density)
    state, _ = random_bits(rng, b, 0.3)
    before = state.copy()
    pred_row = np.full(C * b, -1, np.int32)
    stats = np.zeros(STAT_WORDS, np.int64)
    state = np.full_like(before, 0xDEADBEEF)
    bottom_up.search_segment(CPU, row_ptr, col_idx, m * b, frontier, before, state, pred_row, stats)

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
    checked = stats[STAT.CHECKED]
    assert checked <= sum(row_ptr[r + 1] - row_ptr[r] for r in parents) and checked > 0


@pytest.mark.parametrize("nwords, nonzero", [(1, 0), (1, 1), (40, 5), (40, 6), (4096, 512), (4096, 513)])
def test_summary_numpy_marks_the_nonzero_words(nwords, nonzero):
    """A summary bit for each nonzero word; FILTER exactly where at most one word in SUMMARY_SPARSE is."""
    rng = np.random.default_rng(nwords + nonzero)
    frontier = np.zeros(nwords, np.uint32)
    set_words = rng.choice(nwords, nonzero, replace=False)
    frontier[set_words] = rng.integers(1, 1 << 32, nonzero, dtype=np.uint64).astype(np.uint32)
    summary = np.full(bottom_up.summary_words(nwords), 0xDEADBEEF, np.uint32)
    bottom_up.summarize(CPU, frontier, summary, control=control_block(STEP.BOTTOMUP))
    swords = -(-nwords // 32)
    bits = np.unpackbits(summary[:swords].view(np.uint8), bitorder="little").astype(bool)
    assert np.array_equal(np.flatnonzero(bits), np.sort(set_words))
    tally = summary[swords:]
    assert tally[SUMMARY.FILTER] == (nonzero * SUMMARY_SPARSE <= nwords)
    assert tally[SUMMARY.NONZERO] == 0 and tally[SUMMARY.DONE] == 0
    untouched = summary.copy()
    bottom_up.summarize(CPU, frontier, summary, control=control_block(STEP.TOPDOWN))
    assert np.array_equal(summary, untouched)


@pytest.mark.parametrize("l2_share, filtered", [(0, True), (1 << 20, True), (1 << 21, False), (1 << 25, False)])
def test_summary_only_where_the_bitmap_outgrows_half_the_l2(monkeypatch, l2_share, filtered):
    monkeypatch.setattr(Backend, "l2_share", property(lambda self: l2_share))
    frontier, summary = np.zeros(1 << 18, np.uint32), np.zeros(bottom_up.summary_words(1 << 18), np.uint32)
    assert (bottom_up.summary_for(CPU, frontier, summary) is summary) == filtered


@pytest.mark.parametrize("density", [0.0005, 0.05])
def test_search_through_the_summary_finds_the_same(density):
    """Filtered through the summary (a sparse frontier) or not, the twin finds the same rows, parents
    and entries examined."""
    rng = np.random.default_rng(11)
    b, ncols = 512, 1 << 14
    row_ptr, col_idx = random_block(rng, 2 * b, ncols, 40000, heavy_rows=[(b + 5, 3000)])
    frontier, _ = random_bits(rng, ncols, density)
    summary = np.zeros(bottom_up.summary_words(ncols // 32), np.uint32)
    bottom_up.summarize(CPU, frontier, summary)
    assert summary[-(-ncols // 1024) + SUMMARY.FILTER] == (density < 0.001)
    before, _ = random_bits(rng, b, 0.3)
    results = []
    for with_summary in (None, summary):
        state, pred_row, stats = np.zeros_like(before), np.full(2 * b, -1, np.int32), np.zeros(STAT_WORDS, np.int64)
        bottom_up.search_segment(CPU, row_ptr, col_idx, b, frontier, before, state, pred_row, stats,
                                 summary=with_summary)
        results.append((state, pred_row, stats))
    for plain, filtered in zip(*results):
        assert np.array_equal(plain, filtered)


def test_commit_numpy():
    rng = np.random.default_rng(5)
    b = 1024
    visited, visited_ids = random_bits(rng, b, 0.3)
    state = visited | random_bits(rng, b, 0.2)[0]
    degree = rng.integers(0, 50, b).astype(np.int32)
    level, pred_col = np.full(b, -1, np.int32), np.full(b, -1, np.int16)
    level[visited_ids] = 1
    pred_col[visited_ids] = 0
    nxt, stats = np.zeros(b // 32, np.uint32), np.zeros(STAT_WORDS, np.int64)
    copy = np.full(b // 32, 7, np.uint32)
    old = visited.copy()
    bottom_up.commit(CPU, state, visited, nxt, level, pred_col, degree, 3, stats, peer_fronts=[None, copy])
    fresh = np.flatnonzero(np.unpackbits((state & ~old).view(np.uint8), bitorder="little"))
    assert np.array_equal(visited, state) and np.array_equal(nxt, state & ~old) and np.array_equal(copy, nxt)
    assert np.all(level[fresh] == 3) and np.all(pred_col[fresh] == BOTTOM_UP)
    assert stats[STAT.COUNT] == fresh.shape[0] and stats[STAT.DEGREES] == int(degree[fresh].sum())
    assert stats[STAT.MAX_DEGREE] == int(degree[fresh].max()) and stats[STAT.CHECKED] == 0
    assert np.all(level[visited_ids] == 1)


def test_resolve_parents_bottom_up_takes_the_finder():
    grid = Grid(2, 3, 6 * 64)
    b, C, cols = grid.block, grid.C, grid.cols_per_rank
    pred_col = np.full(b, -1, np.int16)
    gathered = np.full(C * b, -1, np.int32)
    pred_col[:C] = BOTTOM_UP
    for o in range(C):
        gathered[o * b + o] = 10 + o            # only column o found offset o
    pred_col[10] = 1                            # a top-down discovery by column 1
    gathered[1 * b + 10] = 7
    gathered[0 * b + 10] = 99                   # another column's candidate: not the recorded one
    parent = np.full(b, -1, np.int64)
    resolve_parents(CPU, grid, pred_col, [(gathered[c * b:(c + 1) * b], None, None) for c in range(C)], parent)
    assert parent[:C].tolist() == [o * cols + 10 + o for o in range(C)]
    assert parent[10] == cols + 7 and np.all(parent[C:10] == -1)


@pytest.mark.gpu
@pytest.mark.parametrize("nbits, n", [(32, 0), (1 << 20, 1000), (1 << 20, 900_000)])
def test_gpu_bitmap_matches_numpy(nbits, n):
    import cupy
    rng = np.random.default_rng(n)
    offsets = random_offsets(rng, nbits, n)
    expected = np.empty(nbits // 32, np.uint32)
    bitmap.pack(CPU, offsets, n, expected)
    for length in (n, cupy.asarray(np.array([n], np.int32))):
        words = cupy.full(nbits // 32, 7, cupy.uint32)
        bitmap.pack(gpu_backend(), cupy.asarray(offsets), length, words)
        assert np.array_equal(cupy.asnumpy(words), expected)
    out, counter = cupy.full(nbits, -1, cupy.int32), cupy.zeros(1, cupy.int32)
    bitmap.unpack(gpu_backend(), words, out, counter)
    k = int(counter[0])
    assert k == len(np.unique(offsets))
    assert np.array_equal(np.sort(cupy.asnumpy(out[:k])), np.unique(offsets))
    col_ptr = column_offsets(rng, nbits)
    host_out, host_counter = np.full(nbits, -1, np.int32), np.zeros(1, np.int32)
    bitmap.unpack(CPU, expected, host_out, host_counter, col_ptr=col_ptr)
    held, columns = held_offsets(gpu_backend(), cupy.asarray(col_ptr))
    for offsets, columns in ((cupy.asarray(col_ptr), None), (cupy.asarray(held), columns)):
        bitmap.unpack(gpu_backend(), words, out, counter, col_ptr=offsets, columns=columns)
        k = int(counter[0])
        assert k == host_counter[0] and np.array_equal(np.sort(cupy.asnumpy(out[:k])), host_out[:k])


@pytest.mark.gpu
@pytest.mark.parametrize("held", [False, True], ids=["dense", "by-position"])
@pytest.mark.parametrize("large", [False, True], ids=["bitmap-in-l2", "large-bitmap"])
@pytest.mark.parametrize("density", [0.0005, 0.02, 0.4])
@pytest.mark.parametrize("marks", [np.int16, np.int32], ids=["pred_col", "parents"])
@pytest.mark.parametrize("shared", [False, True], ids=["stored", "shared"])
def test_gpu_bottom_up_matches_numpy(density, large, held, marks, shared):
    """marks: the array the commit marks, pred_col or a grid of one column's int32 parents; shared: the
    search ORs its finds into the state (an owner's, searched by the grid row's ranks at once)."""
    import cupy
    rng = np.random.default_rng(int(density * 10000))
    b, C, ncols, m = 1 << 14, 2, 1 << 15, 1
    row_ptr, col_idx = random_block(rng, C * b, ncols, 400_000,
                                    heavy_rows=[(m * b + 3, 5000), (m * b + 40, 33), (m * b + 41, 2000)])
    frontier, _ = random_bits(rng, ncols, density)
    state, _ = random_bits(rng, b, 0.3)
    degree = rng.integers(0, 100, b).astype(np.int32)
    gpu = gpu_backend()
    # by position: pred_row and the rows' offsets (as a hypersparse block's columns searched as rows)
    adjacency = {backend: held_offsets(backend, backend.xp.asarray(row_ptr)) if held
                 else (row_ptr, None) for backend in (CPU, gpu)}
    finds = adjacency[CPU][1].count if held else C * b
    host = dict(state=state.copy(), pred_row=np.full(finds, -1, np.int32), stats=np.zeros(STAT_WORDS, np.int64),
                visited=state.copy(), next=np.zeros(b // 32, np.uint32), level=np.full(b, -1, np.int32),
                pred_col=np.full(b, -1, marks), copy=np.zeros(b // 32, np.uint32))
    host["summary"] = np.full(bottom_up.summary_words(ncols // 32), 0xDEADBEEF, np.uint32)
    host["summary"][-SUMMARY_TALLY_WORDS:] = 0   # the tally's counters start at zero (a new array's do)
    dev = {k: cupy.asarray(v) for k, v in host.items()}
    # the commit's copy for a peer: an array (NumPy), a device address (GPU; another rank's, mapped, in a run)
    copies = ([None, host["copy"]], cupy.asarray(np.array([0, dev["copy"].data.ptr], np.uint64)))
    for backend, s, peer_fronts in ((CPU, host, copies[0]), (gpu, dev, copies[1])):
        xp = backend.xp
        if large:
            bottom_up.summarize(backend, xp.asarray(frontier), s["summary"])
        ptr, rows_held = adjacency[backend]
        bottom_up.search_segment(backend, xp.asarray(ptr), xp.asarray(col_idx), m * b,
                                 xp.asarray(frontier), s["state"], s["state"], s["pred_row"], s["stats"],
                                 summary=s["summary"] if large else None, found_at=rows_held, rows_held=rows_held,
                                 shared=shared)
        bottom_up.commit(backend, s["state"], s["visited"], s["next"], s["level"], s["pred_col"],
                         xp.asarray(degree), 4, s["stats"], peer_fronts=peer_fronts)
    for k, v in host.items():
        assert np.array_equal(cupy.asnumpy(dev[k]), v), k


@pytest.mark.gpu
@pytest.mark.parametrize("fused", [True, False], ids=["one-kernel", "a-kernel-a-segment"])
@pytest.mark.parametrize("held", [False, True], ids=["dense", "by-position"])
@pytest.mark.parametrize("large", [False, True], ids=["bitmap-in-l2", "large-bitmap"])
@pytest.mark.parametrize("density", [0.0005, 0.02, 0.4])
def test_gpu_search_segments_matches_numpy(density, large, held, fused, monkeypatch):
    """The sub-steps' kernel against its twin: three segments' states and their owners' visited bits
    (another array each, as the owners' are), the finds and the entries checked; and the GPU's search a
    kernel a segment, for segments longer than FUSED_SEGMENT_WORDS."""
    import cupy
    if not fused:
        monkeypatch.setattr(bottom_up, "FUSED_SEGMENT_WORDS", 0)
    rng = np.random.default_rng(int(density * 10000) + 1)
    b, C, ncols = 1 << 13, 4, 1 << 15
    row_ptr, col_idx = random_block(rng, C * b, ncols, 400_000, heavy_rows=[(3, 5000), (2 * b + 40, 2000)])
    frontier, _ = random_bits(rng, ncols, density)
    order = [3, 0, 2]
    befores = [random_bits(rng, b, 0.05)[0] for _ in order]
    visited = [random_bits(rng, b, 0.3)[0] for _ in order]
    gpu = gpu_backend()
    adjacency = {backend: held_offsets(backend, backend.xp.asarray(row_ptr)) if held
                 else (row_ptr, None) for backend in (CPU, gpu)}
    finds = adjacency[CPU][1].count if held else C * b
    results = []
    for backend in (CPU, gpu):
        xp = backend.xp
        states = [xp.asarray(before.copy()) for before in befores]
        pred_row, stats = xp.full(finds, -1, np.int32), xp.zeros(STAT_WORDS, np.int64)
        summary = None
        if large:
            summary = xp.zeros(bottom_up.summary_words(ncols // 32), np.uint32)
            bottom_up.summarize(backend, xp.asarray(frontier), summary)
        ptr, rows_held = adjacency[backend]
        steps = bottom_up.SegmentSteps(backend, states, [xp.asarray(bits) for bits in visited], [m * b for m in order])
        bottom_up.search_segments(backend, xp.asarray(ptr), xp.asarray(col_idx), steps, xp.asarray(frontier),
                                  pred_row, stats, summary=summary, found_at=rows_held, rows_held=rows_held)
        results.append([backend.asnumpy(a) for a in (*states, pred_row, stats)])
    for got, expected in zip(results[1], results[0]):
        assert np.array_equal(got, expected)


@pytest.mark.gpu
@pytest.mark.parametrize("nwords, share", [(1000, 0.1), (1 << 20, 0.124), (1 << 20, 0.126), ((1 << 20) + 7, 0.5)])
def test_gpu_summary_matches_numpy(nwords, share):
    """Many blocks decide FILTER together and leave the tally's counters at zero: twice in a row."""
    import cupy
    rng = np.random.default_rng(nwords)
    frontier = np.where(rng.random(nwords) < share, rng.integers(1, 1 << 32, nwords, dtype=np.uint64), 0)
    frontier = frontier.astype(np.uint32)
    host = np.zeros(bottom_up.summary_words(nwords), np.uint32)
    bottom_up.summarize(CPU, frontier, host)
    summary = cupy.zeros(host.shape[0], cupy.uint32)
    for _ in range(2):
        bottom_up.summarize(gpu_backend(), cupy.asarray(frontier), summary)
        assert np.array_equal(cupy.asnumpy(summary), host)


def control_block(step, form=FORM.LIST, level=5):
    control = np.zeros(CTL_WORDS, np.int64)
    control[CTL.STEP], control[CTL.FORM], control[CTL.LEVEL] = step, form, level
    return control


def gated_conversions(backend, control, offsets, words, out, counter):
    """The frontier conversions of the device-driven loop under a control block."""
    bitmap.pack(backend, offsets, offsets.shape[0], words, control=control, steps=1 << STEP.BOTTOMUP,
                form=FORM.LIST)
    bitmap.unpack(backend, words, out, counter, control=control, steps=1 << STEP.TOPDOWN, form=FORM.BITS)


@pytest.mark.parametrize("step, form, packs, unpacks", [
    (STEP.BOTTOMUP, FORM.LIST, True, False), (STEP.BOTTOMUP, FORM.BITS, False, False),
    (STEP.TOPDOWN, FORM.BITS, False, True), (STEP.DONE, FORM.BITS, False, False)])
def test_gated_operators_run_only_when_their_step_is_next(step, form, packs, unpacks):
    """A kernel launched with the search's control block runs only under its step (and form)."""
    rng = np.random.default_rng(step * 2 + form)
    offsets = random_offsets(rng, 1024, 50)
    words = np.full(32, 0xDEADBEEF, np.uint32)
    out, counter = np.full(1024, -1, np.int32), np.zeros(1, np.int32)
    gated_conversions(CPU, control_block(step, form), offsets, words, out, counter)
    expected = np.zeros(32, np.uint32)
    bitmap.pack(CPU, offsets, offsets.shape[0], expected)
    assert np.array_equal(words, expected) == packs
    assert (counter[0] > 0) == unpacks
    state = np.zeros(32, np.uint32)
    stats = np.zeros(STAT_WORDS, np.int64)
    level = np.full(1024, -1, np.int32)
    bottom_up.commit(CPU, np.full(32, 0xFFFFFFFF, np.uint32), state, np.zeros(32, np.uint32), level, None,
                     np.ones(1024, np.int32), 1, stats, control=control_block(step, form))
    assert (stats[STAT.COUNT] == 1024 and np.all(level == 5)) == (step == STEP.BOTTOMUP)


@pytest.mark.gpu
@pytest.mark.parametrize("step, form", [(s, f) for s in (STEP.SMALL, STEP.TOPDOWN, STEP.BOTTOMUP, STEP.DONE)
                                        for f in (FORM.LIST, FORM.BITS)])
def test_gpu_gated_operators_match_numpy(step, form):
    import cupy
    rng = np.random.default_rng(40 + step * 2 + form)
    offsets = random_offsets(rng, 1 << 16, 3000)
    host = dict(words=np.full(1 << 11, 0xDEADBEEF, np.uint32), out=np.full(1 << 16, -1, np.int32),
                counter=np.zeros(1, np.int32))
    dev = {k: cupy.asarray(v) for k, v in host.items()}
    gated_conversions(CPU, control_block(step, form), offsets, **host)
    gated_conversions(gpu_backend(), cupy.asarray(control_block(step, form)), cupy.asarray(offsets), **dev)
    assert np.array_equal(cupy.asnumpy(dev["words"]), host["words"])
    k = int(host["counter"][0])
    assert int(dev["counter"][0]) == k
    assert np.array_equal(np.sort(cupy.asnumpy(dev["out"][:k])), np.sort(host["out"][:k]))


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


@pytest.mark.parametrize("work,sharing,expected", [
    (1024, 16, 1024),    # 16 ranks on the GPU: the segment's blocks, not a sixteenth of the GPU
    (50_000, 16, 1056),  # at most what the whole GPU holds (132 multiprocessors x 8 blocks)
    (50_000, 1, 1056),
    (0, 1, 1),           # never less than one block
])
def test_bottom_up_grid_is_its_work_up_to_the_whole_gpu(monkeypatch, work, sharing, expected):
    from dbfs import backend as backend_module
    monkeypatch.setattr(backend_module, "_device_property", lambda device, name: 132)
    monkeypatch.setattr(backend_module, "_blocks_per_multiprocessor", lambda kernel, threads: 8)
    monkeypatch.setattr(Backend, "is_gpu", property(lambda self: True))
    rank = Backend("cpu", sharing=sharing)
    assert rank.whole_gpu_blocks(None, 256, work) == expected
    assert rank.resident_blocks(None, 256) == 1056 // sharing     # the other grids keep the rank's share
