"""What a new user trips over, from the user's side: every --validate policy and `--json -` end to end,
the one place that checks output paths (never an input, another output, a FIFO or a directory; names
that are empty, not UTF-8 or too long), options that do not apply, sizes read from files, a closed or
full stdout, the ws mode's exchanges, weights, memory and table, convert's byte-order marks and
compressed inputs, progress on stderr, and the plan command's messages. The in-process commands run
on every rank count."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import h5py
import numpy as np
import pytest
from mpi4py import MPI

from dbfs import bfs_benchmark, cli, outputs, progress, runtime
from dbfs.errors import DbfsError
from dbfs.ws import main as ws_main
from test_failures import DATA, WORLD, converted, dbfs, on_rank_zero, refused, shared  # noqa: F401

ROOT = Path(__file__).resolve().parents[1]
BASE = ("--scale", 8, "--roots", 4, "--backend", "cpu")


def plain_env() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "PMIX_", "HYDI_", "HYDRA_", "OMPI_"))}


# ------------------------------------------------------------------------------ the main command
@pytest.mark.parametrize("policy, validated", [("first", [True, False, False, False]),
                                               ("none", [False, False, False, False])])
def test_validation_policies_report_which_searches_were_validated(dbfs, shared, policy, validated):
    run = dbfs(*BASE, "--validate", policy, "--json", shared / "r.json")
    assert run.code == 0 and "Traceback" not in run.err, run.err
    if WORLD.Get_rank() == 0:
        doc = json.loads((shared / "r.json").read_text())
        assert [s["validated"] for s in doc["searches"]] == validated and doc["validate"] == policy
        assert f"validation: {sum(validated)} of 4 searches validated (--validate {policy}" in run.out
        assert "bfs_mean_validate" not in run.out and "bfs_mean_validate" not in doc


def test_json_dash_writes_the_document_to_stdout(dbfs, shared, monkeypatch):
    monkeypatch.chdir(shared)
    run = dbfs(*BASE, "--json", "-")
    assert run.code == 0, run.err
    if WORLD.Get_rank() == 0:
        doc = json.loads(run.out)                         # stdout is the document alone
        assert len(doc["searches"]) == 4 and "SCALE:" in run.err
    assert not (shared / "-").exists()


@pytest.mark.parametrize("setting", ["on", "off", "auto"])
def test_row_copy_is_the_users_choice_and_the_json_says_which(dbfs, shared, setting):
    """--row-copy on keeps the bottom-up search's row-major copy, off searches the CSC's columns on
    several ranks (one rank's CSC is its own copy), auto keeps it where the run fits (no limit on the
    CPU); every search validates either way."""
    run = dbfs(*BASE, "--row-copy", setting, "--json", shared / "r.json")
    assert run.code == 0 and "Traceback" not in run.err, run.err
    if WORLD.Get_rank() == 0:
        doc = json.loads((shared / "r.json").read_text())
        assert doc["row_copy"] == (setting != "off" or WORLD.Get_size() == 1)
        assert all(s["validated"] for s in doc["searches"])
        if WORLD.Get_size() > 1:
            assert f"row copy {'off' if setting == 'off' else 'on'} (--row-copy {setting})" in run.err


def test_a_directed_graph_keeps_its_row_copy(dbfs, shared):
    graph = converted(DATA / "directed.txt", shared / "d.h5")
    refused(dbfs("--graph", graph, "--roots", 2, "--backend", "cpu", "--row-copy", "off"),
            "--row-copy off: a directed graph's bottom-up search needs the row-major copy")


def test_outputs_never_destroy_inputs_or_special_files(dbfs, shared):
    graph = shared / "g.h5"
    converted(DATA / "directed.txt", graph)
    on_rank_zero(lambda: os.mkfifo(shared / "fifo"))
    cases = [
        (("--graph", graph, "--json", graph), "--json"),
        (("--graph", graph, "--json", shared / "fifo"), "it is a FIFO, and only regular files are replaced"),
        (("--graph", shared / "fifo"), "cannot read"),
        (("--scale", 6, "--root", 1, "--json", shared / "x", "--save-result", shared / "x"), "name the same file"),
        (("--scale", 6, "--json", ""), "--json needs a file name"),
        (("--scale", 6, "--root", 1, "--save-result", "-"), "--save-result -: this output is a file, give its name"),
        (("--scale", 6, "--partition-cache", ""), "--partition-cache needs a directory name"),
        (("--scale", 6, "--json", shared / ("a" * 300 + ".json")), "the file system allows"),
        (("--scale", 6, "--json", os.fsdecode(bytes(shared / "r") + b"\xff.json")), "not valid UTF-8"),
        (("--scale", 6, "--json", "/proc/dbfs-preflight.json"), "cannot write /proc/dbfs-preflight.json"),
        (("--graph", graph, "--edgefactor", 8), "--edgefactor applies to --scale graphs"),
        (("--scale", 6, "--direction", "topdown", "--alpha", 3), "--alpha applies to --direction auto"),
        (("--scale", 6, "--direction", "topdown", "--row-copy", "off"), "--row-copy applies to --direction auto"),
    ]
    for extra, message in cases:
        assert refused(dbfs(*extra, "--backend", "cpu"), message), extra
    assert refused(dbfs("--graph", graph, "--json", graph, "--backend", "cpu"), "is the input file")
    if WORLD.Get_rank() == 0:
        assert sorted(p.name for p in shared.iterdir()) == ["fifo", "g.h5"]


def test_an_output_through_a_symbolic_link_replaces_its_target_and_keeps_the_link(dbfs, shared):
    report, tree = shared / "report.json", shared / "tree.h5"

    def links():
        report.write_text("old")
        (shared / "report-link.json").symlink_to(report)
        (shared / "tree-link.h5").symlink_to(tree)                      # not there yet
        (shared / "lost-link.json").symlink_to(shared / "missing" / "r.json")
    on_rank_zero(links)
    run = dbfs("--scale", 6, "--root", 1, "--json", shared / "report-link.json", "--save-result",
               shared / "tree-link.h5", "--backend", "cpu")
    assert run.code == 0, run.err
    if WORLD.Get_rank() == 0:
        assert (shared / "report-link.json").is_symlink() and json.loads(report.read_text())["SCALE"] == 6
        assert (shared / "tree-link.h5").is_symlink()
        with h5py.File(tree, "r") as f:
            assert f.attrs["n_vertices"] == 64
    assert refused(dbfs("--scale", 6, "--json", shared / "lost-link.json", "--backend", "cpu"),
                   f"directory {shared / 'missing'} does not exist")
    if WORLD.Get_rank() == 0:
        assert sorted(p.name for p in shared.iterdir()) == ["lost-link.json", "report-link.json", "report.json",
                                                            "tree-link.h5", "tree.h5"]


def test_undirected_is_refused_for_a_graph_file_that_is_undirected_already(dbfs, shared):
    graph = converted(DATA / "directed.txt", shared / "u.h5", "--undirected")
    assert refused(dbfs("--graph", graph, "--undirected", "--backend", "cpu"),
                   f"--undirected applies to a directed --graph file; {graph} is undirected already")


def test_the_free_space_check_gives_sizes_in_units(tmp_path, monkeypatch):
    monkeypatch.setattr(outputs.shutil, "disk_usage", lambda path: types.SimpleNamespace(free=3 << 30))
    problem = outputs.target_problem(outputs.Target("--out", str(tmp_path / "g.h5"), size=5 << 40))
    assert problem.endswith("it needs 5.0 TiB and its file system has 3.0 GiB free")


def test_an_error_that_one_rank_sees_names_the_rank():
    problem = "cannot write x" if WORLD.Get_rank() == WORLD.Get_size() - 1 else None
    with pytest.raises(DbfsError) as error:
        runtime.agree(problem)
    expected = "cannot write x" + (f" (rank {WORLD.Get_size() - 1} of {WORLD.Get_size()})" if WORLD.Get_size() > 1 else "")
    assert str(error.value) == expected


def test_phase_shares_that_overlap_say_so():
    searches = [{"time": 1.0, "phases": {"expand_comm": 0.1, "expansion": 0.6, "fold_comm": 0.8, "update": 0.1,
                                         "pred_resolve": 0.0},
                 "bytes": {"expand": 0, "fold": 0}, "bytes_raw": {"expand": 0, "fold": 0}}]
    table = bfs_benchmark.breakdown_table(searches)
    assert "sum of phases" in table and "160.0%" in table and "add up past 100%" in table
    searches[0]["phases"]["fold_comm"] = 0.2
    assert "past 100%" not in bfs_benchmark.breakdown_table(searches)


def test_a_derived_edgefactor_is_rounded_half_up(dbfs, shared):
    edge = shared / "edge.txt"
    if WORLD.Get_rank() == 0:
        edge.write_text("0 1\n")
    WORLD.Barrier()
    run = dbfs("--graph", converted(edge, shared / "edge.h5", "--undirected"), "--root", 0, "--backend", "cpu",
               "--json", shared / "edge.json")
    assert run.code == 0, run.err
    if WORLD.Get_rank() == 0:
        doc = json.loads((shared / "edge.json").read_text())
        assert (doc["n_vertices"], doc["n_edges"], doc["edgefactor"]) == (2, 1, 1)


def test_graph_file_runs_label_derived_sizes_and_cache_hits_report_the_load(dbfs, shared):
    graph = converted(DATA / "directed.txt", shared / "g.h5", "--undirected")
    for k in (1, 2):
        run = dbfs("--graph", graph, "--roots", 2, "--backend", "cpu", "--partition-cache", shared / "cache",
                   "--json", shared / f"r{k}.json")
        assert run.code == 0, run.err
        if WORLD.Get_rank() == 0:
            doc = json.loads((shared / f"r{k}.json").read_text())
            assert "SCALE and edgefactor above are derived from the graph file's" in run.out
            assert doc["scale_derived"] is True and "graph_load" in doc and "load_edges_per_s_per_rank" in doc
            assert doc["construction_source"] == ("built" if k == 1 else "partition cache")
            assert "no kernels to compile" in run.err and "compiled and warmed" not in run.err
            assert f"{runtime.count(WORLD.Get_size(), 'rank')}, grid" in run.err


def test_progress_lines_for_construction_and_certificate(dbfs, monkeypatch):
    monkeypatch.setattr(progress, "AFTER_S", 0.0)
    monkeypatch.setattr(progress, "LINE_S", 0.0)
    run = dbfs(*BASE)
    assert run.code == 0, run.err
    if WORLD.Get_rank() == 0:
        for label in ("construction, generating and counting (pass 1 of 2)", "placing (pass 2 of 2)",
                      "certificate, hashing the input tuples"):
            assert any(label in line and "%" in line for line in run.err.splitlines()), (label, run.err)
    else:
        assert "construction, generating" not in run.err


def test_progress_redraws_a_bar_on_a_terminal(monkeypatch, capsys):
    monkeypatch.setattr(progress, "AFTER_S", 0.0)
    monkeypatch.setattr(progress, "EVERY_S", 0.0)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    bar = progress.Progress("reading", 10, "chunks", 1)
    for k in range(1, 11):
        bar.advance(1)
    bar.close()
    err = capsys.readouterr().err
    if WORLD.Get_rank() == 0:
        assert err.count("\r") == 10 and err.endswith("\n") and "100% 10/10 chunks" in err and err.count("\n") == 1
    else:
        assert err == ""


# ------------------------------------------------------------------------------------------ stdout
@pytest.mark.one_rank
def test_closed_stdout_ends_quietly_and_full_stdout_with_one_line():
    read, write = os.pipe()
    os.close(read)
    closed = subprocess.run([sys.executable, "-m", "dbfs", *map(str, BASE)], stdout=write, stderr=subprocess.PIPE,
                            text=True, env=plain_env(), timeout=120)
    os.close(write)
    assert closed.returncode == 0 and "Traceback" not in closed.stderr and "Exception" not in closed.stderr
    with open("/dev/full", "w") as full:
        ended = subprocess.run([sys.executable, "-m", "dbfs", *map(str, BASE)], stdout=full, stderr=subprocess.PIPE,
                               text=True, env=plain_env(), timeout=120)
    errors = [line for line in ended.stderr.splitlines() if "error" in line]
    assert ended.returncode == 2 and errors == ["dbfs: error: cannot write the results to stdout: No space left "
                                                "on device"], ended.stderr


# ------------------------------------------------------------------------------------------- plan
@pytest.mark.one_rank
def test_plan_names_units_ranks_and_what_sets_the_largest_scale(dbfs):
    fits = dbfs("plan", "--scale", 20, "--ranks", 1, "--memory", "80gib")
    assert fits.code == 0 and "1 rank (grid 1x1)" in fits.out, fits.err
    big = dbfs("plan", "--scale", 20, "--ranks", 1, "--memory", "4TiB")
    assert "largest scale that fits with these ranks: 30 (set by the 32-bit local ids, not the memory: use at " \
           "least 4 ranks (e.g. --grid 2x2) for scale 31)" in big.out
    assert "(set by the memory)" in fits.out
    over = dbfs("plan", "--scale", 34, "--ranks", 1, "--memory", "80GiB")
    assert over.code == 1 and "use at least 81 ranks" in over.out, over.err


# --------------------------------------------------------------------------------------------- ws
def weighted_graph(path: Path, weights) -> Path:
    with h5py.File(path, "w") as f:
        f["src"] = np.array([0, 1, 2], np.int64)
        f["dst"] = np.array([1, 2, 3], np.int64)
        f["weight"] = np.asarray(weights, np.float32)
        f.attrs["n_vertices"] = 4
    return path


@pytest.mark.one_rank
def test_ws_weights_are_checked_for_the_whole_program_list_first(dbfs, tmp_path):
    nan = weighted_graph(tmp_path / "nan.h5", [1.0, np.nan, 2.0])
    negative = weighted_graph(tmp_path / "neg.h5", [1.0, -2.0, 2.0])
    for graph, algo, message in ((nan, "bfs,sswp", "edge 1 (1 - 2) has weight nan: sswp needs finite weights"),
                                 (negative, "bfs,sssp", "edge 1 (1 - 2) has weight -2.0: sssp needs finite, "
                                                        "non-negative weights; no program was run")):
        run = dbfs("ws", "--graph", graph, "--algo", algo, "--source", 0, "--backend", "cpu")
        assert refused(run, message) and run.out == "" and "iterations" not in run.err
    assert dbfs("ws", "--graph", negative, "--algo", "sswp", "--source", 0, "--backend", "cpu").code == 0
    unweighted = converted(DATA / "directed.txt", tmp_path / "u.h5", "--undirected")
    run = dbfs("ws", "--graph", unweighted, "--algo", "bfs,sssp", "--backend", "cpu")
    assert refused(run, "--algo sssp needs edge weights") and "iterations" not in run.err


@pytest.mark.one_rank
def test_ws_exchange_names_the_table_and_the_log(dbfs):
    listed = dbfs("ws", "--scale", 6, "--algo", "cc,bfs", "--gpus", 2, "--exchange", "vr,medusa", "--backend", "cpu")
    assert listed.code == 0, listed.err
    assert "source None" not in listed.err and "cc ws vr:" in listed.err
    assert refused(dbfs("ws", "--scale", 6, "--exchange", "vr,all", "--backend", "cpu"), "is called medusa")
    every = dbfs("ws", "--scale", 6, "--gpus", 2, "--exchange", "all", "--backend", "cpu", "--json", "-")
    assert every.code == 0 and [r["exchange"] for r in json.loads(every.out)["runs"]] == ["vr", "medusa", "ms", "peer"]
    table = ws_main.table([{"algo": "reliability", "method": "vwc32", "exchange": "medusa", "gpus": 2, "source": 7,
                            "iterations": 3, "time": 1.0, "compute_time": 0.5, "exchange_time": 0.1,
                            "sent_bytes": 10, "converged": True}])
    header, row = table.splitlines()
    assert row.split() == ["reliability", "vwc32", "medusa", "2", "7", "3", "1000.00", "333.333", "500.00",
                           "100.00", "0.00", "-"]
    assert len(header) == len(row)
    assert refused(dbfs("ws", "--scale", 6, "--algo", "cc", "--source", 1, "--backend", "cpu"), "--source applies")
    assert refused(dbfs("ws", "--scale", 6, "--method", "vwc8", "--hub-degree", 4, "--backend", "cpu"),
                   "--hub-degree applies to --method ws only")


def test_ws_memory_estimate_counts_every_partitions_vertex_values(monkeypatch):
    args = types.SimpleNamespace(scale=20, edgefactor=1, parts=64, algos=["bfs"])
    build = ws_main.BUILD_BYTES_PER_TUPLE * (1 << 20)
    monkeypatch.setattr(ws_main, "host_memory_limit", lambda: build + (32 << 20))
    cpu = types.SimpleNamespace(is_gpu=False, describe=lambda: "cpu")
    with pytest.raises(DbfsError, match="64 copies of the vertex values need about"):
        ws_main._check_memory(args, None, cpu, None)
    args.parts = 4
    ws_main._check_memory(args, None, cpu, None)


@pytest.mark.one_rank
def test_ws_refuses_a_vertex_count_beyond_its_ids_before_sizing(dbfs, tmp_path):
    with h5py.File(tmp_path / "big.h5", "w") as f:
        f["src"], f["dst"] = np.array([0], np.int64), np.array([1], np.int64)
        f.attrs["n_vertices"] = (1 << 32) + 5
    run = dbfs("ws", "--graph", tmp_path / "big.h5", "--backend", "cpu")
    assert refused(run, "the ws mode's 32-bit ids allow at most 2^31") and "building" not in run.err


# -------------------------------------------------------------------------------------- convert
@pytest.mark.one_rank
def test_convert_skips_a_byte_order_mark_and_names_unread_compression(dbfs, tmp_path):
    (tmp_path / "bom.txt").write_bytes(b"\xef\xbb\xbf1 2\n2 3\n")
    run = dbfs("convert", tmp_path / "bom.txt", "--out", tmp_path / "bom.h5", "--ids", "keep")
    assert run.code == 0, run.err
    with h5py.File(tmp_path / "bom.h5") as f:
        assert f["src"][:].tolist() == [1, 2] and f["dst"][:].tolist() == [2, 3]
    for name, magic in (("bzip2", b"BZh91AY&SY"), ("xz", b"\xfd7zXZ\x00\x00"), ("zstd", b"\x28\xb5\x2f\xfd\x00")):
        (tmp_path / f"{name}.txt").write_bytes(magic + b"\x00" * 16)
        assert refused(dbfs("convert", tmp_path / f"{name}.txt", "--out", tmp_path / "x.h5"),
                       f"is {name}-compressed, which convert does not read")
    assert not (tmp_path / "x.h5").exists()


# -------------------------------------------------------------------------------------- scripts
@pytest.mark.one_rank
def test_scripts_check_their_outputs_in_the_one_place(tmp_path):
    doc = tmp_path / "r.json"
    doc.write_text("{}")
    collect = subprocess.run([sys.executable, str(ROOT / "scripts" / "collect_results.py"), str(doc), "--csv",
                              str(doc)], capture_output=True, text=True, env=plain_env(), timeout=120)
    assert collect.returncode == 2 and "--csv" in collect.stderr and "is the input file" in collect.stderr
    assert doc.read_text() == "{}"
    profile = subprocess.run([sys.executable, str(ROOT / "scripts" / "profile_levels.py"), "--scale", "6", "--out",
                              str(tmp_path / "p.json")], capture_output=True, text=True, env=plain_env(), timeout=120)
    if profile.returncode != 0:                  # no GPU here: one line, no traceback
        assert "Traceback" not in profile.stderr and "CuPy sees none" in profile.stderr
    helped = subprocess.run([sys.executable, str(ROOT / "scripts" / "profile_levels.py"), "--help"],
                            capture_output=True, text=True, env=plain_env(), timeout=120)
    assert "for several loop variants on the same graph and roots" in " ".join(helped.stdout.split())


@pytest.mark.one_rank
def test_slurm_variables_are_checked_like_the_command_line(tmp_path):
    # Slurm's commands on PATH note that they were asked: a wrong value is refused before the launch
    # plugin's questions to the controller (which wait for seconds where none answers)
    asked = tmp_path / "asked"
    for name in ("scontrol", "srun"):
        (tmp_path / name).write_text(f"#!/bin/sh\necho {name} >> {asked}\nexit 1\n")
        (tmp_path / name).chmod(0o755)
    env = {k: v for k, v in plain_env().items() if not k.startswith(("SLURM_", "DBFS_"))}
    env["PATH"] = f"{tmp_path}{os.pathsep}{env['PATH']}"
    for variable, value, message in (("DBFS_COMM", "foo", "argument --comm: invalid choice: 'foo'"),
                                     ("DBFS_EXTRA_ARGS", "--alpha x", "argument --alpha: invalid float value"),
                                     ("DBFS_SCALE", "50", "--scale must be in 1..42")):
        run = subprocess.run(["bash", str(ROOT / "slurm" / "run.sbatch")], capture_output=True, text=True,
                             env={**env, "DBFS_PYTHON": sys.executable, "DBFS_DRY_RUN": "1", variable: value},
                             timeout=120)
        assert run.returncode == 2 and message in run.stderr and run.stdout == "", run.stderr
    assert not asked.exists()
    run = subprocess.run(["bash", str(ROOT / "slurm" / "run.sbatch")], capture_output=True, text=True,
                         env={**env, "DBFS_PYTHON": sys.executable, "DBFS_DRY_RUN": "1"}, timeout=120)
    assert run.returncode == 0 and "launch plugin: not chosen" in run.stderr and asked.read_text() == "scontrol\n"



@pytest.mark.one_rank
def test_the_checks_without_mpi_take_the_rank_count_they_are_given():
    """bfs_benchmark.check_command (slurm/lib.sh's check of each planned run, in a process without MPI)
    judges a command line for a run of `ranks` ranks, not this process's world: the grid (dbfs's
    default for that count), its 32-bit local ids, and the transports an explicit --backend cpu rules out."""
    def grid(ranks, *argv):
        args = cli._parse(cli.main_parser(), [str(a) for a in argv])
        bfs_benchmark.check_command(args, ranks)
        return args.grid_shape
    with pytest.raises(DbfsError, match=r"34359738368 vertices on a 1x1 grid give local index ranges over 2\^31"):
        grid(1, "--scale", 35)
    assert grid(289, "--scale", 35) == (17, 17)
    with pytest.raises(DbfsError, match="grid 2x2 needs 4 ranks, the job has 8"):
        grid(8, "--scale", 8, "--grid", "2x2")
    with pytest.raises(DbfsError, match="--comm nvshmem moves device buffers, but this run uses the CPU backend"):
        grid(2, "--scale", 8, "--backend", "cpu", "--comm", "nvshmem")
    assert grid(2, "--scale", 8, "--comm", "nvshmem") == (2, 1)    # a GPU's transports: the job's to judge
    with pytest.raises(DbfsError, match="--beta applies to --direction auto"):
        grid(4, "--scale", 8, "--direction", "topdown", "--beta", 3)
    with pytest.raises(DbfsError, match="--seed must be two unsigned 64-bit integers"):
        grid(4, "--scale", 8, "--seed", "2")
