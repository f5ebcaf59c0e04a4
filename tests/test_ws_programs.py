"""ws mode, CPU: the five vertex programs (and a struct-valued one) against independent references, on
one partition and on several simulated partitions with every exchange; the NumPy twins' building blocks.

BFS levels and SSWP widths must be equal to the references, SSSP equal within float32 rounding, CC the
same partition labelled by its smallest vertex id, PageRank within 1e-4 relative L1 of the float64
power iteration after the same number of iterations. With N partitions the CPU twin still reads the
previous iteration's values everywhere, so every partition count and exchange must give bit-identical
values and the same iteration count as one partition.
"""

import numpy as np
import pytest

from dbfs.backend import Backend
from dbfs.ws import programs  # noqa: F401
from dbfs.ws.launch import Segments
from dbfs.ws.program import PROGRAMS, Program
from ws_cases import (BFS_PARENT, GRAPHS, bfs_reference, cc_reference, pagerank_reference, run, source_of,
                      sssp_reference, sswp_reference)

pytestmark = pytest.mark.one_rank

SPLITS = [(2, "vr"), (3, "medusa"), (3, "ms"), (2, "peer"), (4, "vr")]


def check_against_reference(name, graph, result, source):
    values = result.values
    assert result.converged
    if name == "bfs":
        assert np.array_equal(values, bfs_reference(graph, source))
    elif name == "sssp":
        expected = sssp_reference(graph, source)
        assert np.array_equal(np.isinf(values), np.isinf(expected))
        finite = np.isfinite(expected)
        np.testing.assert_allclose(values[finite], expected[finite], rtol=2e-6, atol=1e-6)
    elif name == "sswp":
        assert np.array_equal(values.astype(np.float64), sswp_reference(graph, source))
    elif name == "cc":
        smallest, labels = cc_reference(graph)
        assert np.array_equal(values, smallest)
        pairs = np.unique(np.stack((values, labels)), axis=1)      # one label per component both ways
        assert pairs.shape[1] == np.unique(labels).size == np.unique(values).size
    elif name == "pr":
        expected = pagerank_reference(graph, result.iterations)
        assert np.abs(values - expected).sum() / expected.sum() < 1e-4
    elif name == "bfs_parent":
        level = bfs_reference(graph, source)
        assert np.array_equal(values["level"], level)
        child = (level != programs.UNREACHED) & (np.arange(level.size) != source)
        assert np.all(level[values["parent"][child]] == level[child] - 1)
    else:
        raise AssertionError(name)


ALL_PROGRAMS = list(PROGRAMS) + ["bfs_parent"]


def program_named(name) -> Program:
    return BFS_PARENT if name == "bfs_parent" else PROGRAMS[name]


@pytest.mark.parametrize("graph_name", sorted(GRAPHS))
@pytest.mark.parametrize("name", ALL_PROGRAMS)
def test_program_matches_reference_on_one_and_several_partitions(name, graph_name):
    program, graph = program_named(name), GRAPHS[graph_name]()
    source = source_of(graph) if program.needs_source else None
    single = run(program, graph, source=source)
    check_against_reference(name, graph, single, source)
    for parts, exchange in SPLITS:
        split = run(program, graph, parts, exchange, source=source)
        assert split.iterations == single.iterations, (parts, exchange)
        assert np.array_equal(split.values, single.values), (parts, exchange)


def test_parents_lie_one_level_up_and_are_the_smallest():
    graph = GRAPHS["handmade"]()
    n, src, dst, _ = graph
    source = source_of(graph)
    values = run(BFS_PARENT, graph, 3, "vr", source=source).values
    level = values["level"].astype(np.int64)
    keep = src != dst
    a, b = np.concatenate((src[keep], dst[keep])), np.concatenate((dst[keep], src[keep]))
    above = level[a] == level[b] - 1                       # a is a candidate parent of b
    smallest = np.full(n, np.iinfo(np.int64).max)
    np.minimum.at(smallest, b[above], a[above])
    reached = (values["level"] != programs.UNREACHED) & (np.arange(n) != source)
    assert np.array_equal(values["parent"][reached], smallest[reached])
    assert values["parent"][source] == source


def test_vertex_refinement_sends_each_updated_boundary_vertex_once():
    """In the synchronous twin a BFS vertex changes once, so VR sends exactly the reached boundary
    vertices other than the source; MS sends the whole boundary and ALL every vertex per exchange."""
    from dbfs.ws.engine import Engine, Layout
    from dbfs.ws.graph import build_csr
    n, src, dst, w = graph = GRAPHS["kronecker9"]()
    source = source_of(graph)
    layout = Layout(build_csr(np, n, src, dst, w), 3)
    engine = Engine(layout, PROGRAMS["bfs"], Backend("cpu"))
    runs = {x: engine.run("ws", x, source) for x in ("vr", "medusa", "ms", "peer")}
    boundary = np.concatenate([p.boundary for p in layout.parts]).astype(np.int64)
    reached = runs["vr"].values[boundary] != programs.UNREACHED
    assert runs["vr"].sent_vertices == np.count_nonzero(reached & (boundary != source))
    assert runs["peer"].sent_vertices == 2 * runs["vr"].sent_vertices          # one copy per receiver
    exchanges = runs["vr"].iterations - 1
    assert runs["ms"].sent_vertices == exchanges * boundary.size
    assert runs["medusa"].sent_vertices == exchanges * n
    assert runs["vr"].sent_bytes == 8 * runs["vr"].sent_vertices
    assert 0 < runs["vr"].sent_vertices < runs["ms"].sent_vertices < runs["medusa"].sent_vertices


def test_segments_reduce_every_row():
    rng = np.random.default_rng(3)
    degree = rng.choice([0, 0, 1, 2, 3, 31, 32, 33, 100], 60)
    rowptr = np.concatenate(([0], np.cumsum(degree)))
    items = rng.integers(0, 1000, int(rowptr[-1]))
    plan = Segments(rowptr[:-1], rowptr[1:])
    nonempty = degree > 0
    assert np.array_equal(plan.reduce(items, np.minimum), np.minimum.reduceat(items, rowptr[:-1][nonempty]))
    assert np.array_equal(plan.reduce(items, np.add), np.add.reduceat(items, rowptr[:-1][nonempty]))
    assert len(plan.steps) == 7                                   # ceil(log2(100))
    # rows that leave gaps (hub rows left out of the walk) and come in any order (hub slices)
    begin, end = rowptr[:-1][::-2], rowptr[1:][::-2] - degree[::-2] // 3
    expected = [items[b:e].sum() for b, e in zip(begin, end) if e > b]
    assert np.array_equal(Segments(begin, end).reduce(items, np.add), expected)


@pytest.mark.parametrize("hubs", [(8, 4), (0, 1), (40, 1000)])
@pytest.mark.parametrize("graph_name", sorted(GRAPHS))
@pytest.mark.parametrize("name", ALL_PROGRAMS)
def test_hub_split_matches_reference(name, graph_name, hubs):
    """Hub split in the twin, with low thresholds: slices of 4 (the handmade hub of 1102 neighbours has 276
    partials, more than a warp has lanes), every non-empty row a hub of one-edge slices, and hubs of one
    or two slices. Exact programs give the values of the default threshold."""
    program, graph = program_named(name), GRAPHS[graph_name]()
    source = source_of(graph) if program.needs_source else None
    hub_degree, hub_slice = hubs
    single = run(program, graph, source=source, hub_degree=hub_degree, hub_slice=hub_slice)
    check_against_reference(name, graph, single, source)
    if program.exact:
        assert np.array_equal(single.values, run(program, graph, source=source).values)
    for parts, exchange in [(2, "vr"), (3, "ms")]:
        split = run(program, graph, parts, exchange, source=source, hub_degree=hub_degree, hub_slice=hub_slice)
        assert split.iterations == single.iterations, (parts, exchange)
        assert np.array_equal(split.values, single.values), (parts, exchange)


def test_program_checks_its_layout():
    with pytest.raises(ValueError, match="multiple of 4 bytes"):
        Program(name="x", description="", cuda="", vertex_dtype=np.uint16, initial=None, init=None,
                compute=None, reduce=None, is_updated=None)
    with pytest.raises(ValueError, match="both edge_dtype and edge_values"):
        Program(name="x", description="", cuda="", vertex_dtype=np.uint32, initial=None, init=None,
                compute=None, reduce=None, is_updated=None, edge_dtype=np.float32)
    source = PROGRAMS["sssp"].source()
    assert source.index('#include "common.cuh"') < source.index("typedef float Vertex") \
        < source.index('#include "ws_engine.cuh"')
    assert "#define WS_EDGE_VALUES 1" in source and "#define WS_EDGE_VALUES 0" in PROGRAMS["bfs"].source()
