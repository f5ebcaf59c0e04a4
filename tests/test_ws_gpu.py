"""ws mode on GPUs: the kernels against the NumPy twins.

Every program with every method (WS, VWC 2..32) on one GPU; WS with low hub thresholds (many hubs, hubs
with more partials than a warp has lanes, every row a hub), on one and two partitions; 2 and 3
partitions sharing one GPU and 2 partitions on two GPUs with every exchange (VR, ALL, MS, peer);
PageRank on G-Shards and Concatenated Windows settling as fast as on WS; the online refinement of one
kernel launch (outbox = exactly the updated boundary vertices, hubs among them, with their new values)
into device memory and into pinned host memory; the hub tables and the CSR built by CuPy.
Monotone programs must give exactly the twin's values, and in no more iterations (an asynchronous
update only brings values closer to the fixed point); PageRank within 1e-4 relative L1.
"""

import numpy as np
import pytest

from dbfs.backend import Backend, gpu_count
from dbfs.ws import launch, programs  # noqa: F401
from dbfs.ws.engine import EXCHANGES, kernel_pointer
from dbfs.ws.graph import build_csr, split
from dbfs.ws.program import PROGRAMS, module
from dbfs.ws.approx import KINDS, approximate
from dbfs.ws.frontier import FILTERS
from dbfs.ws.shards import SHARD_METHODS
from ws_cases import BFS_PARENT, GRAPHS, kronecker, run, source_of

pytestmark = [pytest.mark.gpu, pytest.mark.one_rank]
two_gpus = pytest.mark.skipif(gpu_count() < 2, reason="needs 2 GPUs")
CASES = {**PROGRAMS, BFS_PARENT.name: BFS_PARENT}
GPU_GRAPHS = {**GRAPHS, "kronecker12": lambda: kronecker(12, 16)}
# the Kronecker graphs, the hand-made one (hubs, isolated vertices) and the lattice with isolated parts
NEW_GRAPHS = ["handmade", "kronecker12", "lattice_holes"]


def assert_matches_twin(program, twin, result, label):
    assert result.converged, label
    if program.exact:
        assert np.array_equal(result.values, twin.values), label
        assert result.iterations <= twin.iterations, label
    else:
        distance = np.abs(result.values.astype(np.float64) - twin.values).sum() / twin.values.sum()
        assert distance < 1e-4, (label, distance)


@pytest.mark.parametrize("graph_name", sorted(GPU_GRAPHS))
@pytest.mark.parametrize("name", sorted(CASES))
def test_every_method_matches_the_twin_on_one_gpu(name, graph_name):
    program, graph = CASES[name], GPU_GRAPHS[graph_name]()
    source = source_of(graph) if program.needs_source else None
    twin = run(program, graph, source=source)
    for method in launch.METHODS:
        assert_matches_twin(program, twin, run(program, graph, method=method, source=source, devices=[0]),
                            method)


@pytest.mark.parametrize("hubs", [(8, 4), (0, 1), (64, 32)])
@pytest.mark.parametrize("graph_name", sorted(GPU_GRAPHS))
@pytest.mark.parametrize("name", sorted(CASES))
def test_hub_split_matches_the_twin(name, graph_name, hubs):
    program, graph = CASES[name], GPU_GRAPHS[graph_name]()
    source = source_of(graph) if program.needs_source else None
    hub_degree, hub_slice = hubs
    twin = run(program, graph, source=source, hub_degree=hub_degree, hub_slice=hub_slice)
    for devices, exchange in (([0], None), ([0, 0], "vr")):
        result = run(program, graph, len(devices), exchange, "ws", source, devices, hub_degree=hub_degree,
                     hub_slice=hub_slice)
        assert_matches_twin(program, twin, result, (devices, exchange))


@pytest.mark.parametrize("memory", ["device", "host"])
@pytest.mark.parametrize("method", SHARD_METHODS)
@pytest.mark.parametrize("graph_name", sorted(GPU_GRAPHS))
@pytest.mark.parametrize("name", sorted(CASES))
def test_shards_match_the_twin(name, graph_name, method, memory):
    """gs_iterate / cw_iterate with their shards in device memory or in pinned host memory, default and
    small windows (many shards, most windows short), one partition and two sharing the GPU."""
    program, graph = CASES[name], GPU_GRAPHS[graph_name]()
    source = source_of(graph) if program.needs_source else None
    twin = run(program, graph, method=method, source=source)
    for devices, exchange, window in (([0], None, None), ([0], None, 64), ([0, 0], "vr", 32)):
        result = run(program, graph, len(devices), exchange, method, source, devices, shard_window=window,
                     shard_memory=memory)
        assert_matches_twin(program, twin, result, (devices, exchange, window))


@pytest.mark.parametrize("method", SHARD_METHODS)
def test_shards_pagerank_settles_like_ws(method):
    """PageRank on G-Shards / Concatenated Windows settles within twice the iterations of WS on a Kronecker
    graph whose hubs have thousands of neighbours, to WS's values: every vertex reduces its entries in the
    same order in every iteration (summed in the order the warps happened to reach them, the hubs moved by
    more than the tolerance in every iteration, thousands of iterations on Kronecker scale 22)."""
    program, graph = PROGRAMS["pr"], kronecker(16, 16)
    ws = run(program, graph, method="ws", devices=[0])
    result = run(program, graph, method=method, devices=[0])
    assert ws.converged and result.converged
    assert result.iterations <= 2 * ws.iterations, (result.iterations, ws.iterations)
    distance = np.abs(result.values.astype(np.float64) - ws.values).sum() / ws.values.sum()
    assert distance < 1e-4, distance


@pytest.mark.parametrize("mode", FILTERS[1:])
@pytest.mark.parametrize("graph_name", NEW_GRAPHS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_filters_match_the_twin(name, graph_name, mode):
    """Active lists on the GPU (ws_mark, ws_mark_remote, the online, ballot and fallback list builders, the
    listed launches of ws_iterate, ws_hub_slices and vwc_iterate): the twin's values over all vertices,
    with the default bins and with bins of one entry (overflows: JIT then takes the ballot filter), with
    many hubs, on one partition and on two sharing the GPU."""
    program, graph = CASES[name], GPU_GRAPHS[graph_name]()
    source = source_of(graph) if program.needs_source else None
    twin = run(program, graph, source=source)
    allowed = {"online": {"online", "all"}, "ballot": {"ballot"}, "jit": {"online", "ballot"}}[mode]
    used = set()
    for method in ("ws", "vwc8"):
        for devices, exchange, threshold, hubs in (([0], None, 64, {}), ([0], None, 1, {}),
                                                   ([0], None, 1, {"hub_degree": 8, "hub_slice": 4}),
                                                   ([0, 0], "vr", 1, {})):
            result = run(program, graph, len(devices), exchange, method, source, devices, frontier=mode,
                         bin_threshold=threshold, **hubs)
            label = (method, devices, exchange, threshold, hubs)
            assert_matches_twin(program, twin, result, label)
            assert result.filters[0] == "all"
            steps = {f for step in result.filters[1:] for f in step.split("|")}
            assert steps <= allowed, (label, steps)
            used |= steps
    if mode == "jit" and graph_name == "kronecker12":
        assert used == {"online", "ballot"}


def check_partitions(devices):
    graph = GPU_GRAPHS["kronecker12"]()
    for name, program in CASES.items():
        source = source_of(graph) if program.needs_source else None
        twin = run(program, graph, source=source)
        for exchange in EXCHANGES:
            for method in ("ws", "vwc8"):
                result = run(program, graph, len(devices), exchange, method, source, devices)
                assert_matches_twin(program, twin, result, (name, exchange, method))
                assert result.sent_vertices > 0


@pytest.mark.parametrize("devices", [[0, 0], [0, 0, 0]])
def test_partitions_sharing_one_gpu_match_the_twin(devices):
    check_partitions(devices)


@two_gpus
def test_two_gpus_match_the_twin():
    check_partitions([0, 1])


@pytest.mark.parametrize("box", ["device", "pinned host"])
@pytest.mark.parametrize("method", launch.METHODS)
def test_outbox_holds_exactly_the_updated_boundary_vertices(method, box):
    """The kernel appends the outbox to device arrays (peer) or straight into pinned host memory (the vr
    hub box, written over the bus while the kernel runs)."""
    import cupy
    n, src, dst, w = kronecker(11, 16)
    part = split(build_csr(np, n, src, dst, w), 2, hub_degree=16, hub_slice=8)[0]
    program = PROGRAMS["cc"]
    mod = module(program)
    before = program.initial(n, None)
    before[::7] = 0                        # a mix of vertices that will and will not change
    values = cupy.asarray(before)
    status = cupy.zeros(2, np.uint32)
    room = part.boundary.shape[0]
    make = cupy.zeros if box == "device" else Backend("gpu", 0).pinned_empty
    out_idx, out_val = make(room, np.uint32), make(room, np.uint32)
    nbrs, edges, hubs = cupy.asarray(part.nbrs), cupy.zeros(1, np.uint8), part.hubs.map(cupy.asarray)
    partials = cupy.zeros(hubs.slices, np.uint32)
    if method == "ws":
        launch.hub_slices(mod.get_function("ws_hub_slices"), hubs, nbrs, edges, values, partials)
    launch.iterate(mod.get_function(launch.kernel_name(method)), method, cupy.asarray(part.rowptr), nbrs, edges,
                   values, part.lo, part.count, status, True, kernel_pointer(out_idx), kernel_pointer(out_val),
                   hubs, partials)
    after = values.get()                   # synchronises: the host boxes are complete
    changed = np.flatnonzero(after != before)
    assert np.all((changed >= part.lo) & (changed < part.hi))
    expected = np.intersect1d(changed, part.boundary)
    assert np.intersect1d(expected, part.hubs.vertices + part.lo).size > 0
    changed_flag, count = (int(x) for x in status.get())
    got = cupy.asnumpy(out_idx)[:count]
    assert changed_flag == 1 and count == expected.size > 0
    assert np.array_equal(np.sort(got), expected)
    assert np.array_equal(cupy.asnumpy(out_val)[:count], after[got])


def test_csr_built_by_cupy_equals_numpy():
    import cupy
    n, src, dst, w = kronecker(12, 16)
    cpu = build_csr(np, n, src, dst, w)
    gpu = build_csr(cupy, n, cupy.asarray(src), cupy.asarray(dst), cupy.asarray(w))
    assert np.array_equal(gpu.rowptr.get(), cpu.rowptr) and np.array_equal(gpu.nbrs.get(), cpu.nbrs)
    for c, g in zip(split(cpu, 3, 16, 8), split(gpu, 3, 16, 8)):
        for name in ("vertices", "slice_begin", "slice_end", "warp_slice", "slice_vertex"):
            assert np.array_equal(getattr(g.hubs, name).get(), getattr(c.hubs, name)), name
    rows = np.repeat(np.arange(n), np.diff(cpu.rowptr))   # duplicate entries may carry their weights in any order
    weights = [wt[np.lexsort((wt, cpu.nbrs, rows))] for wt in (cpu.weights, gpu.weights.get())]
    assert np.array_equal(*weights)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("graph_name", NEW_GRAPHS + ["lattice"])
def test_approximations_built_by_cupy_equal_numpy(kind, graph_name):
    import cupy
    n, src, dst, w = GPU_GRAPHS[graph_name]()
    cpu = approximate(kind, n, src, dst, w)
    gpu = approximate(kind, n, cupy.asarray(src), cupy.asarray(dst), cupy.asarray(w), xp=cupy)
    assert cpu.describe() == gpu.describe()
    assert np.array_equal(cpu.position, gpu.position.get())
    tuples = []
    for a in (cpu, gpu):
        s, d, wt = (cupy.asnumpy(x) for x in (a.src, a.dst, a.weights))
        order = np.lexsort((wt, d, s))
        tuples.append((s[order], d[order], wt[order]))
    assert np.array_equal(tuples[0][0], tuples[1][0]) and np.array_equal(tuples[0][1], tuples[1][1])
    np.testing.assert_allclose(tuples[0][2], tuples[1][2], rtol=1e-6)
