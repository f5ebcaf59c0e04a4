"""Distributed BFS validator: correct trees pass with the exact TEPS edge count; each kind of wrong
result is rejected under the right rule, naming the lowest offending vertex, identically on every rank.

Collective over MPI.COMM_WORLD; every R x C factorisation of the world size is tried, on an undirected
and a directed graph, with int32 and int64 parents. Reference results come from SciPy's serial BFS
over the whole (small) tuple list, sliced to each rank's block. Also: levels deep enough for the
uint16 and int32 compact level types, and (GPU) the verdicts on the device equal to the CPU's. (The
validation's speed is measured by scripts/bench_validate.py and the main command, never asserted here.)
"""
from dataclasses import dataclass

import numpy as np
import pytest
from mpi4py import MPI
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import breadth_first_order, depth_first_order, shortest_path

import dbfs.ops.validate as validate_ops
from dbfs.backend import Backend, gpu_count
from dbfs.build import build_from_edges
from dbfs import graph as graph_module
from dbfs.graph import GridComms
from dbfs.grid import Grid
from dbfs.workspace import ALIGN, Workspace, lender_bytes
from graph500.generator import generate_edges
from graph500 import validate as validator
from graph500.validate import RULES, WHOLE, pieces, validate_bfs, validation_bytes, validation_requests

WORLD = MPI.COMM_WORLD
SIZE = WORLD.Get_size()
GRIDS = [(r, SIZE // r) for r in range(1, SIZE + 1) if SIZE % r == 0]
N = 203
PARENT_TYPES = (np.int32, np.int64)


def random_graph(directed: bool, seed=11):
    """Tuples over N vertices: a 120-vertex component, a 40-vertex one, a 10-ring, isolated vertices
    (some with self-loops only), duplicate tuples and self-loops; labels and tuple order shuffled.
    Directed: tree edges point away from each component's first vertex (which reaches its whole
    component), half of them also back, extra edges inside the components and some from the 40-vertex
    component into the big one (never the other way). Returns (src, dst, components as arrays of
    global ids, each starting with its first vertex)."""
    rng = np.random.default_rng(seed)

    def connected(lo, hi, extra):
        k = hi - lo
        child = np.arange(1, k)
        tree_parent = rng.integers(0, child)
        src, dst = (tree_parent, child) if directed else (child, tree_parent)
        back = rng.random(k - 1) < 0.5
        return (np.concatenate((src, dst[back], rng.integers(0, k, extra))) + lo,
                np.concatenate((dst, src[back], rng.integers(0, k, extra))) + lo)

    big, second = connected(0, 120, 60), connected(120, 160, 20)
    ring = (np.arange(160, 170), np.roll(np.arange(160, 170), 1))
    into_big = (rng.integers(120, 160, 8), rng.integers(0, 120, 8))
    src = np.concatenate((big[0], second[0], ring[0], into_big[0] if directed else []))
    dst = np.concatenate((big[1], second[1], ring[1], into_big[1] if directed else []))
    again = rng.integers(0, src.size, 30)
    loops = np.concatenate((rng.integers(0, 170, 6), np.arange(172, 176)))
    src = np.concatenate((src, src[again], loops)).astype(np.int64)
    dst = np.concatenate((dst, dst[again], loops)).astype(np.int64)
    label = rng.permutation(N)
    order = rng.permutation(src.size)
    components = {"big": label[0:120], "second": label[120:160], "ring": label[160:170],
                  "self-loop only": label[172:176]}
    return label[src[order]], label[dst[order]], components


def reference_bfs(matrix, root, directed):
    """(parent, level) over all vertices from SciPy; -1 where unreached, parent[root] = root."""
    _, pred = breadth_first_order(matrix, root, directed=directed, return_predecessors=True)
    parent = np.where(pred < 0, -1, pred).astype(np.int64)
    parent[root] = root
    dist = shortest_path(matrix, directed=directed, unweighted=True, indices=root)
    level = np.where(np.isinf(dist), -1, dist).astype(np.int32)
    return parent, level


@dataclass
class Setting:
    """One test graph with the correct search from the big component's first vertex."""
    directed: bool
    src: np.ndarray
    dst: np.ndarray
    components: dict

    def __post_init__(self):
        self.matrix = coo_matrix((np.ones(self.src.size), (self.src, self.dst)), shape=(N, N)).tocsr()
        self.into = self.matrix.T.tocsr() if self.directed else self.matrix
        self.root = int(self.components["big"][0])
        self.parent, self.level = self.bfs(self.root)
        self.nedge = self.tuples_with_visited_end(self.parent, self.level)
        children = np.bincount(self.parent[(self.parent >= 0) & (np.arange(N) != self.root)], minlength=N)
        self.leaves = np.flatnonzero((self.level >= 1) & (children == 0))
        self.inner = np.flatnonzero((self.level >= 1) & (children > 0))
        self.deep = np.flatnonzero(self.level >= 2)

    def bfs(self, root):
        return reference_bfs(self.matrix, root, self.directed)

    def in_neighbours(self, x):
        """The vertices u with an edge u -> x (undirected: the neighbours), self-loops left out."""
        u = self.into.indices[self.into.indptr[x]:self.into.indptr[x + 1]]
        return np.unique(u[u != x])

    def has_edge(self, u, v):
        return u in self.in_neighbours(v)

    def tuples_with_visited_end(self, parent, level):
        """The validator's TEPS count for any result: visited = a parent and a level >= 0 (real
        vertices); undirected: tuples with a visited end, directed: with a visited source."""
        visited = (parent[:N] != -1) & (level[:N] >= 0)
        ends = visited[self.src] if self.directed else visited[self.src] | visited[self.dst]
        return int(np.count_nonzero((self.src != self.dst) & ends))


SETTINGS = {directed: Setting(directed, *random_graph(directed)) for directed in (False, True)}


def build(shape, n, src, dst, directed=False, backend=None, world=WORLD, row_major=False):
    comms = GridComms.create(Grid(shape[0], shape[1], n), world)
    rank, size = world.Get_rank(), world.Get_size()
    return build_from_edges(comms, backend or Backend("cpu"), src[rank::size], dst[rank::size], n,
                            symmetric=not directed, row_major=row_major)


GRAPH_PARAMS = [(shape, directed) for shape in GRIDS for directed in (False, True)]


@pytest.fixture(scope="module", params=GRAPH_PARAMS,
                ids=[f"{r}x{c}-{'directed' if d else 'undirected'}" for (r, c), d in GRAPH_PARAMS])
def graph(request):
    shape, directed = request.param
    setting = SETTINGS[directed]
    built = build(shape, N, setting.src, setting.dst, directed)
    yield built
    built.comms.free()


def setting_of(graph):
    return SETTINGS[bool(graph.info["directed"])]


def owned(graph, values, dtype=None):
    """This rank's block of a global per-vertex array (length N, or n_padded to set padding too)."""
    grid = graph.grid
    values = np.asarray(values)
    padded = np.full(grid.n_padded, -1, dtype or values.dtype)
    padded[:len(values)] = values
    return padded[grid.to_global_owned(graph.i, graph.j, np.arange(grid.block))]


def validate(graph, root, parent, nedge, level, parent_type=np.int64):
    """Every rank's verdict, the same; the validation's first arrays carved out of a dirty lender (room
    for the owned levels and the gathered columns' levels at their widest), the others its own, whole or
    in the pieces graph500.validate.pieces picks for the lender."""
    backend, grid = graph.backend, graph.grid
    lender = backend.xp.full(4 * (grid.R + 1) * grid.block + ALIGN, 0x5A, backend.xp.uint8)
    result = validate_bfs(graph, root, backend.asarray(owned(graph, parent, parent_type)), nedge,
                          backend.asarray(owned(graph, level, np.int32)), Workspace(backend, [lender]))
    verdicts = WORLD.allgather(result)
    assert all(v == verdicts[0] for v in verdicts)
    return result


@pytest.mark.parametrize("parent_type", PARENT_TYPES)
def test_correct_trees_validate(graph, parent_type):
    s = setting_of(graph)
    c = s.components
    roots = [s.root, int(c["big"][7]), int(c["second"][0]), int(c["ring"][3]), int(c["self-loop only"][0])]
    for root in roots:
        parent, level = s.bfs(root)
        nedge = s.tuples_with_visited_end(parent, level)
        result = validate(graph, root, parent, nedge, level, parent_type)
        assert result.ok, result.message
        assert (result.rule, result.message, result.vertex) == (None, None, None)
        assert result.nedge == nedge
        assert result.visited == np.count_nonzero(level >= 0)
        assert result.max_level == level.max()
        assert validate(graph, root, parent, None, level, parent_type).ok
    assert (result.nedge, result.visited, result.max_level) == (0, 1, 0)


def forced(monkeypatch, split):
    """Every validation checks the columns (rows) by owned block where split[0] (split[1])."""
    monkeypatch.setattr(validator, "pieces", lambda *args: split)


@pytest.mark.parametrize("split", [None, (True, True)], ids=["chosen", "pieces"])
def test_graph500_graph_validates(monkeypatch, split):
    if split:
        forced(monkeypatch, split)
    scale, edgefactor = 9, 8
    n, m = 1 << scale, edgefactor << scale
    src, dst = generate_edges(scale, edgefactor, 0, m)
    degree = np.bincount(np.concatenate((src[src != dst], dst[src != dst])), minlength=n)
    roots = np.flatnonzero(degree > 0)[[0, 5, 77]]
    matrix = coo_matrix((np.ones(m), (src, dst)), shape=(n, n)).tocsr()
    for shape in GRIDS:
        graph = build(shape, n, src, dst)
        for root in roots:
            parent, level = reference_bfs(matrix, int(root), False)
            nedge = int(np.count_nonzero((src != dst) & (level[src] >= 0)))
            assert nedge > m // 4
            result = validate(graph, int(root), parent, nedge, level)
            assert result.ok, result.message
            assert result.nedge == nedge
            x = int(np.flatnonzero(level == 2)[0])
            parent[x] = int(np.flatnonzero(level == 4)[0])
            assert validate(graph, int(root), parent, nedge, level).rule == "parent-not-neighbour"
        graph.comms.free()


# Broken results: each case returns (parent, level, nedge, rule, lowest offender) ---------------------

def wrong_cycle(s):
    """x's parent p gets x as its parent: p's parent link climbs."""
    x = next(int(x) for x in s.deep if s.has_edge(x, s.parent[x]))
    parent = s.parent.copy()
    p = int(parent[x])
    parent[p] = x
    return parent, s.level, s.nedge, "cycle", p


def parent_on_its_own_level(s):
    """A leaf re-parented to an in-neighbour on its own level: the link does not descend."""
    x, w = same_level_in_neighbour(s)
    parent = s.parent.copy()
    parent[x] = w
    return parent, s.level, s.nedge, "cycle", x


def level_skipped(s):
    """A leaf x re-parented to an in-neighbour w on its own level, with the level that makes the link
    consistent: x is one level deeper than the BFS allows, two below its old parent."""
    x, w = same_level_in_neighbour(s)
    parent, level = s.parent.copy(), s.level.copy()
    parent[x] = w
    level[x] += 1
    if s.directed:
        return parent, level, s.nedge, "edge-level", x
    steep = [int(y) for y in s.in_neighbours(x) if 0 <= s.level[y] < s.level[x]]
    return parent, level, s.nedge, "edge-level", min([x] + steep)


def same_level_in_neighbour(s):
    return next((int(x), int(w)) for x in s.leaves for w in s.in_neighbours(x) if s.level[w] == s.level[x])


def wrong_levels(s):
    level = s.level.copy()
    a, b = int(s.deep[3]), int(s.deep[-2])
    level[a] += 1
    level[b] = -1
    return s.parent, level, s.tuples_with_visited_end(s.parent, level), "level", min(a, b)


def unreached_with_a_level(s):
    parent = s.parent.copy()
    x = int(s.leaves[1])
    parent[x] = -1
    return parent, s.level, s.tuples_with_visited_end(parent, s.level), "level", x


def missing_leaf(s):
    parent, level = s.parent.copy(), s.level.copy()
    x = int(s.leaves[len(s.leaves) // 2])
    parent[x] = level[x] = -1
    return parent, level, s.nedge, "span", x


def missing_inner_vertex(s):
    parent, level = s.parent.copy(), s.level.copy()
    x = int(s.inner[-1])
    parent[x] = level[x] = -1
    return parent, level, s.nedge, "parent-unreached", int(np.flatnonzero(s.parent == x).min())


def parent_not_neighbour(s):
    parent = s.parent.copy()
    x = int(s.deep[len(s.deep) // 2])
    parent[x] = s.root
    return parent, s.level, s.nedge, "parent-not-neighbour", x


def root_not_own_parent(s):
    parent = s.parent.copy()
    parent[s.root] = int(np.flatnonzero(s.level == 1)[0])
    return parent, s.level, s.nedge, "root", s.root


def root_level_not_zero(s):
    level = s.level.copy()
    level[s.root] = 1
    return s.parent, level, s.nedge, "root", s.root


def other_component_cycle(s):
    """Two vertices of another component, joined both ways, claim each other as parents."""
    second = set(s.components["second"].tolist())
    a, b = next((int(u), int(v)) for u, v in zip(s.src, s.dst)
                if u in second and u != v and s.has_edge(v, u))
    parent, level = s.parent.copy(), s.level.copy()
    parent[a], parent[b] = b, a
    level[a] = level[b] = 1
    return parent, level, s.tuples_with_visited_end(parent, level), "cycle", min(a, b)


def other_component_points_into_tree(s):
    parent, level = s.parent.copy(), s.level.copy()
    a, p = int(s.components["second"][4]), int(s.components["big"][9])
    parent[a], level[a] = p, level[p] + 1
    return parent, level, s.tuples_with_visited_end(parent, level), "parent-not-neighbour", a


def other_component_own_tree(s):
    other_root = int(s.components["second"][2])
    other_parent, other_level = s.bfs(other_root)
    second = s.components["second"]
    parent, level = s.parent.copy(), s.level.copy()
    parent[second], level[second] = other_parent[second], other_level[second]
    return parent, level, s.tuples_with_visited_end(parent, level), "self-parent", other_root


def wrong_edge_count(s):
    return s.parent, s.level, s.nedge + 1, "nedge", None


def parent_out_of_range(s):
    parent = s.parent.copy()
    a, b = int(s.deep[1]), int(s.leaves[0])
    parent[a], parent[b] = N + 3, -7
    return parent, s.level, s.nedge, "parent-range", min(a, b)


CASES = [wrong_cycle, parent_on_its_own_level, level_skipped, wrong_levels, unreached_with_a_level,
         missing_leaf, missing_inner_vertex, parent_not_neighbour, root_not_own_parent, root_level_not_zero,
         other_component_cycle, other_component_points_into_tree, other_component_own_tree,
         wrong_edge_count, parent_out_of_range]


def test_cases_break_only_their_rule():
    """Every case breaks its rule and, in the serial brute force below, no rule before it."""
    for s in SETTINGS.values():
        for case in CASES:
            parent, level, nedge, rule, vertex = case(s)
            assert first_broken_rule(s, parent, level, nedge) == (rule, vertex), case.__name__


def first_broken_rule(s, parent, level, nedge):
    """The rules of graph500.validate over the whole graph at once (global ids, all tuples)."""
    v = np.arange(N)
    visited = parent != -1
    valid = visited & (level >= 0)
    keep = s.src != s.dst
    u_e, v_e = s.src[keep], s.dst[keep]
    if not s.directed:
        u_e, v_e = np.concatenate((u_e, v_e)), np.concatenate((v_e, u_e))
    tree = valid[v_e] & (parent[v_e] == u_e)
    up, child = np.where(valid[u_e], level[u_e], -1), level[v_e]
    span = valid[u_e] & ~valid[v_e]
    steep = valid[u_e] & valid[v_e] & ((level[v_e] > level[u_e] + 1) if s.directed
                                       else (np.abs(level[u_e] - level[v_e]) > 1))
    has_edge = np.zeros(N, bool)
    has_edge[v_e[parent[v_e] == u_e]] = True
    rules = {
        "parent-range": v[visited & ((parent < 0) | (parent >= N))],
        "root": v[(v == s.root) & ((parent != s.root) | (level != 0))],
        "self-parent": v[(parent == v) & (v != s.root)],
        "level": np.concatenate((v[np.where(visited, level < 0, level != -1)],
                                 v_e[tree & (up >= 0) & (up < child - 1)])),
        "parent-not-neighbour": v[visited & ~has_edge & (v != s.root)],
        "parent-unreached": v_e[tree & (up < 0)],
        "cycle": v_e[tree & (up >= child)],
        "span": v_e[span],
        "edge-level": v_e[steep],
    }
    assert tuple(rules) == RULES
    for rule, offenders in rules.items():
        if offenders.size:
            return rule, int(offenders.min())
    return ("nedge", None) if nedge != s.tuples_with_visited_end(parent, level) else (None, None)


@pytest.mark.parametrize("parent_type", PARENT_TYPES)
@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_wrong_results_are_rejected(graph, case, parent_type):
    s = setting_of(graph)
    parent, level, nedge, rule, vertex = case(s)
    result = validate(graph, s.root, parent, nedge, level, parent_type)
    assert not result.ok
    assert (result.rule, result.vertex) == (rule, vertex), result.message
    if vertex is not None:
        assert f"{vertex}" in result.message
    assert result.nedge == s.tuples_with_visited_end(parent, level)


def test_messages_say_what_is_wrong(graph):
    s = setting_of(graph)
    expected = {wrong_cycle: "cycle", root_level_not_zero: "level is 1, not 0",
                unreached_with_a_level: "is unreached (parent -1) but has level",
                missing_inner_vertex: "is not in the tree", parent_out_of_range: "is not -1 or in [0, 203)",
                level_skipped: "level" if s.directed else "differ by more than 1"}
    for case, text in expected.items():
        parent, level, nedge, _, _ = case(s)
        result = validate(graph, s.root, parent, nedge, level)
        assert text in result.message, result.message
    parent, level, _, _, _ = wrong_levels(s)
    a, b = int(s.deep[3]), int(s.deep[-2])
    level[b] = s.level[b]
    message = validate(graph, s.root, parent, s.nedge, level).message
    assert f"vertex {a}: the BFS gives level {s.level[a] + 1}, but its parent {s.parent[a]}" in message


def test_depth_first_tree_breaks_edge_levels():
    """A spanning tree of the ring that is not a BFS tree, with its own depths: the closing edge joins
    levels 0 and 9."""
    s = SETTINGS[False]
    ring = s.components["ring"]
    root = int(ring[0])
    _, pred = depth_first_order(s.matrix, root, directed=False, return_predecessors=True)
    parent = np.where(pred < 0, -1, pred).astype(np.int64)
    parent[root] = root
    level = np.full(N, -1, np.int32)
    for depth, x in enumerate(walk_down(parent, root)):
        level[x] = depth
    for shape in GRIDS:
        graph = build(shape, N, s.src, s.dst)
        result = validate(graph, root, parent, s.tuples_with_visited_end(parent, level), level)
        assert (result.ok, result.rule) == (False, "edge-level")
        assert result.vertex in ring
        assert "differ by more than 1" in result.message
        graph.comms.free()


def walk_down(parent, root):
    """The ring's depth-first tree is a path: its vertices from the root down."""
    x, seen = root, []
    while x >= 0:
        seen.append(x)
        children = np.flatnonzero((parent == x) & (np.arange(parent.size) != x))
        x = int(children[0]) if children.size else -1
    return seen


def test_wrong_edge_count_names_both_counts(graph):
    s = setting_of(graph)
    result = validate(graph, s.root, s.parent, s.nedge - 5, s.level)
    assert result.rule == "nedge"
    assert f"{s.nedge - 5}" in result.message and f"{s.nedge}" in result.message


def test_directed_span_names_the_lowest_tail():
    s = SETTINGS[True]
    parent, level, nedge, _, x = missing_leaf(s)
    tail = min(int(u) for u in s.in_neighbours(x) if level[u] >= 0)
    for shape in GRIDS:
        graph = build(shape, N, s.src, s.dst, directed=True)
        result = validate(graph, s.root, parent, nedge, level)
        assert f"the edge {tail} -> {x} leaves the tree" in result.message, result.message
        graph.comms.free()


def test_padding_vertex_with_a_parent(graph):
    s, grid = setting_of(graph), graph.grid
    if grid.n_padded == N:
        pytest.skip("no padding vertices at this world size")
    parent = np.concatenate((s.parent, np.full(grid.n_padded - N, -1)))
    parent[N] = s.root
    result = validate(graph, s.root, parent, s.nedge, s.level)
    assert (result.rule, result.vertex) == ("parent-range", N)
    assert "padding" in result.message


def test_bad_arguments_raise(graph):
    s = setting_of(graph)
    parent, level = owned(graph, s.parent), owned(graph, s.level)
    with pytest.raises(ValueError):
        validate_bfs(graph, N, parent, s.nedge, level)
    with pytest.raises(ValueError):
        validate_bfs(graph, s.root, parent[:-1], s.nedge, level)
    with pytest.raises(ValueError):
        validate_bfs(graph, s.root, parent, s.nedge, level[:-1])
    with pytest.raises(TypeError):
        validate_bfs(graph, s.root, parent, s.nedge)


def test_entry_chunks_give_the_same_verdicts(graph, monkeypatch):
    s = setting_of(graph)
    cases = [(s.parent, s.level, s.nedge)] + [case(s)[:3] for case in (missing_leaf, parent_not_neighbour,
                                                                        other_component_cycle)]
    whole = [validate(graph, s.root, parent, nedge, level) for parent, level, nedge in cases]
    monkeypatch.setattr(validate_ops, "TWIN_CHUNK", 7)
    assert [validate(graph, s.root, parent, nedge, level) for parent, level, nedge in cases] == whole
    assert [v.rule for v in whole] == [None, "span", "parent-not-neighbour", "cycle"]


def test_pieces_give_the_same_verdicts(graph, monkeypatch):
    """The correct result and the broken ones that the entry pass finds (or names the other end of):
    the same verdict, edge count and message whether the columns or the columns and rows are checked
    by owned block, also with the twin's entries in small chunks."""
    s = setting_of(graph)
    broken = (wrong_cycle, level_skipped, wrong_levels, missing_leaf, missing_inner_vertex, parent_not_neighbour,
              wrong_edge_count)
    cases = [(s.parent, s.level, s.nedge)] + [case(s)[:3] for case in broken]
    verdicts = {}
    for split in (WHOLE, (True, False), (True, True)):
        forced(monkeypatch, split)
        verdicts[split] = [validate(graph, s.root, parent, nedge, level) for parent, level, nedge in cases]
    monkeypatch.setattr(validate_ops, "TWIN_CHUNK", 7)
    verdicts["chunks"] = [validate(graph, s.root, parent, nedge, level) for parent, level, nedge in cases]
    for split, found in verdicts.items():
        assert found == verdicts[WHOLE], split
    assert [v.rule for v in verdicts[WHOLE]] == [None] + [case(s)[3] for case in broken]


def hold_columns(graph, monkeypatch):
    """graph, its column offsets now held by the positions of its non-empty columns as its searches
    leave them (dbfs.graph.LocalGraph.hold_columns_by_position), on any grid (forced)."""
    monkeypatch.setattr(graph_module, "holds_columns_by_position", lambda *args: True)
    graph.hold_columns_by_position()
    assert graph.columns is not None
    return graph


def test_columns_held_by_position_give_the_same_verdicts(graph, monkeypatch):
    """A graph holding its column offsets by position: the dense graph's verdicts, edge counts and
    messages, with the ranges whole and by owned block."""
    s = setting_of(graph)
    held = hold_columns(build((graph.grid.R, graph.grid.C), N, s.src, s.dst, s.directed), monkeypatch)
    broken = (wrong_cycle, level_skipped, missing_leaf, parent_not_neighbour, other_component_own_tree)
    cases = [(s.parent, s.level, s.nedge)] + [case(s)[:3] for case in broken]
    for split in (WHOLE, (True, True)):
        forced(monkeypatch, split)
        for parent, level, nedge in cases:
            assert validate(held, s.root, parent, nedge, level) == validate(graph, s.root, parent, nedge, level), split
    held.comms.free()


def test_pieces_are_chosen_where_the_whole_ranges_do_not_fit(graph):
    """A lender holding the arrays by owned block both ways, not whole: the validation takes its
    pieces, allocates nothing beside it, as validation_bytes counts, and gives the whole ranges'
    verdicts."""
    s, grid, backend = setting_of(graph), graph.grid, graph.backend
    directed = bool(graph.info["directed"])
    shape = (grid, 8, directed, validate_ops.level_dtype(int(s.level.max()) + 1).itemsize)
    size = lender_bytes(validation_requests(*shape, graph.nnz, (True, True)))
    if lender_bytes(validation_requests(*shape, graph.nnz)) > size:
        assert pieces(*shape, [size], graph.nnz) != WHOLE
    assert validation_bytes(*shape, [size], graph.nnz) == validation_bytes(*shape, [1 << 40], graph.nnz)
    for parent, level, nedge, _, _ in [(s.parent, s.level, s.nedge, None, None), missing_leaf(s), wrong_cycle(s)]:
        workspace = Workspace(backend, [backend.xp.full(size, 0x5A, backend.xp.uint8)])
        result = validate_bfs(graph, s.root, backend.asarray(owned(graph, parent, np.int64)), nedge,
                              backend.asarray(owned(graph, level, np.int32)), workspace)
        assert workspace.allocated == 0
        assert result == validate_bfs(graph, s.root, owned(graph, parent, np.int64), nedge,
                                      owned(graph, level, np.int32))


@pytest.mark.parametrize("length", [300, 70000])
def test_deep_levels_use_wider_compact_types(length):
    """A path of `length` vertices searched from one end: levels past uint8 (and past uint16)."""
    src, dst = np.arange(length - 1, dtype=np.int64), np.arange(1, length, dtype=np.int64)
    parent = np.arange(-1, length - 1, dtype=np.int64)
    parent[0] = 0
    level = np.arange(length, dtype=np.int32)
    for shape in GRIDS:
        graph = build(shape, length, src, dst)
        result = validate(graph, 0, parent, length - 1, level)
        assert result.ok and result.max_level == length - 1, result.message
        bent = level.copy()
        bent[length - 1] = length - 3
        result = validate(graph, 0, parent, length - 1, bent)
        assert (result.rule, result.vertex) == ("cycle", length - 1), result.message
        graph.comms.free()
    assert validate_ops.level_dtype(length) == (np.uint16 if length < 65535 else np.int32)


def test_level_dtype_is_the_narrowest():
    assert [validate_ops.level_dtype(k) for k in (0, 255, 256, 65535, 65536)] == \
        [np.uint8, np.uint8, np.uint16, np.uint16, np.int32]


def test_validation_bytes_count_the_per_vertex_arrays():
    grid = Grid(2, 4, 1 << 20)
    b = grid.block
    one = validation_bytes(Grid(1, 1, 1 << 20), 4)
    assert one == (1 << 20) * 4 + (1 << 20) // 8 + 3 * 8 * validate_ops.STATS_SLOTS + 8 + 4
    assert validation_bytes(grid, 8) - validation_bytes(grid, 4) == 2 * b * 4
    assert validation_bytes(grid, 4, directed=True) - validation_bytes(grid, 4) == 2 * b * 4 + 2 * b // 8
    assert validation_bytes(grid, 4, level_itemsize=1) < validation_bytes(grid, 4)
    # lent: a lender of 3b words holds neither the whole ranges (36 b bytes) nor the columns by block
    # with whole rows (the rows' levels alone take 4b words): by block both ways, the owned levels and
    # the column and row pieces (b words each) fill it, the parents' piece and the marks are allocated
    assert pieces(grid, 4, False, 4, [12 * b]) == (True, True)
    assert validation_bytes(grid, 4) - validation_bytes(grid, 4, lenders=[12 * b]) == 32 * b
    for split, smaller in (((True, False), (True, True)), (WHOLE, (True, False))):
        exact = lender_bytes(validation_requests(grid, 4, False, 4, split=split))
        assert pieces(grid, 4, False, 4, [exact]) == split and pieces(grid, 4, False, 4, [exact - 1]) == smaller
    # a lender holding all leaves the rest
    rest = b // 8 + 3 * 8 * validate_ops.STATS_SLOTS + 8 * 4 + 4 * 8
    assert validation_bytes(grid, 4, lenders=[12 * b, 1 << 30]) == rest


@pytest.mark.gpu
@pytest.mark.parametrize("wide_offsets", [False, True])
def test_gpu_verdicts_equal_cpu(monkeypatch, wide_offsets):
    """Every case, both graphs, both parent types, every grid: the device gives the CPU's verdict, with
    the graph's offsets int32 (as these small graphs take them) and int64, dense and (a second device
    graph) held by position."""
    if wide_offsets:
        monkeypatch.setattr(graph_module, "NARROW_OFFSETS_MAX", -1)
    local = WORLD.Split_type(MPI.COMM_TYPE_SHARED).Get_rank()
    gpu = Backend("gpu", local % gpu_count())
    for shape, directed in GRAPH_PARAMS:
        s = SETTINGS[directed]
        graphs = [build(shape, N, s.src, s.dst, directed, backend) for backend in (Backend("cpu"), gpu)]
        graphs.append(hold_columns(build(shape, N, s.src, s.dst, directed, gpu), monkeypatch))
        for parent_type in PARENT_TYPES:
            for case in CASES:
                parent, level, nedge, _, _ = case(s)
                cpu, device, held = (validate(g, s.root, parent, nedge, level, parent_type) for g in graphs)
                assert cpu == device == held, case.__name__
            cpu, device, held = (validate(g, s.root, s.parent, s.nedge, s.level, parent_type) for g in graphs)
            assert cpu == device == held and device.ok
        for g in graphs:
            g.comms.free()
