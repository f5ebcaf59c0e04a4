"""The streaming graph builder (dbfs.build) on every grid of the job's size: the CSC, its row-major copy
and the owned degrees equal a reference computed from the whole tuple list, whatever the chunk size;
a graph file is read in chunks smaller than the file, twice; the 1x1 undirected block is its own
row-major copy; a bad endpoint stops every rank; construction_time leaves the tuple production and the
exchange's set-up out; the partition cache keeps a shared row-major copy once; a generated graph passes
the certificate; on a grid of one column the row counts may come from the column lengths, and the row
copy from the column segments, in rounds smaller than a row; the counting pass may count every entry
where it is produced and send only the counts; no chunk is held while the next is produced. GPU: the
same build over every bulk transport."""

import dataclasses
import time
import weakref

import numpy as np
import pytest
from mpi4py import MPI

from dbfs import edgelist, memory, runtime
from dbfs.backend import Backend
from dbfs.build import _HostExchange, add_row_major, build, build_from_edges, transpose_csc
from dbfs.certificate import certify
from dbfs.errors import DbfsError
from dbfs import graph as graph_module
from dbfs.graph import GridComms, offset_dtype
from dbfs.grid import Grid
from dbfs.kernels import THREAD_EDGES
from dbfs.ops import sparse
from dbfs.ops.sparse import Positions, column_starts
from dbfs.source import EdgeArrays, GraphSource
from graph500.generator import edge_range, generate_edges

WORLD = MPI.COMM_WORLD
CPU = Backend("cpu")


def grids():
    size = WORLD.Get_size()
    return [(r, size // r) for r in range(1, size + 1) if size % r == 0]


def small_graph(n=301, m=900, seed=5):
    """Random tuples with self-loops and duplicates, n not divisible by any grid of 2..4 ranks."""
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n - 40, m), rng.integers(0, n - 40, m)
    src[::37], dst[::53] = dst[::37], src[::53]
    return n, np.concatenate((src, src[:20], [7, 7])), np.concatenate((dst, dst[:20], [7, 9]))


def expected_block(grid, i, j, src, dst, symmetric):
    """Sorted (local column, local row) pairs of rank (i, j) from the whole tuple list."""
    keep = src != dst
    u = np.concatenate((src[keep], dst[keep])) if symmetric else src[keep]
    v = np.concatenate((dst[keep], src[keep])) if symmetric else dst[keep]
    mine = (grid.owner(v)[0] == i) & (grid.col_block(u) == j)
    pairs = np.stack((grid.to_local_col(u[mine]), grid.to_local_row(v[mine])), axis=1)
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]


def csc_pairs(col_ptr, row_idx):
    cols = np.repeat(np.arange(len(col_ptr) - 1), np.diff(col_ptr))
    pairs = np.stack((cols, row_idx), axis=1)
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]


def every_column_offsets(graph):
    """A built graph's column offsets, every column's (NumPy), whether it holds them by position or not."""
    if graph.columns is None:
        return graph.col_ptr
    return column_starts(graph.col_ptr, graph.columns, np.arange(graph.grid.cols_per_rank + 1))


def check_graph(graph, src, dst, symmetric, row_major):
    grid, i, j = graph.grid, graph.i, graph.j
    expected = expected_block(grid, i, j, src, dst, symmetric)
    col_ptr = every_column_offsets(graph)
    assert graph.col_ptr.dtype == offset_dtype(graph.nnz) and graph.row_idx.dtype == np.int32
    assert np.array_equal(csc_pairs(col_ptr, graph.row_idx), expected)
    assert graph.nonempty_columns == np.unique(expected[:, 0]).size     # the build's count, where it counted
    keep = src != dst
    ends = np.concatenate((src[keep], dst[keep])) if symmetric else src[keep]
    degree = np.bincount(ends, minlength=grid.n_padded)
    owned = grid.to_global_owned(i, j, np.arange(grid.block))
    assert np.array_equal(graph.degree, degree[owned]) and graph.degree.dtype == np.int32
    assert graph.bottom_up_by_columns == (symmetric and grid.size > 1 and not row_major)
    if not row_major:
        assert graph.row_ptr is None and graph.col_idx is None
        return
    assert graph.row_major_shared == (grid.size == 1 and symmetric)
    rows = np.repeat(np.arange(grid.rows_per_rank), np.diff(graph.row_ptr))
    by_row = np.stack((graph.col_idx, rows), axis=1)
    assert np.array_equal(by_row[np.lexsort((by_row[:, 1], by_row[:, 0]))], expected)
    # each row's entries of the longest columns first (dbfs.ops.row_order), longest first
    length = np.diff(col_ptr)[graph.col_idx]
    position = np.arange(graph.col_idx.shape[0]) - graph.row_ptr[rows]
    inner = np.flatnonzero((position > 0) & (position < THREAD_EDGES))
    assert np.all(length[inner] <= length[inner - 1])
    rest = np.flatnonzero(position >= THREAD_EDGES)
    assert np.all(length[rest] <= length[graph.row_ptr[rows[rest]] + THREAD_EDGES - 1])


@pytest.mark.parametrize("symmetric", [True, False])
def test_offsets_are_int64_where_the_entries_pass_the_narrow_limit(monkeypatch, symmetric):
    """A block whose entries pass NARROW_OFFSETS_MAX keeps int64 offsets (the CSC's and the row copy's
    alike, the 1x1 shared copy still one array); below it they are int32."""
    n, src, dst = small_graph()
    lo, hi = edge_range(len(src), WORLD.Get_rank(), WORLD.Get_size())
    for R, C in grids():
        comms = GridComms.create(Grid(R, C, n))
        narrow = build_from_edges(comms, CPU, src[lo:hi], dst[lo:hi], n, symmetric=symmetric, row_major=True)
        monkeypatch.setattr(graph_module, "NARROW_OFFSETS_MAX", narrow.nnz - 1)
        wide = build_from_edges(comms, CPU, src[lo:hi], dst[lo:hi], n, symmetric=symmetric, row_major=True)
        check_graph(wide, src, dst, symmetric, True)
        monkeypatch.undo()
        assert narrow.col_ptr.dtype == narrow.row_ptr.dtype == np.int32
        assert wide.col_ptr.dtype == wide.row_ptr.dtype == np.int64
        assert wide.row_major_shared == narrow.row_major_shared == (R * C == 1 and symmetric)
        for name in ("col_ptr", "row_idx", "row_ptr", "col_idx", "degree"):
            assert np.array_equal(getattr(wide, name), getattr(narrow, name))
        comms.free()


def test_the_build_width_is_twice_a_blocks_share():
    """Offsets are built as wide as twice a block's even share of the entries needs, the whole graph's at
    most: int32 for Graph500 scale 25 on one rank, 26 on four, 28 on sixteen, 36 on 4,096; int64 beyond."""
    from dbfs.graph import building_offsets
    widths = {(ranks, scale): building_offsets(ranks, 16 << scale, True).itemsize
              for ranks, scale in ((1, 25), (1, 26), (2, 26), (4, 26), (4, 27), (16, 28), (16, 29), (4096, 36))}
    assert widths == {(1, 25): 4, (1, 26): 8, (2, 26): 8, (4, 26): 4, (4, 27): 8, (16, 28): 4, (16, 29): 8,
                      (4096, 36): 4}
    assert building_offsets(4, 1 << 30, False).itemsize == 4 and building_offsets(2, 1 << 31, False).itemsize == 8


@pytest.mark.parametrize("path", ["routed", "at the source", "rows from the columns", "kept keys"])
def test_a_block_that_passes_its_building_width_widens_while_counted(path, monkeypatch):
    """The build counts at building_offsets' width (here int32 for every block), and a block whose entries
    pass it (NARROW_OFFSETS_MAX set below the fullest block's) widens while it is counted, by every way of
    counting: the blocks the same as built narrow, int64 where they pass, int32 elsewhere."""
    from dbfs import build as build_module
    counted = []                                # (counts' dtype, what they hold) after each counting call

    def watched(count):
        def call(backend, keys, counts, *args, **kwargs):
            count(backend, keys, counts, *args, **kwargs)
            counted.append((counts.dtype, int(counts.sum(dtype=np.int64))))
        return call
    if path in ("at the source", "rows from the columns"):
        monkeypatch.setattr(_HostExchange, "sums_on_devices", True)
    if path == "at the source":
        monkeypatch.setattr(memory, "counts_at_source", lambda grid, *args: grid.size > 1)
    if path == "kept keys":
        monkeypatch.setattr(sparse, "POSITIONS_SHARE", 2.0)
    scale, row_major = 8, path == "rows from the columns"
    source = GraphSource(1 << scale, 16 << scale, scale, 16, True, None, (2, 3))
    src, dst = generate_edges(scale, 16, 0, 16 << scale)
    for R, C in grids():
        grid = Grid(R, C, 1 << scale)
        comms = GridComms.create(grid)
        plan = (memory.estimate(grid, source.n_edges, True, "auto", "mpi", "cpu", limit=1 << 40, row_copy=False,
                                keeps_keys=True) if path == "kept keys" else None)
        narrow, _ = build(comms, CPU, source, row_major=row_major, plan=plan)
        fullest = WORLD.allreduce(narrow.nnz, op=MPI.MAX)
        with monkeypatch.context() as forced:
            forced.setattr(graph_module, "NARROW_OFFSETS_MAX", fullest - 1)
            forced.setattr(build_module, "building_offsets", lambda *args: np.dtype(np.int32))
            for name in ("count_keys", "add_counts"):
                forced.setattr(build_module, name, watched(getattr(build_module, name)))
            counted.clear()
            wide, _ = build(comms, CPU, source, row_major=row_major, plan=plan)
            assert counted and all(dtype.itemsize >= offset_dtype(held).itemsize for dtype, held in counted)
            check_graph(wide, src, dst, True, row_major)
        assert wide.col_ptr.dtype == (np.int64 if wide.nnz == fullest else np.int32)
        for name in ("col_ptr", "row_idx", "row_ptr", "col_idx", "degree"):
            built, expected = getattr(wide, name), getattr(narrow, name)
            assert (built is None and expected is None) or np.array_equal(built, expected), name
        comms.free()


@pytest.mark.parametrize("keeps_keys", [True, False])
def test_the_plan_says_whether_the_offsets_are_built_held(keeps_keys, monkeypatch):
    """A run's plan that keeps the counting pass's keys builds the offsets of a hypersparse block held by
    its non-empty columns (forced hypersparse: POSITIONS_SHARE), one that does not every column's; the
    blocks are the same either way."""
    monkeypatch.setattr(sparse, "POSITIONS_SHARE", 2.0)
    scale = 8
    source = GraphSource(1 << scale, 16 << scale, scale, 16, True, None, (2, 3))
    src, dst = generate_edges(scale, 16, 0, 16 << scale)
    for R, C in grids():
        grid = Grid(R, C, 1 << scale)
        comms = GridComms.create(grid)
        plan = memory.estimate(grid, source.n_edges, True, "auto", "mpi", "cpu", limit=1 << 40, row_copy=False,
                               keeps_keys=keeps_keys)
        graph, report = build(comms, CPU, source, plan=plan)
        assert (graph.columns is not None) == (keeps_keys and R * C > 1)
        assert report.memory.inputs["keeps_keys"] == keeps_keys
        check_graph(graph, src, dst, True, False)
        comms.free()


@pytest.mark.parametrize("symmetric", [True, False])
@pytest.mark.parametrize("row_major", [True, False])
def test_chunked_build_equals_the_whole_list_on_every_grid(symmetric, row_major):
    n, src, dst = small_graph()
    lo, hi = edge_range(len(src), WORLD.Get_rank(), WORLD.Get_size())
    for R, C in grids():
        comms = GridComms.create(Grid(R, C, n))
        for chunk in (1 << 16, 97, 11):
            graph = build_from_edges(comms, CPU, src[lo:hi], dst[lo:hi], n, chunk_edges=chunk,
                                     symmetric=symmetric, row_major=row_major)
            check_graph(graph, src, dst, symmetric, row_major)
        comms.free()


def test_generated_source_builds_the_generator_graph():
    scale = 9
    source = GraphSource(1 << scale, 16 << scale, scale, 16, True, None, (2, 3))
    src, dst = generate_edges(scale, 16, 0, 16 << scale)
    for R, C in grids():
        comms = GridComms.create(Grid(R, C, 1 << scale))
        graph, report = build(comms, CPU, source, row_major=True, chunk_edges=1000)
        check_graph(graph, src, dst, True, True)
        assert report.chunk_edges == 1000 and report.producer_time > 0 and report.construction_time > 0
        assert certify(graph, source).passed
        comms.free()


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory):
    """A generated graph written to an HDF5 graph file (rank 0's temporary directory, shared)."""
    path = str(tmp_path_factory.mktemp("graph") / "g.h5") if WORLD.Get_rank() == 0 else None
    path = WORLD.bcast(path, root=0)
    scale = 10
    attrs = {"scale": scale, "edgefactor": 16, "n_vertices": 1 << scale}
    edgelist.write_edge_list(path, 16 << scale, attrs,
                             lambda lo, hi: generate_edges(scale, 16, lo, hi), WORLD)
    return path


def test_graph_file_is_read_in_chunks_twice(graph_file, monkeypatch):
    info = edgelist.graph_info(graph_file)
    source = GraphSource(info.n_vertices, info.n_edges, 10, 16, True, info, (2, 3))
    reads = []
    real = edgelist.read_edge_slice

    def counted(path, lo, hi, threads=None):
        reads.append((lo, hi))
        return real(path, lo, hi, threads)

    monkeypatch.setattr(edgelist, "read_edge_slice", counted)
    chunk = 1000
    lo, hi = edge_range(info.n_edges, WORLD.Get_rank(), WORLD.Get_size())
    comms = GridComms.create(Grid(*grids()[-1], info.n_vertices))
    graph, report = build(comms, CPU, source, row_major=True, chunk_edges=chunk)
    assert all(b - a <= chunk for a, b in reads) and chunk < info.n_edges
    per_pass = sorted(set(reads))
    assert reads == per_pass + per_pass, "two passes over the same chunks"
    assert per_pass[0][0] == lo and per_pass[-1][1] == hi and sum(b - a for a, b in per_pass) == hi - lo
    assert report.producer_rate > 0
    src, dst = real(graph_file, 0, info.n_edges)
    check_graph(graph, src, dst, True, True)
    comms.free()


def test_bad_endpoint_stops_every_rank():
    n = 40
    src = np.arange(10) + 3 * WORLD.Get_rank()
    dst = src + 1
    if WORLD.Get_rank() == WORLD.Get_size() - 1:
        dst[-1] = n + 3
    comms = GridComms.create(Grid(1, WORLD.Get_size(), n))
    with pytest.raises(DbfsError, match=r"edge list: edge endpoint 43 is outside \[0, 40\)") as error:
        build_from_edges(comms, CPU, src, dst, n, chunk_edges=4)
    assert error.value.collective
    comms.free()


class SlowSource(EdgeArrays):
    """Tuples in memory that take DELAY seconds to produce per chunk."""

    DELAY = 0.05

    def tuple_chunks(self, backend, comm, chunk_edges):
        for chunk in super().tuple_chunks(backend, comm, chunk_edges):
            time.sleep(self.DELAY)
            yield chunk


def test_construction_time_leaves_the_tuple_production_out():
    n, src, dst = small_graph()
    lo, hi = edge_range(len(src), WORLD.Get_rank(), WORLD.Get_size())
    source = SlowSource.create(src[lo:hi], dst[lo:hi], n)
    comms = GridComms.create(Grid(*grids()[0], n))
    chunk = -(-len(src) // WORLD.Get_size() // 4)
    rounds = source.chunk_rounds(WORLD, chunk)
    started = time.perf_counter()
    graph, report = build(comms, CPU, source, chunk_edges=chunk)
    wall = time.perf_counter() - started
    assert report.producer_time >= 2 * rounds * SlowSource.DELAY
    assert report.construction_time < wall - 2 * rounds * SlowSource.DELAY + 0.05
    # the steps' split leaves the producer out too, and a route and a place step ran
    assert set(report.phases) == {"route", "exchange", "place"}
    assert report.phases["route"] > 0 and report.phases["place"] > 0
    assert sum(report.phases.values()) < report.construction_time + rounds * SlowSource.DELAY
    assert (report.phases["exchange"] > 0) == (WORLD.Get_size() > 1)
    check_graph(graph, src, dst, True, False)
    comms.free()


class WatchedSource(EdgeArrays):
    """Tuples in memory whose chunks are copies, noting for each chunk produced whether the one before
    it is still held somewhere."""

    def tuple_chunks(self, backend, comm, chunk_edges):
        self.held_while_producing = []
        before = []
        for pair in super().tuple_chunks(backend, comm, chunk_edges):
            self.held_while_producing.append(any(ref() is not None for ref in before))
            chunk = tuple(a.copy() for a in pair)
            del pair
            before = [weakref.ref(a) for a in chunk]
            yield chunk
            del chunk


def test_a_chunk_is_let_go_before_the_next_is_produced():
    """The estimate counts one chunk of tuples beside the graph: the build holds no chunk while the
    source produces the next (at 26 on one GPU, the one before had been kept: 512 MiB past the
    estimate)."""
    n, src, dst = small_graph()
    lo, hi = edge_range(len(src), WORLD.Get_rank(), WORLD.Get_size())
    source = WatchedSource.create(src[lo:hi], dst[lo:hi], n)
    comms = GridComms.create(Grid(*grids()[0], n))
    graph, _ = build(comms, CPU, source, chunk_edges=-(-len(src) // WORLD.Get_size() // 4))
    assert len(source.held_while_producing) >= 4 and not any(source.held_while_producing)
    check_graph(graph, src, dst, True, False)
    comms.free()


@pytest.mark.parametrize("symmetric", [True, False])
def test_row_counts_from_the_column_lengths(symmetric, monkeypatch):
    """Where the exchange sums on the devices (NCCL; here the host exchange made to claim it), a grid of
    one column takes an undirected graph's row counts from the column lengths summed over the ranks
    instead of counting rows: the same blocks and degrees (a directed graph counts its rows)."""
    monkeypatch.setattr(_HostExchange, "sums_on_devices", True)
    n, src, dst = small_graph()
    lo, hi = edge_range(len(src), WORLD.Get_rank(), WORLD.Get_size())
    for R, C in grids():
        comms = GridComms.create(Grid(R, C, n))
        graph = build_from_edges(comms, CPU, src[lo:hi], dst[lo:hi], symmetric=symmetric, row_major=True,
                                 chunk_edges=97)
        check_graph(graph, src, dst, symmetric, True)
        comms.free()


@pytest.mark.parametrize("symmetric", [True, False])
@pytest.mark.parametrize("row_major", [True, False])
def test_counting_at_the_source_builds_the_same_blocks(symmetric, row_major, monkeypatch):
    """The counting pass without the entries' exchange (taken on GPUs over NCCL; here forced on the host
    exchange, made to sum on the devices as NCCL does): every entry counted where it is produced, the
    histogram's blocks brought to their owners in one round, each chunk's entries per owner kept so that
    the placing pass routes and groups it in one pass; the same blocks, row copies and degrees on every
    grid (where rows are counted too, the pass sends the entries as before)."""
    from dbfs import build as build_module
    from dbfs.ops.owner_groups import count_by_owner, group_tuples
    counted, grouped_once = [], []
    monkeypatch.setattr(_HostExchange, "sums_on_devices", True)
    monkeypatch.setattr(memory, "counts_at_source", lambda grid, *args: grid.size > 1)
    monkeypatch.setattr(build_module, "count_by_owner", lambda *args: counted.append(count_by_owner(*args)))
    monkeypatch.setattr(build_module, "group_tuples", lambda *args: grouped_once.append(group_tuples(*args)))
    n, src, dst = small_graph()
    lo, hi = edge_range(len(src), WORLD.Get_rank(), WORLD.Get_size())
    for R, C in grids():
        comms = GridComms.create(Grid(R, C, n))
        for chunk in (1 << 16, 97):
            counted.clear()
            grouped_once.clear()
            graph = build_from_edges(comms, CPU, src[lo:hi], dst[lo:hi], n, chunk_edges=chunk,
                                     symmetric=symmetric, row_major=row_major)
            check_graph(graph, src, dst, symmetric, row_major)
            counts_rows = row_major and not (symmetric and C == 1)
            assert bool(counted) == bool(grouped_once) == (R * C > 1 and not counts_rows)
        comms.free()


def test_row_copy_of_one_column_with_rows_past_a_round():
    """On a grid of one column the row copy comes from the ranks' column segments in rounds of a few
    words (tiny chunks): a hub of 400 neighbours, whose row alone exceeds a round, and a path."""
    n = 500
    src = np.concatenate((np.zeros(400, np.int64), np.arange(1, 300)))
    dst = np.concatenate((np.arange(1, 401), np.arange(2, 301)))
    lo, hi = edge_range(len(src), WORLD.Get_rank(), WORLD.Get_size())
    comms = GridComms.create(Grid(WORLD.Get_size(), 1, n))
    for chunk in (5, 64):
        graph = build_from_edges(comms, CPU, src[lo:hi], dst[lo:hi], n, chunk_edges=chunk, row_major=True)
        check_graph(graph, src, dst, True, True)
    comms.free()


def test_column_sums_are_a_reduce_scatter_along_each_grid_column():
    """The round that sums the owned degrees over a grid column (NCCL's on the GPU) against MPI's own
    reduce-scatter, on every grid of the job's size."""
    rng = np.random.default_rng(WORLD.Get_rank())
    for R, C in grids():
        comms = GridComms.create(Grid(R, C, 64 * R * C))
        values = rng.integers(0, 1000, R * comms.grid.block).astype(np.int32)
        expected = np.empty(comms.grid.block, np.int32)
        comms.col.Reduce_scatter_block(values, expected, op=MPI.SUM)
        exchange = _HostExchange(WORLD, CPU)
        np.testing.assert_array_equal(exchange.column_sums(comms.grid, comms.i, comms.j, values), expected)
        comms.free()


def test_the_exchange_is_set_up_and_closed_outside_construction_time(monkeypatch):
    if WORLD.Get_size() == 1:
        pytest.skip("one rank builds without an exchange")
    setting_up, closing = _HostExchange.__init__, _HostExchange.close

    def slow_setup(self, *args):
        time.sleep(0.3)
        setting_up(self, *args)

    def slow_close(self):
        time.sleep(0.3)
        closing(self)
    monkeypatch.setattr(_HostExchange, "__init__", slow_setup)
    monkeypatch.setattr(_HostExchange, "close", slow_close)
    n, src, dst = small_graph()
    lo, hi = edge_range(len(src), WORLD.Get_rank(), WORLD.Get_size())
    comms = GridComms.create(Grid(*grids()[-1], n))      # R ranks down each grid column: degrees summed
    started = time.perf_counter()
    graph, report = build(comms, CPU, EdgeArrays.create(src[lo:hi], dst[lo:hi], n))
    wall = time.perf_counter() - started
    assert report.setup_time >= 0.6 and report.construction_time < wall - 0.6
    check_graph(graph, src, dst, True, False)
    comms.free()


def test_transpose_and_shared_row_major_copy():
    n, src, dst = small_graph()
    lo, hi = edge_range(len(src), WORLD.Get_rank(), WORLD.Get_size())
    for R, C in grids():
        comms = GridComms.create(Grid(R, C, n))
        for symmetric in (True, False):
            graph = build_from_edges(comms, CPU, src[lo:hi], dst[lo:hi], n, symmetric=symmetric)
            add_row_major(graph)
            check_graph(graph, src, dst, symmetric, True)
            row_ptr, col_idx = transpose_csc(CPU, graph.col_ptr, graph.row_idx, comms.grid.rows_per_rank,
                                             graph.columns)
            assert np.array_equal(row_ptr, graph.row_ptr)
        comms.free()


def test_partition_cache_stores_a_shared_copy_once(tmp_path_factory):
    from dbfs.partition_cache import PartitionCache
    directory = str(tmp_path_factory.mktemp("cache")) if WORLD.Get_rank() == 0 else None
    directory = WORLD.bcast(directory, root=0)
    scale = 8
    source = GraphSource(1 << scale, 16 << scale, scale, 16, True, None, (2, 3))
    comms = GridComms.create(Grid(*grids()[0], 1 << scale))
    graph, _ = build(comms, CPU, source, row_major=True)
    cache = PartitionCache(directory, source, comms.grid)
    cache.store(graph)
    with np.load(cache.rank_file) as stored:
        assert ("row_ptr" in stored.files) == (not graph.row_major_shared)
    loaded = cache.load(comms, CPU)
    if loaded.row_ptr is None:
        add_row_major(loaded)
    assert loaded.row_major_shared == graph.row_major_shared
    for name in ("col_ptr", "row_idx", "degree", "row_ptr", "col_idx"):
        assert np.array_equal(getattr(loaded, name), getattr(graph, name))
    comms.free()


def on_host(graph):
    """The graph with NumPy copies of its arrays (a shared row-major copy stays shared; the columns'
    Positions too, where it holds its offsets by them)."""
    copies = {name: graph.backend.asnumpy(getattr(graph, name)) for name in ("col_ptr", "row_idx", "degree")}
    if graph.columns is not None:
        held = graph.columns
        copies["columns"] = Positions(graph.backend.asnumpy(held.words), graph.backend.asnumpy(held.starts), held.count)
    if graph.row_major_shared:
        copies.update(row_ptr=copies["col_ptr"], col_idx=copies["row_idx"])
    elif graph.row_ptr is not None:
        copies.update(row_ptr=graph.backend.asnumpy(graph.row_ptr), col_idx=graph.backend.asnumpy(graph.col_idx))
    return dataclasses.replace(graph, backend=CPU, **copies)


@pytest.mark.gpu
@pytest.mark.parametrize("comm,landing_share", [("mpi", None), ("nccl", None), ("nvshmem", None),
                                                 ("nvshmem", 0)])
def test_gpu_build_equals_the_whole_list_and_passes_the_certificate(comm, landing_share, monkeypatch):
    """Every bulk transport; over NVSHMEM also with no room in the landings, so that every chunk takes
    the host-staged way instead."""
    from dbfs.backend import gpu_count
    from dbfs.transport import problem
    from dbfs.warmup import warm_up
    backend = Backend("gpu", runtime.local_rank()[0] % gpu_count())
    why = "one rank" if WORLD.Get_size() == 1 else problem(comm, backend, WORLD) if comm != "mpi" else None
    if comm != "mpi" and why:
        pytest.skip(f"--comm {comm} cannot run here ({why})")
    if landing_share is not None:
        monkeypatch.setattr(memory, "LANDING_SHARE", landing_share)
    assert warm_up(backend) > 0
    scale = 12
    source = GraphSource(1 << scale, 16 << scale, scale, 16, True, None, (2, 3))
    src, dst = generate_edges(scale, 16, 0, 16 << scale)
    lo, hi = edge_range(len(src), WORLD.Get_rank(), WORLD.Get_size())
    for R, C in grids():
        comms = GridComms.create(Grid(R, C, 1 << scale))
        for row_major in (True, False):
            graph, _ = build(comms, backend, source, row_major=row_major, transport=comm, chunk_edges=5000)
            assert graph.nonempty_columns == np.count_nonzero(np.diff(every_column_offsets(on_host(graph))))
            check_graph(on_host(graph), src, dst, True, row_major)
            assert certify(graph, source).passed
        for symmetric in (True, False):
            graph = build_from_edges(comms, backend, src[lo:hi], dst[lo:hi], symmetric=symmetric,
                                     row_major=True, transport=comm, chunk_edges=3000)
            check_graph(on_host(graph), src, dst, symmetric, True)
        comms.free()
