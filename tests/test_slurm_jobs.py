"""The sbatch templates under a real Slurm: run.sbatch, weak_scaling.sbatch and strong_scaling.sbatch
submitted with `sbatch --wait` at 2 tasks on the CPU backend, at tiny scales. Each job completes, each
run's JSON validates at the ranks asked for (so srun started MPI through the right launch plugin),
scripts/collect_results.py and scripts/plot_scaling.py read the outputs; a bad variable fails the job
with the template's one line and writes nothing; `scancel` of a running sweep ends the run in progress
with dbfs's line, keeps the finished runs, and DBFS_RESUME=1 resubmission skips them.

Needs a Slurm controller on this machine (`scripts/slurm_local.sh start`, which CI runs before the test
passes); skipped, with the reason, where none answers. The job ids and states are printed, so that a
quiet pytest run still shows which jobs ran."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mpi4py import MPI

REPO = Path(__file__).resolve().parents[1]


def _slurm_missing() -> str | None:
    """Why the real-scheduler tests cannot run here, or None."""
    if shutil.which("sbatch") is None:
        return "no sbatch on PATH: scripts/slurm_local.sh start installs and starts a one-node Slurm (as root)"
    ping = subprocess.run(["scontrol", "ping"], capture_output=True, text=True)
    if "UP" not in ping.stdout:
        said = next((line for line in (ping.stdout + ping.stderr).splitlines() if line.strip("* ")), "no answer")
        return f"no Slurm controller answers (scontrol ping: {said}): scripts/slurm_local.sh start starts one"
    return None


MISSING = _slurm_missing() if MPI.COMM_WORLD.Get_size() == 1 else None
pytestmark = [
    pytest.mark.one_rank,
    pytest.mark.skipif(MISSING is not None, reason=MISSING or ""),
]
# Two tasks on one node without GPUs, as a CPU-only partition gives them.
ALLOCATION = ("--nodes=1", "--ntasks-per-node=2", "--gpus-per-node=0", "--time=00:10:00")


class Job:
    """A submitted job: its id, and once ended its state, exit code and output file's text."""

    def __init__(self, template: str, tmp_path: Path, env: dict[str, str], wait: bool, capsys):
        self.template, self.capsys = template, capsys
        full = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "DBFS_"))}
        full.update({"DBFS_PYTHON": sys.executable, **env})
        self.output = tmp_path / f"{Path(template).stem}-%j.out"
        # Submitted from the checkout, as the README says, so that the job finds slurm/lib.sh.
        submitted = subprocess.run(["sbatch", "--parsable", *(["--wait"] if wait else []), *ALLOCATION,
                                    f"--output={self.output}", f"slurm/{template}"],
                                   cwd=REPO, env=full, capture_output=True, text=True, timeout=600)
        self.id = submitted.stdout.strip().split(";")[0]
        assert self.id.isdigit(), submitted.stderr
        self.output = Path(str(self.output).replace("%j", self.id))
        self.sbatch_status = submitted.returncode if wait else None
        self.state = self.exit_code = None
        if wait:
            self.ended()

    def ended(self, timeout_s: float = 120) -> "Job":
        """Wait until the job has ended; read its state and exit code, print them."""
        deadline = time.monotonic() + timeout_s
        while True:
            fields = dict(item.split("=", 1) for item in subprocess.run(
                ["scontrol", "show", "job", "-o", self.id], capture_output=True, text=True,
                check=True).stdout.split() if "=" in item)
            if fields["JobState"] not in ("PENDING", "RUNNING", "COMPLETING", "CONFIGURING", "SUSPENDED"):
                break
            assert time.monotonic() < deadline, f"job {self.id} still {fields['JobState']} after {timeout_s} s"
            time.sleep(0.5)
        self.state, self.exit_code = fields["JobState"], fields["ExitCode"]
        with self.capsys.disabled():
            print(f"\nslurm job {self.id} ({self.template}): {self.state}, exit code {self.exit_code}")
        return self

    def text(self) -> str:
        return self.output.read_text()


def check_runs(out: Path, expected: dict[str, int]) -> None:
    """out holds a validated JSON document for each run name, at the ranks given."""
    assert sorted(p.stem for p in out.glob("*.json")) == sorted(expected)
    for name, ranks in expected.items():
        doc = json.loads((out / f"{name}.json").read_text())
        assert doc["num_mpi_processes"] == ranks and doc["grid"][0] * doc["grid"][1] == ranks, name
        assert doc["backend"] == "cpu" and doc["validate"] == "all" and doc["certificate"]["passed"], name
        assert len(doc["searches"]) == doc["NBFS"] and all(s["validated"] for s in doc["searches"]), name


def test_run_completes_on_a_cpu_only_allocation(tmp_path, capsys):
    out = tmp_path / "run"
    job = Job("run.sbatch", tmp_path, dict(DBFS_BACKEND="cpu", DBFS_SCALE="10", DBFS_ROOTS="4",
                                           DBFS_OUT=str(out)), wait=True, capsys=capsys)
    assert (job.sbatch_status, job.state, job.exit_code) == (0, "COMPLETED", "0:0"), job.text()
    check_runs(out, {"run_s10_r2_default_auto_adaptive_auto": 2})      # no DBFS_GRID: dbfs chooses
    assert "# launch plugin: " in job.text() and "ran 1 of 1 runs, 0 failed" in job.text()


def test_sweeps_complete_and_the_scripts_read_them(tmp_path, capsys):
    # Folders that name no study: collect_results.py tells the studies apart by the runs' file names.
    weak, strong = tmp_path / "w", tmp_path / "s"
    # No DBFS_BACKEND: an allocation without GPUs runs the CPU backend by itself.
    job = Job("weak_scaling.sbatch", tmp_path, dict(DBFS_BASE_SCALE="8", DBFS_ROOTS="4", DBFS_OUT=str(weak)),
              wait=True, capsys=capsys)
    assert (job.sbatch_status, job.state, job.exit_code) == (0, "COMPLETED", "0:0"), job.text()
    check_runs(weak, {f"weak_s{8 + d}_r{p}_{p}x1_mpi_{e}_auto": p for d, p in enumerate((1, 2))
                      for e in ("adaptive", "list")})
    job = Job("strong_scaling.sbatch", tmp_path, dict(DBFS_BACKEND="cpu", DBFS_SCALE="9", DBFS_ROOTS="4",
                                                      DBFS_ENCODINGS="adaptive", DBFS_OUT=str(strong)),
              wait=True, capsys=capsys)
    assert (job.sbatch_status, job.state, job.exit_code) == (0, "COMPLETED", "0:0"), job.text()
    check_runs(strong, {f"strong_s9_r{p}_{p}x1_mpi_adaptive_auto": p for p in (1, 2)})
    table = tmp_path / "runs.csv"
    subprocess.run([sys.executable, str(REPO / "scripts/collect_results.py"), str(weak), str(strong),
                    "--csv", str(table)], check=True, capture_output=True, timeout=120)
    with table.open() as f:
        rows = list(csv.DictReader(f))
    assert sorted((r["study"], r["gpus"], r["scale"]) for r in rows) == [
        ("strong", "1", "9"), ("strong", "2", "9"), ("weak", "1", "8"), ("weak", "1", "8"),
        ("weak", "2", "9"), ("weak", "2", "9")]
    figures = tmp_path / "figures"
    subprocess.run([sys.executable, str(REPO / "scripts/plot_scaling.py"), str(weak), str(strong),
                    "--out", str(figures)], check=True, capture_output=True, timeout=300)
    assert {"weak_scaling.png", "strong_scaling.png"} <= {p.name for p in figures.iterdir()}


def test_bad_variable_fails_the_job_with_one_line_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "run"
    job = Job("run.sbatch", tmp_path, dict(DBFS_BACKEND="cpu", DBFS_SCALE="10", DBFS_ROOTS="0",
                                           DBFS_OUT=str(out)), wait=True, capsys=capsys)
    assert (job.sbatch_status, job.state, job.exit_code) == (2, "FAILED", "2:0")
    assert job.text() == "dbfs-slurm: error: DBFS_ROOTS must be an integer >= 1, got '0'\n"
    assert not out.exists()


def test_scancel_stops_a_sweep_and_resubmission_resumes_it(tmp_path, capsys):
    out = tmp_path / "weak"
    # Three runs of a few seconds each on one rank: scancel arrives during the second.
    env = dict(DBFS_BASE_SCALE="15", DBFS_ROOTS="64", DBFS_GPU_COUNTS="1", DBFS_ENCODINGS="adaptive list bitmap",
               DBFS_OUT=str(out))
    names = [f"weak_s15_r1_1x1_mpi_{e}_auto" for e in ("adaptive", "list", "bitmap")]
    job = Job("weak_scaling.sbatch", tmp_path, env, wait=False, capsys=capsys)
    second_log = out / f"{names[1]}.log"
    deadline = time.monotonic() + 120
    # dbfs's first progress line means it has installed its signal handlers.
    while not (second_log.exists() and "[dbfs]" in second_log.read_text()):
        assert time.monotonic() < deadline, f"the second run of job {job.id} never started"
        time.sleep(0.1)
    subprocess.run(["scancel", job.id], check=True)
    job.ended()
    assert job.state == "CANCELLED", job.text()
    assert second_log.read_text().count("dbfs: interrupted by SIGTERM") == 1
    assert f"FAILED: {names[1]} (exit 143)" in job.text()
    assert f"weak: SIGTERM during {names[1]}: stopped after 2 of 3 runs" in job.text()
    assert sorted(p.stem for p in out.glob("*.json")) == [names[0]]
    assert not (out / f"{names[2]}.log").exists()
    finished = (out / f"{names[0]}.json").read_bytes()

    job = Job("weak_scaling.sbatch", tmp_path, {**env, "DBFS_RESUME": "1"}, wait=True, capsys=capsys)
    assert (job.sbatch_status, job.state, job.exit_code) == (0, "COMPLETED", "0:0"), job.text()
    assert f"{names[0]}: {out}/{names[0]}.json exists, skipped (DBFS_RESUME=1)" in job.text()
    assert "ran 2 of 3 runs, 0 failed" in job.text()
    assert (out / f"{names[0]}.json").read_bytes() == finished
    check_runs(out, dict.fromkeys(names, 1))
