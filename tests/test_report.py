"""Golden test of what a main-mode run prints on stdout, at scale 6 on every rank count: the Graph500
block (its keys in order, padded to column 32, each value printed with its format from the figure the
JSON document holds) and the per-phase breakdown after it; with --report reference exactly the BFS
lines of the Graph500 reference code 3.0.0 (src/main.c) and nothing else."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from mpi4py import MPI

from dbfs import bfs_benchmark, cli

WORLD = MPI.COMM_WORLD
STATS = ("min", "firstquartile", "median", "thirdquartile", "max", "mean", "stddev")
TEPS = ("min", "firstquartile", "median", "thirdquartile", "max", "harmonic_mean", "harmonic_stddev")
SPEC_BLOCK = (["SCALE", "edgefactor", "NBFS", "graph_generation", "num_mpi_processes", "construction_time"]
              + [f"bfs_{s}_time" for s in STATS] + [f"bfs_{s}_nedge" for s in STATS]
              + [f"bfs_{s}_TEPS" for s in TEPS] + [f"bfs_{s}_validate" for s in STATS])
BREAKDOWN = ["", "phase breakdown (mean per search, slowest rank):",
             "  phase                   ms   % of search"]


def value_format(key: str) -> str:
    if key in ("SCALE", "edgefactor", "NBFS", "num_mpi_processes"):
        return "%d"
    return "%.11g" if key.endswith("_nedge") else "%g"


def run_main(capsys, *argv) -> tuple[list[str], dict]:
    """The main mode in this process on every rank: rank 0's stdout lines and the JSON document."""
    path = tempfile.mkdtemp(prefix="dbfs-report-") if WORLD.Get_rank() == 0 else None
    report = Path(WORLD.bcast(path, root=0)) / "run.json"
    capsys.readouterr()
    bfs_benchmark.main(cli.main_parser().parse_args([*argv, "--backend", "cpu", "--json", str(report)]))
    lines = capsys.readouterr().out.splitlines()
    WORLD.Barrier()
    doc = json.loads(report.read_text())
    WORLD.Barrier()
    if WORLD.Get_rank() == 0:
        os.remove(report)
        os.rmdir(report.parent)
    return lines, doc


def test_default_block_keys_order_and_formats(capsys):
    lines, doc = run_main(capsys, "--scale", "6", "--roots", "4")
    if WORLD.Get_rank() != 0:
        assert lines == []
        return
    block = lines[:len(SPEC_BLOCK)]
    assert [line[:32].rstrip() for line in block] == [f"{key}:" for key in SPEC_BLOCK]
    for key, line in zip(SPEC_BLOCK, block):
        assert line[32:] == value_format(key) % doc[key], line
    assert block[:3] == ["SCALE:                          6", "edgefactor:                     16",
                         "NBFS:                           4"]
    assert block[4] == f"num_mpi_processes:              {WORLD.Get_size()}"
    rest = lines[len(SPEC_BLOCK):]
    assert rest[:3] == BREAKDOWN
    assert [line.split()[0] for line in rest[3:10]] == [*bfs_benchmark.PHASES, "sum", "search"]
    certificate = doc["certificate"]
    assert rest[-1] == f"certificate: passed ({certificate['time']:.6f} s, {certificate['tuples']} tuples)"
    assert [line.split()[0] for line in rest[-4:-1]] == ["bytes", "expand", "fold"]


def reference_key(spec_key: str) -> str:
    """The reference code's name of a spec key: 'bfs  min_time', 'min_nedge', 'bfs  min_TEPS'."""
    if not spec_key.startswith("bfs_"):
        return spec_key
    name = spec_key[4:]
    return name if name.endswith("_nedge") else f"bfs  {name}"


def test_reference_block_is_the_reference_codes(capsys):
    lines, doc = run_main(capsys, "--scale", "6", "--roots", "4", "--report", "reference")
    if WORLD.Get_rank() != 0:
        assert lines == []
        return
    assert len(lines) == len(SPEC_BLOCK) == 34
    for key, line in zip(SPEC_BLOCK, lines):
        label = f"{reference_key(key)}:"
        if key == "bfs_harmonic_mean_TEPS":
            label = f"{label:<29}!  "
        assert line == f"{label:<32}" + value_format(key) % doc[key], line
    assert lines[6].startswith("bfs  min_time:   ") and lines[13].startswith("min_nedge:   ")
    assert lines[25].startswith("bfs  harmonic_mean_TEPS:     !  ")


def test_small_component_note_names_the_searches_and_the_others_harmonic_mean():
    """Roots in tiny components (a few edges next to millions) are named on stderr with the harmonic
    mean of the other searches; without such roots there is no note."""
    big = [{"time": 0.004, "nedge": 1_000_000_000}, {"time": 0.005, "nedge": 1_000_000_000}]
    tiny = {"time": 0.0002, "nedge": 1}
    assert bfs_benchmark.small_component_note(big) is None
    assert bfs_benchmark.small_component_note([]) is None
    note = bfs_benchmark.small_component_note([big[0], tiny, big[1], tiny])
    expected = 2 / (0.004 / 1e9 + 0.005 / 1e9)
    assert note.startswith("2 of 4 searches (searches 2, 4) reached components of at most 1 edge:")
    assert f"the other 2: harmonic mean {expected:.6g} TEPS" in note
