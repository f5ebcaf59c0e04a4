"""Distributed BFS validator: correct trees pass with the exact TEPS edge count; each kind of wrong
result is rejected under the right rule, naming the lowest offending vertex, identically on every rank.

Collective over MPI.COMM_WORLD; every R x C factorisation of the world size is tried. Reference
results come from SciPy's serial BFS over the whole (small) tuple list, sliced to each rank's block.
"""
import numpy as np
import pytest
from mpi4py import MPI
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import breadth_first_order, depth_first_order, shortest_path

from dbfs.backend import Backend
from dbfs.build import build_from_edges
from dbfs.graph import GridComms
from dbfs.grid import Grid
from graph500.generator import generate_edges
from graph500.validate import validate_bfs

WORLD = MPI.COMM_WORLD
SIZE = WORLD.Get_size()
GRIDS = [(r, SIZE // r) for r in range(1, SIZE + 1) if SIZE % r == 0]
N = 203


def random_graph(seed=11):
    """Tuples over N vertices: a 120-vertex component, a 40-vertex one, a 10-ring, isolated vertices
    (some with self-loops only), duplicate tuples and self-loops; labels and tuple order shuffled.
    Returns (src, dst, components as arrays of global ids)."""
    rng = np.random.default_rng(seed)

    def connected(lo, hi, extra):
        k = hi - lo
        child = np.arange(1, k)
        tree_parent = rng.integers(0, child)
        return (np.concatenate((child, rng.integers(0, k, extra))) + lo,
                np.concatenate((tree_parent, rng.integers(0, k, extra))) + lo)

    big, second = connected(0, 120, 60), connected(120, 160, 20)
    ring = (np.arange(160, 170), np.roll(np.arange(160, 170), 1))
    src = np.concatenate((big[0], second[0], ring[0]))
    dst = np.concatenate((big[1], second[1], ring[1]))
    again = rng.integers(0, src.size, 30)
    loops = np.concatenate((rng.integers(0, 170, 6), np.arange(172, 176)))
    src = np.concatenate((src, dst[again], loops))
    dst = np.concatenate((dst, src[again], loops))
    label = rng.permutation(N)
    order = rng.permutation(src.size)
    components = {"big": label[0:120], "second": label[120:160], "ring": label[160:170],
                  "self-loop only": label[172:176]}
    return label[src[order]], label[dst[order]], components


SRC, DST, COMPONENTS = random_graph()
MATRIX = coo_matrix((np.ones(SRC.size), (SRC, DST)), shape=(N, N)).tocsr()


def reference_bfs(root, matrix=MATRIX):
    """(parent, level) over all vertices from SciPy; -1 where unreached, parent[root] = root."""
    _, pred = breadth_first_order(matrix, root, directed=False, return_predecessors=True)
    parent = np.where(pred < 0, -1, pred).astype(np.int64)
    parent[root] = root
    dist = shortest_path(matrix, directed=False, unweighted=True, indices=root)
    level = np.where(np.isinf(dist), -1, dist).astype(np.int32)
    return parent, level


def tuples_in_component(level, src=SRC, dst=DST):
    return int(np.count_nonzero((src != dst) & (level[src] >= 0)))


def reaches_root(parent, root):
    """Serial pointer jumping: does following parents from each vertex end at the root?"""
    up = np.where((parent >= 0) & (parent < parent.size), parent, -1)
    for _ in range(int(np.log2(parent.size)) + 2):
        up = np.where(up >= 0, up[np.maximum(up, 0)], -1)
    return up == root


def build(shape, n, src, dst):
    comms = GridComms.create(Grid(shape[0], shape[1], n))
    rank = WORLD.Get_rank()
    return build_from_edges(comms, Backend("cpu"), src[rank::SIZE], dst[rank::SIZE], n)


@pytest.fixture(scope="module", params=GRIDS, ids=[f"{r}x{c}" for r, c in GRIDS])
def graph(request):
    built = build(request.param, N, SRC, DST)
    yield built
    built.comms.free()


def owned(graph, values):
    """This rank's block of a global per-vertex array (length N, or n_padded to set padding too)."""
    grid = graph.grid
    padded = np.full(grid.n_padded, -1, np.asarray(values).dtype)
    padded[:len(values)] = values
    return padded[grid.to_global_owned(graph.i, graph.j, np.arange(grid.block))]


def validate(graph, root, parent, nedge, level=None):
    result = validate_bfs(graph, root, owned(graph, parent), nedge,
                          None if level is None else owned(graph, level))
    verdicts = WORLD.allgather(result)
    assert all(v == verdicts[0] for v in verdicts)
    return result


def test_correct_trees_validate(graph):
    big = COMPONENTS["big"]
    roots = [int(big.min()), int(big[7]), int(COMPONENTS["second"][0]), int(COMPONENTS["ring"][3]),
             int(COMPONENTS["self-loop only"][0])]
    for root in roots:
        parent, level = reference_bfs(root)
        nedge = tuples_in_component(level)
        for given in (None, level):
            result = validate(graph, root, parent, nedge, given)
            assert result.ok, result.message
            assert (result.rule, result.message, result.vertex) == (None, None, None)
            assert result.nedge == nedge
            assert result.visited == np.count_nonzero(level >= 0)
            assert result.max_level == level.max()
        if root == roots[-1]:
            assert (nedge, result.visited, result.max_level) == (0, 1, 0)


def test_graph500_graph_validates():
    scale, edgefactor = 9, 8
    n, m = 1 << scale, edgefactor << scale
    src, dst = generate_edges(scale, edgefactor, 0, m)
    degree = np.bincount(np.concatenate((src[src != dst], dst[src != dst])), minlength=n)
    roots = np.flatnonzero(degree > 0)[[0, 5, 77]]
    matrix = coo_matrix((np.ones(m), (src, dst)), shape=(n, n)).tocsr()
    for shape in GRIDS:
        graph = build(shape, n, src, dst)
        for root in roots:
            parent, level = reference_bfs(int(root), matrix)
            nedge = tuples_in_component(level, src, dst)
            assert nedge > m // 4
            result = validate(graph, int(root), parent, nedge, level)
            assert result.ok, result.message
            assert result.nedge == nedge
            x = int(np.flatnonzero(level == 2)[0])
            parent[x] = int(np.flatnonzero(level == 4)[0])
            assert validate(graph, int(root), parent, nedge).rule == "parent-not-neighbour"
        graph.comms.free()


ROOT = int(COMPONENTS["big"][0])
PARENT, LEVEL = reference_bfs(ROOT)
NEDGE = tuples_in_component(LEVEL)
CHILDREN = np.bincount(PARENT[(PARENT >= 0) & (np.arange(N) != ROOT)], minlength=N)
LEAVES = np.flatnonzero((LEVEL >= 1) & (CHILDREN == 0))
INNER = np.flatnonzero((LEVEL >= 1) & (CHILDREN > 0))
DEEP = np.flatnonzero(LEVEL >= 2)


def wrong_cycle():
    x = int(DEEP[-1])
    parent = PARENT.copy()
    parent[parent[x]] = x
    lost = np.flatnonzero((parent >= 0) & ~reaches_root(parent, ROOT))
    return parent, None, NEDGE, "cycle", int(lost.min())


def wrong_levels():
    level = LEVEL.copy()
    a, b = int(DEEP[3]), int(DEEP[-2])
    level[a] += 1
    level[b] = -1
    return PARENT, level, NEDGE, "level", min(a, b)


def missing_leaf():
    parent = PARENT.copy()
    x = int(LEAVES[len(LEAVES) // 2])
    parent[x] = -1
    return parent, None, NEDGE, "span", x


def missing_inner_vertex():
    parent = PARENT.copy()
    x = int(INNER[-1])
    parent[x] = -1
    return parent, None, NEDGE, "parent-unreached", int(np.flatnonzero(PARENT == x).min())


def parent_not_neighbour():
    parent = PARENT.copy()
    x = int(DEEP[len(DEEP) // 2])
    parent[x] = ROOT
    return parent, None, NEDGE, "parent-not-neighbour", x


def root_not_own_parent():
    parent = PARENT.copy()
    parent[ROOT] = int(np.flatnonzero(LEVEL == 1)[0])
    return parent, None, NEDGE, "root", ROOT


def other_component_cycle():
    parent = PARENT.copy()
    second = set(COMPONENTS["second"].tolist())
    a, b = next((int(s), int(d)) for s, d in zip(SRC, DST) if s in second and s != d)
    parent[a], parent[b] = b, a
    return parent, None, NEDGE, "cycle", min(a, b)


def other_component_points_into_tree():
    parent = PARENT.copy()
    a = int(COMPONENTS["second"][4])
    parent[a] = int(COMPONENTS["big"][9])
    return parent, None, NEDGE, "parent-not-neighbour", a


def other_component_own_tree():
    other_root = int(COMPONENTS["second"][2])
    other, _ = reference_bfs(other_root)
    parent = np.where(other >= 0, other, PARENT)
    return parent, None, NEDGE, "self-parent", other_root


def wrong_edge_count():
    return PARENT, LEVEL, NEDGE + 1, "nedge", None


def parent_out_of_range():
    parent = PARENT.copy()
    a, b = int(DEEP[1]), int(LEAVES[0])
    parent[a], parent[b] = N + 3, -7
    return parent, None, NEDGE, "parent-range", min(a, b)


def level_skipped():
    """A leaf x re-parented to a same-level neighbour: x sits one level lower than the BFS allows,
    two below its old parent."""
    neighbours = [MATRIX.indices[MATRIX.indptr[x]:MATRIX.indptr[x + 1]] for x in range(N)]
    x, w = next((int(x), int(w)) for x in LEAVES for w in neighbours[x]
                if w != x and LEVEL[w] == LEVEL[x])
    parent = PARENT.copy()
    parent[x] = w
    steep = [int(y) for y in neighbours[x] if LEVEL[y] >= 0 and LEVEL[y] < LEVEL[x]]
    return parent, None, NEDGE, "edge-level", min([x] + steep)


CASES = [wrong_cycle, level_skipped, wrong_levels, missing_leaf, missing_inner_vertex, parent_not_neighbour,
         root_not_own_parent, other_component_cycle, other_component_points_into_tree,
         other_component_own_tree, wrong_edge_count, parent_out_of_range]


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_wrong_results_are_rejected(graph, case):
    parent, level, nedge, rule, vertex = case()
    result = validate(graph, ROOT, parent, nedge, level)
    assert not result.ok
    assert (result.rule, result.vertex) == (rule, vertex), result.message
    if vertex is not None:
        assert f"{vertex}" in result.message
    visited = parent[:N] != -1
    assert result.nedge == np.count_nonzero((SRC != DST) & (visited[SRC] | visited[DST]))


def test_depth_first_tree_breaks_edge_levels(graph):
    """A spanning tree of the ring that is not a BFS tree: the closing edge joins levels 0 and 9."""
    root = int(COMPONENTS["ring"][0])
    _, pred = depth_first_order(MATRIX, root, directed=False, return_predecessors=True)
    parent = np.where(pred < 0, -1, pred).astype(np.int64)
    parent[root] = root
    _, level = reference_bfs(root)
    result = validate(graph, root, parent, tuples_in_component(level))
    assert (result.ok, result.rule) == (False, "edge-level")
    assert result.vertex in COMPONENTS["ring"]
    assert "differ by more than 1" in result.message


def test_wrong_edge_count_names_both_counts(graph):
    result = validate(graph, ROOT, PARENT, NEDGE - 5)
    assert result.rule == "nedge"
    assert f"{NEDGE - 5}" in result.message and f"{NEDGE}" in result.message


def test_padding_vertex_with_a_parent(graph):
    grid = graph.grid
    if grid.n_padded == N:
        pytest.skip("no padding vertices at this world size")
    parent = np.concatenate((PARENT, np.full(grid.n_padded - N, -1)))
    parent[N] = ROOT
    result = validate(graph, ROOT, parent, NEDGE)
    assert (result.rule, result.vertex) == ("parent-range", N)
    assert "padding" in result.message


def test_bad_arguments_raise(graph):
    with pytest.raises(ValueError):
        validate_bfs(graph, N, owned(graph, PARENT), NEDGE)
    with pytest.raises(ValueError):
        validate_bfs(graph, ROOT, owned(graph, PARENT)[:-1], NEDGE)


def test_entry_chunks_give_the_same_verdicts(graph, monkeypatch):
    import graph500.validate as validate_module
    cases = [(PARENT, LEVEL, NEDGE), missing_leaf()[:3], parent_not_neighbour()[:3],
             other_component_cycle()[:3]]
    whole = [validate(graph, ROOT, parent, nedge, level) for parent, level, nedge in cases]
    monkeypatch.setattr(validate_module, "ENTRY_CHUNK", {"cpu": 7, "gpu": 7})
    assert [validate(graph, ROOT, parent, nedge, level) for parent, level, nedge in cases] == whole
    assert [v.rule for v in whole] == [None, "span", "parent-not-neighbour", "cycle"]
