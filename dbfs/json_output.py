"""The --json documents of every command: the fields that say where a document comes from, and the
writer, which replaces the target only with a complete document."""

from __future__ import annotations

import datetime
import json
import os
import socket
import sys

from dbfs import __version__, outputs, runtime
from dbfs.errors import DbfsError


def provenance() -> dict:
    """dbfs_version, date, host and command: what made the document, when and where."""
    return {"dbfs_version": __version__, "date": datetime.datetime.now().isoformat(timespec="seconds"),
            "host": socket.gethostname(), "command": " ".join(sys.argv)}


def write_json_atomically(path: str, doc: dict) -> None:
    """Write doc to path through a temporary file renamed onto it (no half-written document); path `-`
    (outputs.STDOUT) writes it to stdout."""
    if path == outputs.STDOUT:
        runtime.write_stdout(json.dumps(doc, indent=1) + "\n")
        return
    path = outputs.final_path(path)
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "w") as f:
            f.write(json.dumps(doc, indent=1) + "\n")
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise DbfsError(f"cannot write {path}: {e.strerror}") from None
