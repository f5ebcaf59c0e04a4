"""The level-loop operators: NumPy twins against a brute-force reference, GPU kernels against the twins.

expand (paper 004 Algorithm 3) and update (section 3.5) on random CSC blocks of R x C grids with part
of the bitmap already set, duplicate edges, zero-degree and high-degree columns, empty inputs, and
groups that already hold entries. Outputs whose value is fixed by the contract (bitmap, counters,
levels, the level figures in stats, group contents as sets) must be equal; choices the contract leaves open
(which frontier neighbour or which sender is recorded) must be valid.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pytest

from dbfs.backend import Backend
from dbfs.grid import Grid
from dbfs.kernels import BOTTOM_UP, HEAD_WORDS, ROOT, ROOT_WORDS, STAT, STAT_WORDS
from dbfs.ops.clock import stamp
from dbfs.ops import arrays
from dbfs.ops import expand as expand_module
from dbfs.ops.expand import EDGES_PER_THREAD, ExpandScratch, expand
from dbfs.ops.frontier import frontier_figures, publish_figures
from dbfs.ops.host_words import KERNEL_COPY_BYTES, copy_words
from dbfs.ops.level_control import visit_root
from dbfs.ops.predecessors import resolve_columns, resolve_parents
from dbfs.ops.sparse import Positions, held_offsets, word_starts
from dbfs.ops.message import SourceTable, encode_lists
from dbfs.ops.peer_sums import peer_sums
from dbfs.ops.update import update

pytestmark = pytest.mark.one_rank

CPU = Backend("cpu")
SENTINEL = -7
STATE_FIELDS = ("bitmap", "level", "pred_row", "pred_col", "dst", "dst_cnt")


@dataclass
class Case:
    grid: Grid
    j: int
    lvl: int
    col_ptr: np.ndarray
    row_idx: np.ndarray
    state: dict            # STATE_FIELDS -> arrays, the state before the call

    @property
    def b(self):
        return self.grid.block

    @property
    def nrows(self):
        return self.grid.rows_per_rank


def make_csc(rng, ncols, nrows, nnz, duplicates=0, heavy=()):
    """Random CSC (int64 col_ptr, int32 row_idx) with `duplicates` repeated entries and heavy columns."""
    cols = [rng.integers(0, ncols, nnz)]
    rows = [rng.integers(0, nrows, nnz)]
    if duplicates and nnz:
        pick = rng.integers(0, nnz, duplicates)
        cols.append(cols[0][pick])
        rows.append(rows[0][pick])
    for column, degree in heavy:
        cols.append(np.full(degree, column))
        rows.append(rng.integers(0, nrows, degree))
    cols = np.concatenate(cols)
    rows = np.concatenate(rows)
    order = np.argsort(cols, kind="stable")
    col_ptr = np.zeros(ncols + 1, dtype=np.int64)
    np.cumsum(np.bincount(cols, minlength=ncols), out=col_ptr[1:])
    return col_ptr, rows[order].astype(np.int32)


def make_state(rng, grid, j, lvl, preset_fraction):
    """Rank state mid-search: some rows visited earlier, some of them already queued in dst."""
    b, nrows, C = grid.block, grid.rows_per_rank, grid.C
    preset = rng.random(nrows) < preset_fraction
    bits = np.zeros(-(-nrows // 32) * 32, dtype=np.uint64)
    bits[:nrows] = preset
    bitmap = (bits.reshape(-1, 32) << np.arange(32, dtype=np.uint64)).sum(axis=1).astype(np.uint32)
    level = np.full(b, -1, dtype=np.int32)
    pred_col = np.full(b, -1, dtype=np.int16)
    own_preset = np.flatnonzero(preset[j * b:(j + 1) * b])
    level[own_preset] = rng.integers(0, lvl, own_preset.size)
    pred_col[own_preset] = rng.integers(0, C, own_preset.size)
    pred_row = np.where(preset, rng.integers(0, grid.cols_per_rank, nrows), -1).astype(np.int32)
    dst = np.full(C * b, SENTINEL, dtype=np.int32)
    dst_cnt = np.zeros(C, dtype=np.int32)
    for m in range(C):
        queued = np.flatnonzero(preset[m * b:(m + 1) * b])
        count = int(rng.integers(0, queued.size + 1))
        dst[m * b:m * b + count] = queued[:count]
        dst_cnt[m] = count
    return dict(bitmap=bitmap, level=level, pred_row=pred_row, pred_col=pred_col, dst=dst,
                dst_cnt=dst_cnt, degree=rng.integers(0, 60, b).astype(np.int32),
                stats=np.zeros(STAT_WORDS, np.int64))


def make_case(seed, R, C, n_vertices, nnz, duplicates=0, heavy=(), preset_fraction=0.3, offsets=np.int64):
    """A random case whose col_ptr is of dtype `offsets` (a graph's offsets: int32 or int64)."""
    rng = np.random.default_rng(seed)
    grid = Grid(R, C, n_vertices)
    j = int(rng.integers(0, C))
    lvl = int(rng.integers(1, 9))
    col_ptr, row_idx = make_csc(rng, grid.cols_per_rank, grid.rows_per_rank, nnz, duplicates, heavy)
    return (Case(grid, j, lvl, col_ptr.astype(offsets), row_idx, make_state(rng, grid, j, lvl, preset_fraction)),
            rng)


def all_in(values, pool):
    """Every value occurs in pool (sorted search: faster than np.isin on large int64 keys)."""
    if values.size == 0:
        return True
    if pool.size == 0:
        return False
    pool = np.sort(pool)
    at = np.minimum(np.searchsorted(pool, values), pool.size - 1)
    return bool((pool[at] == values).all())


def bit_set(bitmap, row):
    return bool((int(bitmap[row >> 5]) >> (row & 31)) & 1)


def copy_state(state):
    return {name: array.copy() for name, array in state.items()}


# ---- expand -------------------------------------------------------------------------------------

@dataclass
class ExpandExpected:
    total: int
    bitmap: np.ndarray
    level: np.ndarray
    pred_col: np.ndarray
    dst_cnt: np.ndarray
    groups: list           # per group: sorted new offsets
    stats: np.ndarray      # the level counters: the entries examined


def checked_stats(checked):
    stats = np.zeros(STAT_WORDS, np.int64)
    stats[STAT.CHECKED] = checked
    return stats


def reference_expand(case, frontier):
    """Edge-by-edge sequential expansion (the brute-force reference)."""
    before = case.state
    b, j = case.b, case.j
    bitmap = before["bitmap"].copy()
    level = before["level"].copy()
    pred_col = before["pred_col"].copy()
    groups = [[] for _ in range(case.grid.C)]
    total = 0
    for u in frontier.tolist():
        for p in range(int(case.col_ptr[u]), int(case.col_ptr[u + 1])):
            v = int(case.row_idx[p])
            total += 1
            if bit_set(bitmap, v):
                continue
            bitmap[v >> 5] |= np.uint32(1 << (v & 31))
            m, o = divmod(v, b)
            groups[m].append(o)
            if m == j:
                level[o] = case.lvl
                pred_col[o] = j
    dst_cnt = before["dst_cnt"] + np.array([len(g) for g in groups], dtype=np.int32)
    return ExpandExpected(total, bitmap, level, pred_col, dst_cnt,
                          [np.array(sorted(g), dtype=np.int64) for g in groups], checked_stats(total))


def expected_from_run(case, after, total):
    """The fixed outputs of a run, used as the expectation for another backend."""
    before = case.state
    groups = [np.sort(after["dst"][m * case.b + before["dst_cnt"][m]:m * case.b + after["dst_cnt"][m]])
              for m in range(case.grid.C)]
    return ExpandExpected(total, after["bitmap"], after["level"], after["pred_col"], after["dst_cnt"],
                          groups, after["stats"])


def frontier_edge_keys(case, frontier):
    """u * nrows + v for every CSC entry of the frontier columns (vectorized)."""
    frontier = frontier.astype(np.int64)
    starts = case.col_ptr[frontier]
    degrees = case.col_ptr[frontier + 1] - starts
    positions = np.arange(degrees.sum()) + np.repeat(starts - (np.cumsum(degrees) - degrees), degrees)
    return np.repeat(frontier, degrees) * case.nrows + case.row_idx[positions]


def assert_expand(case, frontier, after, total, expected):
    before, b = case.state, case.b
    assert total == expected.total
    np.testing.assert_array_equal(after["bitmap"], expected.bitmap)
    np.testing.assert_array_equal(after["level"], expected.level)
    np.testing.assert_array_equal(after["pred_col"], expected.pred_col)
    np.testing.assert_array_equal(after["dst_cnt"], expected.dst_cnt)
    np.testing.assert_array_equal(after["stats"], expected.stats)
    discovered = []
    for m in range(case.grid.C):
        old, new = int(before["dst_cnt"][m]), int(after["dst_cnt"][m])
        region = after["dst"][m * b:(m + 1) * b]
        np.testing.assert_array_equal(region[:old], before["dst"][m * b:m * b + old])
        np.testing.assert_array_equal(np.sort(region[old:new]), expected.groups[m])
        np.testing.assert_array_equal(region[new:], before["dst"][m * b + new:(m + 1) * b])
        discovered.append(m * b + region[old:new].astype(np.int64))
    discovered = np.concatenate(discovered)
    untouched = np.ones(case.nrows, dtype=bool)
    untouched[discovered] = False
    np.testing.assert_array_equal(after["pred_row"][untouched], before["pred_row"][untouched])
    keys = after["pred_row"][discovered].astype(np.int64) * case.nrows + discovered
    assert all_in(keys, frontier_edge_keys(case, frontier)), "pred_row names a non-neighbour"


def run_expand(backend, case, frontier, state, edges_per_thread=4, device_length=False, held=False, part=None):
    """Expand `frontier` (its length given on the host, or on the device); returns the entries the
    expansion reports examined. held: pred_row held by the positions of the rows with an entry (the
    discoveries written there, then placed back into state's dense pred_row), and the column offsets by
    those of the non-empty columns (the frontier has empty ones too). part: the scan's capacity, the
    frontier then expanded in parts of it, its buffer two parts longer than its length (junk there)."""
    xp, nrows = backend.xp, case.nrows
    buffer = frontier
    if part is not None:
        buffer = np.concatenate([frontier, np.full(2 * part, case.grid.cols_per_rank + 5, np.int32)])
    length = backend.asarray(np.array([frontier.size], np.int32)) if device_length else int(frontier.size)
    pred_row, found_at = state["pred_row"], None
    col_ptr, columns = backend.asarray(case.col_ptr), None
    if held:
        found_at = Positions.of_rows(backend, backend.asarray(case.row_idx), xp.zeros(nrows // 32, xp.uint32),
                                     xp.zeros(nrows // 32 + 1, xp.int32))
        rows = xp.asarray(np.unique(case.row_idx))
        pred_row = state["pred_row"][rows]
        col_ptr, columns = held_offsets(backend, col_ptr)
        col_ptr = backend.asarray(col_ptr)
    others = packed_groups(case, state["dst"], xp)
    expand(backend, case.grid, case.j, col_ptr, backend.asarray(case.row_idx),
           backend.asarray(buffer), length, state["bitmap"], state["level"], pred_row,
           state["pred_col"], others, own_group(case, state), state["dst_cnt"], state["stats"],
           ExpandScratch.allocate(backend, part or max(1, frontier.size), case.row_idx.size, case.col_ptr.dtype),
           lvl=case.lvl,
           edges_per_thread=edges_per_thread, found_at=found_at, columns=columns)
    state["dst"][:] = unpacked_groups(case, others, own_group(case, state), xp)
    if held:
        state["pred_row"][rows] = pred_row
    return int(backend.asnumpy(state["stats"])[STAT.CHECKED])


def random_frontier(rng, case, fraction):
    ncols = case.grid.cols_per_rank
    return rng.choice(ncols, int(fraction * ncols), replace=False).astype(np.int32)


# A graph's offsets: the expansion's kernels and its degree scan run at either width (kernels/expand.cu offset_t).
OFFSETS = [np.int32, np.int64]

GRIDS = [  # (R, C, n_vertices, nnz)
    (1, 1, 40, 120),
    (2, 1, 61, 300),
    (1, 3, 50, 200),
    (3, 1, 70, 150),
    (2, 3, 290, 900),
    (3, 2, 383, 1500),
    (4, 4, 140, 600),
]


@pytest.mark.parametrize("R, C, n_vertices, nnz", GRIDS)
@pytest.mark.parametrize("seed, held", [(1, False), (2, False), (3, True)])
@pytest.mark.parametrize("offsets", OFFSETS)
def test_expand_numpy_matches_reference(R, C, n_vertices, nnz, seed, held, offsets):
    case, rng = make_case(seed, R, C, n_vertices, nnz, duplicates=nnz // 5, heavy=[(0, 40)], offsets=offsets)
    for fraction in (0.0, 0.05, 0.5, 1.0):
        frontier = random_frontier(rng, case, fraction)
        state = copy_state(case.state)
        total = run_expand(CPU, case, frontier, state, held=held)
        assert_expand(case, frontier, state, total, reference_expand(case, frontier))


@pytest.mark.parametrize("R, C, n_vertices, nnz", GRIDS[-3:])
def test_expand_numpy_steps_change_nothing(R, C, n_vertices, nnz, monkeypatch):
    """The twin's steps (TWIN_ITEMS columns, groups of about TWIN_CHUNK entries) bound its temporaries
    only: with two columns a step and a few entries a group the reference still holds."""
    monkeypatch.setattr(expand_module, "TWIN_ITEMS", 2)
    monkeypatch.setattr(arrays, "TWIN_CHUNK", 5)
    case, rng = make_case(3, R, C, n_vertices, nnz, duplicates=nnz // 5, heavy=[(0, 40)])
    for fraction in (0.05, 0.5, 1.0):
        frontier = random_frontier(rng, case, fraction)
        state = copy_state(case.state)
        total = run_expand(CPU, case, frontier, state)
        assert_expand(case, frontier, state, total, reference_expand(case, frontier))


def test_expand_numpy_zero_degree_and_visited_only():
    case, rng = make_case(3, 2, 2, 100, 60, preset_fraction=0.0)
    empty_columns = np.flatnonzero(np.diff(case.col_ptr) == 0).astype(np.int32)
    state = copy_state(case.state)
    assert run_expand(CPU, case, empty_columns, state) == 0
    for name in STATE_FIELDS + ("stats",):
        np.testing.assert_array_equal(state[name], case.state[name])

    case.state["bitmap"][:] = np.uint32(0xFFFFFFFF)        # everything visited: scan, discover nothing
    frontier = random_frontier(rng, case, 0.5)
    state = copy_state(case.state)
    total = run_expand(CPU, case, frontier, state)
    assert total == int((case.col_ptr[frontier + 1] - case.col_ptr[frontier]).sum()) > 0
    for name in STATE_FIELDS:
        np.testing.assert_array_equal(state[name], case.state[name])


# ---- update -------------------------------------------------------------------------------------

def random_recv(rng, case, per_sender, empty_senders=()):
    """Received offsets grouped by sender column, duplicates within and across senders."""
    C, b = case.grid.C, case.b
    sizes = [0 if m in empty_senders else int(rng.integers(0, per_sender + 1)) for m in range(C)]
    recv = rng.integers(0, b, sum(sizes)).astype(np.int32)
    seg = np.zeros(C + 1, dtype=np.int32)
    np.cumsum(sizes, out=seg[1:])
    return recv, seg


def reference_update(case, state, recv, seg):
    """Vertex-by-vertex sequential update: the expected state, the new offsets, and o*C + m for every
    copy of a fresh offset o sent by column m (the valid pred_col choices)."""
    b, j = case.b, case.j
    expected = copy_state(state)
    new, sender_keys = [], []
    for m in range(case.grid.C):
        for o in recv[seg[m]:seg[m + 1]].tolist():
            row = j * b + o
            if bit_set(state["bitmap"], row):
                continue
            sender_keys.append(o * case.grid.C + m)
            if bit_set(expected["bitmap"], row):
                continue
            expected["bitmap"][row >> 5] |= np.uint32(1 << (row & 31))
            expected["level"][o] = case.lvl
            new.append(o)
    expected["dst_cnt"][j] += len(new)
    return expected, np.array(sorted(new), dtype=np.int64), np.array(sender_keys, dtype=np.int64)


def assert_update(case, before, after, expected, new, sender_keys):
    b, j = case.b, case.j
    for name in ("bitmap", "level", "dst_cnt", "pred_row", "stats"):
        np.testing.assert_array_equal(after[name], expected[name], err_msg=name)
    old_count, count = int(before["dst_cnt"][j]), int(after["dst_cnt"][j])
    own = after["dst"][j * b:(j + 1) * b]
    np.testing.assert_array_equal(own[:old_count], before["dst"][j * b:j * b + old_count])
    np.testing.assert_array_equal(np.sort(own[old_count:count]), new)
    np.testing.assert_array_equal(own[count:], before["dst"][j * b + count:(j + 1) * b])
    outside = np.ones(after["dst"].shape[0], dtype=bool)
    outside[j * b:(j + 1) * b] = False
    np.testing.assert_array_equal(after["dst"][outside], before["dst"][outside])
    unchanged = np.ones(b, dtype=bool)
    unchanged[new] = False
    np.testing.assert_array_equal(after["pred_col"][unchanged], before["pred_col"][unchanged])
    keys = new * case.grid.C + after["pred_col"][new]
    assert all_in(keys, sender_keys), "pred_col names a column that did not send the vertex"


def fold_messages(backend, case, recv, seg, pinned=False):
    """Sender m's offsets recv[seg[m]:seg[m+1]] as its fold message (dbfs.ops.message), lists and
    bitmaps alternating by sender, on the backend's device or (pinned) in pinned host memory."""
    stride = HEAD_WORDS + max(case.b, len(recv))
    messages = []
    for m in range(case.grid.C):
        part = np.asarray(recv[seg[m]:seg[m + 1]], np.int32)
        out = np.zeros(stride, np.uint32)
        encode_lists(CPU, part, 0, np.array([part.shape[0]], np.int32), -1, case.b,
                     ("list", "bitmap")[m % 2], out, stride, 1)
        if pinned:
            messages.append(backend.pinned_empty(stride, np.uint32))
            messages[-1][:] = out
        else:
            messages.append(backend.asarray(out))
    return SourceTable(backend, messages)


def run_update(backend, case, state, recv, seg, pinned=False):
    update(backend, case.grid, case.j, fold_messages(backend, case, recv, seg, pinned), state["bitmap"],
           state["level"], state["pred_col"], case.lvl, own_group(case, state), state["dst_cnt"])


def own_group(case, state):
    """Group j of state's dst (groups of b slots), which the expansion and the update get on its own."""
    return state["dst"][case.j * case.b:(case.j + 1) * case.b]


def packed_groups(case, dst, xp):
    """The groups of dst but the own one, packed, as the expansion takes them (dbfs.search_state)."""
    b, j = case.b, case.j
    return xp.concatenate((dst[:j * b], dst[(j + 1) * b:]))


def unpacked_groups(case, others, own, xp):
    """dst again from the packed groups and the own one."""
    b, j = case.b, case.j
    return xp.concatenate((others[:j * b], own, others[j * b:]))


@pytest.mark.parametrize("R, C, n_vertices, nnz", GRIDS)
@pytest.mark.parametrize("seed", [4, 5])
def test_update_numpy_matches_reference(R, C, n_vertices, nnz, seed):
    case, rng = make_case(seed, R, C, n_vertices, nnz)
    for per_sender, empty in ((0, ()), (3, (0,)), (case.b, ()), (2 * case.b, (C - 1,))):
        recv, seg = random_recv(rng, case, per_sender, empty)
        state = copy_state(case.state)
        expected, new, sender_keys = reference_update(case, state, recv, seg)
        run_update(CPU, case, state, recv, seg)
        assert_update(case, case.state, state, expected, new, sender_keys)


def test_expand_then_update_numpy():
    """The level order of Algorithm 2: received vertices already found by the expansion are dropped."""
    case, rng = make_case(6, 2, 3, 300, 1200)
    frontier = random_frontier(rng, case, 0.3)
    state = copy_state(case.state)
    run_expand(CPU, case, frontier, state)
    recv, seg = random_recv(rng, case, 2 * case.b)
    mid = copy_state(state)
    expected, new, sender_keys = reference_update(case, mid, recv, seg)
    run_update(CPU, case, state, recv, seg)
    assert_update(case, mid, state, expected, new, sender_keys)
    own = state["dst"][case.j * case.b:case.j * case.b + state["dst_cnt"][case.j]]
    assert np.unique(own).size == own.size, "the next frontier holds a vertex twice"


# ---- GPU kernels against the NumPy twins --------------------------------------------------------

def to_device(state):
    import cupy
    return {name: cupy.asarray(array) for name, array in state.items()}


def to_host(state):
    import cupy
    return {name: cupy.asnumpy(array) for name, array in state.items()}


def gpu_backend():
    return Backend("gpu", 0)


def numpy_expectation(case, frontier):
    host = copy_state(case.state)
    return expected_from_run(case, host, run_expand(CPU, case, frontier, host))


def check_gpu_expand(case, frontier, edges_per_thread, expected=None, held=False, part=None):
    expected = expected or numpy_expectation(case, frontier)
    for device_length in (False, True):
        device = to_device(case.state)
        total = run_expand(gpu_backend(), case, frontier, device, edges_per_thread, device_length, held, part)
        assert_expand(case, frontier, to_host(device), total, expected)


GPU_CASES = [  # (R, C, n_vertices, nnz, heavy columns, frontier fraction)
    (1, 1, 40, 120, [], 1.0),
    (1, 3, 5000, 30000, [(7, 3000)], 0.3),
    (2, 3, 60000, 200000, [(0, 5000), (1, 1), (2, 9000)], 0.5),
    (3, 2, 100000, 50000, [], 0.9),
]


@pytest.mark.gpu
@pytest.mark.parametrize("edges_per_thread", EDGES_PER_THREAD)
@pytest.mark.parametrize("R, C, n_vertices, nnz, heavy, fraction", GPU_CASES)
@pytest.mark.parametrize("offsets", OFFSETS)
def test_gpu_expand_matches_numpy(R, C, n_vertices, nnz, heavy, fraction, edges_per_thread, offsets):
    case, rng = make_case(10 + edges_per_thread, R, C, n_vertices, nnz, duplicates=nnz // 10, heavy=heavy,
                          offsets=offsets)
    frontier = random_frontier(rng, case, fraction)
    check_gpu_expand(case, frontier, edges_per_thread)
    check_gpu_expand(case, frontier, edges_per_thread, held=True)   # pred_row by the rows' positions
    check_gpu_expand(case, np.zeros(0, dtype=np.int32), edges_per_thread)


@functools.lru_cache(maxsize=1)
def large_expand_case(offsets):
    heavy = [(c, d) for c, d in zip(range(0, 4000, 500), (100000, 3, 40000, 70000, 1, 2, 20000, 5))]
    case, rng = make_case(20, 2, 2, 1 << 20, 1_000_000, duplicates=50000, heavy=heavy, preset_fraction=0.2,
                          offsets=offsets)
    frontier = np.concatenate([np.array([c for c, _ in heavy], dtype=np.int32),
                               random_frontier(rng, case, 0.7)])
    frontier = np.unique(frontier)
    rng.shuffle(frontier)
    return case, frontier, numpy_expectation(case, frontier)


@pytest.mark.gpu
@pytest.mark.parametrize("offsets", OFFSETS)
@pytest.mark.parametrize("edges_per_thread", EDGES_PER_THREAD)
def test_gpu_expand_large_with_heavy_columns(edges_per_thread, offsets):
    """~1e6 scanned edges; a few columns span thousands of threads, many have degree 0 or 1."""
    case, frontier, expected = large_expand_case(offsets)
    assert expected.total > 900_000
    check_gpu_expand(case, frontier, edges_per_thread, expected)


@pytest.mark.gpu
@pytest.mark.parametrize("R, C, n_vertices, nnz, heavy, fraction", GPU_CASES[1:])
@pytest.mark.parametrize("offsets", OFFSETS)
def test_gpu_expand_in_parts_matches_numpy(R, C, n_vertices, nnz, heavy, fraction, offsets):
    """A frontier longer than the scan holds (as past SCAN_COLUMNS) is expanded in parts of 700 columns, in
    order; with its length on the device the parts past it do nothing."""
    case, rng = make_case(40, R, C, n_vertices, nnz, duplicates=nnz // 10, heavy=heavy, offsets=offsets)
    frontier = random_frontier(rng, case, fraction)
    check_gpu_expand(case, frontier, 4, part=700)
    check_gpu_expand(case, frontier, 2, held=True, part=700)
    check_gpu_expand(case, frontier[:700], 4, part=700)


@pytest.mark.gpu
@pytest.mark.parametrize("offsets", OFFSETS)
def test_gpu_expand_scan_over_many_tiles(offsets):
    """A frontier of 4.5e6 columns, mostly of degree 0: the scan's tile-sum pass loops more than once."""
    case, rng = make_case(21, 1, 1, 4_500_000, 200_000, heavy=[(4_499_999, 5000)], preset_fraction=0.1,
                          offsets=offsets)
    frontier = np.arange(case.grid.cols_per_rank, dtype=np.int32)
    rng.shuffle(frontier)
    check_gpu_expand(case, frontier, 4)


@pytest.mark.gpu
def test_gpu_expand_rejects_unknown_edges_per_thread():
    case, rng = make_case(22, 1, 1, 100, 100)
    with pytest.raises(ValueError):
        run_expand(gpu_backend(), case, random_frontier(rng, case, 0.5), to_device(case.state), 3)


@pytest.mark.gpu
def test_gpu_expand_rejects_a_scan_of_another_width():
    """The scan's kernels are those of col_ptr's width: a scratch of the other width is refused."""
    case, rng = make_case(23, 1, 1, 100, 100, offsets=np.int32)
    backend, frontier, state = gpu_backend(), random_frontier(rng, case, 0.5), to_device(case.state)
    wide = ExpandScratch.allocate(backend, frontier.size, case.row_idx.size, np.int64)
    with pytest.raises(TypeError):
        expand(backend, case.grid, case.j, backend.asarray(case.col_ptr), backend.asarray(case.row_idx),
               backend.asarray(frontier), int(frontier.size), state["bitmap"], state["level"], state["pred_row"],
               state["pred_col"], state["dst"], own_group(case, state), state["dst_cnt"], state["stats"], wide,
               lvl=case.lvl)


def check_gpu_update(case, state, recv, seg, pinned):
    expected, new, sender_keys = reference_update_vectorized(case, state, recv, seg)
    device = to_device(state)
    run_update(gpu_backend(), case, device, recv, seg, pinned)
    assert_update(case, state, to_host(device), expected, new, sender_keys)


def reference_update_vectorized(case, state, recv, seg):
    """The NumPy twin's fixed outputs, and o*C + m for every copy sent of each new offset o."""
    expected = copy_state(state)
    run_update(CPU, case, expected, recv, seg)
    old, count = int(state["dst_cnt"][case.j]), int(expected["dst_cnt"][case.j])
    new = np.sort(expected["dst"][case.j * case.b + old:case.j * case.b + count]).astype(np.int64)
    sender_of = np.repeat(np.arange(case.grid.C), np.diff(seg))
    return expected, new, recv.astype(np.int64) * case.grid.C + sender_of


@pytest.mark.gpu
@pytest.mark.parametrize("pinned", [True, False])
@pytest.mark.parametrize("R, C, n_vertices, per_sender", [(1, 1, 50, 60), (2, 3, 30000, 4000),
                                                          (2, 4, 4_000_000, 400_000)])
def test_gpu_update_matches_numpy(R, C, n_vertices, per_sender, pinned):
    case, rng = make_case(30, R, C, n_vertices, 1000)
    for empty in ((), (0,), tuple(range(C))):
        recv, seg = random_recv(rng, case, per_sender, empty)
        check_gpu_update(case, case.state, recv, seg, pinned)


@pytest.mark.gpu
@pytest.mark.parametrize("edges_per_thread", EDGES_PER_THREAD)
def test_gpu_expand_then_update(edges_per_thread):
    case, rng = make_case(31, 2, 3, 300_000, 800_000)
    frontier = random_frontier(rng, case, 0.4)
    device = to_device(case.state)
    run_expand(gpu_backend(), case, frontier, device, edges_per_thread)
    mid = to_host(device)
    recv, seg = random_recv(rng, case, case.b)
    check_gpu_update(case, mid, recv, seg, pinned=True)


def frontier_case(seed, b=5000, n=3000):
    rng = np.random.default_rng(seed)
    return rng.integers(0, b, n).astype(np.int32), rng.integers(0, 1000, b).astype(np.int32)


@pytest.mark.parametrize("n", [0, 1, 3000])
def test_frontier_figures_numpy(n):
    frontier, degree = frontier_case(n)
    stats, copy = np.zeros(STAT_WORDS, np.int64), np.full(4000, -1, np.int32)
    stats[STAT.MAX_DEGREE] = 7
    frontier_figures(CPU, frontier, np.array([n], np.int32), degree, stats, copy_to=copy)
    chosen = degree[frontier[:n]]
    assert stats[STAT.COUNT] == n and stats[STAT.DEGREES] == chosen.sum()
    assert stats[STAT.MAX_DEGREE] == max([7, *chosen.tolist()])
    assert np.array_equal(copy[:n], frontier[:n]) and np.all(copy[n:] == -1)


@pytest.mark.gpu
@pytest.mark.parametrize("n", [0, 1, 3000, 2_000_000])
def test_gpu_frontier_figures_match_numpy(n):
    import cupy
    frontier, degree = frontier_case(n, b=3_000_000, n=max(n, 1))
    expected = np.zeros(STAT_WORDS, np.int64)
    frontier_figures(CPU, frontier, n, degree, expected)
    for length in (n, cupy.asarray(np.array([n], np.int32))):
        stats, copy = cupy.zeros(STAT_WORDS, cupy.int64), cupy.full(frontier.size, -1, cupy.int32)
        frontier_figures(gpu_backend(), cupy.asarray(frontier), length, cupy.asarray(degree), stats,
                         copy_to=copy)
        assert np.array_equal(cupy.asnumpy(stats), expected)
        assert np.array_equal(cupy.asnumpy(copy[:n]), frontier[:n])


def test_publish_figures_hands_over_and_clears():
    stats, status = np.arange(1, STAT_WORDS + 1, dtype=np.int64), np.full(STAT_WORDS, -1, np.int64)
    publish_figures(CPU, stats, status)
    assert status.tolist() == list(range(1, STAT_WORDS + 1)) and not stats.any()


@pytest.mark.gpu
def test_gpu_publish_figures_match_numpy():
    """The GPU writes the pinned status through its mapped address."""
    import cupy
    backend = gpu_backend()
    stats, status = cupy.arange(1, STAT_WORDS + 1, dtype=cupy.int64), backend.pinned_empty(STAT_WORDS, np.int64)
    status[:] = -1
    publish_figures(backend, stats, status)
    backend.sync()
    assert status.tolist() == list(range(1, STAT_WORDS + 1)) and not cupy.asnumpy(stats).any()


def test_copy_words_numpy_copies_whole_words_up_to_its_limit():
    src, dst = np.arange(7, dtype=np.int32), np.full(9, -1, np.int32)
    copy_words(CPU, dst, src)
    assert dst.tolist() == list(range(7)) + [-1, -1]
    for bad in (np.zeros(3, np.int8), np.zeros(KERNEL_COPY_BYTES // 8 + 1, np.int64)):
        with pytest.raises(ValueError):
            copy_words(CPU, np.zeros(KERNEL_COPY_BYTES, np.int64), bad)


def test_copy_words_numpy_raises_its_flag_after_the_words():
    src, dst, flag = np.arange(3, dtype=np.int64), np.zeros(3, np.int64), np.zeros(1, np.int64)
    copy_words(CPU, dst, src, flag)
    assert dst.tolist() == [0, 1, 2] and flag.tolist() == [1]


@pytest.mark.gpu
def test_gpu_copy_words_raise_the_flag_a_host_wait_polls_at_every_replay():
    """A captured copy given a flag: each replay (the flag lowered before) copies the device words to pinned
    memory and raises the flag; Backend.wait_flag returns on it with the words there."""
    import cupy
    backend = gpu_backend()
    device, host, flag = cupy.zeros(5, cupy.int64), backend.pinned_empty(5, np.int64), backend.pinned_empty(1, np.int64)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        copy_words(backend, host, device, flag)
        graph = stream.end_capture()
        for k in range(3):
            device[:] = cupy.arange(5) + 10 * k
            flag[0] = 0
            graph.launch(stream)
            backend.wait_flag(flag)
            assert flag[0] == 1 and host.tolist() == [10 * k + v for v in range(5)]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype,n", [(np.int64, 1), (np.int64, KERNEL_COPY_BYTES // 8), (np.int32, 13)])
def test_gpu_copy_words_match_numpy_both_ways(dtype, n):
    """Pinned host to device and back, through the host side's mapped address; the words past n untouched."""
    import cupy
    backend = gpu_backend()
    host, back = backend.pinned_empty(n, dtype), backend.pinned_empty(n + 1, dtype)
    host[:] = np.arange(1, n + 1)
    back[:] = -1
    device = cupy.full(n + 1, -1, dtype)
    copy_words(backend, device, host)
    copy_words(backend, back, device[:n])
    backend.sync()
    assert cupy.asnumpy(device).tolist() == back.tolist() == list(range(1, n + 1)) + [-1]


@pytest.mark.gpu
def test_gpu_backend_copy_by_kernel_where_ranks_share_the_gpu():
    """Backend.copy of ranks sharing a GPU: a small host copy is a kernel node (run once, as the grid loop
    runs a level before capturing it, then captured and replayed from a graph, reading the host words at
    each replay); a larger one, or one from pageable memory, is the copy engine's."""
    import cupy
    backend = Backend("gpu", 0, sharing=4)
    host, large = backend.pinned_empty(4, np.int64), backend.pinned_empty(KERNEL_COPY_BYTES, np.int64)
    device, large_device = cupy.zeros(4, cupy.int64), cupy.zeros(KERNEL_COPY_BYTES, cupy.int64)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        backend.copy(device, host)
        stream.synchronize()
        stream.begin_capture()
        backend.copy(device, host)
        graph = stream.end_capture()
    for value in (3, 5):
        host[:] = value
        graph.launch(stream)
        stream.synchronize()
        assert cupy.asnumpy(device).tolist() == [value] * 4
    large[:] = 7
    backend.copy(large_device, large)
    pageable = np.full(4, 9, np.int64)        # no kernel can reach it: the copy engine's
    assert backend.is_pinned(host) and backend.is_pinned(large[5:9]) and not backend.is_pinned(pageable)
    backend.copy(device, pageable)
    backend.sync()
    assert int(large_device.sum()) == 7 * KERNEL_COPY_BYTES and cupy.asnumpy(device).tolist() == [9] * 4


def random_predecessor_case(seed, R=4, C=3, b=1024):
    """pred_col and gathered blocks of an R x C grid's block of b vertices (b a multiple of 32)."""
    rng = np.random.default_rng(seed)
    grid = Grid(R, C, R * C * b)
    pred_col = rng.integers(-1, C, b).astype(np.int16)
    gathered = rng.integers(-1, grid.cols_per_rank, C * b).astype(np.int32)
    return grid, pred_col, gathered


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
@pytest.mark.parametrize("seed", [1, 2])
def test_resolve_parents_numpy_matches_reference(seed, dtype):
    grid, pred_col, gathered = random_predecessor_case(seed)
    b, cols = grid.block, grid.cols_per_rank
    parent = np.full(b, -7, dtype)              # kept where nothing discovered the vertex
    resolve_parents(Backend("cpu"), grid, pred_col, dense_entries(gathered, grid.C, b), parent)
    expected = [-7 if c < 0 else c * cols + gathered[c * b + o] for o, c in enumerate(pred_col)]
    assert parent.tolist() == expected


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.int64, np.int32])
@pytest.mark.parametrize("seed, held", [(3, False), (4, False), (5, True)])
@pytest.mark.parametrize("rows_found", [True, False])
def test_resolve_parents_gpu_matches_numpy(seed, dtype, held, rows_found):
    import cupy
    grid, pred_col, gathered = random_row_finds(seed, b=300_032)
    b, C = grid.block, grid.C
    entries = held_entries_of(gathered, C, b, seed) if held else dense_entries(gathered, C, b)
    addresses, kept = entries_on_device(entries)
    expected = np.full(grid.block, -7, dtype)
    resolve_parents(CPU, grid, pred_col, entries, expected, rows_found)
    parent = cupy.full(grid.block, -7, dtype)
    resolve_parents(gpu_backend(), grid, cupy.asarray(pred_col), addresses, parent, rows_found)
    assert np.array_equal(cupy.asnumpy(parent), expected)


def random_column_finds(seed, R=4, C=3, b=1024):
    """Column finds of an R x C grid's owned block: marker (BOTTOM_UP on about half the offsets, else a
    grid column or -1), and gathered blocks where exactly one grid row holds a local row for each
    marked offset (the others -1), as the rotation along the grid column leaves them."""
    rng = np.random.default_rng(seed)
    grid = Grid(R, C, R * C * b)
    marker = np.where(rng.random(b) < 0.5, BOTTOM_UP, rng.integers(-1, C, b)).astype(np.int16)
    gathered = np.full(R * b, -1, np.int32)
    finder = rng.integers(0, R, b)
    local = rng.integers(0, grid.rows_per_rank, b).astype(np.int32)
    marked = np.flatnonzero(marker == BOTTOM_UP)
    gathered[finder[marked] * b + marked] = local[marked]
    return grid, marker, gathered, finder, local


def dense_entries(gathered, n, b):
    """The resolutions' entries of n gathered dense blocks (the line's k-th at gathered[k*b:(k+1)*b])."""
    return [(gathered[k * b:(k + 1) * b], None, None) for k in range(n)]


def held_entries_of(gathered, n, b, seed):
    """The same entries, each block held by position: a random half of the members that hold nothing
    (and every one that holds a value) kept, the way a hypersparse block's non-empty columns are."""
    rng = np.random.default_rng(seed)
    entries = []
    for p in range(n):
        block = gathered[p * b:(p + 1) * b]
        held = (block >= 0) | (rng.random(b) < 0.5)
        words = np.packbits(held, bitorder="little").view(np.uint32).copy()
        starts = np.zeros(b // 32 + 1, np.int32)
        word_starts(CPU, words, starts)
        entries.append((block[held].copy(), words, starts))
    return entries


def entries_on_device(entries):
    """resolve_columns' GPU entries (three address arrays) of CPU entries, and the device arrays kept."""
    import cupy
    kept = [tuple(None if a is None else cupy.asarray(a) for a in block) for block in entries]
    addresses = tuple(cupy.asarray(np.array([0 if a is None else a.data.ptr for a in column], np.uint64))
                      for column in zip(*kept))
    return addresses, kept


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_resolve_columns_numpy_matches_reference(dtype):
    """Each marked vertex's parent is its finder's local row as a global id; the others keep theirs."""
    grid, marker, gathered, finder, local = random_column_finds(5)
    parent = np.full(grid.block, SENTINEL, dtype)
    resolve_columns(CPU, grid, marker, dense_entries(gathered, grid.R, grid.block), 0, parent)
    expected = [grid.to_global_row(int(finder[o]), int(local[o])) if m == BOTTOM_UP else SENTINEL
                for o, m in enumerate(marker)]
    assert parent.tolist() == expected
    assert all(grid.owner(p)[0] == finder[o] for o, p in enumerate(parent.tolist()) if marker[o] == BOTTOM_UP)


def test_resolve_columns_marker_may_be_the_parent_array():
    """On a grid of one column the int32 parent array carries the marks itself."""
    grid, marker, gathered, finder, local = random_column_finds(6, R=3, C=1)
    parent = marker.astype(np.int32)
    resolve_columns(CPU, grid, parent, dense_entries(gathered, grid.R, grid.block), 0, parent)
    expected = [grid.to_global_row(int(finder[o]), int(local[o])) if m == BOTTOM_UP else int(m)
                for o, m in enumerate(marker)]
    assert parent.tolist() == expected


def random_row_finds(seed, R=3, C=4, b=1024):
    """random_predecessor_case with about a third of the vertices found bottom-up: marked BOTTOM_UP,
    exactly one grid column's entry set."""
    grid, pred_col, gathered = random_predecessor_case(seed, R, C, b)
    rng = np.random.default_rng(seed + 100)
    found = np.flatnonzero(rng.random(b) < 0.3)
    blocks = gathered.reshape(C, b)
    blocks[:, found] = -1
    blocks[rng.integers(0, C, found.size), found] = rng.integers(0, grid.cols_per_rank, found.size)
    pred_col[found] = BOTTOM_UP
    return grid, pred_col, gathered


def test_resolve_parents_held_by_position_reads_the_same():
    """Discoverers' blocks held by position (a hypersparse block's rows, or a packed message) resolve as
    the dense blocks do, vertices found bottom-up among them."""
    grid, pred_col, gathered = random_row_finds(10)
    b, C = grid.block, grid.C
    expected = np.full(b, SENTINEL, np.int64)
    resolve_parents(CPU, grid, pred_col, dense_entries(gathered, C, b), expected)
    assert (expected[pred_col == BOTTOM_UP] >= 0).all()
    parent = np.full(b, SENTINEL, np.int64)
    resolve_parents(CPU, grid, pred_col, held_entries_of(gathered, C, b, 11), parent)
    assert np.array_equal(parent, expected)
    elsewhere = np.full(b, SENTINEL, np.int64)      # the finds recorded by the column finds instead
    resolve_parents(CPU, grid, pred_col, dense_entries(gathered, C, b), elsewhere, rows_found=False)
    bottom_up = pred_col == BOTTOM_UP
    assert (elsewhere[bottom_up] == SENTINEL).all() and np.array_equal(elsewhere[~bottom_up], expected[~bottom_up])


@pytest.mark.parametrize("first", [0, 2])
def test_resolve_columns_held_by_position_reads_the_same(first):
    """Blocks held by position (a hypersparse block's column finds, or a packed message) resolve as
    the dense blocks do, whichever grid row is read first."""
    grid, marker, gathered, _, _ = random_column_finds(12)
    expected = np.full(grid.block, SENTINEL, np.int64)
    resolve_columns(CPU, grid, marker, dense_entries(gathered, grid.R, grid.block), first, expected)
    assert (expected[marker == BOTTOM_UP] >= 0).all()
    parent = np.full(grid.block, SENTINEL, np.int64)
    resolve_columns(CPU, grid, marker, held_entries_of(gathered, grid.R, grid.block, 13), first, parent)
    assert np.array_equal(parent, expected)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.int64, np.int32])
@pytest.mark.parametrize("shape", [(4, 3), (3, 1)])
@pytest.mark.parametrize("held", [False, True])
def test_resolve_columns_gpu_matches_numpy(dtype, shape, held):
    import cupy
    grid, marker, gathered, _, _ = random_column_finds(7, *shape, b=300_032)
    entries = held_entries_of(gathered, grid.R, grid.block, 8) if held else dense_entries(gathered, grid.R, grid.block)
    addresses, kept = entries_on_device(entries)
    expected = np.full(grid.block, SENTINEL, dtype)
    resolve_columns(CPU, grid, marker, entries, 1, expected)
    parent = cupy.full(grid.block, SENTINEL, dtype)
    resolve_columns(gpu_backend(), grid, cupy.asarray(marker), addresses, 1, parent)
    assert np.array_equal(cupy.asnumpy(parent), expected)
    in_place = cupy.asarray(marker.astype(np.int32))     # the marker as the int32 parent array itself
    resolve_columns(gpu_backend(), grid, in_place, addresses, 1, in_place)
    twin = marker.astype(np.int32)
    resolve_columns(CPU, grid, twin, entries, 1, twin)
    assert np.array_equal(cupy.asnumpy(in_place), twin)


@pytest.mark.parametrize("name", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def test_stamps_are_written_in_stream_order(name):
    """Phase marks (dbfs.ops.clock): each slot written once, in the order enqueued, nanoseconds apart."""
    backend = gpu_backend() if name == "gpu" else Backend("cpu")
    marks = backend.xp.full(5, -1, np.int64)
    for k in (0, 1, 2, 3):
        stamp(backend, marks, k)
    marks = backend.asnumpy(marks)
    assert marks[4] == -1 and np.all(np.diff(marks[:4]) >= 0) and marks[0] > 0
    with pytest.raises(IndexError):
        stamp(backend, backend.xp.zeros(5, np.int64), 5)


@pytest.mark.gpu
@pytest.mark.parametrize("parent_dtype", [np.int32, np.int64])
def test_gpu_visit_root_matches_its_twin(parent_dtype):
    """The root on its grid owner: visited bit (beside bits already set), level, parent (itself), the own
    list of one."""
    import cupy
    rng = np.random.default_rng(7)
    root = 2**33 + 5 if parent_dtype == np.int64 else 123456
    arrays = {"visited": rng.integers(0, 2**32, 64, dtype=np.uint32), "level": np.full(500, -1, np.int32),
              "parent": np.full(500, -1, parent_dtype), "queue": np.full(2000, SENTINEL, np.int32),
              "counts": np.zeros(4, np.int32)}
    on_gpu = {name: cupy.asarray(a) for name, a in arrays.items()}
    where = np.zeros(ROOT_WORDS, np.int64)
    where[[ROOT.ID, ROOT.ROW, ROOT.OFFSET, ROOT.GROUP]] = root, 1567, 67, 2
    for backend, state, root_words in ((CPU, arrays, where), (gpu_backend(), on_gpu, cupy.asarray(where))):
        visit_root(backend, state["visited"], state["level"], state["parent"], state["queue"], state["counts"],
                   root_words)
    for name, expected in arrays.items():
        np.testing.assert_array_equal(cupy.asnumpy(on_gpu[name]), expected, err_msg=name)
    assert arrays["visited"][1567 >> 5] & (1 << 31) and arrays["level"][67] == 0 and arrays["parent"][67] == root
    assert (arrays["parent"] == -1).sum() == 499
    assert arrays["queue"][0] == 67 and (arrays["queue"] == SENTINEL).sum() == 1999
    assert arrays["counts"].tolist() == [0, 0, 1, 0]


@pytest.mark.parametrize("name", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def test_peer_sums_match_numpy(name):
    """The spans' sums (dbfs.ops.peer_sums), modulo 2^64, a span of fewer words than a block's threads
    among them; the GPU reads the spans through their addresses, as it reads the peers' copies."""
    rng = np.random.default_rng(3)
    spans = [rng.integers(0, 2**64, words, dtype=np.uint64) for words in (8192, 8192, 100)]
    expected = np.array([span[:100].sum(dtype=np.uint64) for span in spans], np.uint64)
    backend = gpu_backend() if name == "gpu" else CPU
    if name == "gpu":
        held = [backend.asarray(span) for span in spans]
        table = backend.asarray(np.array([span.data.ptr for span in held], np.uint64))
    else:
        table = spans
    sums = backend.xp.zeros(len(spans), np.uint64)
    peer_sums(backend, table, 100, sums)
    assert np.array_equal(backend.asnumpy(sums), expected)
    if name == "gpu":
        peer_sums(backend, table[:2], 8192, sums[:2])
        assert np.array_equal(backend.asnumpy(sums[:2]), [span.sum(dtype=np.uint64) for span in spans[:2]])
