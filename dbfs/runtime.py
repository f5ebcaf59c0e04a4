"""Process runtime: MPI communicators, fail-fast error handling, logging and timing helpers.

Any uncaught exception on any rank aborts the whole MPI job at once (MPI_Abort) after printing that
rank's traceback, so `mpirun -n P python -m dbfs` never hangs with ranks stuck in a collective.
Collective user errors (bad arguments seen by every rank) are reported once by rank 0 and all ranks
exit with status 2. SIGINT and SIGTERM (which mpiexec and srun pass to every rank) become the
exception Interrupted, so temporary files are removed on the way out as for any other error.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import signal
import sys
import threading
import time
import traceback
from typing import NamedTuple

import numpy as np
from mpi4py import MPI

from dbfs.errors import DbfsError, Interrupted

WORLD = MPI.COMM_WORLD
# After this delay an interrupt lost inside a finalizer is sent again (signals_interrupt).
REDELIVERY_DELAY_S = 0.05
# How long an aborting rank waits between writing its message and MPI_Abort: the launcher forwards the
# rank's stderr through its proxies, and an abort that ends the job first can drop what they still hold
# (the message is the one line a user gets).
ABORT_GRACE_S = 0.2


def rank() -> int:
    return WORLD.Get_rank()


def size() -> int:
    return WORLD.Get_size()


def line_to_stderr(text: str) -> None:
    """One line to stderr in one write with its newline: a signal that interrupts the write (and ends the
    run with its own line) cannot leave the line without its end (print writes the two apart)."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def log(msg: str, all_ranks: bool = False) -> None:
    """Progress to stderr (rank 0 only unless all_ranks)."""
    if all_ranks or WORLD.Get_rank() == 0:
        prefix = f"[dbfs {WORLD.Get_rank()}]" if all_ranks and WORLD.Get_size() > 1 else "[dbfs]"
        line_to_stderr(f"{prefix} {msg}")


def count(n: int, noun: str, plural: str | None = None) -> str:
    """'1 rank', '4 ranks' ('1 vertex', '4 vertices' with the plural given)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def figure(value: float) -> str:
    """A measured or predicted figure to 3 significant digits, or to one decimal where it has more digits
    before the point: a small one never reads 0.0."""
    if value <= 0:
        return "0"
    return f"{value:.{max(1, 2 - math.floor(math.log10(value)))}f}"


def warn(msg: str) -> None:
    """A warning to stderr from rank 0: the run goes on."""
    if WORLD.Get_rank() == 0:
        line_to_stderr(f"dbfs: warning: {msg}")


# Set when stdout carries a --json document (`--json -`): the other results then go to stderr.
_stdout_taken = False
# The OSError that stdout gave (a closed pipe, a full disk), kept until the command ends (stdout_failure).
_stdout_error: OSError | None = None


def reset_stdout() -> None:
    """A new command: stdout is the results' and has failed nothing yet."""
    global _stdout_taken, _stdout_error
    _stdout_taken, _stdout_error = False, None


def take_stdout() -> None:
    """stdout is the --json document's (`--json -`): every other result goes to stderr."""
    global _stdout_taken
    _stdout_taken = True


def write_stdout(text: str) -> None:
    """text to stdout; a closed or full stdout is remembered (stdout_failure), not raised, so that the
    ranks finish the command together, and later writes are dropped."""
    global _stdout_error
    if _stdout_error is not None:
        return
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError as e:
        _stdout_error = e
        try:                                       # nothing more, not even the flush at exit, fails
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except (OSError, ValueError):              # a stdout without a file descriptor
            pass


def stdout_failure() -> str | None:
    """None when stdout took everything, '' for a closed pipe (a reader such as `head` that has had
    enough: the command ends quietly), else the one line that says why the results were lost."""
    if _stdout_error is None:
        return None
    if isinstance(_stdout_error, BrokenPipeError):
        return ""
    return f"cannot write the results to stdout: {_stdout_error.strerror or _stdout_error}"


def out(text: str) -> None:
    """Results to stdout from rank 0 (to stderr when stdout holds the --json document)."""
    if WORLD.Get_rank() == 0:
        if _stdout_taken:
            line_to_stderr(text)
        else:
            write_stdout(text + "\n")


def rank_tag(rank: int, size: int, more: int = 0) -> str:
    """How a line names the rank it comes from, and how many more ranks saw the same: ' (rank R of P)',
    ' (rank R and N more of P)'."""
    return f" (rank {rank}{f' and {more} more' if more else ''} of {size})"


def abort(message: str, code: int = 1) -> None:
    """Print message (tagged with the rank when there are several) and end the whole job."""
    where = rank_tag(WORLD.Get_rank(), WORLD.Get_size()) if WORLD.Get_size() > 1 else ""
    line_to_stderr(f"{message}{where}")
    if WORLD.Get_size() > 1:
        time.sleep(ABORT_GRACE_S)
        WORLD.Abort(code)
    os._exit(code)


def _excepthook(kind, value, tb):
    if MPI.Is_finalized():
        traceback.print_exception(kind, value, tb)
        os._exit(1)
    if isinstance(value, DbfsError):
        abort(f"dbfs: error: {value}", 2)
    text = "".join(traceback.format_exception(kind, value, tb))
    abort(f"dbfs: uncaught exception{'' if WORLD.Get_size() == 1 else f' on rank {WORLD.Get_rank()}'}:\n"
          f"{text.rstrip()}", 1)


def install_abort_on_exception() -> None:
    """Make an exception on one rank end the job instead of leaving the others in a collective."""
    sys.excepthook = _excepthook


def _raise_interrupted(signum, frame):
    raise Interrupted(signum)


@contextlib.contextmanager
def signals_interrupt():
    """Within: SIGINT and SIGTERM raise Interrupted in the main thread (SIGTERM otherwise ends the
    process at once, leaving temporary files behind); the previous handlers come back afterwards.

    A signal whose handler happens to run inside a finalizer or a weakref callback raises Interrupted
    where Python cannot propagate it: Python hands it to sys.unraisablehook and goes on. The hook
    installed here has a timer thread send the signal again a moment later, when the main thread is
    back in ordinary code (sent at once, its handler would run inside the hook and be lost again)."""
    previous = {s: signal.signal(s, _raise_interrupted) for s in (signal.SIGINT, signal.SIGTERM)}
    previous_hook = sys.unraisablehook

    def redeliver_lost_interrupt(unraisable):
        if isinstance(unraisable.exc_value, Interrupted):
            resend = threading.Timer(REDELIVERY_DELAY_S, os.kill, (os.getpid(), unraisable.exc_value.signum))
            resend.daemon = True
            resend.start()
        else:
            previous_hook(unraisable)

    sys.unraisablehook = redeliver_lost_interrupt
    try:
        yield
    finally:
        sys.unraisablehook = previous_hook
        for s, handler in previous.items():
            signal.signal(s, handler)


def agree(error: str | None, comm: MPI.Comm = WORLD) -> None:
    """Collective check: if any rank passes a message, every rank raises the lowest rank's message,
    naming that rank when not every rank saw a problem, as abort names its own."""
    errors = comm.allgather(error)
    failing = [r for r, e in enumerate(errors) if e]
    if failing:
        first = errors[failing[0]]
        if len(failing) < len(errors) and len(errors) > 1:        # only some ranks see it: say which
            first += rank_tag(failing[0], len(errors), len(failing) - 1)
        raise DbfsError(first, collective=True)


class Node(NamedTuple):
    """This process's place on its node: its rank among the node's processes, their number, the CPUs
    they may run on (the union of their affinities, which a Slurm allocation or `mpirun --bind-to`
    narrows), and the CPU its searching thread takes where the launcher left every process free to run
    on all of them and they are exactly as many as those CPUs (own_cpu, else None)."""
    local_rank: int
    processes: int
    cpus: int
    own_cpu: int | None = None


def own_cpu(affinities: list[list[int]], local_rank: int) -> int | None:
    """The CPU of the node's local_rank-th process where every process of the node (their `affinities`)
    may run on every CPU of the node and the processes (more than one) are exactly as many as those CPUs:
    the local_rank-th of them. None where the launcher bound the processes, where CPUs are spare, and
    where the processes outnumber the CPUs (they take turns on every CPU anyway)."""
    cpus = sorted(set().union(*affinities))
    unbound = all(len(a) == len(cpus) for a in affinities)
    return cpus[local_rank] if len(affinities) > 1 and unbound and len(cpus) == len(affinities) else None


@functools.cache
def node() -> Node:
    """Collective at its first call (a shared-memory split of the world, freed after use); cached after."""
    split = WORLD.Split_type(MPI.COMM_TYPE_SHARED)
    try:
        affinities = split.allgather(sorted(os.sched_getaffinity(0)))
        cpus = len(set().union(*affinities))
        return Node(split.Get_rank(), split.Get_size(), cpus, own_cpu(affinities, split.Get_rank()))
    finally:
        split.Free()


def pin_searching_thread() -> None:
    """Keep the calling thread (the one that drives the searches) on its own CPU where node() gives it
    one; collective at the first call of node(). Unbound ranks as many as the CPUs were traced meeting on
    one CPU now and then, the two taking turns of a scheduler tick (4 ms) while every other rank waited
    for them at its next exchange (bench/NOTES.md, 2026-11-29, who takes a rank's CPU). The process's
    other threads (CUDA's, MPI's) stay free to run anywhere."""
    cpu = node().own_cpu
    if cpu is None or os.sched_getaffinity(0) == {cpu}:
        return
    os.sched_setaffinity(0, {cpu})
    log(f"each rank's searching thread keeps a CPU of its own ({node().processes} ranks on as many CPUs, "
        f"left unbound by the launcher)")


def local_rank() -> tuple[int, int]:
    """(rank among the processes of this node, processes on this node); collective at the first call of
    node()."""
    return node().local_rank, node().processes


def node_cpus() -> int:
    """The CPUs that this node's processes may run on; collective at the first call of node()."""
    return node().cpus


def check_slurm() -> None:
    """Stop when Slurm's task count disagrees with the MPI world (a mis-launched job)."""
    ntasks = os.environ.get("SLURM_NTASKS")
    wrong = ntasks and ntasks.isdigit() and int(ntasks) != WORLD.Get_size()
    agree(f"SLURM_NTASKS={ntasks} but the MPI world has {WORLD.Get_size()} ranks: launch with `srun` (or "
          f"`mpirun -n {ntasks}`) inside the allocation" if wrong else None)


def displacements(counts):
    """Exclusive prefix sums of per-rank counts: the displacement argument of MPI's v-collectives."""
    out = counts.copy()
    out[0] = 0
    out[1:] = counts[:-1].cumsum()
    return out


def alltoallv_int32(comm: MPI.Comm, send: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Host int32 values grouped by destination (counts[d] for rank d, int64) -> what arrived, by source."""
    recv_counts = np.empty_like(counts)
    comm.Alltoall(counts, recv_counts)
    recv = np.empty(int(recv_counts.sum()), np.int32)
    comm.Alltoallv([send, (counts, displacements(counts)), MPI.INT32_T],
                   [recv, (recv_counts, displacements(recv_counts)), MPI.INT32_T])
    return recv


def mpi_library() -> str:
    """The first line of the MPI library's version string (Open MPI ends it with a NUL byte)."""
    return MPI.Get_library_version().split("\0", 1)[0].strip().splitlines()[0]


def mpi_cuda_aware() -> bool | None:
    """True/False when the MPI library says whether it passes device buffers; None if it cannot tell."""
    try:
        return bool(MPI.Query_cuda_support())
    except (AttributeError, NotImplementedError, MPI.Exception):
        return None
