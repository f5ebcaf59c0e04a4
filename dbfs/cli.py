"""Command line of dbfs: the main Graph500-style run (default), `info`, `generate` and `convert`.

    mpirun -n P python -m dbfs --scale S [--grid RxC] [--roots N | --root V] [--json FILE]
    python -m dbfs info
    mpirun -n P python -m dbfs generate (--scale S | --lattice RxC[xD]) --out FILE.h5
    python -m dbfs convert INPUT --out G.h5 [--format snap|mtx|metis|g500|g500-packed]
    python -m dbfs ws --algo bfs|sssp|sswp|cc|pr (--scale S | --graph FILE.h5) [--gpus N]
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys
import time

from dbfs import __version__, runtime
from dbfs.errors import DbfsError, Interrupted
from dbfs.kernels import DEFAULT_EDGES_PER_THREAD, EDGES_PER_THREAD
from dbfs.options import ROW_COPY, ROW_COPY_HELP

INFO_DESCRIPTION = "Print backend, MPI library, GPU binding and versions."
INTERRUPT_GRACE_S = 2.0


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Every option's default, once: not for flags or options without a default, nor where the help
    text already says what the default is."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "default" in text or action.default in (None, False, argparse.SUPPRESS):
            return text
        return super()._get_help_string(action)


def _formatter(prog):
    return _HelpFormatter(prog, max_help_position=32)


def main_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m dbfs", formatter_class=_formatter, allow_abbrev=False,
        description="Distributed 2D-partitioned BFS with Graph500 generation, validation and report.",
        epilog="Other commands (each with --help): "
               + " ".join(f"`python -m dbfs {name}`: {text}" for name, text in _COMMANDS.items()))
    src = p.add_argument_group("graph (one of)")
    src.add_argument("--scale", type=int, help="Graph500 scale: 2^SCALE vertices")
    src.add_argument("--graph", metavar="FILE.h5", help="edge list in HDF5 (datasets src, dst)")
    p.add_argument("--edgefactor", type=int, default=16, help="edges per vertex for --scale")
    p.add_argument("--seed", default="2,3", help="generator and root sampler seeds A,B (the Graph500 "
                   "reference's); a --graph file that `generate` wrote samples its roots with its own unless given")
    p.add_argument("--grid", metavar="RxC", help="process grid (default: one column where the ranks are on "
                   "one node, each with a GPU of its own or sharing one under CUDA MPS, and that fits, else the "
                   "squarest with R >= C)")
    roots = p.add_mutually_exclusive_group()
    roots.add_argument("--roots", type=int, default=64, help="number of Graph500-sampled roots")
    roots.add_argument("--root", type=int,
                       help="search from this single vertex (for --graph: its id in the original file)")
    p.add_argument("--backend", choices=("auto", "gpu", "cpu"), default="auto",
                   help="auto: GPU when every rank sees one, else NumPy")
    p.add_argument("--json", metavar="FILE", help="write all figures and per-search results as JSON")
    p.add_argument("--report", choices=("spec", "reference"), default="spec",
                   help="the Graph500 block on stdout: spec key names (bfs_min_time ...) followed by the phase "
                        "breakdown, or exactly the BFS lines of the Graph500 reference code 3.0, alone")
    p.add_argument("--validate", choices=("all", "first", "none"), default="all",
                   help="validate every search (an official Graph500 run needs all), only the first, or "
                        "none (none also skips the construction certificate)")
    p.add_argument("--log-levels", action="store_true",
                   help="print per-level frontier size and time to stderr")
    p.add_argument("--edges-per-thread", type=int, choices=EDGES_PER_THREAD, default=DEFAULT_EDGES_PER_THREAD,
                   help="frontier edges handled by one GPU thread in the expansion kernel")
    search = p.add_argument_group("search and exchanges")
    search.add_argument("--direction", choices=("auto", "topdown"), default="auto",
                        help="auto: direction-optimizing (top-down/bottom-up by Beamer's rule); "
                             "topdown: paper 004's top-down levels only")
    search.add_argument("--row-copy", choices=ROW_COPY, default="auto", help=ROW_COPY_HELP)
    search.add_argument("--alpha", type=float, default=14.0,
                        help="switch to bottom-up when frontier edges > unvisited edges / ALPHA")
    search.add_argument("--beta", type=float, default=24.0,
                        help="switch back to top-down when the frontier shrinks below N / BETA vertices")
    search.add_argument("--encoding", choices=("adaptive", "list", "bitmap"), default="adaptive",
                        help="message form: a list of 32-bit ids, a bitmap of the block, or per "
                             "message whichever is smaller")
    search.add_argument("--comm", choices=("auto", "mpi", "mpi-cuda", "nccl", "nvshmem"), default="auto",
                        help="the search's transport: host-staged MPI, CUDA-aware MPI, NCCL between the GPUs, "
                             "or NVSHMEM puts and signals from dbfs's kernels (its small top-down levels run "
                             "in the GPUs' own loop; one node); auto: nvshmem on one node where it starts and "
                             "its heap holds the run (ranks sharing a GPU: under CUDA MPS), else NCCL when every "
                             "rank has a GPU of its own, else CUDA-aware MPI, else mpi. Construction and "
                             "validation use NCCL wherever every rank has a GPU of its own")
    search.add_argument("--level-launch", choices=("device", "host"), default="device",
                        help="where every exchange is on the device (--comm nvshmem): device: each graph of a "
                             "search launches the next from the GPU and the host waits once a search (the "
                             "host launches them where the device runtime is missing, and with --log-levels); "
                             "host: the host launches each and waits for it")
    real = p.add_argument_group("graph files, results and the partition cache")
    real.add_argument("--undirected", action="store_true",
                      help="traverse a directed graph's edges both ways, not only along out-edges")
    real.add_argument("--save-result", metavar="OUT.h5",
                      help="with one --root: write vertex, parent and level of every vertex (original "
                           "ids) to OUT.h5, replacing it")
    real.add_argument("--partition-cache", metavar="DIR",
                      help="reuse each rank's built CSC block from DIR (keyed by graph content and "
                           "grid), storing it there when missing or stale")
    p.add_argument("--version", action="version", version=f"dbfs {__version__}")
    return p


def info_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m dbfs info", formatter_class=_formatter, allow_abbrev=False,
                                description=INFO_DESCRIPTION)
    p.add_argument("--backend", choices=("auto", "gpu", "cpu"), default="auto", help="backend to probe")
    return p


# subcommand -> (module implementing add_arguments(parser) and main(args), description)
_TOOLS = {
    "convert": ("dbfs.convert", "Import a graph file into the HDF5 graph store read by --graph "
                                "(streaming, bounded memory)."),
    "generate": ("dbfs.generate", "Write the Graph500 Kronecker edge list, or a 2D or 3D lattice, to an "
                                  "HDF5 file."),
    "plan": ("dbfs.plan", "Per-rank memory of a run by part, whether it fits (exit status 0; 1 when it "
                          "does not), the largest scale that fits."),
    "ws": ("dbfs.ws.main", "Single-node mode: vertex programs on the local GPUs with Warp Segmentation "
                           "(or VWC) and Vertex Refinement between GPUs."),
}


# every subcommand, for the main --help
_COMMANDS = {"info": INFO_DESCRIPTION, **{name: description for name, (_, description) in _TOOLS.items()}}


def tool_parser(name: str) -> argparse.ArgumentParser:
    """The parser of subcommand `name` (one of _TOOLS), its options added by the tool's module."""
    module, description = _TOOLS[name]
    p = argparse.ArgumentParser(prog=f"python -m dbfs {name}", formatter_class=_formatter, allow_abbrev=False,
                                description=description)
    importlib.import_module(module).add_arguments(p)
    return p


class _CollectiveParseError(Exception):
    """argparse's refusal of a command line: its program and message."""

    def __init__(self, prog: str, message: str):
        super().__init__(f"{prog}: error: {message}")
        self.message = message


def parse_main(argv) -> argparse.Namespace:
    """The main command's options as a run takes them (`given` and `defaults` recorded: _parse), for
    checks made before a launch (slurm/lib.sh); DbfsError with argparse's message where it refuses them."""
    try:
        return _parse(main_parser(), argv)
    except _CollectiveParseError as e:
        raise DbfsError(e.message) from None


def _attach_dashed_values(parser: argparse.ArgumentParser, argv: list) -> list:
    """An option's value that begins with a dash and a digit (`--memory -1GiB`) joined to it
    (`--memory=-1GiB`): argparse takes such a word for an option unless it reads as a plain negative
    number, and then says only that the option expected an argument; the option's own check names what
    is wrong with the value instead."""
    takes_value = {name for action in parser._actions if action.option_strings and action.nargs is None
                   for name in action.option_strings}
    joined = []
    for word in argv:
        if (joined and joined[-1] in takes_value and len(word) > 1 and word[0] == "-" and word[1].isdigit()):
            joined[-1] = f"{joined[-1]}={word}"
        else:
            joined.append(word)
    return joined


def _parse(parser: argparse.ArgumentParser, argv):
    """argparse exits on bad input on every rank; keep the message to rank 0 and exit with 2. The
    namespace's `given` holds the options the command line names and `defaults` every option's default
    (so that one that does not apply to the chosen mode or graph is refused rather than ignored, unless it
    spells out its default)."""
    def error(message):
        raise _CollectiveParseError(parser.prog, message)
    parser.error = error
    argv = _attach_dashed_values(parser, list(argv))
    args = parser.parse_args(argv)
    defaults = [(action, action.default) for action in parser._actions]
    for action, _ in defaults:
        action.default = argparse.SUPPRESS
    try:
        args.given = set(vars(parser.parse_args(argv)))
    finally:
        for action, default in defaults:
            action.default = default
    args.defaults = {action.dest: default for action, default in defaults}
    return args



def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    runtime.install_abort_on_exception()
    runtime.reset_stdout()
    try:
        with runtime.signals_interrupt():
            status = _run(argv)
    except OSError as e:
        if e.errno != errno.EPIPE:
            raise
        runtime.write_stdout("")           # argparse's --help into a closed pipe: as any closed stdout
    except _CollectiveParseError as e:
        if runtime.rank() == 0:
            runtime.line_to_stderr(f"{e}\n(see --help)")
        sys.exit(2)
    except DbfsError as e:
        if not e.collective:
            raise
        if runtime.rank() == 0:
            runtime.line_to_stderr(f"dbfs: error: {e}")
        sys.exit(2)
    except Interrupted as e:
        # Every rank got the signal (mpiexec and srun pass it on) and has cleaned up on the way here.
        # Some may wait in a collective that the others left, so no rank finalizes MPI: the launcher
        # ends the job at the first exit. Rank 0 reports and exits first; the others give it the time.
        if runtime.rank() == 0:
            runtime.line_to_stderr(f"dbfs: interrupted by {e}")
        else:
            time.sleep(INTERRUPT_GRACE_S)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(128 + e.signum)
    failure = runtime.stdout_failure()
    if failure:
        if runtime.rank() == 0:
            runtime.line_to_stderr(f"dbfs: error: {failure}")
        sys.exit(2)
    if status:
        sys.exit(status)


def _run(argv) -> int:
    """The command argv names (the same on every rank): a subcommand, else the main mode; returns the
    exit status its answer sets (plan: 1 when the run does not fit)."""
    first = runtime.WORLD.bcast(list(argv), root=0)
    runtime.agree(None if list(argv) == first else
                  f"started with other arguments than rank 0 ({' '.join(argv) or 'none'} "
                  f"against {' '.join(first) or 'none'}): every rank must run the same command")
    if argv and argv[0] == "info":
        from dbfs import info
        info.main(_parse(info_parser(), argv[1:]))
    elif argv and argv[0] in _TOOLS:
        module = importlib.import_module(_TOOLS[argv[0]][0])
        return module.main(_parse(tool_parser(argv[0]), argv[1:]))
    elif argv and not argv[0].startswith("-"):
        raise _CollectiveParseError("python -m dbfs", f"unknown command {argv[0]!r} (the commands: "
                                    f"{', '.join(_COMMANDS)}; the main mode takes options alone)")
    else:
        from dbfs import bfs_benchmark
        bfs_benchmark.main(_parse(main_parser(), argv))
    return 0
