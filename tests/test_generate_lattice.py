"""`python -m dbfs generate --lattice`: the file's edges and attributes, the same file from 1, 2 and 3
ranks, partition-cache keys that tell lattices apart, user errors (one line, exit 2, nothing written),
and a main-mode run on a lattice file that validates and matches a serial BFS."""

import argparse
import sys

import h5py
import numpy as np
import pytest
from mpi4py import MPI
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import shortest_path

from dbfs import edgelist, families, generate
from dbfs.errors import DbfsError
from dbfs.source import GraphSource
from test_generate_cli import parse, shared_dir  # noqa: F401 (shared_dir: a fixture)
from test_graph_runs import run
from test_harness import launch, mpiexec

WORLD = MPI.COMM_WORLD


def file_edges(path):
    with h5py.File(path, "r") as f:
        assert f["src"].dtype == f["dst"].dtype == np.int64
        return f["src"][...], f["dst"][...]


def assert_same_edges(a, b):
    for x, y in zip(file_edges(a), file_edges(b)):
        assert np.array_equal(x, y)


@pytest.mark.mpi(min_size=1)
def test_lattice_file_holds_the_family_edges_and_attributes(shared_dir):
    out = shared_dir / "l.h5"
    dims, fraction, seed = (150, 101), 0.2, (7, 8)
    assert generate.main(parse("--lattice", "150x101", "--remove-fraction", str(fraction), "--seed", "7,8",
                               "--out", str(out))) == 0
    WORLD.Barrier()
    n, src, dst = families.lattice_graph(dims, fraction, seed)
    got_src, got_dst = file_edges(out)
    assert np.array_equal(got_src, src) and np.array_equal(got_dst, dst)
    attrs = edgelist.read_attrs(out)
    assert attrs == {"generator": "dbfs-lattice-1 150x101 remove_fraction=0.2 scrambled", "family": "lattice",
                     "dims": dims, "remove_fraction": fraction, "seed": seed, "scrambled": True,
                     "lattice_edges": 149 * 101 + 150 * 100, "n_vertices": n, "n_edges": len(src),
                     "directed": False, "weights": False}
    info = edgelist.graph_info(out)
    assert (info.n_vertices, info.n_edges, info.directed, info.has_ids) == (n, len(src), False, False)
    # the same file written by every rank of this job in small chunks, and by one rank alone
    lattice = families.Lattice(dims, fraction, seed)
    assert families.write_lattice(shared_dir / "chunked.h5", lattice, WORLD, chunk_edges=999) == len(src)
    if WORLD.Get_rank() == 0:
        families.write_lattice(shared_dir / "alone.h5", lattice, MPI.COMM_SELF)
    WORLD.Barrier()
    assert_same_edges(shared_dir / "chunked.h5", out)
    assert_same_edges(shared_dir / "alone.h5", out)
    # --no-scramble: the row-major ids; without removal, every lattice edge
    generate.main(parse("--lattice", "6x5x4", "--no-scramble", "--out", str(out), "--force"))
    WORLD.Barrier()
    _, src, dst = families.lattice_graph((6, 5, 4), scramble=False)
    assert np.array_equal(file_edges(out)[0], src) and np.array_equal(file_edges(out)[1], dst)
    assert edgelist.read_attrs(out)["generator"] == "dbfs-lattice-1 6x5x4 remove_fraction=0.0 row-major"


@pytest.mark.one_rank
def test_one_two_and_three_ranks_write_the_same_file(tmp_path):
    argv = [sys.executable, "-m", "dbfs", "generate", "--lattice", "203x97", "--remove-fraction", "0.3",
            "--backend", "cpu", "--out"]
    for ranks in (1, 2, 3):
        command = [*argv, f"r{ranks}.h5"]
        job = launch([mpiexec(), "-n", str(ranks), *command] if ranks > 1 else command, tmp_path)
        assert job.returncode == 0, job
        assert "r%d.h5: lattice 203x97, 19691 vertices" % ranks in job.stdout, job
    assert edgelist.read_attrs(tmp_path / "r1.h5") == edgelist.read_attrs(tmp_path / "r3.h5")
    assert_same_edges(tmp_path / "r1.h5", tmp_path / "r2.h5")
    assert_same_edges(tmp_path / "r1.h5", tmp_path / "r3.h5")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r1.h5", "r2.h5", "r3.h5"]


def content_key(path) -> str:
    args = argparse.Namespace(graph=str(path), undirected=False, seed_pair=(2, 3))
    return GraphSource.from_args(args).content_key()


@pytest.mark.mpi(min_size=1)
def test_partition_cache_keys_tell_lattices_apart(shared_dir):
    variants = {"a": ("8x4",), "a_again": ("8x4",), "b": ("4x8",), "c": ("8x4", "--remove-fraction", "0.25"),
                "d": ("8x4", "--remove-fraction", "0.5"), "e": ("8x4", "--no-scramble"),
                "f": ("8x4", "--seed", "2,4")}
    for name, options in variants.items():
        generate.main(parse("--lattice", *options, "--out", str(shared_dir / f"{name}.h5")))
    WORLD.Barrier()
    keys = {name: content_key(shared_dir / f"{name}.h5") for name in variants}
    assert keys["a"] == keys["a_again"]
    assert len({keys[name] for name in variants if name != "a_again"}) == len(variants) - 1
    # 8x4 and 4x8 have the same vertex and edge counts: only the generator attribute differs
    a, b = (edgelist.graph_info(shared_dir / name) for name in ("a.h5", "b.h5"))
    assert (a.n_vertices, a.n_edges) == (b.n_vertices, b.n_edges)


@pytest.mark.parametrize("argv, message", [
    (("--lattice", "4096"), "--lattice must be 2 or 3 positive integers"),
    (("--lattice", "0x7"), "--lattice must be 2 or 3 positive integers"),
    (("--lattice", "\uff18x8"), "--lattice must be 2 or 3 positive integers"),     # a fullwidth 8
    (("--lattice", "1x1"), "has no edges"),
    (("--lattice", "8x8x8x8"), "--lattice must be"),
    (("--lattice", "99999999x99999999"), r"more than the 2\^48"),
    (("--lattice", "8x8", "--remove-fraction", "1"), "--remove-fraction must be"),
    (("--lattice", "8x8", "--remove-fraction", "-0.5"), "--remove-fraction must be"),
    (("--lattice", "8x8", "--remove-fraction", "nan"), "--remove-fraction must be"),
    (("--lattice", "3x3", "--remove-fraction", "0.9999999"), "keeps no edge with --remove-fraction 0.9999999"),
    (("--lattice", "8x8", "--weights"), "--weights applies to --scale graphs only"),
    (("--lattice", "8x8", "--seed", "1"), "--seed must be"),
    (("--scale", "5", "--remove-fraction", "0.1"), "--remove-fraction applies to --lattice"),
    (("--scale", "5", "--no-scramble"), "--no-scramble applies to --lattice"),
])
def test_bad_lattice_requests_are_collective_errors(argv, message, tmp_path):
    with pytest.raises(DbfsError, match=message) as error:
        generate.main(parse(*argv, "--out", str(tmp_path / "x.h5")))
    assert error.value.collective
    assert list(tmp_path.iterdir()) == []


@pytest.mark.one_rank
@pytest.mark.parametrize("argv, message", [
    (("--lattice", "8x8", "--scale", "5"), "argument --scale: not allowed with argument --lattice"),
    (("--remove-fraction", "0.1"), "one of the arguments --scale --lattice is required"),
    (("--lattice", "8x8", "--remove-fraction", "half"), "argument --remove-fraction: invalid float value"),
    (("--lattice", "8x8", "--remove-fraction", "1.5"), "dbfs: error: --remove-fraction must be"),
    (("--lattice", "8x", "--weights"), "dbfs: error: --lattice must be"),
])
def test_cli_errors_are_one_line_and_leave_nothing(argv, message, tmp_path):
    job = launch([sys.executable, "-m", "dbfs", "generate", *argv, "--out", "x.h5"], tmp_path)
    assert job.returncode == 2, job
    errors = [line for line in job.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and message in errors[0] and "Traceback" not in job.stderr, job
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------ runs on a lattice
@pytest.mark.mpi(min_size=1)
@pytest.mark.parametrize("options", [("31x17",), ("9x8x7", "--remove-fraction", "0.3")])
def test_search_on_a_lattice_file_validates_and_matches_a_serial_bfs(shared_dir, options):
    out = shared_dir / "lattice.h5"
    generate.main(parse("--lattice", *options, "--out", str(out)))
    WORLD.Barrier()
    doc = run("--graph", out, "--roots", 2, "--log-levels")
    assert doc["NBFS"] == len(doc["searches"]) == 2
    info = edgelist.graph_info(out)
    src, dst = edgelist.read_edge_slice(out, 0, info.n_edges)
    n = info.n_vertices
    matrix = coo_matrix((np.ones(len(src)), (src, dst)), shape=(n, n)).tocsr()
    for search in doc["searches"]:
        assert search["validated"]
        dist = shortest_path(matrix, directed=False, unweighted=True, indices=search["root"])
        reached = np.isfinite(dist)
        assert search["visited"] == reached.sum()
        assert search["depth"] == dist[reached].max() == len(search["levels"]) - 1
        assert search["nedge"] == np.sum(reached[src])
