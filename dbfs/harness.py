"""The benchmark driver of dbfs: one loop for every benchmark, over a small contract of hooks.

Method: the Graph500 reference's driver (reference 3.0.0 src/main.c: make_graph_data_structure,
run_bfs, validate_result, get_statistics; graph500.md section 2) in the form of the GAP Benchmark
Suite's BenchmarkKernel, which takes the kernel, the verifier and the statistics as functions. A
benchmark (a subclass of `Benchmark`) supplies the hooks; `drive` runs them in this order:

  build()                     kernel 1: construct the data structure; returns figures for the report
                              (construction_time, graph_generation, ...)
  certify()                   optional step after build (default: nothing); returns more figures
  trials()                    what the searches start from (Graph500: the sampled roots)
  warm_up(first trial)        untimed (Graph500: one search and its validation from the first root);
                              before it, where a node's ranks are exactly as many as its CPUs and
                              unbound, each rank's searching thread takes a CPU of its own
                              (runtime.pin_searching_thread)
  per trial, in order:
    search(trial)             one search, timed by the benchmark itself (outcome.time, seconds):
                              only the benchmark knows where its clock starts and stops (kernel 2)
    validate(trial, outcome)  untimed: None when the result is right, else what is wrong; timed here
                              (the slowest rank's time), for the validation statistics. It runs before
                              the next search, so outcomes may be views that the next search reuses.
                              validates(index) says whether search `index` is validated (every one by
                              default; a benchmark may skip some, and its record then says so).
    record(trial, outcome)    the figures of the search kept for the report (a dict)
    progress(...)             a line on stderr
  report(run)                 the results: run.figures (build and certify) and run.records
  close()                     release what the benchmark holds

A run whose validation fails stops at once with the trial and the problem (DbfsError on every rank).
New steps slot in as hooks: a per-run certificate of the built structure is `certify`, a validation
policy (all, first, none) is `validates`, more figures (compile time, memory) are keys returned by
`build` or added to the records; the order of the loop does not change.

Users: the main mode (dbfs.bfs_benchmark: the distributed BFS as a Graph500 run) and the ws mode
(dbfs.ws.main: its trials are (program, source, method, exchange, repeat) configurations, its
validation compares the runs of one program from one source, its warm-up loads each program's kernels
when the program first runs).
"""

from __future__ import annotations

import gc
import time
from abc import ABC, abstractmethod
from contextlib import contextmanager
from dataclasses import dataclass, field

from mpi4py import MPI

from dbfs import runtime
from dbfs.errors import DbfsError


@dataclass
class Run:
    """What a benchmark reports: the figures of build and certify, and one record per search."""

    figures: dict
    trials: list
    records: list = field(default_factory=list)


class Benchmark(ABC):
    """The hooks of one benchmark (see the module docstring). `comm` is the communicator whose ranks
    run every hook together (None: one process)."""

    comm: MPI.Comm | None = None

    @abstractmethod
    def build(self) -> dict:
        """Kernel 1; returns figures for the report."""

    def certify(self) -> dict:
        """Optional step between build and the searches; returns figures for the report."""
        return {}

    @abstractmethod
    def trials(self) -> list:
        """What to search from, in order (at least one)."""

    def warm_up(self, trial) -> None:
        """Untimed and unrecorded, before the first recorded search: one search and its validation."""
        _validated(self, trial, self.search(trial))

    @abstractmethod
    def search(self, trial):
        """One search; the outcome has `time`, the seconds the benchmark measured."""

    @abstractmethod
    def validate(self, trial, outcome) -> str | None:
        """None when the outcome is right, else a description of what is wrong."""

    def validates(self, index: int) -> bool:
        """Whether the search of trial `index` is validated (Graph500: every one)."""
        return True

    @abstractmethod
    def label(self, trial) -> str:
        """The trial as the user names it ('root 12'), for messages."""

    @abstractmethod
    def record(self, trial, outcome) -> dict:
        """The figures of one search kept for the report."""

    @abstractmethod
    def progress(self, index: int, count: int, trial, record: dict) -> str:
        """The progress line of search index (0-based) of count."""

    @abstractmethod
    def report(self, run: Run) -> None:
        """Print and write the results."""

    def close(self) -> None:
        """Release what the benchmark holds (device buffers, communicators)."""

    def slowest(self, seconds: float) -> float:
        """Collective over comm: the largest of the ranks' `seconds` (a phase ends when its last rank
        does)."""
        return seconds if self.comm is None else self.comm.allreduce(seconds, op=MPI.MAX)


def _validated(bench: Benchmark, trial, outcome) -> float:
    """Validate outcome; returns the seconds it took (slowest rank), or stops the run when it is wrong."""
    t0 = time.perf_counter()
    problem = bench.validate(trial, outcome)
    seconds = bench.slowest(time.perf_counter() - t0)
    if problem is not None:
        raise DbfsError(f"validation failed for {bench.label(trial)}: {problem}", collective=True)
    return seconds


@contextmanager
def _collected_before():
    """Python's cyclic garbage collected before a search and not during it: on several ranks a
    collection in one rank (a millisecond or two) holds all the others at its next exchange."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def drive(bench: Benchmark) -> Run:
    """Run the benchmark's hooks in the Graph500 order (see the module docstring)."""
    figures = dict(bench.build())
    figures.update(bench.certify())
    trials = list(bench.trials())
    run = Run(figures, trials)
    runtime.pin_searching_thread()
    bench.warm_up(trials[0])
    for index, trial in enumerate(trials):
        with _collected_before():
            outcome = bench.search(trial)
        checked = bench.validates(index)
        seconds = _validated(bench, trial, outcome) if checked else None
        record = bench.record(trial, outcome)
        record.update(validated=checked, validate_time=seconds)
        run.records.append(record)
        runtime.log(bench.progress(index, len(trials), trial, record))
    bench.report(run)
    bench.close()
    return run
