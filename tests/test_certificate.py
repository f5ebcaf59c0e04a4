"""The construction certificate (dbfs.certificate): a correct build passes on every grid, undirected and
directed; a CSC with one entry dropped, one altered, or two duplicate entries merged into one fails
on every rank; the hash of the CSC equals a serial hash of the whole tuple list, so it does not
depend on the number of ranks or the grid; a run reports it. GPU: kernels/certificate.cu against its
NumPy twins."""

import re

import numpy as np
import pytest
from mpi4py import MPI

from dbfs.backend import Backend
from dbfs.build import build_from_edges
from dbfs.certificate import certify, entry_sums, total, tuple_sums
from dbfs.graph import GridComms
from dbfs.grid import Grid
from dbfs.ops import sparse
from dbfs.ops.certificate import hash_entries, hash_tuples
from dbfs.ops.sparse import held_offsets
from dbfs.source import EdgeArrays
from graph500.generator import edge_range

WORLD = MPI.COMM_WORLD
CPU = Backend("cpu")
KEYS = (0x9E3779B97F4A7C15, 0xD1B54A32D192ED03, 0x8CB92BA72F3D8DD7, 0xABC98388FB8FAC03)


def grids():
    size = WORLD.Get_size()
    return [(r, size // r) for r in range(1, size + 1) if size % r == 0]


def tuples_with_duplicates(n=301, m=800):
    rng = np.random.default_rng(9)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    return n, np.concatenate((src, src[:40], [5, 5])), np.concatenate((dst, dst[:40], [5, 6]))


def serial_hash(src, dst, symmetric):
    acc = np.zeros(3, np.uint64)
    hash_tuples(CPU, np.asarray(src, np.int64), np.asarray(dst, np.int64), symmetric, KEYS, acc)
    return tuple(int(x) for x in acc)


@pytest.mark.parametrize("symmetric", [True, False])
@pytest.mark.parametrize("share", [0.0, 2.0])
def test_csc_hash_equals_the_serial_tuple_hash_on_every_grid(symmetric, share, monkeypatch):
    """With every column's offsets, and (on several ranks) with the blocks' offsets built held by their
    non-empty columns (forced: dbfs.ops.sparse.POSITIONS_SHARE)."""
    monkeypatch.setattr(sparse, "POSITIONS_SHARE", share)
    n, src, dst = tuples_with_duplicates()
    lo, hi = edge_range(len(src), WORLD.Get_rank(), WORLD.Get_size())
    expected = serial_hash(src, dst, symmetric)
    source = EdgeArrays.create(src[lo:hi], dst[lo:hi], n, symmetric)
    for R, C in grids():
        comms = GridComms.create(Grid(R, C, n))
        graph = build_from_edges(comms, CPU, src[lo:hi], dst[lo:hi], n, symmetric=symmetric)
        assert (graph.columns is not None) == (share > 1 and R * C > 1)
        assert total(entry_sums(graph, KEYS), WORLD) == expected
        assert total(tuple_sums(source, CPU, WORLD, KEYS, 50), WORLD) == expected
        certificate = certify(graph, source, chunk_edges=50)
        assert certificate.passed and certificate.message is None and certificate.tuples == len(src)
        assert certificate.as_json() == {"passed": True, "time": certificate.time, "tuples": len(src)}
        comms.free()


def drop_entry(graph, e):
    c = int(np.searchsorted(graph.col_ptr, e, side="right")) - 1
    graph.row_idx = np.delete(graph.row_idx, e)
    graph.col_ptr[c + 1:] -= 1


def alter_entry(graph, e):
    graph.row_idx[e] = (graph.row_idx[e] + 1) % graph.grid.rows_per_rank


def merge_duplicate(graph, e):
    """Drop the second of two equal entries of one column (found from e on)."""
    for c in range(int(np.searchsorted(graph.col_ptr, e, side="right")) - 1, len(graph.col_ptr) - 1):
        rows = graph.row_idx[graph.col_ptr[c]:graph.col_ptr[c + 1]]
        values, first, counts = np.unique(rows, return_index=True, return_counts=True)
        if (counts > 1).any():
            twice = values[counts > 1][0]
            drop_entry(graph, int(graph.col_ptr[c]) + int(np.flatnonzero(rows == twice)[1]))
            return
    raise AssertionError("no duplicate entry to merge")


@pytest.mark.parametrize("damage, message", [
    (drop_entry, r"they stand for \d+ entries, the CSC blocks hold \d+"),
    (alter_entry, r"their keyed hash differs"),
    (merge_duplicate, r"they stand for \d+ entries, the CSC blocks hold \d+"),
])
def test_a_damaged_csc_fails_on_every_rank(damage, message):
    n, src, dst = tuples_with_duplicates()
    lo, hi = edge_range(len(src), WORLD.Get_rank(), WORLD.Get_size())
    source = EdgeArrays.create(src[lo:hi], dst[lo:hi], n, True)
    for R, C in grids():
        comms = GridComms.create(Grid(R, C, n))
        graph = build_from_edges(comms, CPU, src[lo:hi], dst[lo:hi], n)
        damaged_rank = WORLD.allreduce(WORLD.Get_rank() if graph.nnz else WORLD.Get_size(), op=MPI.MIN)
        if WORLD.Get_rank() == damaged_rank:
            damage(graph, graph.nnz // 3)
        certificate = certify(graph, source)
        assert not certificate.passed
        assert certificate.message and re.search(message, certificate.message)
        comms.free()


@pytest.mark.gpu
@pytest.mark.parametrize("symmetric", [True, False])
def test_gpu_hashes_equal_the_twins(symmetric):
    import cupy
    gpu = Backend("gpu", 0)
    rng = np.random.default_rng(4)
    n = 5000
    src, dst = rng.integers(0, n, 300_001), rng.integers(0, n, 300_001)
    src[::7] = dst[::7]
    host, device = np.zeros(3, np.uint64), cupy.zeros(3, cupy.uint64)
    hash_tuples(CPU, src, dst, symmetric, KEYS, host)
    hash_tuples(gpu, cupy.asarray(src), cupy.asarray(dst), symmetric, KEYS, device)
    assert np.array_equal(host, device.get())
    comms = GridComms.create(Grid(1, 1, n), MPI.COMM_SELF)
    graph = build_from_edges(comms, CPU, src, dst, n, symmetric=symmetric)
    graph.col_ptr[:50] = 0                             # empty leading columns, as in a sparse block
    graph.col_ptr[-2:] = graph.col_ptr[-1]             # and an empty last column
    host[:] = 0
    device[:] = 0
    col_segments, row_segments = (3, 100, 1000), (7 << 33, 64, 333)   # several segments, ids past 2^32
    hash_entries(CPU, graph.col_ptr, graph.row_idx, col_segments, row_segments, KEYS, host)
    hash_entries(gpu, cupy.asarray(graph.col_ptr), cupy.asarray(graph.row_idx), col_segments, row_segments,
                 KEYS, device)
    assert np.array_equal(host, device.get())
    offsets, held = held_offsets(gpu, cupy.asarray(graph.col_ptr))     # by the non-empty columns' positions
    device[:] = 0
    hash_entries(gpu, cupy.asarray(offsets), cupy.asarray(graph.row_idx), col_segments, row_segments, KEYS, device,
                 held)
    assert held.count < n and np.array_equal(host, device.get())
    comms.free()


def test_run_reports_the_certificate_compile_time_and_memory(tmp_path_factory, capsys):
    import json

    from dbfs import bfs_benchmark, cli
    report = str(tmp_path_factory.mktemp("run") / "run.json") if WORLD.Get_rank() == 0 else None
    report = WORLD.bcast(report, root=0)
    bfs_benchmark.main(cli.main_parser().parse_args(["--scale", "8", "--roots", "2", "--backend", "cpu",
                                                     "--json", report]))
    WORLD.Barrier()
    doc = json.load(open(report))
    assert doc["certificate"] == {"passed": True, "time": doc["certificate"]["time"], "tuples": 16 << 8}
    assert doc["compile_time"] == 0.0 and doc["memory_peak"] > 0
    assert doc["memory_estimate"] > 0
    if WORLD.Get_rank() == 0:
        assert "certificate: passed" in capsys.readouterr().out
