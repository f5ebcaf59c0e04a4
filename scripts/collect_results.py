"""Collect the --json documents of dbfs main-mode runs into one table: markdown on stdout, CSV on request.

    python scripts/collect_results.py DIR_OR_FILE... [--csv FILE] [--markdown FILE]

Folders are searched recursively for *.json, *.json.gz and *.json.xz (large results are kept
compressed); documents that are not main-mode runs (no `searches` or no `bfs_harmonic_mean_TEPS`, e.g.
the generator benchmark) are skipped with a note on stderr. One row per run: GPUs (= MPI ranks), grid,
scale, edgefactor, device, transport (`comm`), message encoding, direction, number of searches, the
Graph500 harmonic-mean TEPS (paper 004, section 4), the mean search time, the mean bytes sent per search
in the expand and fold exchanges and what the same messages take as plain 32-bit lists (`bytes_raw`; the
ratio is the saving of the bitmap encoding, paper section 5), and the mean time per search of each phase
(the breakdown of paper Figure 7), and the study the run belongs to (`weak`, `strong`, `run`: the first
word of the sbatch templates' file names `<study>_s<scale>_g<GPUs>_...` (`r<ranks>` on the CPU backend),
or of their folder `<study>-<job id>`; empty when neither says), so that the runs of a weak and a strong
scaling study stay apart. Rows are sorted by study, device, transport, encoding, direction, edgefactor,
GPUs and scale.

Documents written before dbfs had --comm, --encoding and --direction lack those keys; such runs took
the only path there was: host-staged MPI, list messages, top-down levels, so their rows say mpi, list,
topdown, and their unencoded bytes are the bytes sent.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import lzma
import os
import re
import sys
from pathlib import Path

from dbfs import outputs

LEGACY = {"comm": "mpi", "encoding": "list", "direction": "topdown"}
KINDS = ("expand", "fold")
DECOMPRESS = {".gz": gzip.decompress, ".xz": lzma.decompress}


def find_documents(paths) -> list[Path]:
    files = []
    for p in map(Path, paths):
        if p.is_dir():
            files.extend(sorted([*p.rglob("*.json"), *p.rglob("*.json.gz"), *p.rglob("*.json.xz")]))
        elif p.is_file():
            files.append(p)
        else:
            raise SystemExit(f"collect_results: error: {p} is neither a file nor a folder")
    return files


def device_name(doc: dict) -> str:
    """The accelerator model ("H200"), or the backend name when there is none."""
    if doc.get("backend") != "gpu":
        return doc.get("backend", "unknown")
    models = []
    for d in doc.get("devices", []):
        model = d[d.find("(") + 1:d.rfind(")")] if "(" in d else d
        model = model.removeprefix("NVIDIA ")
        if model not in models:
            models.append(model)
    return "+".join(models) or "gpu"


def study_of(path: Path) -> str:
    """The study of a run from the sbatch templates' names: <study>_s<scale>_g<GPUs>_... (r<ranks> on
    the CPU backend) for the file, <study>-<job id> for its folder; '' when neither names one."""
    named = re.match(r"([A-Za-z]+)_s\d+_[gr]\d+_", path.name)
    if named:
        return named.group(1)
    folder = re.match(r"([A-Za-z]+)-(\d+|dryrun)$", path.parent.name)
    return folder.group(1) if folder else ""


def _mean(values) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def run_row(path: Path, doc: dict) -> dict:
    """One table row (plain numbers and strings) from one --json document."""
    searches = doc["searches"]
    R, C = doc["grid"]
    row = {"study": study_of(path), "gpus": R * C, "grid": f"{R}x{C}", "scale": doc["scale"],
           "edgefactor": doc["edgefactor"],
           "device": device_name(doc), **{k: doc.get(k, v) for k, v in LEGACY.items()},
           "nbfs": len(searches), "harmonic_mean_TEPS": doc["bfs_harmonic_mean_TEPS"],
           "mean_time_ms": 1e3 * doc["bfs_mean_time"]}
    for kind in KINDS:
        row[f"bytes_{kind}"] = _mean(s["bytes"][kind] for s in searches)
        row[f"bytes_raw_{kind}"] = _mean(s.get("bytes_raw", s["bytes"])[kind] for s in searches)
    sent = sum(row[f"bytes_{k}"] for k in KINDS)
    raw = sum(row[f"bytes_raw_{k}"] for k in KINDS)
    row["raw_over_sent"] = raw / sent if sent else 1.0
    for phase in searches[0]["phases"] if searches else ():
        row[f"phase_{phase}_ms"] = 1e3 * _mean(s["phases"][phase] for s in searches)
    row["date"] = doc.get("date", "")
    row["file"] = str(path)
    return row


def collect(paths) -> list[dict]:
    rows = []
    for path in find_documents(paths):
        try:
            doc = json.loads(DECOMPRESS.get(path.suffix, bytes.decode)(path.read_bytes()))
        except (OSError, EOFError, lzma.LZMAError, UnicodeDecodeError, json.JSONDecodeError) as e:
            print(f"collect_results: skipped {path}: unreadable ({e})", file=sys.stderr)
            continue
        if not isinstance(doc, dict) or "searches" not in doc or "bfs_harmonic_mean_TEPS" not in doc:
            print(f"collect_results: skipped {path}: not a dbfs main-mode --json document", file=sys.stderr)
            continue
        rows.append(run_row(path, doc))
    rows.sort(key=lambda r: (r["study"], r["device"], r["comm"], r["encoding"], r["direction"], r["edgefactor"],
                             r["gpus"], r["scale"], r["date"]))
    return rows


def phase_names(rows) -> list[str]:
    """The phase columns present, in the order the documents list them."""
    names = []
    for row in rows:
        names.extend(k[6:-3] for k in row if k.startswith("phase_") and k[6:-3] not in names)
    return names


def columns(rows) -> list[str]:
    keys = []
    for row in rows:
        keys.extend(k for k in row if k not in keys)
    return keys


def markdown(rows) -> str:
    phases = phase_names(rows)
    head = ["GPUs", "grid", "scale", "device", "comm", "encoding", "direction", "searches", "GTEPS (hmean)",
            "search ms", "MB sent", "MB as lists", "lists/sent", "study", *(f"{p} ms" for p in phases)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        sent = sum(r[f"bytes_{k}"] for k in KINDS) / 1e6
        raw = sum(r[f"bytes_raw_{k}"] for k in KINDS) / 1e6
        cells = [r["gpus"], r["grid"], r["scale"], r["device"], r["comm"], r["encoding"], r["direction"],
                 r["nbfs"], f"{r['harmonic_mean_TEPS'] / 1e9:.4g}", f"{r['mean_time_ms']:.4g}",
                 f"{sent:.4g}", f"{raw:.4g}", f"{r['raw_over_sent']:.2f}", r["study"] or "-",
                 *(f"{r[f'phase_{p}_ms']:.4g}" if f"phase_{p}_ms" in r else "" for p in phases)]
        lines.append("| " + " | ".join(map(str, cells)) + " |")
    return "\n".join(lines) + "\n"


def write_atomically(path: str, write) -> None:
    """write(file) into path through a temporary name, so that no half-written table is left."""
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "w", newline="") as f:
            write(f)
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise SystemExit(f"collect_results: error: cannot write {path}: {e.strerror}") from None


def write_csv(rows, path: str) -> None:
    def write(f):
        writer = csv.DictWriter(f, fieldnames=columns(rows), restval="")
        writer.writeheader()
        writer.writerows(rows)
    write_atomically(path, write)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("paths", nargs="+", metavar="DIR_OR_FILE", help="--json documents or folders of them")
    p.add_argument("--csv", metavar="FILE", help="also write every column as CSV")
    p.add_argument("--markdown", metavar="FILE", help="write the markdown table here instead of stdout")
    args = p.parse_args(argv)
    outputs.check_or_exit("collect_results", [outputs.Target("--csv", args.csv), outputs.Target("--markdown", args.markdown)],
                          [("DIR_OR_FILE", path) for path in args.paths])
    rows = collect(args.paths)
    if not rows:
        print("collect_results: error: no dbfs --json documents found", file=sys.stderr)
        return 2
    table = markdown(rows)
    if args.markdown:
        write_atomically(args.markdown, lambda f: f.write(table))
    else:
        sys.stdout.write(table)
    if args.csv:
        write_csv(rows, args.csv)
    print(f"collect_results: {len(rows)} runs", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
