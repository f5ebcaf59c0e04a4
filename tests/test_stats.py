"""Graph500 statistics and output block against hand-computed figures."""
import math

import numpy as np
import pytest

from graph500.stats import TEPS_STATS, report, statistics, summary_dict, teps_statistics

pytestmark = pytest.mark.one_rank


def check(stats, expected):
    assert list(stats) == list(expected)
    for key, value in expected.items():
        assert stats[key] == pytest.approx(value, rel=1e-12, abs=1e-15), key


def test_single_value():
    check(statistics([5.0]), dict(min=5, firstquartile=5, median=5, thirdquartile=5, max=5, mean=5,
                                  stddev=0))


def test_two_values():
    check(statistics([3.0, 1.0]), dict(min=1, firstquartile=1, median=2, thirdquartile=3, max=3,
                                       mean=2, stddev=math.sqrt(2)))


def test_four_values_average_neighbours():
    check(statistics([4, 1, 3, 2]), dict(min=1, firstquartile=1.5, median=2.5, thirdquartile=3.5,
                                         max=4, mean=2.5, stddev=math.sqrt(5 / 3)))


def test_five_values():
    check(statistics([10, 2, 8, 4, 6]), dict(min=2, firstquartile=4, median=6, thirdquartile=8,
                                             max=10, mean=6, stddev=math.sqrt(10)))


def test_seven_values():
    check(statistics([60, 0, 50, 10, 40, 20, 30]),
          dict(min=0, firstquartile=10, median=30, thirdquartile=50, max=60, mean=30,
               stddev=math.sqrt(2 * (900 + 400 + 100) / 6)))


def test_sixty_four_values():
    squares = np.arange(64.0) ** 2
    shuffled = np.random.default_rng(7).permutation(squares)
    mean = 63 * 64 * 127 / 6 / 64
    check(statistics(shuffled),
          dict(min=0, firstquartile=(15**2 + 16**2) / 2, median=(31**2 + 32**2) / 2,
               thirdquartile=(47**2 + 48**2) / 2, max=63**2, mean=mean,
               stddev=math.sqrt(((squares - mean) ** 2).sum() / 63)))


def test_empty_is_an_error():
    with pytest.raises(ValueError):
        statistics([])


def test_teps_two_searches():
    # s = t/m = [0.1, 0.2]: order statistics reverse, harmonic mean 1/0.15
    teps = teps_statistics([1.0, 2.0], [10, 10])
    check(teps, dict(min=5, firstquartile=5, median=1 / 0.15, thirdquartile=10, max=10,
                     harmonic_mean=1 / 0.15, harmonic_stddev=math.sqrt(0.005) / 0.15**2))


def test_teps_single_search():
    check(teps_statistics([0.5], [100]), dict(min=200, firstquartile=200, median=200,
                                              thirdquartile=200, max=200, harmonic_mean=200,
                                              harmonic_stddev=0))


@pytest.mark.parametrize("n", [4, 5, 64])
def test_teps_harmonic_closed_form(n):
    rng = np.random.default_rng(n)
    times = rng.uniform(0.01, 2.0, n)
    nedges = rng.integers(1_000, 1_000_000, n).astype(float)
    rates = nedges / times
    teps = teps_statistics(times, nedges)
    h = n / np.sum(1 / rates)
    assert teps["harmonic_mean"] == pytest.approx(h, rel=1e-12)
    closed = h**2 * math.sqrt(np.sum((1 / rates - 1 / h) ** 2)) / (n - 1)
    assert teps["harmonic_stddev"] == pytest.approx(closed, rel=1e-10)
    assert teps["min"] == pytest.approx(rates.min(), rel=1e-12)
    assert teps["max"] == pytest.approx(rates.max(), rel=1e-12)
    assert teps["min"] <= teps["firstquartile"] <= teps["median"] <= teps["thirdquartile"] <= teps["max"]


def test_teps_rejects_unmeasured_figures():
    with pytest.raises(ValueError):
        teps_statistics([0.0, 1.0], [5, 5])
    with pytest.raises(ValueError):
        teps_statistics([1.0], [-1])
    with pytest.raises(ValueError):
        teps_statistics([1.0, 2.0], [5])


def test_searches_without_edges_are_left_out_of_teps():
    """A root without edges (visited 1, nedge 0) has no rate: the TEPS figures are those of the other
    searches, and with no other search they are 0; a zero time does not matter there."""
    check(teps_statistics([1.0, 0.001, 2.0, 0.0], [10, 0, 10, 0]), teps_statistics([1.0, 2.0], [10, 10]))
    assert teps_statistics([0.0, 0.5], [0, 0]) == dict.fromkeys(TEPS_STATS, 0.0)


def test_report_counts_the_searches_left_out_of_teps():
    args = dict(ARGS, bfs_times=[1.0, 2.0, 0.5], nedges=[10, 10, 0], validate_times=None)
    block = dict(line.split(":", 1) for line in report(**args).split("\n"))
    assert block["bfs_zero_edge_searches"].strip() == "1" and block["NBFS"].strip() == "3"
    assert block["bfs_harmonic_mean_TEPS"].strip() == "6.66667" and block["bfs_min_nedge"].strip() == "0"
    assert summary_dict(**args)["bfs_zero_edge_searches"] == 1
    assert "zero_edge" not in report(**ARGS) and "zero_edge" not in report(**args, style="reference")
    lone = dict(line.split(":", 1) for line in report(**dict(args, bfs_times=[0.5], nedges=[0])).split("\n"))
    assert lone["bfs_harmonic_mean_TEPS"].strip() == "0" and lone["bfs_max_TEPS"].strip() == "0"


ARGS = dict(scale=10, edgefactor=16, graph_generation=0.5, num_mpi_processes=4,
            construction_time=0.25, bfs_times=[1.0, 2.0], nedges=[10, 10],
            validate_times=[0.5, 1.5])

EXPECTED = [
    ("SCALE", "10"), ("edgefactor", "16"), ("NBFS", "2"), ("graph_generation", "0.5"),
    ("num_mpi_processes", "4"), ("construction_time", "0.25"),
    ("bfs_min_time", "1"), ("bfs_firstquartile_time", "1"), ("bfs_median_time", "1.5"),
    ("bfs_thirdquartile_time", "2"), ("bfs_max_time", "2"), ("bfs_mean_time", "1.5"),
    ("bfs_stddev_time", "0.707107"),
    ("bfs_min_nedge", "10"), ("bfs_firstquartile_nedge", "10"), ("bfs_median_nedge", "10"),
    ("bfs_thirdquartile_nedge", "10"), ("bfs_max_nedge", "10"), ("bfs_mean_nedge", "10"),
    ("bfs_stddev_nedge", "0"),
    ("bfs_min_TEPS", "5"), ("bfs_firstquartile_TEPS", "5"), ("bfs_median_TEPS", "6.66667"),
    ("bfs_thirdquartile_TEPS", "10"), ("bfs_max_TEPS", "10"), ("bfs_harmonic_mean_TEPS", "6.66667"),
    ("bfs_harmonic_stddev_TEPS", "3.1427"),
    ("bfs_min_validate", "0.5"), ("bfs_firstquartile_validate", "0.5"), ("bfs_median_validate", "1"),
    ("bfs_thirdquartile_validate", "1.5"), ("bfs_max_validate", "1.5"), ("bfs_mean_validate", "1"),
    ("bfs_stddev_validate", "0.707107"),
]


def test_report_block_order_and_format():
    lines = report(**ARGS).split("\n")
    assert lines[0] == "SCALE:" + " " * 26 + "10"
    assert lines[26] == "bfs_harmonic_stddev_TEPS:" + " " * 7 + "3.1427"
    assert [(line[:32].rstrip()[:-1], line[32:]) for line in lines] == EXPECTED
    assert all(line[:32].rstrip().endswith(":") for line in lines)


def test_report_nedge_uses_eleven_digits():
    args = dict(ARGS, nedges=[4294921166, 123456789012345])
    block = dict(line.split(":", 1) for line in report(**args).split("\n"))
    assert block["bfs_min_nedge"].strip() == "4294921166"
    assert block["bfs_max_nedge"].strip() == "1.2345678901e+14"
    assert block["bfs_max_TEPS"].strip() == "%g" % (123456789012345 / 2.0)


def test_report_without_validation_and_no_sssp_keys():
    text = report(**dict(ARGS, validate_times=None))
    keys = [line.split(":")[0] for line in text.split("\n")]
    assert keys == [k for k, _ in EXPECTED if not k.endswith("_validate")]
    assert "sssp" not in text


def test_summary_dict_matches_report():
    summary = summary_dict(**ARGS)
    assert [k for k, _ in EXPECTED] == list(summary)
    for key, text in EXPECTED:
        value = summary[key]
        fmt = "%d" if isinstance(value, int) else "%.11g" if key.endswith("_nedge") else "%g"
        assert fmt % value == text, key
    assert summary["bfs_harmonic_stddev_TEPS"] == pytest.approx(math.sqrt(0.005) / 0.15**2, rel=1e-12)


# Graph500 reference 3.0.0, src/main.c: the BFS lines of its output, character for character
REFERENCE = """\
SCALE:                          10
edgefactor:                     16
NBFS:                           2
graph_generation:               0.5
num_mpi_processes:              4
construction_time:              0.25
bfs  min_time:                  1
bfs  firstquartile_time:        1
bfs  median_time:               1.5
bfs  thirdquartile_time:        2
bfs  max_time:                  2
bfs  mean_time:                 1.5
bfs  stddev_time:               0.707107
min_nedge:                      10
firstquartile_nedge:            10
median_nedge:                   10
thirdquartile_nedge:            10
max_nedge:                      10
mean_nedge:                     10
stddev_nedge:                   0
bfs  min_TEPS:                  5
bfs  firstquartile_TEPS:        5
bfs  median_TEPS:               6.66667
bfs  thirdquartile_TEPS:        10
bfs  max_TEPS:                  10
bfs  harmonic_mean_TEPS:     !  6.66667
bfs  harmonic_stddev_TEPS:      3.1427
bfs  min_validate:              0.5
bfs  firstquartile_validate:    0.5
bfs  median_validate:           1
bfs  thirdquartile_validate:    1.5
bfs  max_validate:              1.5
bfs  mean_validate:             1
bfs  stddev_validate:           0.707107"""


def test_reference_style_is_the_reference_block():
    assert report(**ARGS, style="reference") == REFERENCE
    with pytest.raises(ValueError, match="unknown report style"):
        report(**ARGS, style="octave")


def test_mismatched_lengths_are_errors():
    with pytest.raises(ValueError):
        report(**dict(ARGS, nedges=[10]))
    with pytest.raises(ValueError):
        report(**dict(ARGS, validate_times=[1.0]))
