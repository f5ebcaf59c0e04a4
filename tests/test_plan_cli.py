"""`python -m dbfs plan`: the per-rank figures by part, fits (status 0) or does not fit (status 1: by its memory,
or by a grid whose 32-bit local ids cannot hold the scale), the largest scale, the JSON keys, and one clear error
with status 2 for a bad --memory, grid or scale."""

import json
import re
import subprocess
import sys

import pytest

from dbfs import memory
from dbfs.grid import Grid
from launcher import launcher_free_env

pytestmark = pytest.mark.one_rank


def plan(*args):
    env = launcher_free_env()
    return subprocess.run([sys.executable, "-m", "dbfs", "plan", *map(str, args)], capture_output=True,
                          text=True, timeout=120, env=env)


def test_fits_with_parts_and_json(tmp_path):
    out = tmp_path / "plan.json"
    result = plan("--scale", 28, "--ranks", 1, "--memory", "80GiB", "--json", out)
    assert result.returncode == 0, result.stderr
    for part in ("graph (resident)", "col_ptr", "row_idx", "degree", "construction transients",
                 "certificate", "search state", "validation", "construction", "search"):
        assert part in result.stdout
    assert "fits" in result.stdout and "does not fit" not in result.stdout
    doc = json.loads(out.read_text())
    expected = memory.estimate(Grid(1, 1, 1 << 28), 16 << 28, columns=memory.EXPECTED_COLUMNS)
    assert doc["fits"] is True and doc["bytes_per_rank"] == expected.peak
    assert expected.peak < memory.estimate(Grid(1, 1, 1 << 28), 16 << 28).peak    # below the uncounted bound
    assert doc["largest_scale"] == memory.largest_scale(1, 1, 16, 80 << 30, columns=memory.EXPECTED_COLUMNS) >= 28
    assert doc["parts"] == expected.parts and doc["grid"] == [1, 1]


def test_one_node_of_gpus_is_pointed_to_its_one_column_grid():
    """Ranks that fit one node (--gpus-per-node) hear that the main command takes a grid of one column
    there; more ranks, or a --grid, do not."""
    hint = "on one node with a GPU per rank the main command takes grid 4x1 where it fits"
    assert hint in plan("--scale", 26, "--ranks", 4, "--memory", "80GiB").stdout
    assert hint not in plan("--scale", 26, "--ranks", 4, "--memory", "80GiB", "--gpus-per-node", "2").stdout
    assert hint not in plan("--scale", 26, "--ranks", 4, "--grid", "2x2", "--memory", "80GiB").stdout
    three = plan("--scale", 26, "--ranks", 3, "--memory", "80GiB").stdout
    assert "(grid 3x1)" in three and "plan it with" not in three     # the default grid is that one already


def test_nvshmem_names_the_symmetric_heap_a_pe_needs(tmp_path):
    """--comm nvshmem counts its buffers and says how much symmetric heap a PE needs (the figure a run
    checks NVSHMEM_SYMMETRIC_SIZE against before it builds anything); with a GPU a rank the build goes
    over NCCL, so no construction landing is counted."""
    out = tmp_path / "plan.json"
    result = plan("--scale", 30, "--ranks", 16, "--memory", "80GiB", "--comm", "nvshmem", "--json", out)
    assert result.returncode == 0, result.stderr
    doc = json.loads(out.read_text())
    grid = Grid(4, 4, 1 << 30)
    heap = memory.symmetric_heap_bytes(grid, 16 << 30, True, "auto", build_transport="nccl",
                                       columns=memory.EXPECTED_COLUMNS)
    assert doc["comm"] == "nvshmem" and doc["symmetric_heap"] == heap > 0
    assert doc["bytes_per_rank"] == memory.estimate(grid, 16 << 30, transport="nvshmem", build_transport="nccl",
                                                    columns=memory.EXPECTED_COLUMNS).peak
    assert "NVSHMEM symmetric heap per PE: " + memory.readable(doc["symmetric_heap"]) in result.stdout
    assert "symmetric_heap" not in json.loads(plan("--scale", 30, "--ranks", 16, "--memory", "80GiB", "--json",
                                                   "-").stdout)


def test_does_not_fit_and_names_the_largest_scale_that_does(tmp_path):
    out = tmp_path / "plan.json"
    result = plan("--scale", 30, "--ranks", 4, "--grid", "1x4", "--memory", "20GB", "--direction", "topdown",
                  "--json", out)
    assert result.returncode == 1, result.stderr     # a batch script's test; the report and JSON are written
    assert "does not fit: " in result.stdout and "at most on 4 ranks" in result.stdout
    doc = json.loads(out.read_text())
    assert doc["fits"] is False and doc["bytes_per_rank"] > 20 * 10**9 and doc["grid"] == [1, 4]
    largest = doc["largest_scale"]
    assert largest < 30
    for scale, fits in ((largest, True), (largest + 1, False)):
        peak = memory.estimate(Grid(1, 4, 1 << scale), 16 << scale, direction="topdown", transport="nccl",
                               columns=memory.EXPECTED_COLUMNS).peak
        assert (peak <= 20 * 10**9) == fits


@pytest.mark.parametrize("args, message", [
    (("--scale", 20, "--ranks", 1, "--memory", "80G"), "--memory must be a positive size with a unit"),
    (("--scale", 20, "--ranks", 1, "--memory", "lots"), "--memory must be a positive size with a unit"),
    (("--scale", 20, "--ranks", 1, "--memory", "-1GiB"), "--memory must be a positive size with a unit"),
    (("--scale", 20, "--ranks", "-4", "--memory", "1GiB"), "--ranks must be >= 1"),
    (("--scale", 20, "--ranks", 4, "--grid", "2x3", "--memory", "1GiB"), "grid 2x3 needs 6 ranks"),
    (("--scale", 0, "--ranks", 1, "--memory", "1GiB"), "--scale must be in 1..42"),
    (("--scale", 20, "--ranks", 0, "--memory", "1GiB"), "--ranks must be >= 1"),
    (("--scale", 20, "--ranks", 4, "--direction", "topdown", "--row-copy", "on", "--memory", "1GiB"),
     "--row-copy applies to --direction auto"),
])
def test_bad_input_is_one_clear_line(args, message):
    result = plan(*args)
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and message in errors[0] and "Traceback" not in result.stderr, result.stderr


@pytest.mark.parametrize("args, advice, largest, set_by", [
    # the ids' advice: more ranks than the job has, a grid of them that fits, the scale memory holds too
    (("--ranks", 7, "--scale", 31), "use at least 8 ranks (e.g. --grid 4x2), or at most 2^30 vertices (scale 30) "
                                    "on this grid", 30, "the 32-bit local ids"),
    (("--ranks", 8192, "--scale", 37), "use at least 8200 ranks (e.g. --grid 100x82)", 36, "the 32-bit local ids"),
    (("--ranks", 1, "--scale", 42), "or at most 2^29 vertices (scale 29) on this grid", 29, "the memory"),
    (("--ranks", 8, "--grid", "8x1", "--scale", 31), "use --grid 4x2", 30, "the 32-bit local ids"),    # a grid chosen
    # the grid that lifts the ids (2x2) is short of memory: the fewest ranks that hold both
    (("--ranks", 1, "--scale", 31), "use at least 6 ranks (e.g. --grid 3x2: its ids and memory hold it), or at "
                                    "most 2^29 vertices (scale 29) on this grid", 29, "the memory"),
])
def test_a_grid_whose_local_ids_cannot_hold_the_scale_does_not_fit(tmp_path, args, advice, largest, set_by):
    """Status 1, as for the memory: the report (the grid or ranks that hold the scale, the largest scale and
    what sets it, the prediction) and the JSON are written, with no per-rank figures."""
    out = tmp_path / "plan.json"
    result = plan(*args, "--memory", "80GiB", "--json", out)
    assert result.returncode == 1 and result.stderr == "", result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("plan: SCALE ")
    assert lines[1].startswith("does not fit (no per-rank figures): ") and "give local index ranges over 2^31, " \
        "and local ids are 32-bit; " in lines[1] and advice in lines[1]
    assert lines[2].startswith(f"largest scale that fits with these ranks: {largest} (set by {set_by}")
    assert lines[3].startswith("if it fit: predicted ") and len(lines) == 4
    doc = json.loads(out.read_text())
    assert doc["fits"] is False and doc["exceeds"] == "local_ids" and doc["largest_scale"] == largest
    assert doc["bytes_per_rank"] is doc["parts"] is doc["phases"] is None and doc["prediction"]["teps"] > 0


def test_the_ranks_advised_past_the_ids_hold_the_next_scale_in_memory_too():
    """9 ranks (3x3) lift the ids of scale 32 but are short of memory; the advice names 12, which fit."""
    result = plan("--scale", 31, "--ranks", 6, "--memory", "80GiB")
    assert result.returncode == 0, result.stderr
    assert "(set by the 32-bit local ids, not the memory: use at least 12 ranks (e.g. --grid 4x3: its ids and " \
           "memory hold it) for scale 32)" in result.stdout
    assert plan("--scale", 32, "--ranks", 9, "--memory", "80GiB").returncode == 1
    assert plan("--scale", 32, "--ranks", 12, "--memory", "80GiB").returncode == 0


def test_the_json_says_why_a_run_does_not_fit(tmp_path):
    out = tmp_path / "plan.json"
    assert plan("--scale", 20, "--ranks", 4, "--memory", "1MiB", "--json", out).returncode == 1
    assert json.loads(out.read_text())["exceeds"] == "memory"
    assert plan("--scale", 20, "--ranks", 4, "--memory", "1GiB", "--json", out).returncode == 0
    assert json.loads(out.read_text())["exceeds"] is None


def test_defaults_spelled_out_are_accepted():
    """A script that writes every option's default: --row-copy auto applies with either direction."""
    result = plan("--scale", 20, "--ranks", 4, "--memory", "8GiB", "--direction", "topdown", "--row-copy", "auto")
    assert result.returncode == 0, result.stderr


def test_comm_auto_is_sized_as_the_main_command_sizes_it(tmp_path):
    """--comm auto, the main command's default, counts nccl's buffers, as the main command does before it
    picks the transport."""
    out = tmp_path / "auto.json"
    result = plan("--scale", 26, "--ranks", 4, "--memory", "80GiB", "--comm", "auto", "--json", out)
    assert result.returncode == 0, result.stderr
    assert "comm auto (sized as nccl)" in result.stdout.splitlines()[0]
    doc = json.loads(out.read_text())
    assert doc["comm"] == "nccl" and doc["bytes_per_rank"] == memory.estimate(
        Grid(2, 2, 1 << 26), 16 << 26, transport="nccl", columns=memory.EXPECTED_COLUMNS).peak


def test_small_sizes_show_in_a_unit_that_shows_them():
    result = plan("--scale", 20, "--ranks", 4, "--memory", "1MiB")
    assert f"{'per rank':<26}{'MiB':>10}" in result.stdout
    assert "peak per rank: 43.47 MiB (search); 1.00 MiB available: does not fit: " in result.stdout


def test_a_prediction_from_the_scale_model(tmp_path):
    out = tmp_path / "plan.json"
    result = plan("--scale", 32, "--ranks", 16, "--memory", "80GiB", "--json", out)
    assert result.returncode == 0, result.stderr
    line = next(line for line in result.stdout.splitlines() if line.startswith("predicted"))
    assert "a GPU (the Graph500 record: 50 a GPU)" in line and "limited by" in line
    doc = json.loads(out.read_text())
    assert doc["prediction"]["limit"] in doc["prediction"]["terms"]
    topdown = plan("--scale", 32, "--ranks", 16, "--memory", "80GiB", "--direction", "topdown")
    assert "no predicted TEPS" in topdown.stdout


def test_a_small_prediction_shows_its_digits():
    line = plan("--scale", 10, "--ranks", 4, "--memory", "80GiB").stdout.splitlines()[-1]
    assert line.startswith("predicted 0.0") and not re.search(r"\b0\.0(?!\d)", line)
