"""Predicted search time and TEPS of a main-mode run (direction auto, Kronecker graph) on an R x C grid of
GPUs, from per-GPU costs measured on H100s: the scale model `python -m dbfs plan` prints, written up in
bench/NOTES.md (2026-11-25, a scale model from the measured pair; recalibrated 2026-11-26, 2026-11-27 and
2026-11-28 on four H100).

Per search, the terms add up (today's level loop overlaps no exchange with computation):
- compute: the search's input tuples over the GPUs at the per-GPU rate of the 2D search on two H100
  (EDGE_RATE; one GPU alone: ONE_GPU_RATE, no exchange, and ONE_GPU_SEARCH of fixed costs);
- host: every level's closing wait, collective and launches (HOST_LEVEL, plus NET_HOP per hop of a
  log2 P collective), and the search's fixed part (HOST_SEARCH);
- expand: on each bottom-up level every rank receives the other R - 1 frontier bitmaps of its grid
  column, b/8 bytes each (b = N / P owned vertices);
- rotation: on each bottom-up level C row segments of b/8 bytes pass along the grid row;
  (without the row-major copy, --row-copy off, the same two along the other lines: C - 1 bitmaps
  from the grid row, R column segments along the grid column);
- fold: on each top-down level NCCL sends each of the C - 1 grid-row peers a whole-capacity message,
  a bitmap of b/8 bytes;
- parents: after the search, a presence bitmap and a header of b/8 bytes each to every row peer, and
  without the row-major copy to every column peer as well (the ids themselves left out).
A grid line inside one node (ranks packed as Slurm's block distribution does: rank i*C + j, nodes of
`gpus_per_node` consecutive ranks) moves at NVLINK_RATE, one that leaves it at NETWORK_RATE. Levels per
search are the measured Kronecker ones (LEVELS, BOTTOM_UP_LEVELS), taken as constant with the scale.
What is left out: imbalance beyond what the pair showed, the slower expansion of a tall one-column grid
(every rank gathers the frontier of all N columns: 4x1 on four H100 ran at 297 G tuples/s a GPU, not
304), top-down expand lists, the parents' ids, and congestion of the network; the prediction is the
model's, not a measurement.
"""

from __future__ import annotations

import math

from dbfs.runtime import figure

# Measured on four H100 of one host (NVLink), scale 28 on two of them, grid 2x1, 16 roots
# (bench/results/2026-11-28-h100x4-nvlink-issue33-set-hub-entries-first/s28_2a-c.json): 2^31 tuples a GPU
# in 7.07 ms of device time (expansion and update); 0.37 ms a search of host work and level-closing waits
# over 7.875 levels (s28_2b's per-level log; 2.5 of them bottom-up), 7 us of predecessor resolution; the
# expand's wait 0.157 ms for 2.5 bitmaps of b/8 from the one peer (267 GB/s), and on four (4x1, s29_4a-b)
# 0.358 ms from three (351 GB/s), where the commit stores the bitmaps into the peers (NCCL between two
# H200 on NVLink moved 278 GB/s for a 128 MiB message: bench/NOTES.md, 2026-11-27, construction's chunks).
EDGE_RATE = 304.0e9
HOST_LEVEL = 0.045e-3
HOST_SEARCH = 0.008e-3
LEVELS, BOTTOM_UP_LEVELS = 7.875, 2.5
NVLINK_RATE = 280e9
# One GPU alone: a search costs tuples / ONE_GPU_RATE + ONE_GPU_SEARCH (its levels' fixed costs), the line
# through scale 27 on one of the four (s27_1a-c.json: 7.753 ms) and scale 22 on one H100
# (2026-11-28-h100-mps-hub-entries-first/s22_1_new.json: 0.565 ms).
ONE_GPU_RATE = 289.5e9
ONE_GPU_SEARCH = 0.33e-3
# Not measured here: 400 Gb/s InfiniBand a GPU between nodes, ~2 us a hop.
NETWORK_RATE = 50e9
NET_HOP = 2e-6

RECORD_GTEPS_PER_GPU = 50.0         # Graph500 No. 1, November 2025: 410 TTEPS on 8,192 H100


def predict(scale: int, edgefactor: int, R: int, C: int, gpus_per_node: int = 8, row_copy: bool = True) -> dict:
    """Seconds per term of one search, their sum, and the TEPS (total and per GPU) of a Graph500 graph
    of `scale` on an R x C grid, with or without the row-major copy; `limit` names the largest term."""
    P, n = R * C, 1 << scale
    tuples = edgefactor * n
    if P == 1:
        terms = {"compute": tuples / ONE_GPU_RATE, "host": ONE_GPU_SEARCH}
    else:
        bitmap = n / P / 8
        row_rate = NVLINK_RATE if C <= gpus_per_node and gpus_per_node % C == 0 else NETWORK_RATE
        column_rate = NVLINK_RATE if P <= gpus_per_node else NETWORK_RATE
        top_down = LEVELS - BOTTOM_UP_LEVELS
        terms = {"compute": tuples / P / EDGE_RATE,
                 "host": LEVELS * (HOST_LEVEL + NET_HOP * math.log2(P)) + HOST_SEARCH,
                 "expand": BOTTOM_UP_LEVELS * (R - 1) * bitmap / column_rate,
                 "rotation": BOTTOM_UP_LEVELS * C * bitmap / row_rate if C > 1 else 0.0,
                 "fold": top_down * (C - 1) * bitmap / row_rate,
                 "parents": 2 * (C - 1) * bitmap / row_rate}
        if not row_copy:
            terms.update(expand=BOTTOM_UP_LEVELS * (C - 1) * bitmap / row_rate,
                         rotation=BOTTOM_UP_LEVELS * R * bitmap / column_rate if R > 1 else 0.0,
                         parents=terms["parents"] + 2 * (R - 1) * bitmap / column_rate)
    seconds = sum(terms.values())
    teps = tuples / seconds
    return {"terms": terms, "seconds": seconds, "teps": teps, "gteps_per_gpu": teps / P / 1e9,
            "limit": max(terms, key=terms.get)}


def summary(prediction: dict) -> str:
    """One line: the TEPS, per GPU beside the record's, and what limits them."""
    terms = ", ".join(f"{k} {figure(v * 1e3)}" for k, v in prediction["terms"].items() if v > 0)
    return (f"predicted {figure(prediction['teps'] / 1e9)} GTEPS, {figure(prediction['gteps_per_gpu'])} a GPU "
            f"(the Graph500 record: {RECORD_GTEPS_PER_GPU:.0f} a GPU), a search "
            f"{figure(prediction['seconds'] * 1e3)} ms (ms: {terms}); limited by {prediction['limit']} (the scale "
            "model, bench/NOTES.md)")
