"""The one place that decides whether a command may write a path: every output of every command and
script (--json, --out, --save-result, --csv, ...) is checked here, before any expensive work.

Rules (convert's, for every writer): a name must be non-empty, UTF-8 and within the file system's name
length; an output is never an input of the same run, never the same file as another output of the
run, never a directory, a FIFO, a device or a socket (only regular files are replaced, and only with
`force`, which report files such as --json imply); its directory must exist and be writable, which a
file created and removed there proves (a file system may allow what it then refuses: /proc); and where
the size is known in advance, the file system must have room for it. Writers then write beside the
target and rename onto it (json_output.write_json_atomically, edgelist.write_in_place), so nothing is
half-written; a symbolic link is written through (final_path): its target is replaced, the link kept.
`-` as a --json target means stdout (STDOUT); for any other output it is refused.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import sys
import tempfile
from dataclasses import dataclass


STDOUT = "-"
_UNITS = ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"))


def size_text(size: int) -> str:
    """A byte count with the unit that shows it best: 1.5 GiB, 12.0 MiB, 512 B."""
    for scale, unit in _UNITS:
        if size >= scale:
            return f"{size / scale:,.1f} {unit}"
    return f"{size} B"


@dataclass(frozen=True)
class Target:
    """One output of a run: the option that names it (for messages), the path, whether an existing
    regular file may be replaced, and its size when known before writing."""

    option: str
    path: str
    force: bool = True
    size: int | None = None


def name_problem(option: str, path) -> str | None:
    """Why `path` cannot be a file name at all (empty, not UTF-8, a component too long), or None."""
    if path is None or os.fspath(path) == "":
        return f"{option} needs a file name, got ''"
    text = os.fsdecode(path)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return f"{option} {text.encode('utf-8', 'replace').decode()!r}: the name is not valid UTF-8"
    directory = os.path.dirname(os.path.abspath(text)) or "/"
    try:
        limit = os.pathconf(directory if os.path.isdir(directory) else "/", "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    for part in text.split(os.sep):
        if len(os.fsencode(part)) > limit:
            return f"{option} {text[:40]}...: a name of {len(os.fsencode(part))} bytes, the file system allows {limit}"
    return None


def final_path(path) -> str:
    """The file that writing `path` replaces: where `path` is a symbolic link, its target (followed to
    the end, even where it does not exist yet), so that the rename onto it keeps the link."""
    return os.path.realpath(os.fsdecode(path))


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _same(a: str, b: str) -> bool:
    if os.path.abspath(a) == os.path.abspath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def target_problem(target: Target, inputs=(), others=()) -> str | None:
    """Why this rank cannot write `target` (see the module docstring), or None.

    inputs: (option, path) of what the run reads; others: the run's other Targets."""
    if target.path == STDOUT:
        return None if target.option == "--json" else \
            f"{target.option} {STDOUT}: this output is a file, give its name (only --json {STDOUT} means stdout)"
    problem = name_problem(target.option, target.path)
    if problem:
        return problem
    path = os.path.abspath(os.fsdecode(target.path))
    for option, source in inputs:
        if source and source != STDOUT and _same(path, source):
            return f"{target.option} {target.path} is the input file ({option}): write to another name"
    for other in others:
        if other is not target and other.path not in (None, "", STDOUT) and _same(path, other.path):
            return f"{target.option} and {other.option} name the same file {target.path}"
    if os.path.isdir(path):
        return f"cannot write {target.option} {target.path}: it is a directory"
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        return f"cannot write {path}: it is {_kind(mode)}, and only regular files are replaced"
    path = final_path(path)
    if os.path.lexists(path) and not target.force:
        return f"{target.path} already exists (use --force to replace it)"
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        return f"cannot write {path}: directory {directory} does not exist"
    if not os.access(directory, os.W_OK | os.X_OK):
        return f"cannot write {path}: directory {directory} is not writable"
    if target.size is not None:
        return space_problem(path, target.size)
    return None


def space_problem(path: str, size: int) -> str | None:
    """Why a file of `size` bytes does not fit in the file system of path's directory, or None."""
    free = shutil.disk_usage(os.path.dirname(os.path.abspath(path))).free
    if size <= free:
        return None
    return f"cannot write {path}: it needs {size_text(size)} and its file system has {size_text(free)} free"


def creation_problem(target: Target) -> str | None:
    """Why no file can be created beside `target` (a probe file created and removed there), or None."""
    if target.path == STDOUT and target.option == "--json":
        return None
    path = final_path(target.path)
    try:
        handle, probe = tempfile.mkstemp(prefix=".dbfs-write-check-", dir=os.path.dirname(path))
    except OSError as e:
        return f"cannot write {path}: {e.strerror or e}"
    os.close(handle)
    os.remove(probe)
    return None


def first_problem(targets, inputs=(), probe: bool = True) -> str | None:
    """The first reason a target cannot be written, or None (probe: also create a file beside each).
    Targets whose path is None are skipped."""
    targets = [t for t in targets if t.path is not None]
    problems = (target_problem(t, inputs, targets) or (creation_problem(t) if probe else None) for t in targets)
    return next((p for p in problems if p), None)


def check(targets, inputs=(), comm=None) -> None:
    """Collective over comm (default: the world): DbfsError on every rank when any target cannot be
    written on any rank (the first problem, naming the rank when only some ranks see it); rank 0 alone
    creates the probe files (thousands of ranks would each make one otherwise)."""
    from dbfs import runtime    # here, not at import: one-process scripts never start MPI
    comm = comm or runtime.WORLD
    runtime.agree(first_problem(targets, inputs, probe=comm.Get_rank() == 0), comm)


def check_input(option: str, path: str) -> str | None:
    """Why `path` cannot be read as an input file (missing, a directory, a FIFO or device, which would
    block or never end), or None."""
    problem = name_problem(option, path)
    if problem:
        return problem
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return f"cannot read {path}: no such file"
    except OSError as e:
        return f"cannot read {path}: {e.strerror}"
    if not stat.S_ISREG(mode):
        return f"cannot read {path}: it is {'a directory' if stat.S_ISDIR(mode) else _kind(mode)}, not a file"
    if not os.access(path, os.R_OK):
        return f"cannot read {path}: {os.strerror(errno.EACCES).lower()}"
    return None


def check_or_exit(prog: str, targets, inputs=()) -> None:
    """The check of a one-process script (no MPI): its problem as one line `prog: error: ...`, exit
    status 2."""
    problem = first_problem(targets, inputs)
    if problem:
        print(f"{prog}: error: {problem}", file=sys.stderr)
        sys.exit(2)
