"""The main command's user-facing behaviour: --help with defaults, info, clear one-line errors with
exit status 2 for bad input, and a small end-to-end run that prints the Graph500 block and JSON."""

import json
import subprocess
import sys
import types

import pytest
from launcher import launcher_free_env

from dbfs import runtime

pytestmark = pytest.mark.one_rank


def dbfs(*args, env=None, cwd=None):
    full_env = launcher_free_env()
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "dbfs", *args], capture_output=True, text=True,
                          timeout=120, env=full_env, cwd=cwd)


def test_help_lists_options_with_defaults():
    result = dbfs("--help")
    assert result.returncode == 0
    for text in ("--scale", "--grid", "--roots", "--backend", "--json", "--log-levels",
                 "(default: 16)", "(default: 64)", "(default: auto)"):
        assert text in result.stdout


def test_info_reports_backend_and_mpi():
    result = dbfs("info", "--backend", "cpu")
    assert result.returncode == 0, result.stderr
    assert "backend: cpu" in result.stdout and "mpi library:" in result.stdout


@pytest.mark.parametrize("version", ["Open MPI v4.1.6, package: Debian OpenMPI, Sep 30, 2023\0",
                                     "MPICH Version:      5.0.2\nMPICH Release date: unreleased\n"])
def test_mpi_library_is_one_printable_line(monkeypatch, version):
    from mpi4py import MPI
    monkeypatch.setattr(MPI, "Get_library_version", lambda: version)
    line = runtime.mpi_library()
    assert line == version.split("\0")[0].splitlines()[0].strip() and line.isprintable()


@pytest.mark.parametrize("args, message", [
    (["--scale", "0"], "--scale must be in 1..42"),
    (["--scale", "43"], "--scale must be in 1..42"),
    (["--scale", "8", "--edgefactor", "0"], "--edgefactor must be >= 1"),
    (["--scale", "8", "--grid", "2x2"], "grid 2x2 needs 4 ranks"),
    (["--scale", "8", "--grid", "two"], "grid must look like RxC"),
    (["--scale", "8", "--seed", "x"], "--seed must be two unsigned 64-bit integers"),
    (["--scale", "8", "--root", "256"], "--root 256 is not a vertex"),
    ([], "give exactly one of --scale S or --graph FILE.h5"),
    (["--scale", "8", "--json", "/nonexistent-dir/x.json"], "directory /nonexistent-dir does not exist"),
    (["--scale", "8", "--edge", "4"], "unrecognized arguments: --edge 4"),    # no abbreviated options
    (["--scale", "8", "--edges-per-thread", "3"], "argument --edges-per-thread: invalid choice: 3"),
    (["foo"], "unknown command 'foo' (the commands: info, convert, generate, plan, ws; the main mode takes"),
])
def test_bad_input_is_one_clear_line(args, message):
    result = dbfs(*args, "--backend", "cpu")
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and message in errors[0], result.stderr
    assert "Traceback" not in result.stderr


def test_graph_without_edges_needs_a_root(tmp_path):
    (tmp_path / "empty.mtx").write_text("%%MatrixMarket matrix coordinate pattern symmetric\n5 5 0\n")
    assert dbfs("convert", "empty.mtx", "--out", "empty.h5", cwd=tmp_path).returncode == 0
    result = dbfs("--graph", "empty.h5", "--backend", "cpu", cwd=tmp_path)
    assert result.returncode == 2 and "empty.h5 (undirected) has no edges" in result.stderr
    assert "construction" not in result.stderr                  # refused before the graph is built
    result = dbfs("--graph", "empty.h5", "--backend", "cpu", "--root", "2", cwd=tmp_path)
    assert result.returncode == 0 and "depth 0, visited 1" in result.stderr


def test_slurm_task_count_mismatch_stops():
    result = dbfs("--scale", "6", "--backend", "cpu", env={"SLURM_NTASKS": "3"})
    assert result.returncode == 2
    assert "SLURM_NTASKS=3 but the MPI world has 1 ranks" in result.stderr


def test_run_prints_graph500_block_and_json(tmp_path):
    out = tmp_path / "run.json"
    result = dbfs("--scale", "8", "--roots", "4", "--backend", "cpu", "--json", str(out), "--log-levels")
    assert result.returncode == 0, result.stderr
    keys = [line.split(":")[0] for line in result.stdout.splitlines() if line and line[0].isalpha()]
    assert keys[:6] == ["SCALE", "edgefactor", "NBFS", "graph_generation", "num_mpi_processes",
                        "construction_time"]
    assert "bfs_harmonic_mean_TEPS" in keys
    assert "level" in result.stderr and "phase breakdown" in result.stdout
    doc = json.loads(out.read_text())
    for key in ("scale", "edgefactor", "n_vertices", "n_edges", "grid", "backend", "devices",
                "construction_time", "roots", "bfs_harmonic_mean_TEPS", "searches"):
        assert key in doc
    search = doc["searches"][0]
    assert set(search) >= {"root", "time", "nedge", "teps", "visited", "depth", "validated",
                           "validate_time", "phases", "bytes"}
    assert set(search["phases"]) == {"expand_comm", "expansion", "fold_comm", "update", "pred_resolve"}
    assert set(search["bytes"]) == {"expand", "fold"} and search["validated"] is True
    assert len(doc["searches"]) == doc["NBFS"] == 4
    assert doc["level_launch"] == "host"         # what ran (the NumPy backend's host loop), not what was asked


def test_defaults_spelled_out_are_accepted(tmp_path):
    """A script that writes every option's default names some where they do not apply (--row-copy, --alpha
    and --beta with --direction topdown, --edgefactor with --graph): accepted; another value is refused."""
    common = ["--backend", "cpu", "--direction", "topdown", "--validate", "none"]
    result = dbfs("--scale", "6", "--roots", "2", *common, "--row-copy", "auto", "--alpha", "14", "--beta", "24.0")
    assert result.returncode == 0, result.stderr
    for option, value in (("--row-copy", "on"), ("--alpha", "10"), ("--beta", "24.5")):
        result = dbfs("--scale", "6", "--roots", "2", *common, option, value)
        assert result.returncode == 2 and f"{option} applies to --direction auto" in result.stderr, result.stderr
    (tmp_path / "path.mtx").write_text("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 2\n")
    assert dbfs("convert", "path.mtx", "--out", "path.h5", cwd=tmp_path).returncode == 0
    assert dbfs("--graph", "path.h5", "--root", "1", *common, "--edgefactor", "16", cwd=tmp_path).returncode == 0
    result = dbfs("--graph", "path.h5", "--root", "1", *common, "--edgefactor", "8", cwd=tmp_path)
    assert result.returncode == 2 and "--edgefactor applies to --scale graphs" in result.stderr


def test_refuse_inapplicable_compares_with_the_default():
    from argparse import Namespace

    from dbfs.errors import DbfsError
    from dbfs.options import refuse_inapplicable
    rules = [("--row-copy", False, "to --direction auto")]
    given = dict(given={"row_copy"}, defaults={"row_copy": "auto"})
    refuse_inapplicable(Namespace(row_copy="auto", **given), rules)                # the default, spelled out
    refuse_inapplicable(Namespace(row_copy="on", given=set(), defaults={}), rules)  # not on the command line
    with pytest.raises(DbfsError, match="--row-copy applies to --direction auto"):
        refuse_inapplicable(Namespace(row_copy="on", **given), rules)


def test_a_stderr_line_is_one_write_with_its_newline(monkeypatch):
    """A signal that interrupts a write ends the run with its own line; each line already on stderr must
    then have its end (print writes the text and the newline apart)."""
    writes = []
    monkeypatch.setattr(sys, "stderr", types.SimpleNamespace(write=writes.append, flush=lambda: None))
    monkeypatch.setattr(runtime, "_stdout_taken", True)
    runtime.log("progress")
    runtime.warn("careful")
    runtime.out("a result")
    if runtime.WORLD.Get_rank() == 0:
        assert writes == ["[dbfs] progress\n", "dbfs: warning: careful\n", "a result\n"]


def test_a_gpu_option_on_the_cpu_backend_says_it_has_no_effect():
    result = dbfs("--scale", "6", "--roots", "1", "--edges-per-thread", "8", "--backend", "cpu")
    assert result.returncode == 0, result.stderr
    assert "--edges-per-thread 8 has no effect here: the CPU backend has no GPU threads" in result.stderr


@pytest.mark.parametrize("value", ["on", "off"])
def test_a_row_copy_choice_on_one_rank_of_an_undirected_graph_says_it_changes_nothing(value):
    result = dbfs("--scale", "6", "--roots", "1", "--row-copy", value, "--backend", "cpu")
    assert result.returncode == 0, result.stderr
    assert (f"--row-copy {value} has no effect here: one rank's undirected CSC is its own row-major form"
            in result.stderr)
