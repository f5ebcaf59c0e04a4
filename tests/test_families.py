"""dbfs.families: lattice edge sets (exact on small dims), edge removal (fraction, reproducibility,
independence of the range split), id scrambling (a bijection, the same for any split), the counting
pass, the CuPy twin on a GPU, and the small test graphs against their docstrings."""

import itertools

import numpy as np
import pytest
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components, shortest_path

from dbfs import families
from dbfs.errors import DbfsError
from dbfs.families import BLOCK_EDGES, Lattice, LatticeEdgeList, lattice_graph

pytestmark = pytest.mark.one_rank


def brute_force_edges(dims) -> set:
    """Every pair of lattice points at distance 1, as row-major ids (u < v)."""
    strides = [int(np.prod(dims[a + 1:])) for a in range(len(dims))]
    edges = set()
    for point in itertools.product(*map(range, dims)):
        u = sum(x * s for x, s in zip(point, strides))
        for axis, (x, d) in enumerate(zip(point, dims)):
            if x + 1 < d:
                edges.add((u, u + strides[axis]))
    return edges


def adjacency(n, src, dst):
    return coo_matrix((np.ones(len(src)), (src, dst)), shape=(n, n)).tocsr()


def degrees(n, src, dst) -> np.ndarray:
    return np.bincount(src, minlength=n) + np.bincount(dst, minlength=n)


def components(n, src, dst) -> np.ndarray:
    return connected_components(adjacency(n, src, dst), directed=False)[1]


@pytest.mark.parametrize("dims", [(4, 5), (2, 2), (7, 1), (1, 6), (3, 4, 5), (2, 2, 2), (5, 1, 3)])
def test_lattice_edges_are_exactly_the_lattice(dims):
    n, src, dst = lattice_graph(dims, scramble=False)
    assert n == np.prod(dims) and src.dtype == dst.dtype == np.int64
    pairs = list(zip(src.tolist(), dst.tolist()))
    assert len(pairs) == len(set(pairs)) == len(brute_force_edges(dims))
    assert set(pairs) == brute_force_edges(dims)
    assert np.all(src < dst)
    assert len(set(components(n, src, dst).tolist())) == 1


def test_lattice_degrees_and_counts():
    rows, cols = 6, 9
    n, src, dst = lattice_graph((rows, cols))
    assert len(src) == (rows - 1) * cols + rows * (cols - 1)
    r, c = np.divmod(np.arange(n), cols)
    on_border = sum(side.astype(int) for side in (r == 0, r == rows - 1, c == 0, c == cols - 1))
    _, src_rm, dst_rm = lattice_graph((rows, cols), scramble=False)
    assert np.array_equal(degrees(n, src_rm, dst_rm), 4 - on_border)       # corners 2, sides 3, inside 4
    # scrambled: the same multiset of degrees, relabelled
    assert np.array_equal(np.sort(degrees(n, src, dst)), np.sort(4 - on_border))
    d = (4, 5, 6)
    n, src, dst = lattice_graph(d, scramble=False)
    x = np.stack(np.unravel_index(np.arange(n), d))
    faces = sum((x[a] == 0).astype(int) + (x[a] == d[a] - 1).astype(int) for a in range(3))
    assert np.array_equal(degrees(n, src, dst), 6 - faces)                   # corner 3 ... interior 6
    assert len(src) == 3 * 5 * 6 + 4 * 4 * 6 + 4 * 5 * 5


def test_scrambling_relabels_the_same_lattice():
    dims = (13, 11, 3)
    n, src, dst = lattice_graph(dims, seed=(5, 9))
    _, src_rm, dst_rm = lattice_graph(dims, seed=(5, 9), scramble=False)
    label = Lattice(dims, seed=(5, 9)).relabel(np.arange(n))
    assert np.array_equal(np.sort(label), np.arange(n))
    assert np.array_equal(src, label[src_rm]) and np.array_equal(dst, label[dst_rm])
    assert not np.array_equal(label, np.arange(n))
    other = Lattice(dims, seed=(5, 10)).relabel(np.arange(n))
    assert np.mean(other == label) < 0.05                                     # the seed is the key
    assert len(set(components(n, src, dst).tolist())) == 1


@pytest.mark.parametrize("n", [2, 3, 4, 5, 17, 64, 1000, 4097, 65536, 100003])
def test_scrambling_is_a_bijection_for_any_range_split(n):
    lattice = Lattice((n, 1), seed=(2, 3))
    whole = lattice.relabel(np.arange(n, dtype=np.int64))
    assert whole.dtype == np.int64 and np.array_equal(np.sort(whole), np.arange(n))
    cuts = np.unique(np.random.default_rng(n).integers(0, n, 6).tolist() + [0, n])
    pieces = [lattice.relabel(np.arange(a, b, dtype=np.int64)) for a, b in zip(cuts[:-1], cuts[1:])]
    assert np.array_equal(np.concatenate(pieces), whole)


def test_removal_fraction_reproducibility_and_order():
    dims = (300, 300)                                   # 179,400 lattice edges: 11 blocks
    full = Lattice(dims, scramble=False)
    assert full.n_blocks > 2
    _, all_src, all_dst = lattice_graph(dims, scramble=False)
    for fraction in (0.05, 0.3, 0.9):
        lattice = Lattice(dims, fraction, seed=(2, 3), scramble=False)
        edges = LatticeEdgeList(lattice)
        m, total = edges.n_edges, lattice.lattice_edge_count
        sigma = np.sqrt(total * fraction * (1 - fraction))
        assert abs((total - m) - fraction * total) < 5 * sigma, (fraction, m)
        src, dst = edges.edges(0, m)
        # the kept edges, in lattice order: a subsequence of the full lattice's edges
        kept = np.flatnonzero(~lattice.removed(0, total))
        assert len(kept) == m
        assert np.array_equal(src, all_src[kept]) and np.array_equal(dst, all_dst[kept])
        again = LatticeEdgeList(Lattice(dims, fraction, seed=(2, 3), scramble=False)).edges(0, m)
        assert np.array_equal(again[0], src) and np.array_equal(again[1], dst)
        other_seed = Lattice(dims, fraction, seed=(2, 4), scramble=False).removed(0, total)
        assert np.mean(other_seed == lattice.removed(0, total)) < 1 - fraction * (1 - fraction)
    # more removal keeps a subset: the same hash against a higher threshold
    lighter = set(zip(*lattice_graph(dims, 0.1, scramble=False)[1:]))
    heavier = set(zip(*lattice_graph(dims, 0.4, scramble=False)[1:]))
    assert heavier < lighter
    assert LatticeEdgeList(Lattice(dims, 0.0)).n_edges == full.lattice_edge_count


@pytest.mark.parametrize("fraction", [0.0, 0.35])
def test_any_range_split_gives_the_same_edges(fraction):
    lattice = Lattice((97, 61, 7), fraction, seed=(11, 12))
    edges = LatticeEdgeList(lattice)
    m = edges.n_edges
    whole = edges.edges(0, m)
    rng = np.random.default_rng(3)
    cuts = np.unique(np.concatenate(([0, m, 1, m - 1, BLOCK_EDGES, BLOCK_EDGES + 1],
                                     rng.integers(0, m, 20))))
    pieces = [edges.edges(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:])]
    for k in range(2):
        assert np.array_equal(np.concatenate([p[k] for p in pieces]), whole[k])
    assert all(len(x) == 0 for x in edges.edges(m, m))
    # block counts computed in any split agree with the whole table
    n_blocks = lattice.n_blocks
    split = [lattice.kept_per_block(a, b) for a, b in ((0, 1), (1, n_blocks // 2), (n_blocks // 2, n_blocks))]
    assert np.array_equal(np.concatenate(split), lattice.kept_per_block(0, n_blocks))
    assert len(lattice.kept_per_block(3, 3)) == 0
    with pytest.raises(ValueError):
        edges.edges(0, m + 1)


def test_heavy_removal_with_empty_blocks():
    lattice = Lattice((200, 200), 0.9999, seed=(1, 1))
    edges = LatticeEdgeList(lattice)
    counts = lattice.kept_per_block(0, lattice.n_blocks)
    assert (counts == 0).any() and edges.n_edges == counts.sum()
    src, dst = edges.edges(0, edges.n_edges)
    halves = [edges.edges(0, edges.n_edges // 2), edges.edges(edges.n_edges // 2, edges.n_edges)]
    assert np.array_equal(np.concatenate([h[0] for h in halves]), src)
    assert np.array_equal(np.concatenate([h[1] for h in halves]), dst)


@pytest.mark.parametrize("dims, fraction, message", [
    ((1, 1), 0.0, "no edges"), ((0, 5), 0.0, "dims must be"), ((5,), 0.0, "dims must be"),
    ((2, 2, 2, 2), 0.0, "dims must be"), ((1 << 25, 1 << 24), 0.0, "more than"),
    ((4, 4), 1.0, "remove-fraction"), ((4, 4), -0.1, "remove-fraction"),
    ((4, 4), float("nan"), "remove-fraction"),
])
def test_bad_lattices(dims, fraction, message):
    with pytest.raises(DbfsError, match=message):
        Lattice(dims, fraction)


@pytest.mark.parametrize("text, dims", [("4096x4096", (4096, 4096)), ("300X200x100", (300, 200, 100))])
def test_parse_dims(text, dims):
    assert families.parse_dims(text) == dims


@pytest.mark.parametrize("text", ["4096", "4x", "x4", "4x-1", "axb", "2x2x2x2", "4 x 4 x", "1e3x4",
                                  "\u00b2x4"])
def test_parse_dims_rejects(text):
    with pytest.raises(DbfsError, match="--lattice must be"):
        families.parse_dims(text)


def test_generator_attribute_tells_lattices_apart():
    names = {Lattice((8, 4)).generator, Lattice((4, 8)).generator, Lattice((8, 4), 0.25).generator,
             Lattice((8, 4), 0.2500001).generator, Lattice((8, 4), scramble=False).generator}
    assert len(names) == 5
    # the seed has an attribute of its own, which the cache key reads too
    assert Lattice((8, 4), seed=(1, 2)).generator == Lattice((8, 4)).generator


@pytest.mark.gpu
def test_cupy_twin_gives_the_same_edges():
    import cupy
    for lattice in (Lattice((300, 200, 7), 0.3, seed=(4, 5)), Lattice((512, 300))):
        edges = LatticeEdgeList(lattice)
        on_gpu = LatticeEdgeList(lattice, xp=cupy)
        assert np.array_equal(on_gpu.offsets, edges.offsets)
        lo, hi = 1234, edges.n_edges - 777
        for a, b in zip(edges.edges(lo, hi), on_gpu.edges(lo, hi, cupy)):
            assert isinstance(b, cupy.ndarray) and np.array_equal(a, cupy.asnumpy(b))


# ------------------------------------------------------------------------------------ test graphs
def test_lattice_with_holes():
    rows, cols, period, hole = 40, 60, 6, 3
    n, src, dst = families.lattice_with_holes(rows, cols, period, hole)
    assert n == rows * cols and src.dtype == dst.dtype == np.int64 and np.all(src < dst)
    r, c = np.divmod(np.arange(n), cols)
    in_hole = (1 <= r % period) & (r % period <= hole) & (1 <= c % period) & (c % period <= hole)
    deg = degrees(n, src, dst)
    assert np.all(deg[in_hole] == 0) and np.all(deg[~in_hole] > 0)
    labels = components(n, src, dst)
    assert len(set(labels[~in_hole].tolist())) == 1                          # the rest is connected
    assert len(set(zip(src.tolist(), dst.tolist()))) == len(src)
    # the holes lengthen paths: from a corner to its opposite no shorter than the Manhattan distance
    dist = shortest_path(adjacency(n, src, dst), directed=False, unweighted=True, indices=0)
    assert dist[n - 1] >= rows + cols - 2 and np.isinf(dist[in_hole]).all()
    with pytest.raises(ValueError):
        families.lattice_with_holes(10, 10, 4, 4)


def test_caterpillar():
    spine, longest = 300, 3
    n, src, dst = families.caterpillar(spine, longest)
    assert n == spine + sum(i % (longest + 1) for i in range(spine))
    assert len(src) == n - 1 and src.dtype == dst.dtype == np.int64
    assert len(set(components(n, src, dst).tolist())) == 1                   # connected, n - 1 edges: a tree
    dist = shortest_path(adjacency(n, src, dst), directed=False, unweighted=True, indices=0)
    assert np.array_equal(dist[:spine], np.arange(spine))                    # the spine is a path
    # leg vertices: one leg after another, each leading away from its spine vertex
    legs = np.arange(spine) % (longest + 1)
    owner = np.repeat(np.arange(spine), legs)
    step = np.concatenate([np.arange(1, k + 1) for k in legs])
    assert np.array_equal(dist[spine:], owner + step)


def test_several_components():
    n, src, dst = families.several_components()
    assert n == 86 and src.dtype == dst.dtype == np.int64
    assert np.all(src != dst)
    pairs = set(zip(np.minimum(src, dst).tolist(), np.maximum(src, dst).tolist()))
    assert len(pairs) == len(src)
    labels = components(n, src, dst)
    sizes = sorted(np.bincount(labels).tolist())
    assert sizes == sorted([40, 12, 20, 7, 2, 1, 1, 1, 1, 1])
    assert degrees(n, src, dst)[n - 1] == 0
    # the components spread over the ids: the path's vertices are not one stretch
    path = np.flatnonzero(labels == np.argmax(np.bincount(labels)))
    assert path.max() - path.min() > len(path)
