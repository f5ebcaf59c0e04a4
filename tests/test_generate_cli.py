"""`dbfs generate` and the parallel HDF5 edge-list writer: file contents for any rank count, user
errors (one line, non-zero exit, no file left behind), failures during the write, and the readers."""

import argparse
import errno
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import h5py
import numpy as np
import pytest
from mpi4py import MPI

from dbfs import edgelist, generate, outputs
from dbfs.errors import DbfsError
from graph500.generator import generate_edges
from launcher import launcher_free_env


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    generate.add_arguments(parser)
    return parser.parse_args(list(argv))


def run_cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    env = launcher_free_env()
    return subprocess.run([sys.executable, "-m", "dbfs", "generate", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def shared_dir():
    """A fresh directory made by rank 0, known to every rank, removed after the test."""
    comm = MPI.COMM_WORLD
    path = tempfile.mkdtemp(prefix="dbfs-gen-") if comm.Get_rank() == 0 else None
    path = Path(comm.bcast(path, root=0))
    yield path
    comm.Barrier()
    if comm.Get_rank() == 0:
        shutil.rmtree(path)


def assert_file_holds(path: Path, scale: int, edgefactor: int, weights: bool, seed=(2, 3)) -> None:
    n = edgefactor << scale
    expected = generate_edges(scale, edgefactor, 0, n, seed, weights=weights)
    info = edgelist.read_attrs(path)
    digest = info.pop("content_hash")
    assert info == {"scale": scale, "edgefactor": edgefactor, "seed": tuple(seed), "n_vertices": 1 << scale,
                    "generator": "graph500-3.0.0", "n_edges": n, "directed": False, "weights": weights}
    # the graph file layout's attributes (README): the content hash depends on what determines the edges
    assert digest == GENERATED_HASHES.setdefault((scale, edgefactor, tuple(seed)), digest)
    assert list(GENERATED_HASHES.values()).count(digest) == 1 and len(digest) == 40
    with h5py.File(path, "r") as f:
        assert sorted(f.keys()) == (["dst", "src", "weight"] if weights else ["dst", "src"])
        assert f["src"].dtype == np.int64 and f["src"].chunks is None
        for name, array in zip(("src", "dst", "weight"), expected):
            assert np.array_equal(f[name][...], array), name
    lo, hi = n // 10, n - n // 7
    got = edgelist.read_edge_slice(path, lo, hi)
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert np.array_equal(a, b[lo:hi])


GENERATED_HASHES: dict = {}


def leftovers(directory: Path, keep=()) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name not in keep)


# ------------------------------------------------------------------------------------ in-process
@pytest.mark.mpi(min_size=1)
def test_generate_writes_the_reference_graph_on_any_rank_count(shared_dir):
    comm = MPI.COMM_WORLD
    directory = shared_dir
    out = directory / "g.h5"
    assert generate.main(parse("--scale", "9", "--edgefactor", "8", "--weights", "--out", str(out))) == 0
    comm.Barrier()
    assert_file_holds(out, 9, 8, True)
    if comm.Get_rank() == 0:
        assert leftovers(directory) == ["g.h5"]
    # an existing file is an error for every rank and stays untouched; --force replaces it
    before = out.read_bytes()
    with pytest.raises(DbfsError, match="already exists") as error:
        generate.main(parse("--scale", "9", "--out", str(out)))
    assert error.value.collective
    assert out.read_bytes() == before
    comm.Barrier()
    generate.main(parse("--scale", "8", "--seed", "5,7", "--out", str(out), "--force", "--backend", "cpu"))
    comm.Barrier()
    assert_file_holds(out, 8, 16, False, seed=(5, 7))
    comm.Barrier()
    if comm.Get_rank() == 0:
        assert leftovers(directory) == ["g.h5"]


@pytest.mark.mpi(min_size=2)
def test_writer_with_small_chunks_matches_a_single_rank_file(shared_dir):
    comm = MPI.COMM_WORLD
    directory = shared_dir
    n = 5000
    attrs = {"scale": 7, "note": "x"}
    asked = []

    def produce(lo, hi):
        asked.append((lo, hi))
        return generate_edges(12, 16, lo, hi, weights=True)

    edgelist.write_edge_list(directory / "multi.h5", n, attrs, produce, comm, weights=True, chunk_edges=333)
    assert asked and all(hi - lo <= 333 for lo, hi in asked)
    if comm.Get_rank() == 0:
        edgelist.write_edge_list(directory / "single.h5", n, attrs, produce, MPI.COMM_SELF, weights=True)
    comm.Barrier()
    for a, b in zip(edgelist.read_edge_slice(directory / "multi.h5", 0, n),
                    edgelist.read_edge_slice(directory / "single.h5", 0, n)):
        assert np.array_equal(a, b)
    assert edgelist.read_attrs(directory / "multi.h5")["note"] == "x"


@pytest.mark.mpi(min_size=1)
def test_failure_during_write_leaves_no_file(shared_dir):
    comm = MPI.COMM_WORLD
    directory = shared_dir
    last = comm.Get_size() - 1

    def produce(lo, hi):
        if comm.Get_rank() == last and lo > 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        return generate_edges(10, 16, lo, hi)

    with pytest.raises(DbfsError, match="No space left") as error:
        edgelist.write_edge_list(directory / "g.h5", 16 << 10, {}, produce, comm, chunk_edges=1000)
    assert error.value.collective
    comm.Barrier()
    assert leftovers(directory) == []


def test_bad_produce_output_removes_the_temporary(tmp_path):
    with pytest.raises(ValueError, match="shape"):
        edgelist.write_edge_list(tmp_path / "g.h5", 10, {}, lambda lo, hi: (np.zeros(1), np.zeros(1)),
                                 MPI.COMM_SELF)
    assert leftovers(tmp_path) == []


def test_unstorable_attribute_is_a_clean_error(tmp_path):
    with pytest.raises(DbfsError, match="cannot create"):
        edgelist.write_edge_list(tmp_path / "g.h5", 10, {"bad": object()},
                                 lambda lo, hi: generate_edges(4, 1, lo, hi), MPI.COMM_SELF)
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("argv,message", [
    (("--scale", "0"), "scale must be"),
    (("--scale", "43"), "scale must be"),
    (("--scale", "5", "--edgefactor", "0"), "edgefactor must be"),
    (("--scale", "5", "--seed", "1"), "--seed"),
    (("--scale", "5", "--seed", "1,-2"), "--seed"),
    (("--scale", "5", "--seed", f"1,{2**64}"), "--seed"),
])
def test_main_rejects_bad_input(argv, message, tmp_path):
    with pytest.raises(DbfsError, match=message):
        generate.main(parse(*argv, "--out", str(tmp_path / "x.h5")))
    assert leftovers(tmp_path) == []


def test_target_checks(tmp_path):
    def check(path, force=False):
        outputs.check([outputs.Target("--out", path, force)], comm=MPI.COMM_SELF)
    with pytest.raises(DbfsError, match="does not exist"):
        check(tmp_path / "missing" / "x.h5")
    (tmp_path / "d").mkdir()
    with pytest.raises(DbfsError, match="is a directory"):
        check(tmp_path / "d", force=True)
    (tmp_path / "file").write_text("")
    with pytest.raises(DbfsError, match="does not exist"):
        check(tmp_path / "file" / "x.h5")


# ---------------------------------------------------------------------------------------- readers
def test_readers_validate_the_layout(tmp_path):
    with pytest.raises(DbfsError, match="no such file"):
        edgelist.read_attrs(tmp_path / "none.h5")
    (tmp_path / "text.h5").write_text("not hdf5")
    with pytest.raises(DbfsError, match="text.h5"):
        edgelist.read_attrs(tmp_path / "text.h5")
    with h5py.File(tmp_path / "nodst.h5", "w") as f:
        f["src"] = np.arange(4)
    with pytest.raises(DbfsError, match=r"nodst.h5.*'dst' is missing"):
        edgelist.read_edge_slice(tmp_path / "nodst.h5", 0, 1)
    with h5py.File(tmp_path / "short.h5", "w") as f:
        f["src"] = np.arange(4)
        f["dst"] = np.arange(3)
    with pytest.raises(DbfsError, match="short.h5"):
        edgelist.read_attrs(tmp_path / "short.h5")
    with h5py.File(tmp_path / "ok.h5", "w") as f:
        f["src"] = np.arange(4, dtype=np.int32)
        f["dst"] = np.arange(4, dtype=np.int32)
    info = edgelist.read_attrs(tmp_path / "ok.h5")
    assert info == {"n_edges": 4, "weights": False}
    src, dst = edgelist.read_edge_slice(tmp_path / "ok.h5", 1, 3)
    assert src.dtype == np.int64 and src.tolist() == [1, 2]
    with pytest.raises(DbfsError, match="outside"):
        edgelist.read_edge_slice(tmp_path / "ok.h5", 2, 5)


# ----------------------------------------------------------------------------------- command line
@pytest.mark.one_rank
@pytest.mark.parametrize("argv", [
    ("--scale", "0"), ("--scale", "43"), ("--scale", "-3"), ("--scale", "5", "--edgefactor", "0"),
    ("--scale", "5", "--seed", "2;3"), ("--scale", "5", "--out", "nodir/x.h5"),
])
def test_cli_errors_are_one_line_and_leave_nothing(argv, tmp_path):
    args = list(argv) if "--out" in argv else [*argv, "--out", "x.h5"]
    result = run_cli(*args, cwd=tmp_path)
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and "Traceback" not in result.stderr, result.stderr
    assert leftovers(tmp_path) == []


@pytest.mark.one_rank
def test_cli_writes_and_refuses_to_overwrite(tmp_path):
    ok = run_cli("--scale", "6", "--weights", "--out", "g.h5", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert_file_holds(tmp_path / "g.h5", 6, 16, True)
    before = (tmp_path / "g.h5").read_bytes()
    again = run_cli("--scale", "6", "--out", "g.h5", cwd=tmp_path)
    assert again.returncode != 0 and "already exists" in again.stderr
    assert (tmp_path / "g.h5").read_bytes() == before
    forced = run_cli("--scale", "5", "--out", "g.h5", "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert_file_holds(tmp_path / "g.h5", 5, 16, False)
    assert leftovers(tmp_path) == ["g.h5"]


@pytest.mark.one_rank
def test_a_generated_file_samples_the_roots_of_its_own_seed(tmp_path):
    """`--graph` on a file `generate` wrote with --seed takes the same roots as the --scale run of that
    seed (the sampler's seed is the file's unless --seed is given again)."""
    assert run_cli("--scale", "9", "--seed", "5,7", "--out", "g.h5", cwd=tmp_path).returncode == 0

    def roots(*argv: str) -> list:
        result = subprocess.run([sys.executable, "-m", "dbfs", *argv, "--roots", "4", "--backend", "cpu",
                                 "--json", "-"], cwd=tmp_path, env=launcher_free_env(), capture_output=True,
                                text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        return [search["root"] for search in json.loads(result.stdout)["searches"]]

    generated = roots("--scale", "9", "--seed", "5,7")
    assert roots("--graph", "g.h5") == generated
    assert roots("--graph", "g.h5", "--seed", "2,3") != generated       # the sampler's seed given again
