"""Tests of the multi-rank test harness (tests/conftest.py) and of dbfs's fail-fast runtime.

Each test launches a small MPI job (mpiexec next to sys.executable, else on PATH) over a case file in
tests/harness_cases/ and checks what a user would see: the exit status of the job and of each rank,
the one summary printed by rank 0, and that nothing hangs (every job runs under a timeout; its
process group is killed when the timeout passes). These tests start their own jobs, so they run in
the single-rank pass of the suite and skip, on every rank alike, when the suite itself runs on several.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from launcher import launcher_free_env

pytestmark = pytest.mark.one_rank

CASES = Path(__file__).resolve().parent / "harness_cases"
DIVERGING_CASE = CASES / "case_rank_one_diverges.py"
RANK_DEPENDENT_CASES = (DIVERGING_CASE, CASES / "case_rank_one_cannot_import.py",
                        CASES / "case_rank_one_collects_differently.py")
JOB_TIMEOUT_S = 120
# A harness that hangs must be cut by its own watchdog well before the job timeout.
CASE_WATCHDOG_S = "60"
# Variables the launcher of an enclosing MPI job sets; a nested mpiexec must not inherit them.
# `python -m pytest` (pytest.main() on the command line's arguments) plus one stderr line per rank
# with that rank's exit status.
PYTEST_REPORTING_STATUS = (
    "import sys, pytest\n"
    "status = int(pytest.main())\n"
    "from mpi4py import MPI\n"
    "rank = MPI.COMM_WORLD.Get_rank()\n"
    "print(f'pytest exit status on rank {rank}: {status}', file=sys.stderr, flush=True)\n"
    "sys.exit(status)\n"
)
PYTEST_OPTIONS = ("--with-mpi", "-p", "no:cacheprovider", "-rfEs")


@dataclass(repr=False)
class Job:
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def statuses(self) -> dict[int, int]:
        found = re.findall(r"pytest exit status on rank (\d+): (\d+)", self.stderr)
        return {int(rank): int(status) for rank, status in found}

    def summary_has(self, outcome: str, node: str, message: str) -> bool:
        """Whether pytest's short summary has a line `OUTCOME ...node - message...`."""
        line = rf"^{outcome} \S*{re.escape(node)}\S* - {re.escape(message)}"
        return re.search(line, self.stdout, re.MULTILINE) is not None

    def __repr__(self) -> str:
        return (f"exit {self.returncode} after {self.seconds:.1f} s\n"
                f"--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}")


def mpiexec() -> str:
    beside_python = Path(sys.executable).parent / "mpiexec"
    found = str(beside_python) if beside_python.exists() else shutil.which("mpiexec")
    if found is None:
        pytest.skip("no mpiexec next to the interpreter or on PATH (pip install 'dbfs[mpi]')")
    return found


def launch(argv: list[str], cwd: Path, **env_overrides: str) -> Job:
    """Run argv in its own process group; kill the group and fail if it outlives JOB_TIMEOUT_S."""
    env = launcher_free_env()
    # Wide lines: pytest then keeps each failure's message on its short-summary line.
    env.update({"COLUMNS": "300", "DBFS_TEST_TIMEOUT": CASE_WATCHDOG_S}, **env_overrides)
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=JOB_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        pytest.fail(f"{' '.join(argv)} still running after {JOB_TIMEOUT_S} s\n{stdout}\n{stderr}")
    return Job(proc.returncode, stdout, stderr, time.perf_counter() - start)


def pytest_job(ranks: int, case: Path, cwd: Path, **env: str) -> Job:
    return launch([mpiexec(), "-n", str(ranks), sys.executable, "-c", PYTEST_REPORTING_STATUS,
                   *PYTEST_OPTIONS, str(case)], cwd, **env)


@pytest.fixture(scope="module")
def two_rank_divergence(tmp_path_factory) -> Job:
    return pytest_job(2, DIVERGING_CASE, tmp_path_factory.mktemp("diverging"))


def test_failure_on_rank_one_fails_the_test_on_every_rank(two_rank_divergence):
    job = two_rank_divergence
    assert job.returncode == 1, job
    assert job.statuses() == {0: 1, 1: 1}, job
    assert job.summary_has("FAILED", "::test_assertion_fails_on_rank_one",
                           "rank 1: AssertionError: rank one computed the wrong answer"), job
    assert "2 failed, 1 passed, 1 skipped, 1 error" in job.stdout, job


def test_only_rank_zero_prints_the_report(two_rank_divergence):
    job = two_rank_divergence
    assert job.stdout.count("test session starts") == 1, job
    assert job.stdout.count("short test summary info") == 1, job
    assert job.stdout.count("2 failed, 1 passed, 1 skipped, 1 error") == 1, job


def test_setup_failure_on_rank_one_keeps_every_rank_out_of_the_test(two_rank_divergence):
    # Had rank 0 run the body, it would wait in a Barrier that rank 1 never enters.
    job = two_rank_divergence
    assert job.summary_has("ERROR", "::test_setup_failure_on_rank_one",
                           "rank 1: RuntimeError: fixture broke on rank one"), job
    assert "watchdog" not in job.stderr, job
    assert job.seconds < float(CASE_WATCHDOG_S), job


def test_skips_are_taken_by_every_rank_or_reported(two_rank_divergence):
    job = two_rank_divergence
    assert "rank 1: Skipped: rank one lacks a resource" in job.stdout, job
    assert job.summary_has("FAILED", "::test_call_skip_on_rank_one", "rank 1: skipped during the call"), job


def test_harness_invents_no_failure_without_the_failing_rank(tmp_path):
    job = launch([mpiexec(), "-n", "1", sys.executable, "-m", "pytest", *PYTEST_OPTIONS,
                  *map(str, RANK_DEPENDENT_CASES)], tmp_path)
    assert job.returncode == 0, job
    assert "7 passed" in job.stdout, job


@pytest.mark.parametrize("case, message", [
    ("case_rank_one_cannot_import.py", "rank 1: ImportError while importing test module"),
    ("case_rank_one_collects_differently.py", "collected on rank 1 but not on rank 0"),
])
def test_collection_depending_on_the_rank_stops_every_rank(case, message, tmp_path):
    job = pytest_job(2, CASES / case, tmp_path)
    assert job.returncode == pytest.ExitCode.INTERRUPTED, job
    assert job.statuses() == {0: 2, 1: 2}, job
    assert job.summary_has("ERROR", case, message), job


def test_misspelt_mpi_marker_is_a_collection_error(tmp_path):
    job = launch([sys.executable, "-m", "pytest", *PYTEST_OPTIONS,
                  str(CASES / "case_misspelt_marker.py")], tmp_path)
    assert job.returncode == pytest.ExitCode.INTERRUPTED, job
    assert job.summary_has("ERROR", "::test_needs_two_ranks",
                           "@pytest.mark.mpi(minsize=2) is not allowed"), job


def test_watchdog_ends_a_job_left_in_a_collective(tmp_path):
    job = pytest_job(2, CASES / "case_rank_one_hangs_others.py", tmp_path, DBFS_TEST_TIMEOUT="3")
    assert job.returncode != 0, job
    assert job.seconds < 30, job
    assert "dbfs test watchdog" in job.stderr, job
    assert "test_rank_one_leaves_the_others_in_a_barrier" in job.stderr, job


def test_exception_on_one_rank_aborts_the_whole_job_at_once(tmp_path):
    job = launch([mpiexec(), "-n", "4", sys.executable, str(CASES / "abort_on_rank_one.py")], tmp_path)
    assert job.returncode != 0, job
    assert job.seconds < 30, job          # a job that waits for rank 1 runs until the 120 s timeout
    assert "uncaught exception on rank 1" in job.stderr, job
    assert "RuntimeError: rank one raised on purpose" in job.stderr, job
