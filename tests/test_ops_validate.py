"""The validation operators (dbfs.ops.validate): NumPy twins against a brute force in global ids, GPU
kernels against the twins.

Random CSC blocks of ranks of several R x C grids with duplicate entries, runs of empty columns and a
heavy column, random compact levels (some without a level) and parents, part of them the vertex's
real parent entry, so that every rule fires many times; directed and undirected, every compact level
type and both parent types; the column offsets dense and held by the positions of the non-empty
columns (also of a hypersparse block). On the GPU also a hub of a million entries, a lattice with a
correct BFS and the same lattice with a few broken vertices, every entries-per-lane variant, and the
detail pass for every rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from dbfs.backend import Backend
from dbfs.grid import Grid
from dbfs.ops import validate as ops
from dbfs.ops.sparse import Positions

pytestmark = pytest.mark.one_rank

CPU = Backend("cpu")
ENTRY_RULES = ("level", "parent_unreached", "cycle", "span", "edge_level")
COUNT_SLOTS = ("visited_entries", "span_entries")


@dataclass
class Block:
    """The inputs of check_entries for rank (i, j) of a grid."""
    grid: Grid
    i: int
    j: int
    col_ptr: np.ndarray
    row_idx: np.ndarray
    col_level: np.ndarray
    row_level: np.ndarray
    parent: np.ndarray
    directed: bool

    @property
    def marks_words(self):
        return (self.grid.rows_per_rank if self.directed else self.grid.cols_per_rank) // 32


def csc(ncols, cols, rows):
    order = np.argsort(cols, kind="stable")
    col_ptr = np.zeros(ncols + 1, np.int64)
    np.cumsum(np.bincount(cols, minlength=ncols), out=col_ptr[1:])
    return col_ptr, rows[order].astype(np.int32)


def random_block(seed, R, C, i, j, n, nnz, directed, level_type, parent_type, heavy=0, depth=6):
    rng = np.random.default_rng(seed)
    grid = Grid(R, C, n)
    ncols, nrows = grid.cols_per_rank, grid.rows_per_rank
    cols = rng.integers(0, ncols, nnz)
    cols = cols[(cols < ncols // 3) | (cols > ncols // 2)]          # a run of empty columns
    rows = rng.integers(0, nrows, cols.size)
    again = rng.integers(0, cols.size, cols.size // 10)              # duplicate entries
    cols = np.concatenate((cols, cols[again], np.full(heavy, ncols - 2)))
    rows = np.concatenate((rows, rows[again], rng.integers(0, nrows, heavy)))
    col_ptr, row_idx = csc(ncols, cols, rows)
    sentinel = np.iinfo(level_type).max if level_type != np.int32 else -1

    def levels(count):
        lv = rng.integers(0, depth, count).astype(level_type)
        lv[rng.random(count) < 0.2] = sentinel
        return lv

    entry_cols = np.repeat(np.arange(ncols), np.diff(col_ptr))
    if directed:
        # about half of the rows with entries get the column of one of their entries as parent
        parent = rng.integers(-1, grid.n_padded + 3, nrows)
        pick = rng.permutation(row_idx.size)[:nrows]
        chosen = pick[rng.random(pick.size) < 0.5]
        parent[row_idx[chosen]] = grid.to_global_col(j, entry_cols[chosen])
    else:
        # about half of the columns with entries get the vertex of one of their rows as parent
        parent = rng.integers(-1, grid.n_padded + 3, ncols)
        pick = rng.permutation(row_idx.size)[:ncols]
        chosen = pick[rng.random(pick.size) < 0.5]
        parent[entry_cols[chosen]] = grid.to_global_row(i, row_idx[chosen].astype(np.int64))
    return Block(grid, i, j, col_ptr, row_idx, levels(ncols), levels(nrows), parent.astype(parent_type),
                 directed)


def held_columns(backend, col_ptr):
    """A block's column offsets held by position, on `backend`: (col_ptr at the non-empty columns and
    its last entry, the Positions of those columns), as dbfs.graph.LocalGraph holds them."""
    n = col_ptr.size - 1
    columns = Positions.of_columns(CPU, col_ptr, np.zeros(n // 32, np.uint32), np.zeros(n // 32 + 1, np.int32))
    offsets = np.append(col_ptr[:-1][np.diff(col_ptr) > 0], col_ptr[-1])
    to = backend.asarray
    return to(offsets), Positions(to(columns.words), to(columns.starts), columns.count)


def run_entries(backend, block, detail=None, entries_per_lane=ops.DEFAULT_ENTRIES_PER_LANE, half=False,
                pieces=(1, 1), held=False):
    """check_entries on `backend`: (stats, marks) as NumPy arrays. pieces (columns, rows): the local
    columns and rows cut into that many equal pieces (R, C: the grid's owned blocks), one check_entries
    per pair of pieces into the same stats and marks. held: the column offsets held by position."""
    to = backend.asarray
    stats = ops.new_stats(backend)
    marks = to(np.zeros(block.marks_words, np.uint32))
    layout = ops.EntryLayout.of(block.grid, block.i, block.j, backend)
    col_ptr, columns = held_columns(backend, block.col_ptr) if held else (to(block.col_ptr), None)
    row_idx = to(block.row_idx)
    width, height = block.col_level.size // pieces[0], block.row_level.size // pieces[1]
    for c0 in range(0, block.col_level.size, width):
        for r0 in range(0, block.row_level.size, height):
            parent = block.parent[r0:r0 + height] if block.directed else block.parent[c0:c0 + width]
            ops.check_entries(backend, col_ptr, row_idx, to(block.col_level[c0:c0 + width]),
                              to(block.row_level[r0:r0 + height]), to(parent), block.directed, layout, marks, stats,
                              detail, entries_per_lane, half, first_col=c0, first_row=r0, columns=columns)
    return backend.asnumpy(stats), backend.asnumpy(marks)


def symmetric_blocks(seed, R, C, n, nedges, level_type, parent_type, depth=6):
    """A random undirected graph (each edge in both directions; duplicates, a hub, isolated vertices)
    with a broken search result (random levels, a fifth of them none; half of the vertices with a
    neighbour as parent, the rest random ids), as the check_entries inputs of every rank of R x C."""
    rng = np.random.default_rng(seed)
    grid = Grid(R, C, n)
    a = rng.integers(0, n // 2, nedges)
    b = np.concatenate((rng.integers(0, n // 2, nedges - nedges // 10), np.full(nedges // 10, 3)))
    a, b = a[a != b], b[a != b]
    again = rng.integers(0, a.size, a.size // 10)
    u = np.concatenate((a, b, a[again], b[again]))
    v = np.concatenate((b, a, b[again], a[again]))
    sentinel = np.iinfo(level_type).max if level_type != np.int32 else -1
    compact = rng.integers(0, depth, grid.n_padded).astype(level_type)
    compact[rng.random(grid.n_padded) < 0.2] = sentinel
    parent = rng.integers(-1, grid.n_padded + 3, grid.n_padded)
    chosen = rng.permutation(u.size)[:n // 4]
    parent[u[chosen]] = v[chosen]
    blocks = []
    for i in range(R):
        for j in range(C):
            mine = (grid.owner(v)[0] == i) & (grid.col_block(u) == j)
            col_ptr, row_idx = csc(grid.cols_per_rank, grid.to_local_col(u[mine]), grid.to_local_row(v[mine]))
            columns = grid.to_global_col(j, np.arange(grid.cols_per_rank))
            rows = grid.to_global_row(i, np.arange(grid.rows_per_rank))
            blocks.append(Block(grid, i, j, col_ptr, row_idx, compact[columns], compact[rows],
                                parent[columns].astype(parent_type), False))
    return blocks


def grid_entries(backend, blocks, detail=None, half=False):
    """check_entries over every rank's block, the stats combined as graph500.validate does (lowest
    offenders and witness, summed counts); the marks per block."""
    runs = [run_entries(backend, block, detail, half=half) for block in blocks]
    stats = np.min([s for s, _ in runs], axis=0)
    for slot in COUNT_SLOTS:
        stats[ops.SLOT[slot]] = sum(int(s[ops.SLOT[slot]]) for s, _ in runs)
    return stats, [m for _, m in runs]


def brute_force_entries(block):
    """The check_entries contract in global ids (dbfs.grid directly), all entries at once: the
    expected rule and count slots, the marks, and per rule the offenders' other ends."""
    grid, i, j = block.grid, block.i, block.j
    c = np.repeat(np.arange(grid.cols_per_rank), np.diff(block.col_ptr))
    r = block.row_idx.astype(np.int64)
    u, v = grid.to_global_col(j, c), grid.to_global_row(i, r)

    def level(compact):
        lv = compact.astype(np.int64)
        return np.where(compact == (np.iinfo(compact.dtype).max if compact.dtype != np.int32 else -1), -1, lv)

    lc, lr = level(block.col_level)[c], level(block.row_level)[r]
    parent = block.parent.astype(np.int64)
    if block.directed:
        tree = (lr >= 0) & (parent[r] == u)
        child, up, child_id, parent_id, marked = lr, lc, v, u, r
    else:
        p = parent[c]
        mine = (p >= 0) & (p < grid.n_padded)
        owner_row, _ = grid.owner(np.where(mine, p, 0))
        tree = (lc >= 0) & mine & (owner_row == i) & (grid.to_local_row(np.where(mine, p, 0)) == r)
        child, up, child_id, parent_id, marked = lc, lr, u, v, c
    visited = lc >= 0
    span = visited & (lr < 0)
    steep = visited & (lr >= 0) & ((lr > lc + 1) if block.directed else (np.abs(lc - lr) > 1))
    offences = {"level": (tree & (up >= 0) & (up < child - 1), child_id, parent_id),
                "parent_unreached": (tree & (up < 0), child_id, parent_id),
                "cycle": (tree & (up >= child), child_id, parent_id),
                "span": (span, v, u), "edge_level": (steep, v, u)}
    expected = {rule: int(ids[bad].min()) if bad.any() else ops.NO_VERTEX
                for rule, (bad, ids, _) in offences.items()}
    expected["visited_entries"] = int(visited.sum())
    expected["span_entries"] = int(span.sum())
    bits = np.zeros(32 * block.marks_words, bool)
    bits[marked[tree]] = True
    marks = np.packbits(bits, bitorder="little").view(np.uint32)
    witnesses = {rule: int(others[bad & (ids == expected[rule])].min())
                 for rule, (bad, ids, others) in offences.items() if bad.any()}
    return expected, marks, witnesses


BLOCK_SHAPES = [(1, 1, 0, 0, 300), (2, 2, 1, 0, 1000), (2, 3, 0, 2, 997), (3, 1, 2, 0, 500), (1, 4, 0, 1, 700)]
LEVEL_TYPES = (np.uint8, np.uint16, np.int32)
PARENT_TYPES = (np.int32, np.int64)
BLOCK_CASES = [(shape, directed, lt, pt) for shape in BLOCK_SHAPES for directed in (False, True)
               for lt in LEVEL_TYPES for pt in PARENT_TYPES]


def case_id(case):
    (R, C, i, j, n), directed, lt, pt = case
    return f"{R}x{C}@{i},{j}-{'dir' if directed else 'undir'}-{np.dtype(lt).name}-{np.dtype(pt).name}"


def block_of(case, seed=5, nnz=3000, heavy=200):
    (R, C, i, j, n), directed, lt, pt = case
    return random_block(seed, R, C, i, j, n, nnz, directed, lt, pt, heavy=heavy)


@pytest.mark.parametrize("case", BLOCK_CASES, ids=[case_id(c) for c in BLOCK_CASES])
def test_numpy_entries_match_the_brute_force(case):
    block = block_of(case)
    stats, marks = run_entries(CPU, block)
    expected, expected_marks, witnesses = brute_force_entries(block)
    for slot, value in expected.items():
        assert int(stats[ops.SLOT[slot]]) == value, slot
    assert np.array_equal(marks, expected_marks)
    assert all(int(stats[ops.SLOT[rule]]) != ops.NO_VERTEX for rule in ENTRY_RULES)
    for rule, witness in witnesses.items():
        detail_stats, _ = run_entries(CPU, block, (rule, expected[rule]))
        assert int(detail_stats[ops.SLOT["witness"]]) == witness, rule


@pytest.mark.parametrize("case", BLOCK_CASES[::3], ids=[case_id(c) for c in BLOCK_CASES[::3]])
def test_numpy_pieces_match_the_whole_block(case):
    """The block's columns by owned block (with the rows whole, and with the rows by owned block too):
    the same stats, marks and witnesses as the whole block in one pass."""
    block = block_of(case)
    R, C = block.grid.R, block.grid.C
    whole = run_entries(CPU, block)
    for pieces in ((R, 1), (R, C)):
        stats, marks = run_entries(CPU, block, pieces=pieces)
        assert np.array_equal(stats, whole[0]) and np.array_equal(marks, whole[1]), pieces
        for rule in ENTRY_RULES:
            detail = (rule, int(whole[0][ops.SLOT[rule]]))
            assert np.array_equal(run_entries(CPU, block, detail, pieces=pieces)[0], run_entries(CPU, block, detail)[0])


HELD_CASES = [(shape, directed, np.uint16, np.int64) for shape in BLOCK_SHAPES for directed in (False, True)]


def held_blocks(case):
    """The case's block and a hypersparse one: an entry per 8 columns, runs of empty columns longer
    than a warp."""
    (R, C, _, _, n), _, _, _ = case
    return block_of(case), block_of(case, nnz=Grid(R, C, n).cols_per_rank // 8, heavy=0)


@pytest.mark.parametrize("case", HELD_CASES, ids=[case_id(c) for c in HELD_CASES])
def test_numpy_held_columns_match_dense(case):
    """The column offsets held by the positions of the non-empty columns: the dense offsets' stats,
    marks and witnesses, on the block whole and in pieces (columns from past the first word on, rows by
    owned block)."""
    for block in held_blocks(case):
        for pieces in ((1, 1), (2 * block.grid.R, block.grid.C)):
            dense = run_entries(CPU, block, pieces=pieces)
            held = run_entries(CPU, block, pieces=pieces, held=True)
            assert np.array_equal(held[0], dense[0]) and np.array_equal(held[1], dense[1]), pieces
            for rule in ENTRY_RULES:
                if int(dense[0][ops.SLOT[rule]]) != ops.NO_VERTEX:
                    detail = (rule, int(dense[0][ops.SLOT[rule]]))
                    assert np.array_equal(run_entries(CPU, block, detail, pieces=pieces, held=True)[0],
                                          run_entries(CPU, block, detail, pieces=pieces)[0]), (rule, pieces)


SYMMETRIC_CASES = [(R, C, lt) for R, C in ((1, 1), (2, 2), (2, 3), (3, 1), (1, 4)) for lt in LEVEL_TYPES]


@pytest.mark.parametrize("R, C, level_type", SYMMETRIC_CASES)
def test_numpy_half_form_matches_the_full_form(R, C, level_type):
    """On a symmetric CSC the half form (each edge at one of its entries) finds the same lowest
    offenders, witnesses, counts and marks as the full form, over the whole grid."""
    blocks = symmetric_blocks(11, R, C, 600, 2500, level_type, np.int64)
    full, full_marks = grid_entries(CPU, blocks)
    half, half_marks = grid_entries(CPU, blocks, half=True)
    assert np.array_equal(full, half)
    assert all(np.array_equal(x, y) for x, y in zip(full_marks, half_marks))
    assert all(int(full[ops.SLOT[rule]]) != ops.NO_VERTEX for rule in ENTRY_RULES)
    for rule in ENTRY_RULES:
        detail = (rule, int(full[ops.SLOT[rule]]))
        assert np.array_equal(grid_entries(CPU, blocks, detail)[0], grid_entries(CPU, blocks, detail, True)[0])


def random_vertices(seed, b, n_real, first_id, n_vertices, parent_type):
    rng = np.random.default_rng(seed)
    parent = rng.integers(-1, n_vertices + 3, b)
    parent[rng.random(b) < 0.3] = -1
    parent[5] = first_id + 5                             # a self-parent
    level = rng.integers(-2, 40, b).astype(np.int32)
    level[parent == -1] = np.where(rng.random(b) < 0.9, -1, 3)[parent == -1]
    level[b - 1] = 300                                   # deeper than uint8 holds
    marks = rng.integers(0, 2**32, b // 32, dtype=np.uint64).astype(np.uint32)
    return parent.astype(parent_type), level, marks


def brute_force_vertices(parent, level, marks, n_real, first_id, n_vertices, root):
    p = parent.astype(np.int64)
    b = p.size
    v = first_id + np.arange(b)
    real = np.arange(b) < n_real
    has = p != -1
    valid = has & (level >= 0)
    marked = np.unpackbits(marks.view(np.uint8), bitorder="little")[:b].astype(bool)

    def lowest(bad):
        return int(v[bad].min()) if bad.any() else ops.NO_VERTEX

    return {"parent_range": lowest(has & (~real | (p < 0) | (p >= n_vertices))),
            "root": lowest(real & (v == root) & ((p != root) | (level != 0))),
            "self_parent": lowest(real & (p == v) & (v != root)),
            "level": lowest(np.where(has, level < 0, level != -1)),
            "parent_not_neighbour": lowest(real & has & ~marked & (v != root)),
            "visited": int((valid & real).sum()),
            "deepest": int(level[valid].max()) + 1 if valid.any() else 0}


def run_vertices(backend, parent, level, marks, n_real, first_id, n_vertices, root, level_type):
    to = backend.asarray
    stats = ops.new_stats(backend)
    ops.check_vertices(backend, to(parent), to(level), n_real, first_id, n_vertices, root, stats)
    ops.check_parent_edges(backend, to(parent), to(marks), n_real, first_id, root, stats)
    compact = to(np.zeros(parent.size, level_type))
    ops.compact_levels(backend, to(parent), to(level), compact)
    return backend.asnumpy(stats), backend.asnumpy(compact)


VERTEX_CASES = [(b, n_real, first_id, pt) for b, n_real, first_id in ((4096, 4096, 0), (2048, 1000, 8192),
                                                                       (64, 0, 100))
                for pt in PARENT_TYPES]


@pytest.mark.parametrize("b, n_real, first_id, parent_type", VERTEX_CASES)
def test_numpy_vertex_rules_match_the_brute_force(b, n_real, first_id, parent_type):
    n_vertices = first_id + n_real
    parent, level, marks = random_vertices(3, b, n_real, first_id, n_vertices, parent_type)
    root = first_id + 7 if n_real > 7 else 0
    stats, compact = run_vertices(CPU, parent, level, marks, n_real, first_id, n_vertices, root, np.uint16)
    for slot, value in brute_force_vertices(parent, level, marks, n_real, first_id, n_vertices, root).items():
        assert int(stats[ops.SLOT[slot]]) == value, slot
    valid = (parent != -1) & (level >= 0)
    assert np.array_equal(compact, np.where(valid, level, 65535).astype(np.uint16))


# GPU: kernels against the twins --------------------------------------------------------------------

def gpu_backend():
    return Backend("gpu", 0)


def assert_kernels_match_twins(block, variants=ops.ENTRIES_PER_LANE, half=False, pieces=(1, 1), held=False):
    """The kernels, on the block whole or in `pieces` (run_entries), against the twin on the whole block,
    both with the column offsets held by position where `held`."""
    cpu_stats, cpu_marks = run_entries(CPU, block, half=half, held=held)
    for entries_per_lane in variants:
        stats, marks = run_entries(gpu_backend(), block, entries_per_lane=entries_per_lane, half=half, pieces=pieces,
                                   held=held)
        assert np.array_equal(stats, cpu_stats), (entries_per_lane, stats, cpu_stats)
        assert np.array_equal(marks, cpu_marks), entries_per_lane
    for rule in ENTRY_RULES:
        vertex = int(cpu_stats[ops.SLOT[rule]])
        if vertex != ops.NO_VERTEX:
            expected, _ = run_entries(CPU, block, (rule, vertex), half=half, held=held)
            got, _ = run_entries(gpu_backend(), block, (rule, vertex), half=half, pieces=pieces, held=held)
            assert int(got[ops.SLOT["witness"]]) == int(expected[ops.SLOT["witness"]]), rule
    return cpu_stats


@pytest.mark.gpu
@pytest.mark.parametrize("R, C, level_type", SYMMETRIC_CASES)
def test_gpu_half_form_matches_numpy(R, C, level_type):
    for block in symmetric_blocks(11, R, C, 600, 2500, level_type, np.int64):
        assert_kernels_match_twins(block, half=True)


@pytest.mark.gpu
def test_gpu_half_form_refuses_a_directed_block():
    block = block_of(BLOCK_CASES[0])
    block.directed = True
    with pytest.raises(ValueError, match="half form"):
        run_entries(gpu_backend(), block, half=True)


@pytest.mark.gpu
@pytest.mark.parametrize("case", BLOCK_CASES, ids=[case_id(c) for c in BLOCK_CASES])
def test_gpu_entries_match_numpy(case):
    assert_kernels_match_twins(block_of(case))
    assert_kernels_match_twins(block_of(case, seed=9, nnz=0, heavy=0))


@pytest.mark.gpu
@pytest.mark.parametrize("case", BLOCK_CASES, ids=[case_id(c) for c in BLOCK_CASES])
def test_gpu_pieces_match_numpy(case):
    """A column piece (the owned blocks of the columns, rows whole) and the row filter (both by owned
    block): the kernels' stats, marks and witnesses those of the twin on the whole block."""
    block = block_of(case)
    for pieces in ((block.grid.R, 1), (block.grid.R, block.grid.C)):
        assert_kernels_match_twins(block, pieces=pieces)


@pytest.mark.gpu
@pytest.mark.parametrize("held", [False, True], ids=["dense", "held"])
@pytest.mark.parametrize("R, C, level_type", SYMMETRIC_CASES)
def test_gpu_half_form_in_pieces_matches_numpy(R, C, level_type, held):
    for block in symmetric_blocks(11, R, C, 600, 2500, level_type, np.int64):
        assert_kernels_match_twins(block, half=True, pieces=(R, C), held=held)


@pytest.mark.gpu
@pytest.mark.parametrize("case", HELD_CASES, ids=[case_id(c) for c in HELD_CASES])
def test_gpu_held_columns_match_numpy(case):
    """The column offsets held by position: the kernels against the twin, on the block whole and in
    pieces, of the case's block, a hypersparse one, and a 2x2 grid's block whose warps mostly span more
    than 32 columns (the column search through the held starts)."""
    wide = random_block(19, 2, 2, 1, 1, 1 << 17, 5000, case[1], np.uint16, np.int64, heavy=300)
    for block in (*held_blocks(case), wide):
        for pieces in ((1, 1), (2 * block.grid.R, block.grid.C)):
            assert_kernels_match_twins(block, pieces=pieces, held=True)


@pytest.mark.gpu
@pytest.mark.parametrize("held", [False, True], ids=["dense", "held"])
@pytest.mark.parametrize("directed", [False, True])
def test_gpu_pieces_with_a_hub(directed, held):
    """Pieces of a 2x2 grid's block, a column of a million entries in the last column piece, the pieces'
    entries starting off the column table's chunks."""
    block = random_block(17, 2, 2, 1, 1, 1 << 17, 200001, directed, np.uint16, np.int64, heavy=1_000_000)
    assert_kernels_match_twins(block, pieces=(2, 2), held=held)


@pytest.mark.gpu
@pytest.mark.parametrize("directed", [False, True])
def test_gpu_entries_with_a_hub(directed):
    """A column of a million entries beside 200000 random ones: the merge path splits the hub."""
    block = random_block(13, 1, 1, 0, 0, 1 << 17, 200000, directed, np.uint8, np.int32, heavy=1_000_000)
    assert_kernels_match_twins(block)


def lattice_block(side, parent_type=np.int32):
    """The side x side lattice (4-neighbour, both directions) on a 1x1 grid, searched from vertex 0:
    level x + y, parent the left neighbour (the upper one in column 0)."""
    n = side * side
    x, y = np.arange(n) % side, np.arange(n) // side
    right, down = np.flatnonzero(x < side - 1), np.flatnonzero(y < side - 1)
    src = np.concatenate((right, right + 1, down, down + side))
    dst = np.concatenate((right + 1, right, down + side, down))
    grid = Grid(1, 1, n)
    col_ptr, row_idx = csc(grid.cols_per_rank, src, dst)
    level = np.full(grid.block, -1, np.int32)
    level[:n] = x + y
    parent = np.full(grid.block, -1, np.int64)
    parent[:n] = np.where(x > 0, np.arange(n) - 1, np.arange(n) - side)
    parent[0] = 0
    return grid, col_ptr, row_idx, parent.astype(parent_type), level


@pytest.mark.gpu
@pytest.mark.parametrize("broken", [False, True])
def test_gpu_lattice(broken):
    side = 1024
    grid, col_ptr, row_idx, parent, level = lattice_block(side)
    if broken:
        parent[side * 300 + 5] = side * 300 + 7            # not a neighbour
        level[side * 500 + 9] += 2                          # two below its parent
        level[side * 700 + 700] = -1                        # a visited vertex without a level
    deepest = int(level.max()) + 1
    compact = np.where((parent != -1) & (level >= 0), level, -1).astype(ops.level_dtype(deepest))
    for directed in (False, True):
        block = Block(grid, 0, 0, col_ptr, row_idx, compact, compact, parent, directed)
        stats = assert_kernels_match_twins(block)
        if not broken:
            assert all(int(stats[ops.SLOT[rule]]) == ops.NO_VERTEX for rule in ENTRY_RULES)
            assert int(stats[ops.SLOT["visited_entries"]]) == row_idx.size


@pytest.mark.gpu
@pytest.mark.parametrize("b, n_real, first_id, parent_type", VERTEX_CASES + [(1 << 20, 1 << 20, 0, np.int32)])
def test_gpu_vertex_rules_match_numpy(b, n_real, first_id, parent_type):
    n_vertices = first_id + n_real
    parent, level, marks = random_vertices(3, b, n_real, first_id, n_vertices, parent_type)
    root = first_id + 7 if n_real > 7 else 0
    for level_type in LEVEL_TYPES:
        expected = run_vertices(CPU, parent, level, marks, n_real, first_id, n_vertices, root, level_type)
        got = run_vertices(gpu_backend(), parent, level, marks, n_real, first_id, n_vertices, root, level_type)
        assert np.array_equal(got[0], expected[0]) and np.array_equal(got[1], expected[1]), level_type
