"""ws mode, CPU: G-Shards and Concatenated Windows (dbfs.ws.shards). Their tables against brute force,
and every program run on them (NumPy twins, 1 and 2 partitions, small and default windows, shards in
device or host memory) against the exact references and against the CSR twin: the twins are all
synchronous, so exact programs give the CSR twin's values in the same number of iterations."""

import numpy as np
import pytest

from dbfs.errors import DbfsError
from dbfs.ws import programs  # noqa: F401
from dbfs.ws.graph import build_csr, split
from dbfs.ws.shards import SHARD_METHODS, Plan, build, check_window
from test_ws_programs import ALL_PROGRAMS, check_against_reference, program_named
from ws_cases import GRAPHS, kronecker, run, source_of

pytestmark = pytest.mark.one_rank


@pytest.mark.parametrize("method", SHARD_METHODS)
@pytest.mark.parametrize("parts", [1, 3])
@pytest.mark.parametrize("window", [32, 96, 4096])
def test_shards_hold_each_entry_once_in_windows_sorted_by_source(method, parts, window):
    n, src, dst, w = kronecker(10)
    csr = build_csr(np, n, src, dst, w)
    rows_all = np.repeat(np.arange(n), np.diff(csr.rowptr))
    for part in split(csr, parts):
        s = build(part, method, window)
        lo, hi = part.lo, part.hi
        first, last = csr.rowptr[lo], csr.rowptr[hi]
        sources = s.sources().astype(np.int64)
        dest = s.dest.astype(np.int64)
        # the same multiset of (destination, source, weight) as the CSR slice
        expected = sorted(zip(rows_all[first:last] - lo, csr.nbrs[first:last], csr.weights[first:last]))
        assert sorted(zip(dest, sources, s.weights)) == expected
        assert s.shards == -(-part.count // window)
        shard_ptr = s.shard_ptr.astype(np.int64)
        offsets = s.window_ptr.astype(np.int64).reshape(s.shards, s.shards + 1)
        for j in range(s.shards):
            b, e = shard_ptr[j], shard_ptr[j + 1]
            assert np.all(dest[b:e] // window == j)
            key = sources[b:e] * window + dest[b:e] % window
            assert np.all(key[1:] >= key[:-1])                     # sorted by source
            bounds = np.minimum(lo + window * np.arange(s.shards + 1), hi)
            assert np.array_equal(offsets[j], np.searchsorted(sources[b:e], bounds))
        marked = (s.marked[np.arange(part.count) >> 5] >> (np.arange(part.count) & 31)) & 1
        assert np.array_equal(marked.astype(bool), part.rowptr[:-1] >= np.uint64(1 << 63))
        if method == "cw":
            assert s.src is None and s.cw_ptr.shape[0] == s.shards + 2 and s.cw_ptr[-1] == s.entries
            assert np.array_equal(np.sort(s.cw_map), np.arange(s.entries))
            assert np.array_equal(s.cw_src, s.sources()[s.cw_map])
            for i in range(s.shards):
                k = slice(int(s.cw_ptr[i]), int(s.cw_ptr[i + 1]))
                assert np.all((s.cw_src[k] - lo) // window == i)
                # W_i0, W_i1, ... in shard order, each in its shard's order
                assert np.all(np.diff(s.cw_map[k].astype(np.int64)) > 0)
            remote = s.cw_src[int(s.cw_ptr[-2]):]
            assert np.all((remote < lo) | (remote >= hi))
        else:
            assert s.cw_src is None and np.array_equal(s.src, sources)
        plan = Plan(s)
        assert np.array_equal(np.sort(np.concatenate((plan.writeback, plan.remote))), np.arange(s.entries))


@pytest.mark.parametrize("graph_name", sorted(GRAPHS))
@pytest.mark.parametrize("name", ALL_PROGRAMS)
@pytest.mark.parametrize("method", SHARD_METHODS)
def test_programs_on_shards_match_the_references(method, name, graph_name):
    program, graph = program_named(name), GRAPHS[graph_name]()
    source = source_of(graph) if program.needs_source else None
    csr_twin = run(program, graph, source=source)
    for parts, exchange, window, memory in [(1, None, 64, "device"), (2, "vr", 32, "host"),
                                            (1, None, None, "auto"), (2, "ms", None, "device")]:
        result = run(program, graph, parts, exchange, method, source, shard_window=window, shard_memory=memory)
        label = (parts, exchange, window, memory)
        check_against_reference(name, graph, result, source)
        assert result.iterations == csr_twin.iterations, label
        if program.exact:
            assert np.array_equal(result.values, csr_twin.values), label


def test_window_must_fit_shared_memory():
    check_window(2048, 12, "x")
    with pytest.raises(DbfsError, match="needs 57344 bytes of shared memory"):
        check_window(4096, 10, "x")
    n, src, dst, w = kronecker(6)
    with pytest.raises(DbfsError, match="multiple of 32"):
        build(split(build_csr(np, n, src, dst, w), 1)[0], "gs", 48)
