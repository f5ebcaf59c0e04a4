"""Test harness of dbfs: one pytest session per MPI rank, behaving as a single run.

The suite runs as `mpiexec -n P python -m pytest --with-mpi` (pytest-mpi) and as plain `pytest`.
Under MPI with several ranks this conftest makes the P sessions agree:

- each phase (setup, call, teardown) of each test gets one outcome on every rank: the reports are
  allgathered and the worst wins (failed > xfailed > skipped > xpassed > passed), so a failure on rank 1
  fails the test everywhere and a setup failure or skip on one rank keeps every rank out of the call
  phase (pytest runs the call only after a passed setup report), which keeps the ranks' collectives
  matched. A skip during the call phase on some ranks only is a failure: the others ran the body;
- collection errors and the collected test ids are compared, so no rank starts tests the others lack;
- the exit status is the maximum over the ranks;
- only rank 0 prints: the other ranks' terminal reporter writes to os.devnull, and rank 0's report
  of a failure carries the failing ranks' tracebacks, headed "rank r:" (ranks failing at the same
  line with the same message share one traceback, headed "ranks r, s:").

On every rank count, a watchdog (DBFS_TEST_TIMEOUT seconds per test, default 300, 0 disables) dumps
all threads' tracebacks and aborts the whole MPI job, so a rank stuck in a collective that a failed
rank never reached ends the job instead of hanging it. `@pytest.mark.one_rank` tests (nothing in them
depends on the ranks, or they start their own processes) run in the one-rank pass only; the multi-rank
passes skip them. `@pytest.mark.mpi` accepts only `min_size=N`
(pytest-mpi ignores other keywords silently, so a misspelling would run the test at too few ranks);
anything else is a collection error. `@pytest.mark.gpu` tests skip when no CUDA GPU is visible.
"""

from __future__ import annotations

import faulthandler
import os
import sys
import threading
import time

import pytest
from mpi4py import MPI

from dbfs.backend import gpu_count

WORLD = MPI.COMM_WORLD
DEFAULT_TIMEOUT_S = 300.0
# Seconds between the Python watchdog and faulthandler's C-level backstop, which also fires when the
# stuck thread holds the GIL.
BACKSTOP_GRACE_S = 30.0
# Seconds the watchdog waits between writing its report and aborting: MPI_Abort kills every rank at
# once, and the launcher drops what it had not yet forwarded from the ranks' stderr pipes.
ABORT_GRACE_S = 1.0
SEVERITY = ("failed", "xfailed", "skipped", "xpassed", "passed")


# trylast: rank agreement replaces the terminal reporter, which pytest's terminal plugin creates in
# its own pytest_configure.
@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    if not any(line.split(":")[0].strip() == "gpu" for line in config.getini("markers")):
        config.addinivalue_line("markers", "gpu: needs a CUDA GPU and CuPy; skipped without one")
    if not any(line.split(":")[0].strip() == "one_rank" for line in config.getini("markers")):
        config.addinivalue_line("markers", "one_rank: runs in the one-rank pass only")
    config.pluginmanager.register(Watchdog(_timeout_from_env()), "dbfs-watchdog")
    if WORLD.Get_size() > 1:
        config.pluginmanager.register(RankAgreement(WORLD), "dbfs-rank-agreement")
        if WORLD.Get_rank() != 0:
            _silence_terminal(config)


def _silence_terminal(config) -> None:
    """Point this rank's terminal reporter at os.devnull: rank 0 prints the agreed run for everyone."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        config.pluginmanager.unregister(reporter)
        config.pluginmanager.register(pytest.TerminalReporter(config, open(os.devnull, "w")),
                                      "terminalreporter")


def _timeout_from_env() -> float:
    text = os.environ.get("DBFS_TEST_TIMEOUT", "")
    if not text:
        return DEFAULT_TIMEOUT_S
    try:
        return float(text)
    except ValueError:
        raise pytest.UsageError(f"DBFS_TEST_TIMEOUT={text!r} is not a number of seconds") from None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    valid = []
    for item in items:
        problem = _mpi_marker_problem(item)
        if problem:
            config.hook.pytest_collectreport(
                report=pytest.CollectReport(item.nodeid, "failed", problem, []))
        else:
            valid.append(item)
    items[:] = valid
    if WORLD.Get_size() > 1:
        once = pytest.mark.skip(reason="the same in every process, or starts its own: runs in the one-rank pass")
        for item in items:
            if "one_rank" in item.keywords:
                item.add_marker(once)
    if gpu_count() == 0:
        skip = pytest.mark.skip(reason="no CUDA GPU visible (CuPy missing or no device)")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)


def _mpi_marker_problem(item) -> str | None:
    for mark in item.iter_markers(name="mpi"):
        unknown = sorted(set(mark.kwargs) - {"min_size"})
        if mark.args or unknown:
            given = ", ".join([repr(a) for a in mark.args] + [f"{k}={v!r}" for k, v in mark.kwargs.items()])
            return (f"@pytest.mark.mpi({given}) is not allowed: the only argument is "
                    f"min_size=N (pytest-mpi would silently ignore "
                    f"{', '.join(unknown) if unknown else 'positional arguments'})")
    return None


class Watchdog:
    """Per-test timer that ends the whole job when a test outlives its time limit."""

    def __init__(self, limit_s: float):
        self.limit_s = limit_s
        # The original stderr: during a test sys.stderr is pytest's capture buffer.
        self.stream = os.fdopen(os.dup(sys.__stderr__.fileno()), "w")

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item, nextitem):
        if self.limit_s <= 0:
            yield
            return
        timer = threading.Timer(self.limit_s, self._expire, args=(item.nodeid,))
        timer.daemon = True
        timer.start()
        faulthandler.dump_traceback_later(self.limit_s + BACKSTOP_GRACE_S, exit=True, file=self.stream)
        try:
            yield
        finally:
            faulthandler.cancel_dump_traceback_later()
            timer.cancel()

    def _expire(self, nodeid: str) -> None:
        self.stream.write(
            f"\ndbfs test watchdog: rank {WORLD.Get_rank()} of {WORLD.Get_size()} is still in {nodeid} "
            f"after {self.limit_s:g} s (DBFS_TEST_TIMEOUT); tracebacks follow, then the job aborts\n")
        self.stream.flush()
        faulthandler.dump_traceback(file=self.stream, all_threads=True)
        self.stream.flush()
        if WORLD.Get_size() > 1:
            time.sleep(ABORT_GRACE_S)
            WORLD.Abort(1)
        os._exit(1)


class RankCrash:
    """Where and why the first failing rank failed: pytest's one-line summary reads `.message`."""

    def __init__(self, path: str, lineno: int, message: str):
        self.path, self.lineno, self.message = path, lineno, message

    def __str__(self) -> str:
        return f"{self.path}:{self.lineno}: {self.message}"


class RankFailures:
    """Long report of a test that failed on some ranks: each distinct traceback once, headed by its ranks."""

    def __init__(self, groups: list[tuple[list[int], str, list[tuple[str, str]]]], crash: RankCrash):
        self.groups = groups
        self.reprcrash = crash

    def toterminal(self, tw) -> None:
        for ranks, text, sections in self.groups:
            tw.sep("-", f"{_ranks_label(ranks)}:")
            for line in text.splitlines():
                tw.line(line)
            for name, content in sections:
                tw.sep("-", name)
                tw.line(content.rstrip("\n"))

    def __str__(self) -> str:
        return "\n\n".join(f"{_ranks_label(ranks)}:\n{text}" for ranks, text, _ in self.groups)


def _ranks_label(ranks: list[int]) -> str:
    return f"rank {ranks[0]}" if len(ranks) == 1 else "ranks " + ", ".join(map(str, ranks))


class RankAgreement:
    """Hooks that turn P per-rank pytest sessions into one consistent run (see the module docstring)."""

    def __init__(self, comm):
        self.comm = comm
        self.rank = comm.Get_rank()
        self.collection_errors: dict[str, str] = {}

    def pytest_collectreport(self, report):
        if report.failed:
            self.collection_errors[report.nodeid] = report.longreprtext

    def pytest_collection_finish(self, session):
        nodeids = [item.nodeid for item in session.items]
        everyone = self.comm.allgather((dict(self.collection_errors), nodeids))
        for rank, (errors, _) in enumerate(everyone):
            for nodeid, text in errors.items():
                if nodeid not in self.collection_errors:
                    self._collection_error(session, nodeid, f"rank {rank}: {text}")
        if any(errors for errors, _ in everyone):
            return
        collected = [set(ids) for _, ids in everyone]
        odd = next((nodeid for _, ids in everyone for nodeid in ids
                    if not all(nodeid in c for c in collected)), None)
        if odd is not None:
            having = [r for r, c in enumerate(collected) if odd in c]
            lacking = [r for r, c in enumerate(collected) if odd not in c]
            self._collection_error(session, odd, f"collected on {_ranks_label(having)} but not on "
                                   f"{_ranks_label(lacking)}: collection and parametrization must not "
                                   "depend on the rank")

    @staticmethod
    def _collection_error(session, nodeid: str, text: str) -> None:
        session.config.hook.pytest_collectreport(
            report=pytest.CollectReport(nodeid, "failed", text, []))

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        views = self.comm.allgather(_view(report))
        _apply(report, views, self.rank)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session, exitstatus):
        worst = self.comm.allreduce(int(session.exitstatus), op=MPI.MAX)
        if worst != int(session.exitstatus):
            session.exitstatus = pytest.ExitCode(worst)


def _view(report) -> dict:
    """What the other ranks need to know about this rank's report (plain data, sent over MPI)."""
    wasxfail = getattr(report, "wasxfail", None)
    if report.failed:
        kind = "failed"
    elif report.skipped:
        kind = "xfailed" if wasxfail is not None else "skipped"
    else:
        kind = "xpassed" if wasxfail is not None else "passed"
    view = {"kind": kind, "wasxfail": wasxfail}
    if kind == "failed":
        crash = getattr(report.longrepr, "reprcrash", None)
        text = report.longreprtext
        path, lineno, message = ((crash.path, crash.lineno, crash.message) if crash is not None
                                 else (report.location[0], report.location[1], text))
        first_line = next((line.strip() for line in message.splitlines() if line.strip()), "")
        view.update(text=text, sections=list(report.sections), crash=(path, lineno, first_line))
    elif kind == "skipped":
        view["skip"] = (report.longrepr if isinstance(report.longrepr, tuple)
                        else (report.location[0], report.location[1], str(report.longrepr)))
    elif kind == "xfailed":
        view["text"] = report.longreprtext
    return view


def _apply(report, views: list[dict], rank: int) -> None:
    """Give `report` the outcome agreed from every rank's view (the same result on all ranks)."""
    kinds = [v["kind"] for v in views]
    ran = [r for r, k in enumerate(kinds) if k in ("passed", "xpassed")]
    skipped = [r for r, k in enumerate(kinds) if k == "skipped"]
    if report.when == "call" and ran and skipped:
        for r in skipped:
            reason = views[r]["skip"][2]
            message = (f"skipped during the call ({reason}) while {_ranks_label(ran)} ran the test: "
                       "a skip inside a test must be taken by every rank")
            views[r] = {"kind": "failed", "text": message, "sections": [],
                        "crash": (report.location[0], report.location[1], message)}
        kinds = [v["kind"] for v in views]
    agreed = min(kinds, key=SEVERITY.index)
    if agreed == "failed":
        _fail(report, views)
    elif kinds[rank] == agreed:
        return
    elif agreed == "xfailed":
        first = kinds.index("xfailed")
        report.outcome = "skipped"
        report.wasxfail = views[first]["wasxfail"]
        report.longrepr = f"rank {first}: {views[first]['text']}"
    elif agreed == "skipped":
        first = kinds.index("skipped")
        path, lineno, reason = views[first]["skip"]
        report.outcome = "skipped"
        report.longrepr = (path, lineno, f"rank {first}: {reason}")
        if hasattr(report, "wasxfail"):
            del report.wasxfail


def _fail(report, views: list[dict]) -> None:
    # Ranks failing at the same place with the same first line of message share one traceback (the
    # lowest rank's).
    groups: dict[tuple, tuple[list[int], str, list[tuple[str, str]]]] = {}
    for r, view in enumerate(views):
        if view["kind"] != "failed":
            continue
        ranks, _, sections = groups.setdefault(tuple(view["crash"]), ([], view["text"], []))
        ranks.append(r)
        # Rank 0's own captured output is printed by pytest after the long report.
        if r != 0:
            sections.extend((f"{name} (rank {r})", content) for name, content in view["sections"])
    ordered = list(groups.values())
    first_ranks = ordered[0][0]
    path, lineno, message = views[first_ranks[0]]["crash"]
    others = [r for ranks, _, _ in ordered[1:] for r in ranks]
    summary = f"{_ranks_label(first_ranks)}: {message}"
    if others:
        summary += f" (other failures on {_ranks_label(others)})"
    report.outcome = "failed"
    report.longrepr = RankFailures(ordered, RankCrash(path, lineno, summary))
    if hasattr(report, "wasxfail"):
        del report.wasxfail
