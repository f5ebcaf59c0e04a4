"""`python -m dbfs ws` as a user meets it: --help with defaults, one-line errors with exit status 2,
the table and the JSON of a run over several programs, methods and exchanges, graphs from files, and a
vertex program loaded from the user's own file (the README example)."""

import json
import os
import subprocess
import sys

import pytest

from launcher import launcher_free_env

pytestmark = pytest.mark.one_rank

RELIABILITY = r'''
import numpy as np
from dbfs.ws.program import Program, register


def initial(n, source):
    values = np.zeros(n, np.float32)
    values[source] = 1
    return values


register(Program(
    name="reliability", description="most reliable path: the largest product of edge weights",
    vertex_dtype=np.float32, edge_dtype=np.float32, needs_source=True,
    edge_values=lambda part: part.require_weights("reliability"),
    cuda=r"""
typedef float Vertex;
typedef float Edge;
__device__ __forceinline__ void init_vertex(Vertex* shared, const Vertex* current) { *shared = *current; }
__device__ __forceinline__ void compute_nbr(Vertex nbr, const Edge* edge, Vertex* local)
{ *local = nbr * *edge; }
__device__ __forceinline__ void reduce_vertices(Vertex* first, const Vertex* second)
{ *first = fmaxf(*first, *second); }
__device__ __forceinline__ bool is_updated(const Vertex* computed, const Vertex* current)
{ return *computed > *current; }
""",
    initial=initial, init=np.copy, compute=np.multiply, reduce=np.maximum, is_updated=np.greater,
    reached=lambda values: values > 0))
'''


def dbfs(*args, cwd=None):
    env = launcher_free_env()
    env["COLUMNS"] = "250"                  # argparse wraps --help at the terminal width
    return subprocess.run([sys.executable, "-m", "dbfs", *args], capture_output=True, text=True, timeout=300,
                          env=env, cwd=cwd)


def ws(*args, cwd=None):
    return dbfs("ws", "--backend", "cpu", *args, cwd=cwd)


def test_help_lists_options_with_defaults():
    result = dbfs("ws", "--help")
    assert result.returncode == 0
    for text in ("--algo", "--method", "--exchange", "--gpus", "--source", "--roots", "--load", "--json",
                 "--hub-degree", "(default: bfs)", "(default: ws)", "(default: vr)", "(default: 16)", "(default: 1)",
                 "(default: 1024)", "--frontier", "--bin-threshold", "(default: 64)", "--shard-window",
                 "(default: 2048)", "--shard-memory", "(default: auto)", "--approx", "--approx-threshold",
                 "--approx-degree", "--approx-fraction", "--approx-tolerance", "gs, cw"):
        assert text in result.stdout


@pytest.mark.parametrize("args, message", [
    (["--scale", "6", "--algo", "bfs,foo"], "unknown algorithm foo"),
    (["--scale", "6", "--method", "vwc3"], "unknown method vwc3"),
    (["--scale", "6", "--exchange", "nvlink"], "unknown exchange nvlink"),
    ([], "give exactly one of --scale S or --graph FILE.h5"),
    (["--scale", "32"], "--scale must be in 1..31"),
    (["--scale", "6", "--gpus", "0"], "--gpus must be >= 1"),
    (["--scale", "4", "--backend", "cpu", "--gpus", "17"], "--gpus 17 cuts a 16-vertex graph into more partitions"),
    (["--scale", "6", "--repeat", "0"], "--repeat must be >= 1"),
    (["--scale", "6", "--hub-degree", "-1"], "--hub-degree must be >= 0"),
    (["--scale", "6", "--source", "64"], "--source 64 is not a vertex (0..63)"),
    (["--scale", "6", "--seed", "1"], "--seed must be two unsigned 64-bit integers"),
    (["--scale", "6", "--json", "/nonexistent-dir/x.json"], "directory /nonexistent-dir does not exist"),
    (["--graph", "/nonexistent-dir/g.h5"], "cannot read /nonexistent-dir/g.h5: no such file"),
    (["--scale", "6", "--load", "/nonexistent-dir/p.py"], "no such file"),
    (["--scale", "6", "--load", "/"], "--load /: it is a directory, not a Python file"),
    (["--scale", "6", "--method", "gs", "--shard-window", "40"], "--shard-window must be a positive multiple of 32"),
    (["--scale", "6", "--frontier", "all,lazy"], "unknown frontier filter lazy"),
    (["--scale", "6", "--bin-threshold", "0"], "--bin-threshold must be >= 1"),
    (["--scale", "6", "--approx", "blur"], "unknown approximation blur"),
    (["--scale", "6", "--approx", "latency", "--approx-fraction", "2"], "--approx-fraction in (0, 1]"),
    (["--scale", "6", "--shard-window", "64"], "--shard-window applies to --method gs and cw only"),
    (["--scale", "6", "--method", "gs", "--frontier", "online"], "--frontier applies to --method ws and vwc only"),
    (["--scale", "6", "--frontier", "ballot", "--bin-threshold", "8"],
     "--bin-threshold applies to --frontier online and jit only"),
    (["--scale", "6", "--approx", "coalesce", "--approx-degree", "8"], "--approx-degree applies to --approx latency"),
    (["--scale", "6", "--algo", "cc", "--roots", "3"], "--roots applies to programs that start from a source"),
    (["--scale", "6", "--algo", "cc", "--source", "3"], "--source applies to programs that start from a source"),
    (["--scale", "6", "--root", "3"], "unrecognized arguments: --root 3"),     # not taken for --roots
])
def test_bad_input_is_one_clear_line(args, message):
    result = ws(*args)
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and message in errors[0], result.stderr
    assert "Traceback" not in result.stderr


def test_a_default_spelled_out_is_accepted_where_the_option_does_not_apply():
    """--roots 1 (the default) with a program that has no source: scripts write every default."""
    result = ws("--scale", "6", "--backend", "cpu", "--algo", "cc", "--roots", "1")
    assert result.returncode == 0, result.stderr


def test_comparisons_of_several_exchanges_name_theirs(tmp_path):
    result = ws("--scale", "8", "--algo", "bfs", "--method", "ws", "--frontier", "all,online", "--gpus", "2",
                "--exchange", "vr,medusa")
    assert result.returncode == 0, result.stderr
    for exchange in ("vr", "medusa"):
        assert f"bfs (ws, {exchange}): --frontier online is" in result.stdout, result.stdout


def test_fewer_sources_than_asked_are_said(tmp_path):
    (tmp_path / "few.txt").write_text("0 1\n1 2\n2 0\n40 41\n")
    assert dbfs("convert", "few.txt", "--out", "few.h5", "--ids", "keep", "--undirected", cwd=tmp_path).returncode == 0
    result = ws("--graph", "few.h5", "--roots", "20", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "the Graph500 root sampler found" in result.stderr and "asked for 20" in result.stderr


def test_weighted_program_on_a_file_without_weights(tmp_path):
    assert dbfs("generate", "--scale", "6", "--out", "g.h5", "--backend", "cpu", cwd=tmp_path).returncode == 0
    result = ws("--graph", "g.h5", "--algo", "sssp", cwd=tmp_path)
    assert result.returncode == 2 and "sssp needs edge weights" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_directed_file_is_searched_undirected_with_a_warning(tmp_path):
    (tmp_path / "d.txt").write_text("1 2\n2 3\n")
    assert dbfs("convert", "d.txt", "--out", "d.h5", cwd=tmp_path).returncode == 0
    result = ws("--graph", "d.h5", "--source", "3", "--backend", "cpu", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "d.h5 is a directed graph; the ws mode searches it undirected" in result.stderr


def test_run_prints_table_comparisons_and_json(tmp_path):
    out = tmp_path / "ws.json"
    result = ws("--scale", "8", "--algo", "all", "--method", "ws,vwc8", "--gpus", "2", "--exchange", "vr,medusa",
                "--roots", "2", "--json", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].split()[:4] == ["algo", "method", "exchange", "gpus"]
    assert "pr (vr): ws is" in result.stdout and "bfs (ws): vr is" in result.stdout
    doc = json.loads(out.read_text())
    assert doc["mode"] == "ws" and doc["gpus"] == 2 and doc["backend"] == "cpu"
    assert doc["graph"]["n_vertices"] == 256 and doc["graph"]["n_tuples"] == 16 * 256
    assert len(doc["partitions"]) == 2 and doc["partitions"][1]["hi"] == 256
    assert doc["graph"]["hub_degree"] == 1024 and all(p["hubs"] == 0 for p in doc["partitions"])
    assert len(doc["runs"]) == 3 * 2 * 2 * 2 + 2 * 2 * 2            # sourced programs run from 2 roots
    for run in doc["runs"]:
        assert run["converged"] and len(run["iteration_times"]) == run["iterations"]
        assert set(run) >= {"algo", "method", "exchange", "source", "time", "compute_time", "exchange_time",
                            "sent_vertices", "sent_bytes"}
    bfs = [r for r in doc["runs"] if r["algo"] == "bfs"]
    assert all("teps" in r and r["reached"] > 1 for r in bfs)
    kinds = {c["compare"] for c in doc["comparisons"]}
    assert kinds == {"ws_over_best_vwc", "vr_over_all"}


def test_a_run_stopped_by_max_iterations_fails_after_the_report(tmp_path):
    out = tmp_path / "ws.json"
    result = ws("--scale", "6", "--algo", "bfs,cc", "--max-iterations", "1", "--json", str(out))
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert errors == ["dbfs: error: 2 of 2 runs stopped at --max-iterations 1 without converging "
                      "(rows marked NOT CONVERGED)"], result.stderr
    assert result.stdout.count("NOT CONVERGED") == 2
    assert [run["converged"] for run in json.loads(out.read_text())["runs"]] == [False, False]


def test_graph_file_gives_the_same_runs_as_the_generator(tmp_path):
    assert dbfs("generate", "--scale", "7", "--weights", "--out", "g.h5", "--backend", "cpu",
                cwd=tmp_path).returncode == 0
    docs = []
    for graph in (["--graph", "g.h5"], ["--scale", "7"]):
        result = ws(*graph, "--algo", "sssp,cc", "--json", "out.json", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        docs.append(json.loads((tmp_path / "out.json").read_text()))
    for a, b in zip(*(d["runs"] for d in docs)):
        assert (a["iterations"], a.get("reached"), a["source"]) == (b["iterations"], b.get("reached"), b["source"])


def test_hub_degree_changes_no_result(tmp_path):
    docs = []
    for hub_degree in ("4", "1024"):
        result = ws("--scale", "8", "--algo", "bfs,cc", "--gpus", "2", "--hub-degree", hub_degree,
                    "--json", "out.json", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert f"hubs (more than {hub_degree} neighbours) hold" in result.stderr
        docs.append(json.loads((tmp_path / "out.json").read_text()))
    hubs = [sum(p["hubs"] for p in d["partitions"]) for d in docs]
    assert hubs[0] > 0 and hubs[1] == 0
    for a, b in zip(*(d["runs"] for d in docs)):
        assert (a["iterations"], a.get("reached")) == (b["iterations"], b.get("reached"))


def test_program_from_a_users_file(tmp_path):
    (tmp_path / "reliability.py").write_text(RELIABILITY)
    result = ws("--scale", "7", "--load", "reliability.py", "--algo", "reliability,sswp", "--gpus", "2",
                "--json", "out.json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    runs = json.loads((tmp_path / "out.json").read_text())["runs"]
    assert [r["algo"] for r in runs] == ["reliability", "sswp"]
    assert runs[0]["reached"] == runs[1]["reached"] > 1      # both reach the source's component
    (tmp_path / "broken.py").write_text("raise RuntimeError('no')\n")
    result = ws("--scale", "6", "--load", "broken.py", cwd=tmp_path)
    assert result.returncode == 2 and "--load broken.py: RuntimeError: no" in result.stderr
    (tmp_path / "edges.txt").write_text("0 1\n1 2\n")           # any name is read as Python source
    result = ws("--scale", "6", "--load", "edges.txt", cwd=tmp_path)
    assert result.returncode == 2 and "--load edges.txt: SyntaxError" in result.stderr
    (tmp_path / "empty.py").write_text("from dbfs.ws.program import Program, register\n"
                                       "register(Program('x', 'x', '', 'i4', None, None, None, None, None))\n")
    result = ws("--scale", "6", "--load", "empty.py", "--algo", "x", cwd=tmp_path)
    assert result.returncode == 2 and "--load empty.py: ValueError: program x: initial must be a function, got " \
                                      "None" in result.stderr and "Traceback" not in result.stderr


def test_representations_filters_and_approximations_in_the_report_and_json(tmp_path):
    out = tmp_path / "ws.json"
    result = ws("--scale", "9", "--algo", "sssp,pr", "--method", "ws,vwc8,gs,cw", "--frontier", "all,jit",
                "--bin-threshold", "1", "--approx", "coalesce,divergence", "--shard-window", "64",
                "--shard-memory", "host", "--json", str(out))
    assert result.returncode == 0, result.stderr
    for text in ("sssp: ws is", "x gs", "x cw", "sssp (ws): --frontier jit is", "sssp (ws): --approx coalesce is",
                 "of the vertices differ, mean relative error", "ws+jit~divergence"):
        assert text in result.stdout, text
    doc = json.loads(out.read_text())
    # per program: ws, vwc8 (each all and jit), gs, cw; on the graph and on 2 approximations
    assert len(doc["runs"]) == 2 * 6 * 3
    assert set(doc["graph"]["representations"]) == {"ws", "vwc8", "gs", "cw"}
    assert doc["partitions"][0]["gs"] == {"window": 64, "shards": 8, "bytes": doc["partitions"][0]["gs"]["bytes"],
                                          "memory": "host"}
    assert set(doc["approximations"]) == {"coalesce", "divergence"}
    sizes = {}
    for run in doc["runs"]:
        assert run["converged"] and len(run["filters"]) == len(run["active_groups"]) == run["iterations"]
        rep = run["representation"]
        assert rep["name"] == {"ws": "csr", "vwc8": "csr", "gs": "gs", "cw": "cw"}[run["method"]]
        assert rep["device_bytes"] == 0 and rep["host_bytes"] > 0            # the CPU backend: host memory
        if run["approx"] is None:
            sizes[run["algo"], rep["name"]] = rep["host_bytes"]
            assert run["filters"] == ["all"] * run["iterations"] or run["frontier"] == "jit"
        else:
            figures = run["approx"]["inaccuracy"]
            assert 0 <= figures["differ_fraction"] <= 1 and figures["mean_relative_error"] >= 0
            assert run["approx"]["kind"] in ("coalesce", "divergence")
        if run["frontier"] == "jit":
            assert run["filters"][0] == "all" and "ballot" in run["filters"]
    for algo in ("sssp", "pr"):
        assert sizes[algo, "csr"] < sizes[algo, "gs"] < sizes[algo, "cw"]   # the paper's ordering of sizes
    kinds = {c["compare"] for c in doc["comparisons"]}
    assert kinds >= {"ws_over_gs", "ws_over_cw", "ws_over_best_vwc", "jit_over_all", "coalesce_over_exact",
                     "divergence_over_exact"}


def test_table_script_writes_both_tables(tmp_path):
    """scripts/bench_ws_table.py end to end on the CPU backend, small graphs: every step runs, the
    markdown holds the method table per graph and the approximation table, the JSON every row."""
    script = os.path.join(os.path.dirname(__file__), "..", "scripts", "bench_ws_table.py")
    result = subprocess.run([sys.executable, script, "--out", str(tmp_path), "--scales", "7,8", "--lattice", "24",
                             "--backend", "cpu"], capture_output=True, text=True, timeout=600,
                            env=launcher_free_env())
    assert result.returncode == 0, result.stdout + result.stderr
    doc = json.loads((tmp_path / "ws_table.json").read_text())
    assert set(doc["tables"]) == {"Kronecker scale 7", "24x24 lattice", "Kronecker scale 8"}
    assert set(doc["approx"]) == {"Kronecker scale 7", "24x24 lattice"}
    for rows in doc["tables"].values():
        assert {(r["method"][:3], r["frontier"]) for r in rows} == {("ws", "all"), ("ws", "jit"), ("vwc", "all"),
                                                                    ("vwc", "jit"), ("gs", "all"), ("cw", "all")}
        assert {r["algo"] for r in rows} == {"bfs", "sssp", "cc", "pr"}
        assert all(r["vs_ws"] > 0 and r["host_bytes"] > 0 for r in rows)
    for rows in doc["approx"].values():
        assert {(r["algo"], r["kind"]) for r in rows} == {(a, k) for a in ("sssp", "pr")
                                                           for k in ("coalesce", "latency", "divergence")}
    text = (tmp_path / "ws_table.md").read_text()
    assert "## 24x24 lattice" in text and "## Approximate layouts" in text and "1.35x, 21%" in text
    assert not (tmp_path / "runs" / "lattice.h5").exists()
    assert all(step["outcome"] == "ok" for step in doc["steps"])


def test_a_users_program_runs_on_every_method_and_filter(tmp_path):
    (tmp_path / "reliability.py").write_text(RELIABILITY)
    result = ws("--scale", "8", "--load", "reliability.py", "--algo", "reliability", "--gpus", "2",
                "--method", "ws,vwc4,gs,cw", "--frontier", "all,online,ballot,jit", "--bin-threshold", "1",
                "--json", "out.json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr        # every run agreed with the first
    runs = json.loads((tmp_path / "out.json").read_text())["runs"]
    assert sorted((r["method"], r["frontier"]) for r in runs) == sorted(
        [(m, f) for m in ("ws", "vwc4") for f in ("all", "online", "ballot", "jit")] + [("gs", "all"), ("cw", "all")])
    assert len({r["reached"] for r in runs}) == 1 and len({r["iterations"] for r in runs}) == 1
