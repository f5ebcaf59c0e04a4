"""ws mode, CPU: active lists (dbfs.ws.frontier). Every program with the online, ballot and JIT filters,
on 1, 2 and 3 simulated partitions with the vr, medusa and ms exchanges, must give the values and the
iteration count of the run over all vertices (the twin is synchronous, so the lists change neither),
and the exact references; the filter recorded per iteration must be one the mode allows, and a small
bin threshold must make the JIT rule switch to the ballot filter. The remote index against brute
force."""

import numpy as np
import pytest

from dbfs.backend import Backend
from dbfs.ws import programs  # noqa: F401
from dbfs.ws.engine import Engine, Layout
from dbfs.ws.frontier import FILTERS, remote_index
from dbfs.ws.graph import build_csr, split
from test_ws_programs import ALL_PROGRAMS, check_against_reference, program_named
from ws_cases import GRAPHS, kronecker, source_of

pytestmark = pytest.mark.one_rank

ALLOWED = {"online": {"online", "all"}, "ballot": {"ballot"}, "jit": {"online", "ballot"}}


def engines(graph_name, parts, program):
    n, src, dst, w = GRAPHS[graph_name]()
    layout = Layout(build_csr(np, n, src, dst, w), parts, hub_degree=8, hub_slice=4)
    return Engine(layout, program, Backend("cpu"))


@pytest.mark.parametrize("graph_name", sorted(GRAPHS))
@pytest.mark.parametrize("name", ALL_PROGRAMS)
def test_filters_keep_the_exact_results(name, graph_name):
    program, graph = program_named(name), GRAPHS[graph_name]()
    source = source_of(graph) if program.needs_source else None
    switched = set()
    for parts, exchange in [(1, None), (2, "vr"), (3, "medusa"), (2, "ms")]:
        engine = engines(graph_name, parts, program)
        every = engine.run("ws", exchange, source)
        assert every.filters == ["all"] * every.iterations
        for mode in FILTERS[1:]:               # (the twin is the same for every method)
            # the ballot filter keeps no bins: their threshold does not reach it
            for threshold in (64, 1) if mode != "ballot" else (64,):
                result = engine.run("ws", exchange, source, frontier=mode, bin_threshold=threshold)
                label = (parts, exchange, mode, threshold)
                assert result.iterations == every.iterations, label
                assert np.array_equal(result.values, every.values), label
                assert result.filters[0] == "all"
                used = {f for step in result.filters[1:] for f in step.split("|")}
                assert used <= ALLOWED[mode], (label, used)
                if mode == "jit":
                    switched |= used
                assert len(result.active_groups) == result.iterations
        check_against_reference(name, graph, every, source)
    assert "online" in switched


def test_lists_shrink_and_jit_switches_on_overflow():
    """BFS on the lattice: after the first iteration only the groups around the wave are listed (fewer
    than half of them on average, although the scrambled ids spread the wave over groups); on the
    Kronecker graph a bin threshold of 1 overflows and JIT takes the ballot filter, 64 does not."""
    program = program_named("bfs")
    graph = GRAPHS["lattice"]()
    engine = engines("lattice", 1, program)
    result = engine.run("ws", None, source_of(graph), frontier="jit")
    groups = result.active_groups[0]
    assert np.mean(result.active_groups[1:]) < groups / 2
    kron = engines("kronecker9", 1, program)
    source = source_of(GRAPHS["kronecker9"]())
    assert "ballot" in kron.run("ws", None, source, frontier="jit", bin_threshold=1).filters
    assert "ballot" not in kron.run("ws", None, source, frontier="jit").filters
    online = kron.run("ws", None, source, frontier="online", bin_threshold=1)
    assert online.filters[1:].count("all") >= 1            # the online filter alone falls back to all


@pytest.mark.parametrize("parts", [2, 3])
def test_remote_index_lists_the_readers_of_each_remote_vertex(parts):
    n, src, dst, w = kronecker(9)
    csr = build_csr(np, n, src, dst, w)
    for part in split(csr, parts):
        keys, key_ptr, rows = remote_index(part)
        rowptr = (part.rowptr & ~np.uint64(1 << 63)).astype(np.int64)
        expected = {}
        for r in range(part.count):
            for v in part.nbrs[rowptr[r]:rowptr[r + 1]]:
                if not part.lo <= v < part.hi:
                    expected.setdefault(int(v), set()).add(r)
        assert keys.tolist() == sorted(expected)
        for k, v in enumerate(keys.tolist()):
            got = rows[key_ptr[k]:key_ptr[k + 1]].tolist()
            assert got == sorted(expected[v])
