"""The scale model (dbfs.scale_model): it gives back the runs it was measured on, names the term that
limits a prediction, and keeps grid lines inside a node on NVLink."""

import re

import pytest

from dbfs import scale_model

pytestmark = pytest.mark.one_rank


def test_the_measured_runs_come_back():
    one = scale_model.predict(27, 16, 1, 1)              # measured: 7.753 ms a search, 276.8 GTEPS
    assert one["seconds"] == pytest.approx(7.753e-3, rel=0.01)
    assert scale_model.predict(22, 16, 1, 1)["seconds"] == pytest.approx(0.565e-3, rel=0.01)
    assert scale_model.predict(1, 16, 1, 1)["seconds"] > scale_model.ONE_GPU_SEARCH, "a search is never free"
    pair = scale_model.predict(28, 16, 2, 1)             # measured: 7.60 ms a search, 565.2 GTEPS
    assert pair["seconds"] == pytest.approx(7.60e-3, rel=0.05)
    assert pair["terms"]["rotation"] == pair["terms"]["fold"] == pair["terms"]["parents"] == 0
    # without the row-major copy the bottom-up exchanges run along the other lines: on 1x2 the same
    # gathered bitmaps, now along the row, and no rotation
    mirror = scale_model.predict(28, 16, 1, 2, row_copy=False)["terms"]
    assert mirror["expand"] == pair["terms"]["expand"] and mirror["rotation"] == 0
    assert scale_model.predict(28, 16, 2, 1, row_copy=False)["terms"]["rotation"] > 0


def test_weak_scaling_at_the_records_load_is_limited_by_the_exchanges():
    """2^32 tuples a GPU (scale 28 + log2 P): the compute term stays, the exchanged bitmaps grow with
    the grid's sides, and past a few hundred GPUs they set the time."""
    points = {P: scale_model.predict(28 + P.bit_length() - 1, 16, R, C)
              for P, (R, C) in {16: (4, 4), 1024: (32, 32), 8192: (128, 64)}.items()}
    assert len({round(p["terms"]["compute"], 9) for p in points.values()}) == 1
    assert points[16]["limit"] == "compute"
    assert points[1024]["limit"] != "compute" and points[8192]["limit"] != "compute"
    per_gpu = [points[P]["gteps_per_gpu"] for P in (16, 1024, 8192)]
    assert per_gpu == sorted(per_gpu, reverse=True)


def test_lines_that_leave_the_node_use_the_network():
    inside = scale_model.predict(30, 16, 2, 4, gpus_per_node=8)
    outside = scale_model.predict(30, 16, 2, 4, gpus_per_node=2)
    assert outside["terms"]["fold"] / inside["terms"]["fold"] == pytest.approx(
        scale_model.NVLINK_RATE / scale_model.NETWORK_RATE)
    assert "limited by" in scale_model.summary(inside)


def test_a_small_prediction_never_reads_zero():
    """The line shows 3 significant digits where one decimal would print a non-zero figure as 0.0."""
    prediction = scale_model.predict(10, 16, 2, 2)
    line = scale_model.summary(prediction)
    assert not re.search(r"\b0\.0(?!\d)", line), line
    teps, per_gpu = map(float, re.match(r"predicted (\S+) GTEPS, (\S+) a GPU", line).groups())
    assert teps == pytest.approx(prediction["teps"] / 1e9, rel=5e-3)
    assert per_gpu == pytest.approx(prediction["gteps_per_gpu"], rel=5e-3)
    assert re.search(r"a search \d{3,}\.\d ms", scale_model.summary(scale_model.predict(36, 16, 1, 1)))
