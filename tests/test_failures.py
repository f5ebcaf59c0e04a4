"""Every kind of failure a user meets, from the user's side: the exit status, the one line on stderr,
what is left on disk and, for the checks that must come before the expensive step, that the step never
began (a watch on the step's entry sees no call; a run that does the work trips it). The commands run
in this process (dbfs.cli.main) on every rank count; the tests that need their own processes (signals,
ranks that see different directories) run in the one-rank pass."""

from __future__ import annotations

import errno
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import types
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np
import pytest
from mpi4py import MPI

from dbfs import bfs_benchmark, cli, convert, edgelist, generate, outputs, partition_cache, runtime
from dbfs.errors import Interrupted
from dbfs.grid import Grid, fitting_grid, grid_advice
from launcher import launcher_free_env

WORLD = MPI.COMM_WORLD
DATA = Path(__file__).resolve().parent / "data"
BIG = 8589934592
JOB_TIMEOUT_S = 120


@dataclass
class Outcome:
    code: int
    out: str
    err: str

    def errors(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.startswith("dbfs: error:")]

    def warnings(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.startswith("dbfs: warning:")]


@pytest.fixture
def dbfs(capsys, monkeypatch):
    """`python -m dbfs ARGS` in this process on every rank (this rank's output)."""
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)      # cli.main installs its own

    def call(*argv) -> Outcome:
        capsys.readouterr()
        WORLD.Barrier()
        try:
            cli.main([str(a) for a in argv])
            code = 0
        except SystemExit as e:
            code = e.code
        WORLD.Barrier()                 # rank 0's files are written before any rank looks at them
        captured = capsys.readouterr()
        return Outcome(code, captured.out, captured.err)
    return call


def watch(monkeypatch, owner, name: str) -> list:
    """Count the calls of owner.name (still calling through): the entry of an expensive step."""
    calls = []
    original = getattr(owner, name)

    def counted(*args, **kwargs):
        calls.append(name)
        return original(*args, **kwargs)
    monkeypatch.setattr(owner, name, counted)
    return calls


def refused(outcome: Outcome, message: str) -> bool:
    """Exit status 2 on every rank; rank 0 printed exactly one error line holding message, no traceback."""
    assert outcome.code == 2, outcome
    assert "Traceback" not in outcome.err, outcome.err
    if WORLD.Get_rank() == 0:
        errors = outcome.errors()
        assert len(errors) == 1 and message in errors[0], outcome.err
    else:
        assert outcome.errors() == [], outcome.err
    return True


@pytest.fixture
def shared():
    """A fresh directory made by rank 0, known to every rank, removed after the test."""
    path = tempfile.mkdtemp(prefix="dbfs-failures-") if WORLD.Get_rank() == 0 else None
    path = Path(WORLD.bcast(path, root=0))
    yield path
    WORLD.Barrier()
    if WORLD.Get_rank() == 0:
        shutil.rmtree(path, ignore_errors=True)


def on_rank_zero(action) -> None:
    """Run action on rank 0 while the others wait (files every rank then reads)."""
    if WORLD.Get_rank() == 0:
        action()
    WORLD.Barrier()


def converted(source: Path, out: Path, *options) -> Path:
    import argparse
    parser = argparse.ArgumentParser()
    convert.add_arguments(parser)
    on_rank_zero(lambda: convert.convert(parser.parse_args([str(source), "--out", str(out), *options])))
    return out


def listing(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


# --------------------------------------------------------------------------- checks before the work
def test_bad_runs_are_refused_before_the_graph_is_generated(dbfs, shared, monkeypatch):
    base = ("--scale", 14, "--backend", "cpu")
    built = watch(monkeypatch, bfs_benchmark, "build")
    ok = dbfs(*base, "--roots", 2)
    assert ok.code == 0 and ("tuples generated" in ok.err or WORLD.Get_rank() != 0), ok.err
    assert built, "the watch on construction saw no call in a run that does the work"
    built.clear()
    on_rank_zero((shared / "a_directory.json").mkdir)
    cases = [
        (("--root", 1 << 14), "--root 16384 is not a vertex (0..16383)"),
        (("--json", shared / "a_directory.json"), "a_directory.json: it is a directory"),
        (("--json", shared / "missing" / "r.json"), "missing does not exist"),
        (("--comm", "nccl"), "--comm nccl moves device buffers, but this run uses the CPU backend"),
        (("--comm", "mpi-cuda"), "--comm mpi-cuda moves device buffers"),
        (("--alpha", "nan"), "--alpha must be a finite number > 0, got nan"),
        (("--beta", "inf"), "--beta must be a finite number > 0, got inf"),
        (("--beta", "-1"), "--beta must be a finite number > 0"),
        (("--undirected",), "--undirected applies to a directed --graph file"),
        (("--scale", 34), "local ids are 32-bit; use at least 81 ranks (e.g. --grid 9x9)"),
    ]
    for extra, message in cases:
        bad = dbfs(*base, *extra)
        assert refused(bad, message)
        assert "tuples generated" not in bad.err and "construction" not in bad.err, (extra, bad.err)
        assert built == [], extra
    monkeypatch.setenv("DBFS_BACKEND", "bogus")
    assert refused(dbfs(*base), "DBFS_BACKEND='bogus' is not a backend")
    if WORLD.Get_rank() == 0:
        assert listing(shared) == ["a_directory.json"]


def test_grid_advice_names_a_grid_that_fits():
    assert fitting_grid(1 << 34, 4) == (9, 9) and fitting_grid(4 * 10**9, 2) == (2, 2)
    assert fitting_grid(4 * 10**9, 8) == (4, 2) and fitting_grid(100, 6) == (3, 2)
    # no grid of these ranks fits, though fewer ranks would (2x2 for 2^31, 65x65 for 2^37): more ranks
    assert fitting_grid(1 << 31, 7) == (4, 2) and fitting_grid(1 << 37, 8192) == (100, 82)
    Grid(100, 82, 1 << 37)
    # vertex counts far past any run: found at once (a file's ids may claim 2^50), or none past ~2^56
    started = time.perf_counter()
    Grid(*fitting_grid(1 << 50, 3), 1 << 50)
    assert fitting_grid(2**63 - 1, 1) is None and time.perf_counter() - started < 5
    assert "no grid keeps that many vertices within 32-bit local ids" in grid_advice(2**63 - 1, 1, 1)
    for n, ranks in ((1 << 34, 4), (4 * 10**9, 2), (4 * 10**9, 8)):
        r, c = fitting_grid(n, ranks)
        Grid(r, c, n)                                   # fits
        with pytest.raises(ValueError):
            Grid(r - 1, r - 1, n) if r * c > ranks else Grid(1, ranks, n)
    # the advice also names the largest graph the grid holds, which the grid does hold
    assert grid_advice(1 << 41, 128, 64).endswith("use at least 1050625 ranks (e.g. --grid 1025x1025), or at "
                                                  "most 2^36 vertices (scale 36) on this grid")
    Grid(128, 64, 1 << 36)
    with pytest.raises(ValueError):
        Grid(128, 64, 1 << 37)


def test_id_table_out_of_order_is_refused(dbfs, shared):
    def write():
        with h5py.File(shared / "unordered.h5", "w") as f:
            f["src"], f["dst"] = np.array([0, 1, 2]), np.array([1, 2, 3])
            f["ids"] = np.array([10, 5, 20, 30])
            f.attrs.update(n_vertices=4, n_edges=3, id_mapping=True)
    on_rank_zero(write)
    assert refused(dbfs("--graph", shared / "unordered.h5", "--root", 10, "--backend", "cpu"),
                   "'ids' are not strictly ascending (dense vertex 0 and the next)")


# ------------------------------------------------------------------------------ roots without edges
def test_root_without_edges_is_a_search_of_one_vertex(dbfs, shared):
    graph = shared / "isolated.txt"
    on_rank_zero(lambda: graph.write_text("0 1\n1 2\n5 5\n"))
    converted(graph, shared / "isolated.h5", "--ids", "keep", "--undirected")
    run = dbfs("--graph", shared / "isolated.h5", "--root", 3, "--backend", "cpu", "--json", shared / "r.json")
    assert run.code == 0, run.err
    doc = json.loads((shared / "r.json").read_text())
    [search] = doc["searches"]
    assert (search["visited"], search["nedge"], search["teps"], search["depth"]) == (1, 0, 0.0, 0)
    assert doc["bfs_zero_edge_searches"] == 1 and doc["bfs_harmonic_mean_TEPS"] == 0.0
    if WORLD.Get_rank() == 0:
        assert "bfs_zero_edge_searches:         1" in run.out.splitlines()
        assert "1 of 1 searches traversed no edge" in run.err and "Traceback" not in run.err


def test_a_sampler_that_finds_few_roots_says_so(dbfs, shared):
    """The Graph500 sampler draws as many random candidates as the graph has vertices; where few of them
    have an edge it may find fewer roots than asked, or none: the run says which, not that no vertex has
    an edge, and names --root."""
    graph = shared / "one_edge.txt"
    on_rank_zero(lambda: graph.write_text("0 1\n"))
    converted(graph, shared / "one_edge.h5", "--ids", "keep", "--undirected", "--n-vertices", "10000")
    assert refused(dbfs("--graph", shared / "one_edge.h5", "--backend", "cpu"),
                   "the Graph500 root sampler found no vertex with an edge among its 10000 random candidates")
    run = dbfs("--scale", 4, "--roots", 100, "--backend", "cpu")
    assert run.code == 0, run.err
    if WORLD.Get_rank() == 0:
        assert "the Graph500 root sampler found 10 roots among its 16 random candidates" in run.err


# ------------------------------------------------------------------------- ids the user sees and gives
def test_progress_lines_name_the_files_ids(dbfs, shared):
    converted(DATA / "directed.txt", shared / "sparse.h5")
    run = dbfs("--graph", shared / "sparse.h5", "--root", BIG, "--backend", "cpu", "--log-levels")
    assert run.code == 0, run.err
    if WORLD.Get_rank() == 0:
        assert f"search 1/1 root {BIG}:" in run.err and f"root {BIG} level   0" in run.err, run.err


# ------------------------------------------------------------------------------ the partition cache
def damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[:len(data) // 2])
    elif how == "empty":
        path.write_bytes(b"")
    else:
        flipped = bytearray(data)
        flipped[len(data) // 3] ^= 0x10
        path.write_bytes(bytes(flipped))


def test_damaged_partition_cache_is_rebuilt_with_a_warning(dbfs, shared):
    cache = shared / "cache"
    args = ("--scale", 7, "--roots", 2, "--backend", "cpu", "--partition-cache", cache, "--json", shared / "r.json")

    def run(expected_source: str) -> tuple[Outcome, dict]:
        outcome = dbfs(*args)
        assert outcome.code == 0, outcome.err
        doc = json.loads((shared / "r.json").read_text())
        assert doc["construction_source"] == expected_source
        return outcome, doc

    _, first = run("built")
    [entry] = [p for p in cache.iterdir()]
    for how in ("truncated", "empty", "flipped"):
        on_rank_zero(lambda: damage(entry / f"rank{WORLD.Get_size() - 1}.npz", how))
        outcome, doc = run("built")
        if WORLD.Get_rank() == 0:
            [warning] = outcome.warnings()
            assert "is damaged" in warning and "rebuilding it" in warning, (how, outcome.err)
        _, again = run("partition cache")
        assert [s["nedge"] for s in again["searches"]] == [s["nedge"] for s in first["searches"]], how


def test_partition_cache_that_cannot_be_written_is_a_warning(dbfs, shared, monkeypatch):
    args = ("--scale", 7, "--roots", 2, "--backend", "cpu", "--json", shared / "r.json")
    not_a_directory = shared / "file"
    on_rank_zero(lambda: not_a_directory.write_text("x"))
    outcome = dbfs(*args, "--partition-cache", not_a_directory)
    assert outcome.code == 0 and json.loads((shared / "r.json").read_text())["construction_source"] == "built"
    if WORLD.Get_rank() == 0:
        [warning] = outcome.warnings()
        assert "(it is not a directory)" in warning and not_a_directory.read_text() == "x"

    def full(*a, **k):                                   # the last rank's file system is full
        raise OSError(errno.ENOSPC, "No space left on device")
    if WORLD.Get_rank() == WORLD.Get_size() - 1:
        monkeypatch.setattr(partition_cache.np, "savez", full)
    cache = shared / "cache"
    outcome = dbfs(*args, "--partition-cache", cache)
    monkeypatch.undo()
    assert outcome.code == 0, outcome.err
    if WORLD.Get_rank() == 0:
        [warning] = outcome.warnings()
        assert "cannot write the partition cache" in warning and "No space left" in warning, outcome.err
        assert listing(cache) == []                      # no empty or partial entry
    if WORLD.Get_size() == 1:
        return
    per_node, isdir = shared / "per-node", os.path.isdir     # rank 1's node has no such directory
    if WORLD.Get_rank() == 1:
        monkeypatch.setattr(partition_cache.os.path, "isdir", lambda p: isdir(p) and per_node not in Path(p).parents)
    outcome = dbfs(*args, "--partition-cache", per_node)
    monkeypatch.undo()
    assert outcome.code == 0, outcome.err
    if WORLD.Get_rank() == 0:
        [warning] = outcome.warnings()
        assert f"rank 1 does not see the directory {per_node}{os.sep}" in warning and "that rank 0 made" in warning


# ------------------------------------------------------------------------------------- convert
@pytest.mark.one_rank
def test_convert_failures_are_one_line_and_leave_nothing(dbfs, tmp_path, monkeypatch):
    edges = b"".join(b"%d %d\n" % (i, (7 * i) % 5000) for i in range(200000))
    packed = gzip.compress(edges)
    (tmp_path / "truncated.txt.gz").write_bytes(packed[:len(packed) // 2])
    flipped = bytearray(packed)
    flipped[len(packed) // 2] ^= 0xFF
    (tmp_path / "corrupt.txt.gz").write_bytes(bytes(flipped))
    (tmp_path / "plain.txt.gz").write_bytes(b"0 1\n")
    inputs = listing(tmp_path)
    for name in ("truncated", "corrupt", "plain"):
        assert refused(dbfs("convert", tmp_path / f"{name}.txt.gz", "--out", tmp_path / "g.h5"),
                       f"{name}.txt.gz: corrupt or truncated gzip data")
        assert listing(tmp_path) == inputs
    (tmp_path / "edges.txt").write_bytes(edges)
    inputs = listing(tmp_path)

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")
    for ids, where in (("keep", (edgelist.ChunkStream, "_store_oldest")), ("renumber", (convert, "_merge_runs"))):
        with monkeypatch.context() as patch:
            patch.setattr(*where, full)
            assert refused(dbfs("convert", tmp_path / "edges.txt", "--out", tmp_path / "g.h5", "--ids", ids),
                           "failed: no space left on the file system of")
        assert listing(tmp_path) == inputs, ids
    before = (tmp_path / "edges.txt").read_bytes()
    assert refused(dbfs("convert", tmp_path / "edges.txt", "--out", tmp_path / "edges.txt", "--force",
                        "--format", "snap"), "is the input file")
    assert (tmp_path / "edges.txt").read_bytes() == before
    opened = watch(monkeypatch, convert, "_open_input")
    ok = dbfs("convert", tmp_path / "edges.txt", "--out", tmp_path / "g.h5")
    assert ok.code == 0 and opened, ok.err
    opened.clear()
    late = dbfs("convert", tmp_path / "edges.txt", "--out", tmp_path / "h.h5", "--json", tmp_path / "no" / "c.json")
    assert refused(late, "no does not exist") and opened == []
    assert listing(tmp_path) == sorted(inputs + ["g.h5"])


@pytest.mark.one_rank
def test_absurd_packed_ids_are_a_warning(dbfs, tmp_path):
    words = np.zeros((8, 3), "<u4")
    words[:, 0], words[:, 1] = np.arange(8), np.arange(1, 9)
    words[3, 2] = 4                                     # v0 of edge 3 = 3 | 4 << 32 = 17179869187
    (tmp_path / "edges.dat").write_bytes(words.tobytes())
    run = dbfs("convert", tmp_path / "edges.dat", "--format", "g500-packed", "--out", tmp_path / "g.h5")
    assert run.code == 0, run.err
    [warning] = run.warnings()
    assert "17179869188 vertices for 8 edges" in warning and "--format g500-packed" in warning


# ------------------------------------------------------------------------------------- generate
@pytest.mark.one_rank
def test_generate_checks_the_free_space_first(dbfs, tmp_path, monkeypatch):
    produced = watch(monkeypatch, generate, "generate_edges")
    ok = dbfs("generate", "--scale", 16, "--out", tmp_path / "g.h5", "--backend", "cpu")
    assert ok.code == 0 and produced, ok.err
    produced.clear()
    big = dbfs("generate", "--scale", 40, "--out", tmp_path / "big.h5", "--backend", "cpu")
    assert refused(big, "big.h5: it needs 256.0 TiB and its file system has")
    assert produced == [] and listing(tmp_path) == ["g.h5"]


def test_save_result_checks_the_free_space_before_the_build(dbfs, shared, monkeypatch):
    built = watch(monkeypatch, bfs_benchmark, "build")
    monkeypatch.setattr(outputs.shutil, "disk_usage", lambda path: types.SimpleNamespace(free=1000))
    full = dbfs("--scale", 10, "--root", 1, "--save-result", shared / "tree.h5", "--backend", "cpu")
    assert refused(full, "tree.h5: it needs 20.0 KiB and its file system has 1000 B free")
    assert built == [] and not (shared / "tree.h5").exists()


# --------------------------------------------------------------------------------------------- ws
@pytest.mark.one_rank
def test_ws_takes_and_shows_the_files_ids(dbfs, tmp_path):
    converted(DATA / "directed.txt", tmp_path / "g.h5", "--undirected")
    run = dbfs("ws", "--graph", tmp_path / "g.h5", "--source", BIG, "--backend", "cpu", "--json", tmp_path / "w.json")
    assert run.code == 0, run.err
    [record] = json.loads((tmp_path / "w.json").read_text())["runs"]
    assert record["source"] == BIG and record["reached"] == 5            # all but the isolated 12
    assert str(BIG) in run.out.splitlines()[1] and f"source {BIG}:" in run.err
    assert refused(dbfs("ws", "--graph", tmp_path / "g.h5", "--source", 8, "--backend", "cpu"),
                   "--source 8 is not a vertex of")
    with h5py.File(tmp_path / "g.h5", "a") as f:
        f["ids"][...] = f["ids"][:][::-1]
    assert refused(dbfs("ws", "--graph", tmp_path / "g.h5", "--backend", "cpu"), "'ids' are not strictly ascending")


# -------------------------------------------------------------------------------------------- help
def test_help_gives_each_default_once_and_names_every_command():
    parsers = [cli.main_parser(), cli.info_parser(), *(cli.tool_parser(name) for name in cli._TOOLS)]
    for parser in parsers:
        formatter = parser._get_formatter()
        for action in parser._actions:
            text = formatter._expand_help(action) if action.help else ""
            assert text.count("default") <= 1, (parser.prog, action.dest, text)
        shown = parser.format_help()
        assert "(default: None)" not in shown and "(default: False)" not in shown, parser.prog
    main_help = " ".join(cli.main_parser().format_help().split())
    for name in ("info", "generate", "convert", "ws"):
        assert f"`python -m dbfs {name}`" in main_help
    assert ("(default: one column where the ranks are on one node, each with a GPU of its own or sharing one "
            "under CUDA MPS, and that fits, else the squarest with R >= C)") in main_help
    assert "auto, mpi, mpi-cuda, nccl" not in main_help
    comm = next(a for a in cli.main_parser()._actions if a.dest == "comm")
    assert comm.default == "auto"


# ---------------------------------------------------------------- their own processes: signals, paths
def clean_env() -> dict:
    env = launcher_free_env()
    env["DBFS_BACKEND"] = "cpu"
    return env


def mpiexec() -> str:
    beside_python = Path(sys.executable).parent / "mpiexec"
    return str(beside_python) if beside_python.exists() else shutil.which("mpiexec")


def interrupted(argv, cwd: Path, ready, sig) -> tuple[int, str]:
    """Start argv, send sig once ready(stderr so far) holds, return (exit status, stderr)."""
    proc = subprocess.Popen(argv, cwd=cwd, env=clean_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()
    deadline = time.monotonic() + JOB_TIMEOUT_S
    while not ready("".join(lines)):
        assert proc.poll() is None, f"{argv} ended before it was signalled:\n{''.join(lines)}"
        assert time.monotonic() < deadline, f"{argv} never got ready:\n{''.join(lines)}"
        time.sleep(0.05)
    proc.send_signal(sig)
    try:
        code = proc.wait(timeout=JOB_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail(f"{argv} still running {JOB_TIMEOUT_S} s after {sig.name}")
    reader.join()
    return code, "".join(lines)


def one_line(stderr: str, text: str) -> None:
    dbfs_lines = [line for line in stderr.splitlines() if line.startswith("dbfs:")]
    assert dbfs_lines == [text] and "Traceback" not in stderr, stderr


def test_an_interrupt_lost_in_a_finalizer_is_delivered_again():
    class SignalsWhenCollected:
        def __del__(self):
            signal.raise_signal(signal.SIGINT)      # its handler runs in here, where Python drops Interrupted

    with pytest.raises(Interrupted), runtime.signals_interrupt():
        SignalsWhenCollected()
        deadline = time.monotonic() + 100 * runtime.REDELIVERY_DELAY_S
        while time.monotonic() < deadline:
            time.sleep(runtime.REDELIVERY_DELAY_S / 10)


@pytest.mark.one_rank
def test_ctrl_c_ends_every_rank_with_one_line(tmp_path):
    argv = [mpiexec(), "-n", "2", sys.executable, "-m", "dbfs", "--scale", "17", "--backend", "cpu"]
    code, stderr = interrupted(argv, tmp_path, lambda err: "[dbfs] graph:" in err, signal.SIGINT)
    assert code == 130, stderr
    one_line(stderr, "dbfs: interrupted by SIGINT")


@pytest.mark.one_rank
def test_sigterm_removes_the_temporary_files(tmp_path):
    def temporaries(err: str) -> bool:
        return any(p.name.endswith(".tmp") for p in tmp_path.iterdir())

    argv = [mpiexec(), "-n", "2", sys.executable, "-m", "dbfs", "generate", "--scale", "22", "--out", "g.h5"]
    code, stderr = interrupted(argv, tmp_path, temporaries, signal.SIGTERM)
    assert code == 143, stderr
    one_line(stderr, "dbfs: interrupted by SIGTERM")
    assert listing(tmp_path) == []
    member = gzip.compress(b"".join(b"%d %d\n" % (i, 3 * i + 1) for i in range(200000)))
    (tmp_path / "edges.txt.gz").write_bytes(member * 40)   # 40 gzip members: one long stream
    argv = [sys.executable, "-m", "dbfs", "convert", "edges.txt.gz", "--out", "g.h5", "--threads", "1"]
    code, stderr = interrupted(argv, tmp_path, temporaries, signal.SIGTERM)
    assert code == 143, stderr
    one_line(stderr, "dbfs: interrupted by SIGTERM")
    assert listing(tmp_path) == ["edges.txt.gz"]


@pytest.mark.one_rank
def test_ranks_started_with_different_arguments_stop_together(tmp_path):
    argv = [mpiexec(), "-n", "1", sys.executable, "-m", "dbfs", "--scale", "6", "--roots", "2",
            ":", "-n", "1", sys.executable, "-m", "dbfs", "--scale", "6", "--root", "1000"]
    result = subprocess.run(argv, cwd=tmp_path, env=clean_env(), capture_output=True, text=True,
                            timeout=JOB_TIMEOUT_S)
    assert result.returncode == 2, result.stderr
    one_line(result.stderr, "dbfs: error: started with other arguments than rank 0 (--scale 6 --root 1000 "
                            "against --scale 6 --roots 2): every rank must run the same command (rank 1 of 2)")


@pytest.mark.one_rank
def test_ranks_that_see_different_directories_agree(tmp_path):
    """--json names a directory that rank 0 has and rank 1 lacks (per-node paths, as on a cluster
    without a shared file system): every rank refuses, nobody waits for the others."""
    for rank in (0, 1):
        (tmp_path / f"node{rank}").mkdir()
    (tmp_path / "node0" / "out").mkdir()
    command = [sys.executable, "-m", "dbfs", "--scale", "8", "--roots", "1", "--json", "out/r.json"]
    argv = [mpiexec(), "-n", "1", "-wdir", str(tmp_path / "node0"), *command,
            ":", "-n", "1", "-wdir", str(tmp_path / "node1"), *command]
    result = subprocess.run(argv, cwd=tmp_path, env=clean_env(), capture_output=True, text=True,
                            timeout=JOB_TIMEOUT_S)
    assert result.returncode == 2, result.stderr
    one_line(result.stderr, f"dbfs: error: cannot write {tmp_path}/node1/out/r.json: directory "
                            f"{tmp_path}/node1/out does not exist (rank 1 of 2)")
    assert listing(tmp_path / "node0" / "out") == []
