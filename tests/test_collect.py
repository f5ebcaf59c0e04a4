"""scripts/collect_results.py and scripts/plot_scaling.py on --json documents of real dbfs runs: scale 8
on 1 rank, and scale 9 and scale 8 on 2 ranks (a weak and a strong scaling pair), NumPy backend."""

from __future__ import annotations

import csv
import gzip
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from test_harness import launch, mpiexec

pytestmark = pytest.mark.one_rank

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
RESULTS = Path(__file__).resolve().parents[1] / "bench" / "results"
# file -> (ranks, scale, grid); the 1x2 run folds (a 2x1 grid, the default, has no fold)
RUNS = {"s8_1rank.json": (1, 8, "1x1"), "s9_2ranks.json": (2, 9, "2x1"), "s8_2ranks.json": (2, 8, "1x2")}
PHASES = ("expand_comm", "expansion", "fold_comm", "update", "pred_resolve")


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("results")
    for name, (ranks, scale, grid) in RUNS.items():
        argv = [sys.executable, "-m", "dbfs", "--scale", str(scale), "--grid", grid, "--backend", "cpu",
                "--roots", "2", "--json", str(folder / name)]
        job = launch([mpiexec(), "-n", str(ranks), *argv] if ranks > 1 else argv, folder)
        assert job.returncode == 0, job
    (folder / "other.json").write_text('{"machine": "not a run"}')
    return folder


def import_script(name: str):
    """Import scripts/NAME.py as a module (the scripts import each other by plain name)."""
    sys.path.insert(0, str(SCRIPTS))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(SCRIPTS))


def script(name: str, *args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPTS / name), *map(str, args)], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def test_collect_table_and_csv_match_the_documents(results, tmp_path):
    result = script("collect_results.py", results, "--csv", tmp_path / "runs.csv")
    assert result.returncode == 0, result.stderr
    assert "skipped" in result.stderr and "other.json: not a dbfs main-mode" in result.stderr
    table = result.stdout.splitlines()
    assert table[0].startswith("| GPUs | grid | scale |") and len(table) == 2 + len(RUNS)
    with open(tmp_path / "runs.csv") as f:
        rows = {Path(r["file"]).name: r for r in csv.DictReader(f)}
    assert set(rows) == set(RUNS)
    for name, (ranks, scale, grid) in RUNS.items():
        doc, row = json.loads((results / name).read_text()), rows[name]
        searches = doc["searches"]
        assert len(searches) == 2
        assert (int(row["gpus"]), int(row["scale"]), row["grid"]) == (ranks, scale, grid)
        assert (row["device"], row["comm"], row["encoding"], row["direction"]) == (
            "cpu", doc.get("comm", "mpi"), doc.get("encoding", "list"), doc.get("direction", "topdown"))
        assert float(row["harmonic_mean_TEPS"]) == pytest.approx(doc["bfs_harmonic_mean_TEPS"])
        for phase in PHASES:
            expected = 1e3 * sum(s["phases"][phase] for s in searches) / 2
            assert float(row[f"phase_{phase}_ms"]) == pytest.approx(expected)
        for kind in ("expand", "fold"):
            assert float(row[f"bytes_{kind}"]) == pytest.approx(sum(s["bytes"][kind] for s in searches) / 2)
        cells = next(line for line in table[2:] if f"| {ranks} | {grid} | {scale} |" in line).split("|")
        assert float(cells[9]) == pytest.approx(doc["bfs_harmonic_mean_TEPS"] / 1e9, rel=1e-3)
    assert float(rows["s8_2ranks.json"]["bytes_fold"]) > 0


def test_collect_reads_transport_encoding_and_unencoded_bytes(results, tmp_path):
    """Keys that documents of the encoding-aware dbfs carry: comm, encoding, direction, bytes_raw."""
    collect_results = import_script("collect_results")
    doc = json.loads((results / "s8_2ranks.json").read_text())
    doc.update(comm="nccl", encoding="adaptive", direction="auto")
    for s in doc["searches"]:
        s["bytes_raw"] = {k: 3 * v for k, v in s["bytes"].items()}
    (tmp_path / "new.json").write_text(json.dumps(doc))
    [row] = collect_results.collect([tmp_path / "new.json"])
    assert (row["comm"], row["encoding"], row["direction"]) == ("nccl", "adaptive", "auto")
    assert row["raw_over_sent"] == pytest.approx(3.0)
    assert row["bytes_raw_fold"] == pytest.approx(3 * row["bytes_fold"])


def test_collect_reads_gzipped_documents(results, tmp_path):
    collect_results = import_script("collect_results")
    (tmp_path / "run.json.gz").write_bytes(gzip.compress((results / "s9_2ranks.json").read_bytes()))
    [row] = collect_results.collect([tmp_path])
    assert row == {**collect_results.collect([results / "s9_2ranks.json"])[0], "file": str(tmp_path / "run.json.gz")}


def committed_sample() -> list[Path]:
    """The smallest committed document of each compression (plain, gzipped, xz) in each results
    folder: a folder's documents come from one writer, and reading all of them (17-36 MB of JSON
    each for the lattice runs) took CI ten seconds."""
    sample = []
    for folder in sorted(p for p in RESULTS.iterdir() if p.is_dir()):
        for pattern in ("*.json", "*.json.gz", "*.json.xz"):
            found = list(folder.rglob(pattern))
            if found:
                sample.append(min(found, key=lambda p: (p.stat().st_size, p)))
    return sample


def test_collect_reads_the_committed_results():
    """A sample of the committed documents from every folder is read, and each one that is not skipped
    as another kind of document becomes a row of the table (its header is two lines)."""
    found = committed_sample()
    result = script("collect_results.py", *found)
    assert result.returncode == 0, result.stderr
    skipped = [line for line in result.stderr.splitlines() if line.startswith("collect_results: skipped")]
    assert all(line.endswith("not a dbfs main-mode --json document") for line in skipped), skipped
    assert any(p.suffix == ".xz" for p in found) and len(skipped) < len(found)
    assert len(result.stdout.splitlines()) == 2 + len(found) - len(skipped)


def test_collect_without_documents_is_an_error(tmp_path):
    result = script("collect_results.py", tmp_path)
    assert result.returncode == 2 and "no dbfs --json documents found" in result.stderr


@pytest.fixture(scope="module")
def plot_scaling():
    pytest.importorskip("matplotlib")
    return import_script("plot_scaling")


def test_plots_are_drawn_from_the_runs(results, tmp_path):
    pytest.importorskip("matplotlib")
    result = script("plot_scaling.py", results, "--out", tmp_path)
    assert result.returncode == 0, result.stderr
    names = ("weak_scaling.png", "strong_scaling.png", "phases.png", "compute_transfer.png", "bytes.png")
    assert result.stdout.split() == [str(tmp_path / n) for n in names]
    for name in names:
        data = (tmp_path / name).read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000
    assert not list(tmp_path.glob("*.tmp-*"))


def test_scaling_series_are_grouped_by_scale_per_gpu(plot_scaling):
    config = {"device": "H200", "comm": "nccl", "encoding": "adaptive", "direction": "auto", "edgefactor": 16}
    runs = [dict(config, gpus=p, scale=s, date="") for p, s in ((1, 26), (2, 27), (4, 28), (2, 26), (4, 26), (3, 26))]
    weak = plot_scaling.series(runs, weak=True)
    strong = plot_scaling.series(runs, weak=False)
    key = tuple(config.values())
    assert list(weak) == [(key, 26)]
    assert [(r["gpus"], r["scale"]) for r in weak[(key, 26)]] == [(1, 26), (2, 27), (4, 28)]
    assert list(strong) == [(key, 26)]
    assert [r["gpus"] for r in strong[(key, 26)]] == [1, 2, 3, 4]


def test_plot_with_one_run_draws_no_scaling_line(plot_scaling, results, tmp_path, capsys):
    assert plot_scaling.main([str(results / "s8_1rank.json"), "--out", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "no weak scaling series" in err and "no strong scaling series" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bytes.png", "compute_transfer.png", "phases.png"]


def test_one_gpu_run_starts_every_transport_and_encoding_series(plot_scaling):
    base = {"device": "H200", "direction": "auto", "edgefactor": 16, "date": ""}
    runs = [dict(base, comm="mpi", encoding="adaptive", gpus=1, scale=26)]
    runs += [dict(base, comm=c, encoding=e, gpus=2, scale=27) for c in ("mpi", "nccl") for e in ("list", "adaptive")]
    runs.append(dict(base, direction="topdown", comm="nccl", encoding="list", gpus=2, scale=27))
    weak = plot_scaling.series(runs, weak=True)
    assert sorted((k[1], k[2]) for k, _ in weak) == [("mpi", "adaptive"), ("mpi", "list"), ("nccl", "adaptive"),
                                                     ("nccl", "list")]
    assert all([(r["gpus"], r["comm"]) for r in v][0] == (1, "mpi") for v in weak.values())


def test_rows_carry_their_study(results, tmp_path):
    collect_results = import_script("collect_results")
    doc = (results / "s8_2ranks.json").read_text()
    (tmp_path / "weak-77").mkdir()
    for name in ("weak_s8_g2_1x2_mpi_adaptive_auto.json", "strong_s8_g2_1x2_mpi_adaptive_auto.json"):
        (tmp_path / name).write_text(doc)
    (tmp_path / "weak-77" / "other.json").write_text(doc)
    (tmp_path / "loose.json").write_text(doc)
    rows = collect_results.collect([tmp_path])
    assert sorted(r["study"] for r in rows) == ["", "strong", "weak", "weak"]
    table = collect_results.markdown(rows)
    assert "| study |" in table.splitlines()[0] and "| strong |" in table


def test_weak_and_strong_studies_stay_apart(plot_scaling):
    config = {"device": "H200", "comm": "nccl", "encoding": "adaptive", "direction": "auto", "edgefactor": 16,
              "date": ""}
    weak_runs = [dict(config, study="weak", gpus=p, scale=26 + d) for d, p in enumerate((1, 2, 4))]
    strong_runs = [dict(config, study="strong", gpus=p, scale=26) for p in (1, 2, 4)]
    runs = plot_scaling.latest_runs(weak_runs + strong_runs)
    assert len(runs) == 6                   # both one-GPU scale 26 runs stay
    key = tuple(v for k, v in config.items() if k != "date")
    weak, strong = plot_scaling.series(runs, weak=True), plot_scaling.series(runs, weak=False)
    assert list(weak) == [(key, 26)] and {r["study"] for r in weak[(key, 26)]} == {"weak"}
    assert list(strong) == [(key, 26)] and {r["study"] for r in strong[(key, 26)]} == {"strong"}
    assert [r["gpus"] for r in strong[(key, 26)]] == [1, 2, 4]


def test_plot_makes_its_output_folder(plot_scaling, results, tmp_path, capsys):
    out = tmp_path / "figures" / "new"
    assert plot_scaling.main([str(results / "s8_1rank.json"), "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["bytes.png", "compute_transfer.png", "phases.png"]
    (tmp_path / "file").write_text("")
    assert plot_scaling.main([str(results / "s8_1rank.json"), "--out", str(tmp_path / "file")]) == 2
    assert "cannot make the folder --out" in capsys.readouterr().err
