"""Graph500 statistics and the benchmark's output block (spec v3 "Computing and Outputting
Performance Information"; reference 3.0.0 src/main.c; graph500.md section 2).

`statistics` computes, like the reference's get_statistics: min, quartiles, median and max of the sorted
values x, with Q1 = (x[(n-1)//4] + x[n//4]) / 2, median = (x[(n-1)//2] + x[n//2]) / 2,
Q3 = (x[n-1-(n-1)//4] + x[n-1-n//4]) / 2, the mean, and the sample standard deviation (divisor n-1;
0 for a single value, where the reference would print nan).

TEPS statistics are taken over the seconds per edge s_i = t_i / m_i, as the reference does: a rate's
order statistics are the reciprocals of those of s in reverse order, the harmonic mean is 1/mean(s),
and the harmonic standard deviation is std(s) / (mean(s)^2 sqrt(n-1)) (Norris 1940), 0 for n == 1.
A search that traversed no edge (m_i = 0: a root without edges, given by --root; the Graph500 sampler
never picks one) has no rate: it is left out of the TEPS statistics (counted by `zero_edge_searches`,
reported as bfs_zero_edge_searches when there are any), and when every search is such, the TEPS
figures are 0 (the spec's value for a kernel that measured nothing). Its time and edge count stay in
the time and nedge statistics. Nothing is divided by zero.

`report` prints the reference's key: value block in the reference's order (SCALE, edgefactor, NBFS,
graph_generation, num_mpi_processes, construction_time, the BFS time statistics, the edge count
statistics, the TEPS statistics, the validation time statistics), keys padded to column 32 and numbers
printed with %g (edge counts %.11g), in one of two styles:
  spec       (the default) under the spec's key names: `bfs_min_time` ... `bfs_stddev_time`,
             `bfs_min_nedge` ... `bfs_stddev_nedge` (the spec's and the Octave output's names, where the C
             reference prints `min_nedge`), `bfs_min_TEPS` ... `bfs_harmonic_stddev_TEPS`,
             `bfs_min_validate` ... `bfs_stddev_validate` (an extra field; the spec allows extras), and
             bfs_zero_edge_searches when some search traversed no edge. The reference's "!" marker before
             the harmonic mean is left out so that every line parses as key: value;
  reference  exactly the C reference 3.0.0's BFS lines (src/main.c): `bfs  min_time:`, `min_nedge:`,
             `bfs  min_TEPS:`, `bfs  harmonic_mean_TEPS:     !  <value>`, `bfs  min_validate:` ..., for
             scripts built on the reference's output.
The SSSP keys are omitted in both: this is a BFS-only run (the spec lets the TEPS of a kernel not run be
zero; leaving the kernel's fields out says the same without printing figures that were never measured).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

ORDER_STATS = ("min", "firstquartile", "median", "thirdquartile", "max", "mean", "stddev")
TEPS_STATS = ("min", "firstquartile", "median", "thirdquartile", "max", "harmonic_mean", "harmonic_stddev")
KEY_WIDTH = 32
STYLES = ("spec", "reference")


def statistics(values: Sequence[float]) -> dict:
    """min, firstquartile, median, thirdquartile, max, mean, stddev (n-1) of values (n >= 1)."""
    x = np.sort(np.asarray(values, dtype=np.float64))
    n = x.size
    if n == 0:
        raise ValueError("statistics of an empty list")
    mean = float(x.sum() / n)
    stddev = math.sqrt(float(((x - mean) ** 2).sum()) / (n - 1)) if n > 1 else 0.0
    return {
        "min": float(x[0]),
        "firstquartile": float((x[(n - 1) // 4] + x[n // 4]) * 0.5),
        "median": float((x[(n - 1) // 2] + x[n // 2]) * 0.5),
        "thirdquartile": float((x[n - 1 - (n - 1) // 4] + x[n - 1 - n // 4]) * 0.5),
        "max": float(x[n - 1]),
        "mean": mean,
        "stddev": stddev,
    }


def zero_edge_searches(nedges: Sequence[float]) -> int:
    """Searches that traversed no edge: left out of the TEPS statistics."""
    return int(np.count_nonzero(np.asarray(nedges, dtype=np.float64) == 0))


def teps_statistics(times: Sequence[float], nedges: Sequence[float]) -> dict:
    """min, firstquartile, median, thirdquartile, max, harmonic_mean, harmonic_stddev of m_i / t_i over
    the searches with m_i > 0 (all 0 when there is none)."""
    t = np.asarray(times, dtype=np.float64)
    m = np.asarray(nedges, dtype=np.float64)
    if t.shape != m.shape or t.size == 0:
        raise ValueError("TEPS needs one edge count per search time, at least one search")
    if (m < 0).any():
        raise ValueError("TEPS needs edge counts >= 0")
    t, m = t[m > 0], m[m > 0]
    if t.size == 0:
        return dict.fromkeys(TEPS_STATS, 0.0)
    if (t <= 0).any():
        raise ValueError("TEPS needs positive times for the searches that traversed edges")
    s = statistics(t / m)
    n = t.size
    harmonic_stddev = s["stddev"] / (s["mean"] ** 2 * math.sqrt(n - 1)) if n > 1 else 0.0
    return {
        "min": 1.0 / s["max"],
        "firstquartile": 1.0 / s["thirdquartile"],
        "median": 1.0 / s["median"],
        "thirdquartile": 1.0 / s["firstquartile"],
        "max": 1.0 / s["min"],
        "harmonic_mean": 1.0 / s["mean"],
        "harmonic_stddev": harmonic_stddev,
    }


def _key(style: str, stat: str, group: str) -> str:
    if style == "spec":
        return f"bfs_{stat}_{group}"
    return f"{stat}_{group}" if group == "nedge" else f"bfs  {stat}_{group}"


def _entries(scale: int, edgefactor: int, graph_generation: float, num_mpi_processes: int,
             construction_time: float, bfs_times: Sequence[float], nedges: Sequence[float],
             validate_times: Sequence[float] | None, style: str = "spec") -> list[tuple[str, object, str]]:
    """(key, value, printf format) in the reference's order, under the style's key names."""
    if style not in STYLES:
        raise ValueError(f"unknown report style {style!r} ({', '.join(STYLES)})")
    if len(bfs_times) != len(nedges):
        raise ValueError("one edge count per BFS time is needed")
    if validate_times is not None and len(validate_times) != len(bfs_times):
        raise ValueError("one validation time per BFS time is needed")
    rows = [("SCALE", int(scale), "%d"), ("edgefactor", int(edgefactor), "%d"),
            ("NBFS", len(bfs_times), "%d"), ("graph_generation", float(graph_generation), "%g"),
            ("num_mpi_processes", int(num_mpi_processes), "%d"),
            ("construction_time", float(construction_time), "%g")]
    times = statistics(bfs_times)
    rows += [(_key(style, name, "time"), times[name], "%g") for name in ORDER_STATS]
    edges = statistics(nedges)
    rows += [(_key(style, name, "nedge"), edges[name], "%.11g") for name in ORDER_STATS]
    teps = teps_statistics(bfs_times, nedges)
    rows += [(_key(style, name, "TEPS"), value, "%g") for name, value in teps.items()]
    excluded = zero_edge_searches(nedges)
    if excluded and style == "spec":
        rows.append(("bfs_zero_edge_searches", excluded, "%d"))
    if validate_times is not None:
        validate = statistics(validate_times)
        rows += [(_key(style, name, "validate"), validate[name], "%g") for name in ORDER_STATS]
    return rows


def report(scale: int, edgefactor: int, graph_generation: float, num_mpi_processes: int,
           construction_time: float, bfs_times: Sequence[float], nedges: Sequence[float],
           validate_times: Sequence[float] | None = None, style: str = "spec") -> str:
    """The Graph500 output block (no trailing newline) in `style` (spec or reference).

    bfs_times[k], nedges[k] (and validate_times[k]) belong to search k; NBFS = len(bfs_times).
    validate_times None (validation skipped) leaves the validation lines out.
    """
    lines = []
    for key, value, fmt in _entries(scale, edgefactor, graph_generation, num_mpi_processes,
                                    construction_time, bfs_times, nedges, validate_times, style):
        label = f"{key}:"
        if style == "reference" and key.endswith("harmonic_mean_TEPS"):
            label = f"{label:<{KEY_WIDTH - 3}}!  "
        lines.append(f"{label:<{KEY_WIDTH}}{fmt % value}")
    return "\n".join(lines)


def summary_dict(scale: int, edgefactor: int, graph_generation: float, num_mpi_processes: int,
                 construction_time: float, bfs_times: Sequence[float], nedges: Sequence[float],
                 validate_times: Sequence[float] | None = None) -> dict:
    """The figures of the spec-style `report` under the same keys and in the same order, as
    full-precision numbers."""
    return {key: value for key, value, _ in _entries(scale, edgefactor, graph_generation,
                                                       num_mpi_processes, construction_time, bfs_times,
                                                       nedges, validate_times)}
