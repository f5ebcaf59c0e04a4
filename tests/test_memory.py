"""The memory planner (dbfs.memory) against what the CPU backend allocates: the graph arrays, the
search state and the validation's arrays beyond the idle ones it borrows, of the tests' small graphs
on every grid of the job's size, both directions, undirected and directed; the default entry count
bounds the real one; sizes parse strictly; the largest scale is the last that fits; construction
stays within 10% of the graph or below the search. A run's measured peak within 10% of its estimate:
on the CPU (tracemalloc, scale 14, with the row copy and without; scales 10 and 12 in a fresh process), on
a GPU (scale 20, its construction peak within 10% of the resident graph or below the run's estimate too)."""

import json
import subprocess
import sys

import numpy as np
import pytest
from launcher import launcher_free_env
from mpi4py import MPI

from dbfs import memory
from dbfs.backend import Backend
from dbfs.bfs import BFS
from dbfs.build import build_from_edges
from dbfs.errors import DbfsError
from dbfs import graph as graph_module
from dbfs.graph import GridComms
from dbfs.grid import Grid, default_grid
from dbfs.ops.validate import level_dtype
from dbfs.search_state import layout
from dbfs.workspace import allocated_bytes
from graph500.generator import edge_range, generate_edges
from graph500 import validate as validator
from graph500.validate import validate_bfs, validation_requests

WORLD = MPI.COMM_WORLD
CPU = Backend("cpu")


def grids():
    size = WORLD.Get_size()
    return [(r, size // r) for r in range(1, size + 1) if size % r == 0]


def owned_arrays(root, skip_ids=()):
    """Every NumPy array owning its memory that `root` reaches through attributes, dicts, lists and
    tuples (not through the objects in skip_ids), each once."""
    found, seen, stack = {}, set(skip_ids), [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, (MPI.Comm, Backend, str, bytes, int, float)):
            continue
        seen.add(id(obj))
        if isinstance(obj, np.ndarray):
            if obj.base is None:
                found[id(obj)] = obj
        elif isinstance(obj, dict):
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple)):
            stack.extend(obj)
        elif hasattr(obj, "__dict__"):
            stack.extend(vars(obj).values())
    return list(found.values())


def graph_arrays(graph):
    """The graph's arrays, with the Positions of its columns where it holds the offsets by them."""
    names = ("col_ptr", "row_idx", "degree", "row_ptr", "col_idx")
    arrays = [getattr(graph, n) for n in names]
    arrays += [graph.columns.words, graph.columns.starts] if graph.columns is not None else []
    return list({id(a): a for a in arrays if a is not None}.values())


CASES = {
    "graph500 scale 8": lambda: (256, *generate_edges(8, 16, 0, 16 << 8)),
    "random, padded": lambda: (301, np.random.default_rng(2).integers(0, 301, 700),
                               np.random.default_rng(3).integers(0, 301, 700)),
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("symmetric", [True, False])
def test_plan_equals_the_allocated_bytes(case, symmetric, monkeypatch):
    n, src, dst = CASES[case]()
    lo, hi = edge_range(len(src), WORLD.Get_rank(), WORLD.Get_size())
    for R, C in grids():
        grid = Grid(R, C, n)
        comms = GridComms.create(grid)
        # the bottom-up search with the row-major copy, without it (an undirected graph), or none
        for direction, row_copy in (("auto", True), ("auto", False), ("topdown", False)):
            if direction == "auto" and not row_copy and not (symmetric and R * C > 1):
                continue                        # nothing but the copy: a directed graph, or 1x1
            graph = build_from_edges(comms, CPU, src[lo:hi], dst[lo:hi], n, symmetric=symmetric,
                                     row_major=direction == "auto" and row_copy)
            plan = memory.estimate(grid, len(src), symmetric, direction, "mpi", "cpu", entries=graph.nnz,
                                   row_copy=row_copy, columns=graph.most_nonempty_columns, slots=graph.group_slots,
                                   rows=graph.most_nonempty_rows, segment_slots=graph.segment_slots if C > 1 else None,
                                   segment_columns=graph.segment_columns if R * C > 1 else None)
            # as built: every column's offsets, or those of the block's non-empty columns (dbfs.build)
            built = memory.graph_bytes(grid, graph.nnz, memory.row_major_layout(grid, symmetric, direction, row_copy),
                                       columns=graph.nonempty_columns if graph.columns is not None else None)
            assert sum(built.values()) == sum(a.nbytes for a in graph_arrays(graph)), (R, C, direction, row_copy)
            bfs = BFS(graph, direction=direction)      # the offsets of hypersparse blocks held by position now
            allocated = graph_arrays(graph)
            # the plan holds the offsets of the grid's most non-empty columns, this block those of its own
            fewer = (graph.most_nonempty_columns - graph.nonempty_columns) * graph.col_ptr.itemsize
            held = sum(a.nbytes for a in allocated) + (fewer if graph.columns is not None else 0)
            assert plan.resident == held, (R, C, direction, row_copy)
            state = owned_arrays(bfs, skip_ids=[id(graph)] + [id(a) for a in allocated])
            assert plan.parts["search state"] == sum(a.nbytes for a in state), (R, C, direction, row_copy)
            # the validation in the idle arrays allocates what the estimate's placement says, with the
            # pieces it picks and with the pieces forced
            result = bfs.search(0)
            deepest = WORLD.allreduce(int(result.level.max()) + 1, op=MPI.MAX)
            shape = (grid, result.parent.dtype.itemsize, not symmetric, level_dtype(deepest).itemsize)
            lenders = [a.nbytes for a in bfs.state.idle_arrays()]
            for forced in (None, (True, True)):
                if forced:
                    monkeypatch.setattr(validator, "pieces", lambda *args, split=forced: split)
                workspace = bfs.idle_memory()
                assert validate_bfs(graph, 0, result.parent, result.nedge, result.level, workspace).ok
                requests = validation_requests(*shape, graph.nnz, validator.pieces(*shape, lenders, graph.nnz))
                assert workspace.allocated == allocated_bytes(lenders, requests), (R, C, direction, row_copy)
                assert workspace.allocated == validator.validation_bytes(*shape, lenders, graph.nnz) - \
                    validator.validation_bytes(*shape, [1 << 40], graph.nnz)
            monkeypatch.undo()
            bfs.close()
        comms.free()


def test_default_entry_count_bounds_the_real_one():
    scale = 10
    src, dst = generate_edges(scale, 16, 0, 16 << scale)
    comms = GridComms.create(Grid(1, 1, 1 << scale), MPI.COMM_SELF)
    graph = build_from_edges(comms, CPU, src, dst, 1 << scale)
    default = memory.entries_per_rank(comms.grid, len(src), True)
    assert graph.nnz <= default < 1.01 * graph.nnz
    comms.free()


@pytest.mark.one_rank
def test_a_run_without_the_certificate_has_no_certificate_phase():
    """--validate none builds no certificate: neither its part nor its phase is counted, the others are."""
    grid = Grid(1, 1, 1 << 20)
    certified = memory.estimate(grid, 16 << 20)
    plain = memory.estimate(grid, 16 << 20, certified=False)
    assert "certificate" in certified.phases and "certificate" not in plain.phases | plain.parts
    assert {k: v for k, v in certified.phases.items() if k != "certificate"} == plain.phases


def test_gathered_frontier_and_scan_are_sized_by_the_non_empty_columns(monkeypatch):
    """Where the frontier is gathered (several grid rows) or is a 1x1 undirected block's own
    discoveries, the gathered frontier and the degree scan shrink to the counted non-empty columns; a
    grid of one row and a 1x1 directed block keep every local column, and so does an estimate before
    the columns are counted. The validation's arrays fit the idle arrays without growing the scan: whole
    on a grid of one row, else gathered by owned block (graph500.validate.pieces: columns in pieces on
    2x4, 4x4, 4x2 and 2x2 here, the rows too for a directed 4x2). The scan's words are int64 here (64-bit
    offsets), as the sizes above are stated."""
    from dbfs.search_state import idle_after_search
    from graph500.validate import pieces, validation_requests
    monkeypatch.setattr(graph_module, "NARROW_OFFSETS_MAX", -1)
    n, entries = 1 << 16, 1 << 18
    for grid, symmetric, scan_words, split in (
            (Grid(2, 4, n), True, "columns", (True, False)), (Grid(1, 1, n), True, "columns", (False, False)),
            (Grid(4, 4, n), True, "columns", (True, False)), (Grid(4, 2, n), True, "columns", (True, False)),
            (Grid(2, 2, n), True, "columns", (True, False)), (Grid(4, 2, n), False, "columns", (True, True)),
            (Grid(1, 1, n), False, "all", (False, False)), (Grid(1, 4, n), True, "all", (False, False))):
        counted = layout(grid, "auto", entries, columns=grid.cols_per_rank // 5, symmetric=symmetric)
        bound = layout(grid, "auto", entries, symmetric=symmetric)
        expected = {"columns": grid.cols_per_rank // 5, "half": grid.cols_per_rank // 2, "all": grid.cols_per_rank}
        assert expected[scan_words] <= counted["cumul"][1] <= expected[scan_words] + 1
        assert bound["cumul"][1] == grid.cols_per_rank + 1
        if grid.R > 1:
            assert counted["front"][1] == grid.cols_per_rank // 5 < bound["front"][1]
        lenders = [counted[name][0].itemsize * counted[name][1] for name in idle_after_search(grid)]
        assert pieces(grid, 4, not symmetric, 4, lenders, entries) == split
        assert allocated_bytes(lenders, validation_requests(grid, 4, not symmetric, 4, entries, split)) == 0
    wide = Grid(4, 4, 1 << 32)                  # 64-bit parents: by column blocks, the scan not grown
    counted = layout(wide, "auto", 1 << 28, columns=wide.cols_per_rank // 8)
    assert counted["cumul"][1] == wide.cols_per_rank // 8 + 1 and counted["front"][1] == wide.cols_per_rank // 8
    assert layout(Grid(1, 1, n), "auto", entries, columns=0)["cumul"][1] == 2, "room for a root without an edge"
    lent = layout(Grid(2, 2, n), "auto", entries, columns=1, scan_lent=4096)
    assert lent["cumul"][1] * 8 >= 4096 and lent["front"][1] == 1, "the exchanges' room kept in the scan"
    plan = memory.estimate(Grid(4, 2, n), entries // 2, entries=entries)
    assert plan.with_counts(entries, Grid(4, 2, n).cols_per_rank // 5).phases["search"] < plan.phases["search"]


def test_the_scan_holds_a_part_of_a_long_frontier(monkeypatch):
    """Past SCAN_COLUMNS non-empty columns the degree scan holds that many (the expansion takes a longer
    frontier in parts), or what the exchanges carve out of it where that is more; the gathered frontier
    still holds every non-empty column, and the estimate's search state shrinks by the scan's bytes (a grid
    of one column, whose predecessors need no exchange that the scan would hold)."""
    from dbfs import search_state
    grid, n_edges, entries = Grid(4, 1, 1 << 16), 1 << 17, 1 << 18
    columns = grid.cols_per_rank // 2
    whole = layout(grid, "auto", entries, columns=columns)
    before = memory.estimate(grid, n_edges, entries=entries, columns=columns)
    monkeypatch.setattr(search_state, "SCAN_COLUMNS", 1000)
    parted = layout(grid, "auto", entries, columns=columns)
    assert whole["cumul"][1] == columns + 1 and parted["cumul"][1] == 1000 + 1
    assert parted["front"] == whole["front"] == (np.dtype(np.int32), columns)
    assert layout(grid, "auto", entries, columns=columns, scan_lent=1 << 16)["cumul"][1] * 4 >= 1 << 16
    after = memory.estimate(grid, n_edges, entries=entries, columns=columns)
    scan_bytes = [sum(parts[name][0].itemsize * parts[name][1] for name in ("cumul", "tile_sums"))
                  for parts in (whole, parted)]
    assert before.parts["search state"] - after.parts["search state"] == scan_bytes[0] - scan_bytes[1] > 0


def test_the_scan_takes_the_offsets_width(monkeypatch):
    """The expansion's degree scan (cumul, tile_sums) is int32 where a block's offsets are, int64 where
    they are not (dbfs.graph.offset_dtype), its length the same where the validation does not grow it,
    its bytes at least what the exchanges carve out of it either way; the estimate's search state
    follows the layout."""
    grid, n_edges, entries = Grid(1, 1, 1 << 16), 1 << 17, 1 << 18
    scan_lent = 1 << 19
    plans, layouts = {}, {}
    for width in (np.int32, np.int64):
        if width == np.int64:
            monkeypatch.setattr(graph_module, "NARROW_OFFSETS_MAX", entries - 1)
        layouts[width] = layout(grid, "auto", entries, columns=grid.cols_per_rank // 5)
        assert layouts[width]["cumul"][0] == width and layouts[width]["tile_sums"][0] == width
        lent = layout(grid, "auto", entries, columns=grid.cols_per_rank // 5, scan_lent=scan_lent)["cumul"]
        assert lent == (np.dtype(width), scan_lent // np.dtype(width).itemsize), "the exchanges' bytes, no more"
        plans[width] = memory.estimate(grid, n_edges, entries=entries, columns=grid.cols_per_rank // 5)
    narrow, wide = layouts[np.int32], layouts[np.int64]
    assert narrow["cumul"][1] == wide["cumul"][1] == grid.cols_per_rank // 5 + 1
    saved = sum(4 * wide[name][1] for name in ("cumul", "tile_sums"))
    assert plans[np.int64].parts["search state"] - plans[np.int32].parts["search state"] == saved


def test_presence_bitmaps_only_where_a_record_is_gathered():
    """The predecessor gathers' presence words: none where the owners read the records in place (NVSHMEM);
    landed words and starts for every gathering peer; the words sent only for a record held densely (one
    held by position sends its own Positions)."""
    grid, entries = Grid(4, 2, 1 << 16), 1 << 18
    w, few = grid.block // 32, grid.rows_per_rank // 10
    presence = ("sent_presence", "recv_presence", "presence_starts")
    dense = layout(grid, "auto", entries)
    assert [dense[name][1] for name in presence] == [(grid.C - 1) * w, (grid.C - 1) * w, (grid.C - 1) * (w + 1)]
    held = layout(grid, "auto", entries, rows=few)
    assert "sent_presence" not in held and held["recv_presence"][1] == (grid.C - 1) * w
    assert not set(presence) & set(layout(grid, "auto", entries, rows=few, records_in_place=True))
    # the column finds gathered along the grid column (R - 1 peers), held; the discoverers dense
    finds = layout(grid, "auto", entries, by_columns=True, columns=grid.cols_per_rank // 10)
    assert finds["sent_presence"][1] == (grid.C - 1) * w and finds["recv_presence"][1] == (grid.R - 1) * w


@pytest.mark.parametrize("share", [2.0, 0.0])
def test_a_gather_of_records_held_by_position_takes_no_send_scratch(share, monkeypatch):
    """A gather packs its records through a send scratch a peer only where they are held densely; held by
    position they are sent in place (dbfs.line_records), so its Exchange lends only the receive blocks out of
    the scan (POSITIONS_SHARE forces either form); the parents come out the same."""
    from dbfs.ops import sparse
    monkeypatch.setattr(sparse, "POSITIONS_SHARE", share)
    n, src, dst = CASES["graph500 scale 8"]()
    lo, hi = edge_range(len(src), WORLD.Get_rank(), WORLD.Get_size())
    for R, C in grids():
        if R * C == 1:
            continue                            # one rank gathers nothing
        comms = GridComms.create(Grid(R, C, n))
        graph = build_from_edges(comms, CPU, src[lo:hi], dst[lo:hi], n, row_major=True)
        bfs = BFS(graph, direction="auto")
        for x, record in ((bfs.loop.row_x, bfs.loop.discoverers), (bfs.loop.col_x, bfs.loop.column_finds)):
            if x is not None:
                assert (x.send_scratch == {}) == (record.positions is not None), (R, C, share)
        assert (bfs.loop.row_x is not None) == (C > 1)
        assert C == 1 or (bfs.loop.discoverers.positions is not None) == (share > 1)
        result = bfs.search(int(src[0]))
        assert validate_bfs(graph, int(src[0]), result.parent, result.nedge, result.level, bfs.idle_memory()).ok
        bfs.close()
        comms.free()


def test_the_heap_holds_the_records_read_in_place_as_the_state_holds_them():
    """With --comm nvshmem the discoverers and the column finds are read in place from the heap: by their
    rows' and columns' positions where the search state holds them so, the whole range otherwise."""
    from dbfs.grid_loop import symmetric_bytes
    from dbfs.ops.sparse import positions_bytes
    grid = Grid(4, 4, 1 << 20)
    rows, columns = grid.rows_per_rank // 10, grid.cols_per_rank // 10
    whole = symmetric_bytes(grid, "adaptive", "auto", True)
    held = symmetric_bytes(grid, "adaptive", "auto", True, columns, rows)
    assert whole - held == sum(4 * n - 4 * k - positions_bytes(n) for n, k in
                               ((grid.rows_per_rank, rows), (grid.cols_per_rank, columns)))
    assert symmetric_bytes(grid, "adaptive", "auto", True, grid.cols_per_rank, grid.rows_per_rank) == whole
    expected = memory.symmetric_heap_bytes(grid, 16 << 20, True, "auto", row_copy=False, build_transport="nccl",
                                           columns=memory.EXPECTED_COLUMNS)
    assert expected < memory.symmetric_heap_bytes(grid, 16 << 20, True, "auto", row_copy=False,
                                                  build_transport="nccl")


def test_pred_col_holds_a_grid_column_in_16_bits():
    """The delayed predecessors take two bytes an owned vertex; a grid of more columns than that holds is
    refused."""
    grid = Grid(2, 2, 1 << 16)
    assert layout(grid, "auto", 1 << 18)["pred_col"] == (np.dtype(np.int16), grid.block)
    with pytest.raises(ValueError, match="32767"):
        layout(Grid(1, 1 << 15, 32 << 15), "auto", 1)


@pytest.mark.parametrize("text, size", [("80GiB", 80 << 30), ("141GB", 141 * 10**9), ("512MiB", 512 << 20),
                                        ("1.5TB", 15 * 10**11), ("4096B", 4096), ("2kB", 2000),
                                        ("80gib", 80 << 30), ("80 GiB", 80 << 30), ("141gb", 141 * 10**9)])
def test_sizes_parse(text, size):
    assert memory.parse_size(text) == size


@pytest.mark.parametrize("text", ["80", "80G", "80 GiB x", "80gibs", "-1GiB", "0GiB", "GiB", "1e3GiB"])
def test_bad_sizes_are_one_clear_error(text):
    with pytest.raises(DbfsError, match="--memory must be a positive size with a unit"):
        memory.parse_size(text)


@pytest.mark.parametrize("R, C", [(1, 1), (2, 2), (2, 4)])
def test_largest_scale_is_the_last_that_fits(R, C):
    """With the row-major copy kept, dropped, or (auto) dropped where only that fits."""
    for scale in (12, 20, 26):
        with_copy = memory.estimate(Grid(R, C, 1 << scale), 16 << scale).peak
        without = memory.estimate(Grid(R, C, 1 << scale), 16 << scale, row_copy=False).peak
        assert without <= with_copy and (without < with_copy) == (R * C > 1)
        for setting, limit in (("on", with_copy), ("off", without), ("auto", without)):
            assert memory.largest_scale(R, C, 16, limit, row_copy=setting) == scale
            assert memory.largest_scale(R, C, 16, limit - 1, row_copy=setting) == scale - 1
    assert memory.largest_scale(1, 1, 16, 1000) is None


def test_construction_never_sets_the_peak_and_takes_few_chunks():
    """Construction's transients stay within 5% of the graph or within what the search adds to it, so
    its phase stays within 10% of the graph or below the search's; several ranks take chunks that big."""
    for scale in (22, 24, 26, 29):
        for R, C in ((1, 1), (2, 4), (4, 4)):
            grid = Grid(R, C, 1 << scale)
            plan = memory.estimate(grid, 16 << scale)
            room = plan.parts["search state"] + plan.parts["validation"]
            assert plan.parts["construction transients"] <= max(memory.CHUNK_SHARE * plan.resident, room)
            assert plan.phases["construction"] <= max(1.1 * plan.resident, plan.phases["search"])
            assert plan.inputs["chunk"] >= memory.chunk_edges(grid, 16 << scale, True, R * C > 1)
            assert plan.with_counts(plan.inputs["entries"] or 1000, 10).inputs["chunk"] == plan.inputs["chunk"]


def test_the_build_keeps_its_keys_where_every_columns_offsets_would_set_the_peak():
    """The held build (its counting pass's keys kept) where every column's offsets would make the
    construction the run's peak: Kronecker 36 on 64 x 64 (28 GiB against an 11 GiB search), not 24 on 2 x 2
    or one rank; the choice stays with the counted entries, and the held build's construction phase is the
    lower."""
    held = memory.estimate(Grid(64, 64, 1 << 36), 16 << 36, columns=memory.EXPECTED_COLUMNS, build_transport="nccl")
    assert held.inputs["keeps_keys"] and held.with_counts(held.inputs["entries"] or 1 << 29, 10).inputs["keeps_keys"]
    dense = memory.estimate(Grid(64, 64, 1 << 36), 16 << 36, columns=memory.EXPECTED_COLUMNS, build_transport="nccl",
                            keeps_keys=False)
    assert held.phases["construction"] < 0.7 * dense.phases["construction"]
    assert dense.phases["construction"] > dense.phases["search"] and "columns by position" in dense.phases
    assert "columns by position" not in held.phases
    for grid in (Grid(2, 2, 1 << 24), Grid(1, 1, 1 << 24)):
        assert not memory.estimate(grid, 16 << 24, columns=memory.EXPECTED_COLUMNS).inputs["keeps_keys"]


def test_the_counting_pass_counts_at_the_source_where_the_histogram_fits_a_chunks_routing():
    """Several GPU ranks building over NCCL count where the entries are produced when the histogram over
    every rank's columns (4 B each), beside a chunk's tuples or the blocks received, takes no more than the
    chunk's routing: the pair's scale 28 (2 + 1 GiB beside 3.5), not four GPUs' scale 29 (8 GiB), never one
    rank, the CPU or another transport."""
    pair, four = Grid(2, 1, 1 << 28), Grid(4, 1, 1 << 29)
    assert memory.counts_at_source(pair, 1 << 26, True, True, "gpu", "nccl")
    assert not memory.counts_at_source(four, 1 << 26, True, True, "gpu", "nccl")
    assert not memory.counts_at_source(pair, 1 << 20, True, True, "gpu", "nccl")     # a smaller chunk's routing
    for device, transport in (("cpu", "nccl"), ("gpu", "mpi"), ("gpu", "nvshmem")):
        assert not memory.counts_at_source(pair, 1 << 26, True, True, device, transport)
    assert not memory.counts_at_source(Grid(1, 1, 1 << 20), 1 << 26, True, True, "gpu", "nccl")


def test_a_landing_is_counted_and_bounds_the_chunk_only_where_the_build_goes_over_nvshmem():
    """On a GPU a rank an NVSHMEM search builds over NCCL: no landing on the heap or in the transients, and
    chunks up to MAX_CHUNK_EDGES; ranks sharing a GPU build over NVSHMEM into a landing, whose chunk stays
    within MAX_LANDING_CHUNK_EDGES."""
    grid = Grid(2, 1, 1 << 28)
    over_nccl = memory.estimate(grid, 16 << 28, transport="nvshmem", build_transport="nccl")
    over_nvshmem = memory.estimate(grid, 16 << 28, transport="nvshmem")
    assert over_nccl.inputs["chunk"] == memory.MAX_CHUNK_EDGES > memory.MAX_LANDING_CHUNK_EDGES
    assert over_nvshmem.inputs["chunk"] <= memory.MAX_LANDING_CHUNK_EDGES
    assert over_nccl.parts["construction transients"] == memory.construction_bytes(
        grid, 16 << 28, memory.MAX_CHUNK_EDGES, True, True, transport="nccl")
    assert over_nccl.with_counts(1000, 10).inputs["chunk"] == over_nccl.inputs["chunk"]
    search_heap = memory.symmetric_heap_bytes(grid, 16 << 28, True, "auto", build_transport="nccl")
    assert search_heap < memory.symmetric_heap_bytes(grid, 16 << 28, True, "auto")


def measured_run(tmp_path_factory, *options: str) -> dict:
    """Collective: the main command in this job with `options` and --json; its JSON document."""

    from dbfs import bfs_benchmark, cli
    report = str(tmp_path_factory.mktemp("run") / "run.json") if WORLD.Get_rank() == 0 else None
    report = WORLD.bcast(report, root=0)
    bfs_benchmark.main(cli.main_parser().parse_args([*options, "--json", report]))
    WORLD.Barrier()
    return json.load(open(report))


def test_a_cpu_measurement_counts_what_is_allocated_after_it_starts():
    """A measurement left open (a run stopped by an error does not close it) does not count in the next."""
    left_open = memory.DevicePeak(CPU)
    held = np.ones(1 << 20)                               # 8 MiB allocated under the first measurement
    peak = memory.DevicePeak(CPU)
    scratch = np.ones(1 << 18)                            # 2 MiB under the second
    del scratch
    assert 2 << 20 <= peak.largest(MPI.COMM_SELF) < 3 << 20
    peak.close()
    del held, left_open


@pytest.mark.parametrize("side", [64, 512])
def test_the_validation_twins_step_holds_what_it_counts(side, monkeypatch):
    """The validation's NumPy entry pass (dbfs.ops.validate) over a side x side lattice searched from a corner,
    one rank, one step of 4,096 or 262,144 columns (below and above the int64 arrays of 256 KiB from which
    NumPy elides a temporary): its peak above what it starts with at most 1% below TWIN_CHECK_BYTES' count and
    never above it. It held 22 B an entry + 43 a column (46 where NumPy did not elide) in _local_rows."""
    import tracemalloc
    from dbfs.ops import validate as ops
    from graph500.serial import serial_bfs
    ids = np.arange(side * side).reshape(side, side)
    src = np.concatenate((ids[:, :-1].ravel(), ids[:-1].ravel()))
    dst = np.concatenate((ids[:, 1:].ravel(), ids[1:].ravel()))
    level, parent = serial_bfs(side * side, src, dst, 0)
    grid = Grid(1, 1, side * side)
    n = grid.cols_per_rank
    level = np.append(level, np.full(n - level.size, -1)).astype(np.int32)
    parent = np.append(parent, np.full(n - parent.size, -1)).astype(np.int32)
    compact = np.empty(n, level_dtype(int(level.max()) + 1))
    ops.compact_levels(CPU, parent, level, compact)
    cols, rows = grid.to_local_col(np.append(src, dst)), grid.to_local_row(np.append(dst, src))
    order = np.argsort(cols, kind="stable")
    col_ptr = np.searchsorted(cols[order], np.arange(n + 1)).astype(np.int32)
    steps, step = [], ops._entries_numpy

    def measured(*args):
        start = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        step(*args)
        c0, c1 = args[-2:]
        steps.append((int(args[0][c1] - args[0][c0]), c1 - c0, tracemalloc.get_traced_memory()[1] - start))

    monkeypatch.setattr(ops, "_entries_numpy", measured)
    started = not tracemalloc.is_tracing()
    tracemalloc.start()
    stats = ops.new_stats(CPU)
    ops.check_entries(CPU, col_ptr, rows[order].astype(np.int32), compact, compact, parent, False,
                      ops.EntryLayout.of(grid, 0, 0, CPU), np.zeros(n // 32, np.uint32), stats)
    if started:
        tracemalloc.stop()
    assert all(int(stats[ops.SLOT[rule.replace("-", "_")]]) == ops.NO_VERTEX for rule in ops.CHECKS)
    (entries, columns, peak), = steps
    count = memory.TWIN_CHECK_STEP_BYTES + max(per_entry * entries + per_column * columns + fixed
                                               for per_entry, per_column, fixed in memory.TWIN_CHECK_BYTES)
    assert 0.99 * count <= peak <= count, (entries, columns, peak, count)


@pytest.mark.one_rank
@pytest.mark.parametrize("distinct", [1.0, 0.01])
def test_a_placing_chunk_below_numpys_elision_is_counted(distinct):
    """The placing pass on 4x1, one chunk of 16,384 tuples a rank, the largest rank 32,805 entries: a few more than
    the 32,768 int64 from which NumPy elides the temporaries of the scatter twin's slots. The chunk's tuples, the
    send buffer and the received words beside the twin's sort of a rank's 32,767 entries (8 B an entry more than
    from 32,768 on) or of the largest rank's, measured with tracemalloc, within construction_bytes and the build's
    Python objects, the larger within 1%. The 256x256 lattice (half its edges removed) peaked 4% above its
    estimate so at 4x1: the estimate counted the largest rank's chunk, whose sort NumPy elides."""
    import tracemalloc
    from dbfs.ops.csc_build import scatter_values
    grid, n_edges, largest = Grid(4, 1, 1 << 16), 1 << 16, 32805
    tuples = n_edges // grid.size
    keys = int(distinct * largest) if distinct < 1 else None
    count = memory.construction_bytes(grid, n_edges, memory.MIN_CHUNK_EDGES, True, True, "cpu", generated=False,
                                      entries=largest, keys=keys) + memory.CPU_BUILD_PYTHON_BYTES
    rng = np.random.default_rng(7)
    peaks = []
    for entries in (memory.TWIN_SORT_ELIDED_ENTRIES - 1, largest):
        present = keys or entries
        pairs = np.empty(2 * entries, np.int32)
        pairs[0::2] = rng.permutation(np.arange(entries) % present)
        pairs[1::2] = rng.integers(0, grid.rows_per_rank, entries)
        cursor = np.cumsum(np.bincount(pairs[0::2], minlength=present)).astype(np.int64)
        out = np.empty(entries, np.int32)
        started = not tracemalloc.is_tracing()
        tracemalloc.start()
        start = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        chunk = (np.zeros(tuples, np.int64), np.zeros(tuples, np.int64))
        send = np.zeros(4 * tuples, np.int32)
        received = pairs.copy()
        scatter_values(CPU, received, received[1:], cursor, out, 2)
        peaks.append(tracemalloc.get_traced_memory()[1] - start)
        if started:
            tracemalloc.stop()
        del chunk, send, received
        assert int(cursor[0]) == 0
    assert max(peaks) <= count <= 1.01 * max(peaks), (peaks, count)


@pytest.mark.one_rank
def test_a_bottom_up_twin_step_holds_at_most_what_its_rows_count():
    """The bottom-up search's NumPy twin on one rank (Kronecker 17, its levels bottom-up): each step's peak
    above what it starts with within twin_bottom_up_bytes of TWIN_ITEMS rows and the most entries of any such
    window (dbfs.graph.LocalGraph.bottom_up_step_entries), which the estimate counts for it, at most a third of
    the block's own entries here (131,072 rows)."""
    import tracemalloc
    from dbfs.ops import bottom_up
    scale = 17
    src, dst = generate_edges(scale, 16, 0, 16 << scale)[:2]
    grid = Grid(1, 1, 1 << scale)
    comms = GridComms.create(grid, MPI.COMM_SELF)
    graph = build_from_edges(comms, CPU, src, dst, 1 << scale, row_major=True)
    steps, step = [], bottom_up._search_words

    def measured(*args):
        start = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        step(*args)
        steps.append(tracemalloc.get_traced_memory()[1] - start)

    bottom_up._search_words = measured
    started = not tracemalloc.is_tracing()
    tracemalloc.start()
    try:
        result = BFS(graph, direction="auto").search(int(src[0]), log_levels=True)
    finally:
        bottom_up._search_words = step
        if started:
            tracemalloc.stop()
    assert sum(row["direction"] == "bottomup" for row in result.levels) >= 2 and steps
    most = graph.bottom_up_step_entries
    assert 3 * most <= int(graph.row_ptr[-1])
    assert max(steps) <= memory.twin_bottom_up_bytes(grid, graph.nnz, most), (most, sorted(steps)[-3:])


@pytest.mark.parametrize("held", [False, True], ids=["every-row", "by-position"])
@pytest.mark.parametrize("in_frontier", [0.0, 0.5, 1.0])
def test_a_bottom_up_twin_step_holds_what_it_counts_however_many_entries_hit(in_frontier, held):
    """One bottom-up twin step over 32,768 unvisited rows of 16 entries (held by position: every other row without
    an entry), none, half or all of the columns in the frontier: its peak above what it starts with never above
    twin_bottom_up_bytes of its entries and within 1% of it. The twin before held 58 B an entry where every entry
    was in the frontier (30.3 MB against a count of 18.9 MB then, and 4.8 MB now)."""
    import tracemalloc
    from dbfs.kernels import STAT_WORDS
    from dbfs.ops import bottom_up
    from dbfs.ops.arrays import TWIN_ITEMS
    from dbfs.ops.sparse import held_offsets
    rng = np.random.default_rng(17)
    rows, ncols = TWIN_ITEMS, 1 << 18
    lengths = np.full(rows, 16)
    if held:
        lengths[1::2] = 0
    row_ptr = np.zeros(rows + 1, np.int32)
    np.cumsum(lengths, out=row_ptr[1:])
    col_idx = rng.integers(0, ncols, int(row_ptr[-1])).astype(np.int32)
    found_at = None
    if held:
        row_ptr, found_at = held_offsets(CPU, row_ptr)
    frontier = np.packbits(rng.random(ncols) < in_frontier, bitorder="little").view(np.uint32)
    seen = np.zeros(rows // 32, np.uint32)
    pred_row = np.full(rows if found_at is None else found_at.count, -1, np.int32)
    stats = np.zeros(STAT_WORDS, np.int64)
    started = not tracemalloc.is_tracing()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        bottom_up._search_words(row_ptr, col_idx, 0, frontier, seen, seen.copy(), pred_row, stats, found_at,
                                found_at, False)
        peak = tracemalloc.get_traced_memory()[1] - start
    finally:
        if started:
            tracemalloc.stop()
    assert (pred_row >= 0).mean() == pytest.approx(1 - (1 - in_frontier) ** 16, abs=0.01)
    count = memory.twin_bottom_up_bytes(Grid(1, 1, rows), int(row_ptr[-1]), int(row_ptr[-1]), held, held)
    assert 0.99 * count <= peak <= count, (peak, count)


def within_ten_percent(measured: int, estimated: int) -> bool:
    """In the test's process, where the modules a fresh run loads as it goes are loaded already (fresh
    runs: within_a_few_percent)."""
    return abs(measured - estimated) <= 0.1 * estimated


def within_a_few_percent(measured: int, estimated: int) -> bool:
    """A fresh run's peak against the estimate a user plans by (issue 30)."""
    return abs(measured - estimated) <= 0.03 * estimated


@pytest.mark.parametrize("row_copy", ["on", "off"])
def test_cpu_run_peak_is_within_ten_percent_of_the_estimate(tmp_path_factory, row_copy):
    """The run's peak against its estimate, and the construction's own peak against the estimate's
    construction phase (which on small graphs may set the run's peak: its chunk is at least
    MIN_CHUNK_EDGES tuples)."""
    scale = 14
    doc = measured_run(tmp_path_factory, "--scale", str(scale), "--roots", "2", "--backend", "cpu",
                       "--row-copy", row_copy)
    assert within_ten_percent(doc["memory_peak"], doc["memory_estimate"]), doc
    R, C = doc["grid"]
    plan = memory.estimate(Grid(R, C, 1 << scale), 16 << scale, transport=doc["comm"], device="cpu",
                           row_copy=row_copy == "on")
    assert within_ten_percent(doc["memory_construction_peak"], plan.phases["construction"]), (doc, plan.phases)


@pytest.mark.one_rank
@pytest.mark.parametrize("scale", [10, 12])
def test_a_fresh_cpu_run_of_a_small_graph_peaks_within_a_few_percent_of_its_estimate(tmp_path, scale):
    """As a user starts it, in a process of its own: on graphs of a few MiB nothing the process first
    loads during the run may stand out above the estimate (the validation's NumPy twin once imported
    numpy.ma at its first search, a MiB of module objects: at scale 12 the peak was 11% above)."""
    report = tmp_path / "run.json"
    result = subprocess.run([sys.executable, "-m", "dbfs", "--scale", str(scale), "--roots", "2", "--backend", "cpu",
                             "--json", str(report)], capture_output=True, text=True, timeout=120,
                            env=launcher_free_env())
    assert result.returncode == 0, result.stderr
    doc = json.loads(report.read_text())
    assert within_a_few_percent(doc["memory_peak"], doc["memory_estimate"]), doc


def test_cpu_partition_cache_stays_within_the_estimate(tmp_path_factory):
    """Storing the blocks and loading them again (each checksummed in 16 MiB pieces, a small file in
    one piece of its own size) holds no more than the run's estimate."""
    cache = WORLD.bcast(str(tmp_path_factory.mktemp("cache")) if WORLD.Get_rank() == 0 else None, root=0)
    for source in ("built", "partition cache"):
        doc = measured_run(tmp_path_factory, "--scale", "12", "--roots", "2", "--backend", "cpu",
                           "--partition-cache", cache)
        assert doc["construction_source"] == source
        assert within_ten_percent(doc["memory_peak"], doc["memory_estimate"]), doc


@pytest.mark.parametrize("direction", ["auto", "topdown"])
def test_cpu_twins_steps_are_counted(tmp_path_factory, direction):
    """Scale 17: the NumPy twins' steps (dbfs.ops.arrays TWIN_ITEMS, TWIN_CHUNK) are a large part of
    the search phase there (they were not bounded: the peak was 2.3x the estimate at scale 18). On one
    rank both directions, on four the bottom-up search's; 2 and 3 ranks are held to their estimates at
    scale 14 above."""
    if WORLD.Get_size() in (2, 3) or WORLD.Get_size() == 4 and direction == "topdown":
        pytest.skip("scale 17 runs on one rank, and on four with the bottom-up search")
    doc = measured_run(tmp_path_factory, "--scale", "17", "--roots", "1", "--backend", "cpu", "--direction", direction)
    assert within_ten_percent(doc["memory_peak"], doc["memory_estimate"]), doc


def test_cpu_graph_file_reader_buffers_are_counted(tmp_path_factory):
    """A converted edge list (gzip-chunked datasets, original ids): the reader decodes whole chunks
    beside the tuples it reads and the roots' original ids (edgelist.read_buffer_bytes), and the run's
    peak stays under its estimate."""
    from dbfs import cli, convert
    folder = WORLD.bcast(str(tmp_path_factory.mktemp("file")) if WORLD.Get_rank() == 0 else None, root=0)
    text, graph = f"{folder}/edges.txt", f"{folder}/edges.h5"
    if WORLD.Get_rank() == 0:
        rng = np.random.default_rng(5)
        np.savetxt(text, 3 * rng.integers(0, 1 << 14, (1 << 18, 2)) + 7, fmt="%d")
    WORLD.Barrier()
    convert.main(cli.tool_parser("convert").parse_args([text, "--out", graph]))
    doc = measured_run(tmp_path_factory, "--graph", graph, "--roots", "2", "--backend", "cpu")
    assert within_ten_percent(doc["memory_peak"], doc["memory_estimate"]), doc
    # the chunk before is let go while the next is read (2 ranks stood 5% above the estimate so)
    assert doc["memory_peak"] <= doc["memory_estimate"], doc


@pytest.mark.gpu
def test_gpu_run_peak_is_within_ten_percent_of_the_estimate(tmp_path_factory):
    scale = 20
    doc = measured_run(tmp_path_factory, "--scale", str(scale), "--roots", "2", "--backend", "gpu")
    assert within_ten_percent(doc["memory_peak"], doc["memory_estimate"]), doc
    # construction stays within 10% of the graph or below the run's estimate of its peak (the search's,
    # with the counted entries)
    R, C = doc["grid"]
    plan = memory.estimate(Grid(R, C, 1 << scale), 16 << scale, transport=doc["comm"])
    assert doc["memory_construction_peak"] <= max(1.1 * plan.resident, doc["memory_estimate"]), doc


def test_an_estimate_over_its_limit_says_what_would_fit():
    """The fewest ranks that hold the same graph, and the largest scale the ranks hold; each checked
    against the estimate itself."""
    plan = memory.estimate(Grid(4, 4, 1 << 32), 16 << 32, limit=80 << 30)
    assert not plan.fits
    advice = memory.fit_advice(plan)
    assert advice == ("24 ranks (grid 6x4) hold it, or --row-copy off (the bottom-up search on the CSC's "
                      "columns) on 16 ranks, or scale 31 at most on 16 ranks")
    assert memory.estimate(Grid(6, 4, 1 << 32), 16 << 32, limit=80 << 30).fits
    for ranks in range(17, 24):                 # no fewer ranks hold it (17, 19, 22, 23: past 32-bit ids)
        try:
            smaller = Grid(*default_grid(ranks), 1 << 32)
        except ValueError:
            continue
        assert not memory.estimate(smaller, 16 << 32, limit=80 << 30).fits, ranks
    assert memory.estimate(Grid(4, 4, 1 << 32), 16 << 32, limit=80 << 30, row_copy=False).fits
    assert memory.estimate(Grid(4, 4, 1 << 31), 16 << 31, limit=80 << 30).fits
    topdown_fits = memory.estimate(Grid(4, 4, 1 << 32), 16 << 32, limit=66 << 30)
    assert memory.fit_advice(topdown_fits) == ("28 ranks (grid 7x4) hold it, or --direction topdown (no bottom-up "
                                               "search) on 16 ranks, or scale 31 at most on 16 ranks")
    assert memory.estimate(Grid(4, 4, 1 << 32), 16 << 32, direction="topdown", limit=66 << 30).fits
    assert not memory.estimate(Grid(4, 4, 1 << 32), 16 << 32, limit=66 << 30, row_copy=False).fits
    copy_over = memory.estimate(Grid(8, 4, 1 << 32), 16 << 32, limit=60 << 30)
    assert memory.fit_advice(copy_over) == ("33 ranks (grid 11x3) hold it, or --row-copy off (the bottom-up search "
                                            "on the CSC's columns) on 32 ranks, or scale 32 at most on 32 ranks")
    assert memory.estimate(Grid(8, 4, 1 << 32), 16 << 32, limit=60 << 30, row_copy=False).fits
    assert memory.estimate(Grid(11, 3, 1 << 32), 16 << 32, limit=60 << 30).fits
    odd = memory.estimate(Grid(2, 2, 3 * 10**9), 10**12, limit=1 << 30)     # not Graph500-shaped
    assert "scale" not in memory.fit_advice(odd)
    # the CPU backend's ranks on one node share its memory: no count of them is offered
    host = memory.estimate(Grid(1, 1, 1 << 28), 16 << 28, device="cpu", limit=8 << 30)
    assert memory.fit_advice(host).startswith("more nodes (the ranks of one node share its memory), or ")



def test_a_generated_graph_is_checked_before_its_build_as_plan_counts_it():
    """The main command's check before the build (collective): a generated Graph500 graph with the
    non-empty columns, rows and queue slots its blocks are expected to take, as `plan` counts them, under
    the bounds' figure; construction's chunk within the room the expected search leaves on several
    ranks, the bounds' one on one rank."""
    from types import SimpleNamespace
    for grid, n_edges in ((Grid(4, 4, 1 << 14), 16 << 14), (Grid(1, 1, 1 << 12), 16 << 12)):
        checked = memory.plan_run(grid, SimpleNamespace(n_edges=n_edges, symmetric=True, info=None), "auto",
                                  "mpi", CPU, None)
        bound = memory.estimate(grid, n_edges, True, "auto", "mpi", "cpu")
        chunk = bound.inputs["chunk"] if grid.size == 1 else None
        expected = memory.estimate(grid, n_edges, True, "auto", "mpi", "cpu", chunk=chunk,
                                   columns=memory.EXPECTED_COLUMNS)
        assert checked.phases == expected.phases
        assert checked.phases["search"] < bound.phases["search"] and checked.peak <= bound.peak
        assert checked.inputs["chunk"] == expected.inputs["chunk"] <= bound.inputs["chunk"]
