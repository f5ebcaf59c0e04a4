"""Main-mode runs on converted graph files, on every rank count: directed graphs traversed along
out-edges (or both ways with --undirected) against a SciPy reference, --root in original ids,
--save-result written by all ranks in original ids, the partition cache (built, reused, stale), the
validator on directed graphs, and the run's errors for bad graph files and roots."""

import json
import os
import shutil
import tempfile
from pathlib import Path

import h5py
import numpy as np
import pytest
from mpi4py import MPI
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import shortest_path

from dbfs import bfs_benchmark, cli, convert, edgelist
from dbfs.backend import Backend, gpu_count
from dbfs.bfs import BFS
from dbfs.build import build_from_edges
from dbfs.errors import DbfsError
from dbfs.graph import GridComms
from dbfs.grid import Grid
from graph500.generator import edge_range
from graph500.validate import validate_bfs

WORLD = MPI.COMM_WORLD
DATA = Path(__file__).resolve().parent / "data"
BIG = 8589934592


@pytest.fixture(scope="module")
def shared():
    """A directory known to every rank with the test graphs converted once by rank 0."""
    path = tempfile.mkdtemp(prefix="dbfs-graphs-") if WORLD.Get_rank() == 0 else None
    path = Path(WORLD.bcast(path, root=0))
    if WORLD.Get_rank() == 0:
        rng = np.random.default_rng(11)
        ids = rng.choice(2**40, 400, replace=False)
        src, dst = rng.choice(ids, 1500), rng.choice(ids, 1500)
        lines = [f"{a} {b}" for a, b in zip(src.tolist(), dst.tolist())]
        (path / "random.txt").write_text("\n".join(lines) + "\n")
        for name, source in (("directed", DATA / "directed.txt"), ("random", path / "random.txt"),
                             ("general", DATA / "general.mtx")):
            convert.convert(convert_args(source, path / f"{name}.h5"))
    WORLD.Barrier()
    yield path
    WORLD.Barrier()
    if WORLD.Get_rank() == 0:
        shutil.rmtree(path)


def convert_args(source, out, *options):
    import argparse
    parser = argparse.ArgumentParser()
    convert.add_arguments(parser)
    return parser.parse_args([str(source), "--out", str(out), *options])


def run(*argv):
    """The main mode in this process on every rank; returns the JSON report."""
    report = None
    if WORLD.Get_rank() == 0:
        handle, report = tempfile.mkstemp(suffix=".json")
        os.close(handle)
    report = WORLD.bcast(report, root=0)
    bfs_benchmark.main(cli.main_parser().parse_args([*map(str, argv), "--backend", "cpu", "--json", report]))
    WORLD.Barrier()
    doc = json.loads(Path(report).read_text())
    WORLD.Barrier()
    if WORLD.Get_rank() == 0:
        os.remove(report)
    return doc


def reference_levels(path: Path, root_original: int, both_ways: bool):
    """Original ids, and BFS levels along out-edges (or both ways) from SciPy, -1 unreached."""
    info = edgelist.graph_info(path)
    src, dst = edgelist.read_edge_slice(path, 0, info.n_edges)
    keep = src != dst
    matrix = coo_matrix((np.ones(keep.sum()), (src[keep], dst[keep])),
                        shape=(info.n_vertices, info.n_vertices)).tocsr()
    ids = info.original_ids(0, info.n_vertices)
    root = int(np.searchsorted(ids, root_original)) if info.has_ids else root_original - info.id_base
    dist = shortest_path(matrix, directed=not both_ways, unweighted=True, indices=root)
    level = np.where(np.isinf(dist), -1, dist).astype(np.int64)
    edges = set(zip(ids[src].tolist(), ids[dst].tolist()))
    if both_ways:
        edges |= {(b, a) for a, b in edges}
    return ids, level, edges


def check_saved_tree(out: Path, ids, level, edges, root: int):
    with h5py.File(out, "r") as f:
        vertex, parent, got_level = f["vertex"][:], f["parent"][:], f["level"][:]
        assert f["vertex"].dtype == np.int64 and f["level"].dtype == np.int32
        assert f.attrs["root"] == root
    assert np.array_equal(vertex, ids) and np.array_equal(got_level, level)
    reached = level >= 0
    assert np.all(parent[~reached] == -1)
    level_of = dict(zip(ids.tolist(), level.tolist()))
    for v, p in zip(vertex[reached].tolist(), parent[reached].tolist()):
        if v == root:
            assert p == root
        else:
            assert (p, v) in edges and level_of[p] == level_of[v] - 1


def test_directed_graph_follows_out_edges_and_saves_the_tree(shared):
    out = shared / "tree.h5"
    doc = run("--graph", shared / "directed.h5", "--root", BIG, "--save-result", out)
    assert doc["directed"] is True and doc["roots_original"] == [BIG]
    assert doc["construction_source"] == "built"
    assert doc["graph_load"] > 0 and doc["load_edges_per_s_per_rank"] > 0
    search = doc["searches"][0]
    # from BIG: BIG -> 7 -> 9 -> 3000000000; 12 and 100 are not reachable along out-edges; the TEPS
    # edges are the tuples leaving reached vertices: (BIG,7), 2x (7,9), (9,BIG), (9,3000000000)
    assert (search["visited"], search["depth"], search["nedge"]) == (4, 3, 5)
    ids, level, edges = reference_levels(shared / "directed.h5", BIG, False)
    assert level.tolist() == [1, 2, -1, -1, 3, 0]
    check_saved_tree(out, ids, level, edges, BIG)


def test_undirected_option_traverses_both_ways(shared):
    out = shared / "tree_undirected.h5"
    doc = run("--graph", shared / "directed.h5", "--root", 7, "--undirected", "--save-result", out)
    assert doc["directed"] is False
    search = doc["searches"][0]
    # the Graph500 count: non-self-loop tuples with a reached end, duplicates included
    assert (search["visited"], search["nedge"]) == (5, 6)
    ids, level, edges = reference_levels(shared / "directed.h5", 7, True)
    check_saved_tree(out, ids, level, edges, 7)


@pytest.mark.parametrize("root_index", [0, 57, 311])
def test_random_directed_graph_matches_scipy(shared, root_index):
    info = edgelist.graph_info(shared / "random.h5")
    root = int(info.original_ids(root_index, root_index + 1)[0])
    out = shared / f"random_{root_index}.h5"
    doc = run("--graph", shared / "random.h5", "--root", root, "--save-result", out)
    ids, level, edges = reference_levels(shared / "random.h5", root, False)
    check_saved_tree(out, ids, level, edges, root)
    assert doc["searches"][0]["visited"] == np.count_nonzero(level >= 0)


def test_sampled_roots_on_a_1_based_directed_graph(shared):
    doc = run("--graph", shared / "general.h5", "--roots", 3)
    assert doc["NBFS"] == len(doc["searches"]) >= 1
    assert all(s["validated"] for s in doc["searches"])
    assert all(1 <= r <= 6 for r in doc["roots_original"])
    assert [r + 1 for r in doc["roots"]] == doc["roots_original"]


def test_partition_cache_is_reused_and_rebuilt_when_stale(shared):
    cache = shared / "cache"
    graph = shared / "cached.h5"
    if WORLD.Get_rank() == 0:
        shutil.copy(shared / "random.h5", graph)
    WORLD.Barrier()
    root = int(edgelist.graph_info(graph).original_ids(3, 4)[0])
    args = ("--graph", graph, "--root", root, "--partition-cache", cache)
    first = run(*args, "--save-result", shared / "first.h5")
    second = run(*args, "--save-result", shared / "second.h5")
    assert (first["construction_source"], second["construction_source"]) == ("built", "partition cache")
    assert second["graph_load"] == 0.0 and second["load_edges_per_s_per_rank"] is None      # nothing read
    assert first["searches"][0]["nedge"] == second["searches"][0]["nedge"]
    with h5py.File(shared / "first.h5") as a, h5py.File(shared / "second.h5") as b:
        for name in ("vertex", "parent", "level"):
            assert np.array_equal(a[name][:], b[name][:])
    # the same graph as undirected is another entry; a rewritten file is stale
    assert run(*args, "--undirected")["construction_source"] == "built"
    assert run(*args, "--undirected")["construction_source"] == "partition cache"
    if WORLD.Get_rank() == 0:
        os.utime(graph, ns=(1, 1))
    WORLD.Barrier()
    assert run(*args)["construction_source"] == "built"
    assert run(*args)["construction_source"] == "partition cache"
    if WORLD.Get_rank() == 0:
        convert.convert(convert_args(DATA / "directed.txt", graph, "--force"))
    WORLD.Barrier()
    changed = run("--graph", graph, "--root", 7, "--partition-cache", cache)
    assert changed["construction_source"] == "built" and changed["n_vertices"] == 6


def test_partition_cache_entry_of_a_file_changed_in_place_is_rebuilt(shared, capsys):
    """A file without a content hash rewritten between the sampled stretches, its size and modification
    time kept: the key cannot tell, the certificate does, and the entry is built again."""
    cache, graph = shared / "cache_same_stamp", shared / "same_stamp.h5"
    n, m = 2000, 40000
    src, dst = np.random.default_rng(5).integers(0, n, (2, m))
    if WORLD.Get_rank() == 0:
        with h5py.File(graph, "w") as f:
            f["src"], f["dst"] = src, dst
            f.attrs["n_vertices"] = n
    WORLD.Barrier()
    args = ("--graph", graph, "--roots", 2, "--partition-cache", cache)
    assert run(*args)["construction_source"] == "built"
    if WORLD.Get_rank() == 0:
        stamp = os.stat(graph)
        with h5py.File(graph, "r+") as f:
            f["dst"][1500] = (dst[1500] + 1) % n          # between the first two sampled stretches
        os.utime(graph, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
        assert os.stat(graph).st_size == stamp.st_size
    WORLD.Barrier()
    capsys.readouterr()
    rebuilt = run(*args)
    assert rebuilt["construction_source"] == "built" and rebuilt["certificate"]["passed"]
    if WORLD.Get_rank() == 0:
        assert "does not hold the graph's tuples" in capsys.readouterr().err
    assert run(*args)["construction_source"] == "partition cache"


@pytest.mark.parametrize("damage", ["garbage", "not an object", "checksums of other ranks", "no rank file"])
def test_partition_cache_entry_with_a_damaged_description_is_rebuilt_with_a_warning(shared, capsys, damage):
    """entry.json that is no JSON, no entry description or one of another entry, and a rank file gone, are
    damage (a warning, like a damaged rank file); a description of an earlier state of the graph file is
    stale (silent). On one and two ranks: every rank reads the description alike, whatever their number."""
    if WORLD.Get_size() > 2:
        pytest.skip("a damaged description is read alike on any number of ranks: one and two run it")
    cache = shared / f"cache_{damage.replace(' ', '_')}"
    args = ("--graph", shared / "random.h5", "--roots", 2, "--partition-cache", cache)
    assert run(*args)["construction_source"] == "built"
    [entry] = list(cache.iterdir())
    if WORLD.Get_rank() == 0:
        description = json.loads((entry / "entry.json").read_text())
        if damage == "no rank file":
            (entry / f"rank{WORLD.Get_size() - 1}.npz").unlink()
        else:
            description["checksums"].append(description["checksums"][0])
            (entry / "entry.json").write_text({"garbage": "{garbage\n", "not an object": "[1, 2]\n",
                                               "checksums of other ranks": json.dumps(description)}[damage])
    WORLD.Barrier()
    capsys.readouterr()
    assert run(*args)["construction_source"] == "built"
    if WORLD.Get_rank() == 0:
        warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("dbfs: warning:")]
        assert len(warnings) == 1 and f"the partition cache entry {entry} is damaged (" in warnings[0] \
            and warnings[0].endswith("); rebuilding it"), warnings
        stale = json.loads((entry / "entry.json").read_text())
        stale["file"][1] -= 1
        (entry / "entry.json").write_text(json.dumps(stale))
    WORLD.Barrier()
    assert run(*args)["construction_source"] == "built"
    if WORLD.Get_rank() == 0:
        assert "dbfs: warning:" not in capsys.readouterr().err
    assert run(*args)["construction_source"] == "partition cache"


def test_a_graph_of_self_loops_only_has_no_root_to_sample(shared):
    """Self-loops are no edges to the search, so the sampler finds no root: the error says so and names
    --root, with which the run goes on."""
    if WORLD.Get_rank() == 0:
        (shared / "loops.txt").write_text("1 1\n2 2\n3 3\n")
        convert.convert(convert_args(shared / "loops.txt", shared / "loops.h5"))
    WORLD.Barrier()
    with pytest.raises(DbfsError, match=r"found no vertex with an edge among its 3 random candidates .*self-loops "
                                        r"not counted .*: name one with --root V$") as error:
        run("--graph", shared / "loops.h5")
    assert error.value.collective
    [search] = run("--graph", shared / "loops.h5", "--root", 2)["searches"]
    assert (search["visited"], search["nedge"]) == (1, 0)


def test_partition_cache_for_generated_graphs(shared):
    cache = shared / "cache_generated"
    first = run("--scale", 7, "--roots", 2, "--partition-cache", cache)
    second = run("--scale", 7, "--roots", 2, "--partition-cache", cache)
    assert (first["construction_source"], second["construction_source"]) == ("built", "partition cache")
    assert [s["nedge"] for s in first["searches"]] == [s["nedge"] for s in second["searches"]]


@pytest.mark.parametrize("argv, message", [
    (("--graph", "{d}/directed.h5", "--root", 8), r"--root 8 is not a vertex of .*directed\.h5"),
    (("--graph", "{d}/general.h5", "--root", 0), r"--root 0 is not a vertex of .*general\.h5"),
    (("--graph", "{d}/directed.h5", "--save-result", "{d}/x.h5"), r"--save-result needs a single --root"),
    (("--graph", "{d}/nodst.h5", "--root", 1),
     r"nodst\.h5 is not a dbfs edge list: dataset 'dst' is missing"),
    (("--graph", "{d}/nosize.h5", "--root", 1), r"nosize\.h5 is not a dbfs graph: attribute 'n_vertices'"),
    (("--graph", "{d}/missing.h5",), r"missing\.h5: no such file"),
])
def test_bad_graph_runs_stop_with_one_error(shared, argv, message):
    if WORLD.Get_rank() == 0:
        with h5py.File(shared / "nodst.h5", "w") as f:
            f["src"] = np.arange(3)
        with h5py.File(shared / "nosize.h5", "w") as f:
            f["src"] = f["dst"] = np.arange(3)
    WORLD.Barrier()
    with pytest.raises(DbfsError, match=message) as error:
        run(*(a.format(d=shared) if isinstance(a, str) else a for a in argv))
    assert error.value.collective
    assert not (shared / "x.h5").exists()


# ------------------------------------------------------------------------------ directed validator
def directed_graph(backend, R, C):
    n = 23
    rng = np.random.default_rng(3)
    src = np.concatenate((rng.integers(0, 20, 60), [20, 21, 22, 20, 5]))
    dst = np.concatenate((rng.integers(0, 20, 60), [21, 22, 20, 22, 5]))
    lo, hi = edge_range(len(src), WORLD.Get_rank(), WORLD.Get_size())
    comms = GridComms.create(Grid(R, C, n))
    graph = build_from_edges(comms, backend, src[lo:hi], dst[lo:hi], n, symmetric=False)
    return graph, src, dst


def grids():
    size = WORLD.Get_size()
    return [(r, size // r) for r in range(1, size + 1) if size % r == 0]


def owned(graph, full):
    grid = graph.grid
    ids = grid.to_global_owned(graph.i, graph.j, np.arange(grid.block))
    out = np.full(grid.block, -1, np.int64)
    real = ids < grid.n_vertices
    out[real] = full[ids[real]]
    return out


def check_directed(backend):
    for R, C in grids():
        graph, src, dst = directed_graph(backend, R, C)
        assert graph.info["directed"]
        bfs = BFS(graph)
        for root in (0, 20):
            result = bfs.search(root)
            check = validate_bfs(graph, root, result.parent, None, level=result.level)
            assert check.ok, check.message
            keep = src != dst
            matrix = coo_matrix((np.ones(keep.sum()), (src[keep], dst[keep])), shape=(23, 23)).tocsr()
            dist = shortest_path(matrix, directed=True, unweighted=True, indices=root)
            level = np.where(np.isinf(dist), -1, dist).astype(np.int64)
            assert np.array_equal(owned(graph, level), backend.asnumpy(result.level))
            assert check.nedge == np.count_nonzero(keep & (level[src] >= 0))
        bfs.close()
        graph.comms.free()


def test_directed_search_and_validation_on_every_grid():
    check_directed(Backend("cpu"))


@pytest.mark.gpu
def test_directed_search_and_validation_on_the_gpu():
    local = WORLD.Split_type(MPI.COMM_TYPE_SHARED).Get_rank()
    check_directed(Backend("gpu", local % gpu_count()))


def test_directed_validator_rules():
    """Edges 20 -> 21 -> 22 -> 20 and 20 -> 22. The BFS tree from 20 (21 and 22 on level 1) is valid,
    although 22 -> 20 goes back up; parents that are out-neighbours only, a tree missing an edge's
    target, and a tree putting 22 below 21 (two levels deeper than its in-neighbour 20) are rejected."""
    for R, C in grids():
        graph, _, _ = directed_graph(Backend("cpu"), R, C)
        full = np.full(23, -1, np.int64)
        full[[20, 21, 22]] = [20, 20, 20]
        level = np.full(23, -1, np.int64)
        level[[20, 21, 22]] = [0, 1, 1]
        ok = validate_bfs(graph, 20, owned(graph, full), None, level=owned(graph, level).astype(np.int32))
        assert ok.ok and ok.nedge == 4, ok.message
        cases = {"parent-not-neighbour": ({21: (22, 1)}, 21, "parent 22 is not a neighbour"),
                 "span": ({22: (-1, -1)}, 22, "the edge 20 -> 22 leaves the tree"),
                 "edge-level": ({22: (21, 2)}, 22, "edge 20 -> 22 goes from level 0 to level 2")}
        for rule, (change, vertex, text) in cases.items():
            parent, depth = full.copy(), level.copy()
            for v, (p, d) in change.items():
                parent[v], depth[v] = p, d
            bad = validate_bfs(graph, 20, owned(graph, parent), None,
                               level=owned(graph, depth).astype(np.int32))
            assert (bad.rule, bad.vertex) == (rule, vertex) and text in bad.message, bad.message
        graph.comms.free()
