"""scripts/block_occupancy.py: its per-block figures against a count of every block's entries, columns and
rows by hand, and its command line on a small Kronecker graph; the expected non-empty share of a
Graph500 block (graph500.generator.expected_reaching_share, what `plan` sizes the frontier arrays by)
against the generator's blocks."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from dbfs.grid import Grid
from graph500.generator import expected_reaching_share, generate_edges
from test_collect import SCRIPTS, import_script

pytestmark = pytest.mark.one_rank


@pytest.mark.parametrize("R,C", [(1, 1), (2, 3), (4, 2)])
def test_block_figures_match_a_count_by_block(R, C):
    rng = np.random.default_rng(R * 10 + C)
    n = 50
    u, v = rng.integers(0, n, 300), rng.integers(0, n, 300)
    grid = Grid(R, C, n)
    blocks = [(set(), set(), []) for _ in range(grid.size)]        # columns, rows, entries of each block
    for a, b in zip(u.tolist(), v.tolist()):
        rank = grid.rank(int(grid.owner(np.array([b]))[0][0]), int(grid.col_block(np.array([a]))[0]))
        cols, rows, entries = blocks[rank]
        cols.add(int(grid.to_local_col(np.array([a]))[0]))
        rows.add(int(grid.to_local_row(np.array([b]))[0]))
        entries.append((a, b))
    figures = import_script("block_occupancy").block_figures(grid, u, v)
    mean = len(u) / grid.size
    assert figures["entries"] == pytest.approx(mean)
    assert figures["largest"] == max(len(entries) for _, _, entries in blocks)
    assert figures["columns_per_entry"] == pytest.approx(sum(len(c) for c, _, _ in blocks) / grid.size / mean)
    assert figures["rows_per_entry"] == pytest.approx(sum(len(r) for _, r, _ in blocks) / grid.size / mean)
    assert figures["column_share"] == pytest.approx(sum(len(c) for c, _, _ in blocks) / grid.size
                                                    / grid.cols_per_rank)


def test_block_occupancy_prints_a_row_per_grid():
    result = subprocess.run([sys.executable, str(SCRIPTS / "block_occupancy.py"), "--scale", "8", "--grids", "1x1",
                             "4x2"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if line.startswith("| 8 |")]
    assert [row.split("|")[2].strip() for row in rows] == ["1x1", "4x2"]


@pytest.mark.parametrize("R,C", [(1, 1), (4, 4), (8, 2), (16, 16)])
def test_expected_share_matches_the_generator_blocks(R, C):
    scale, edgefactor = 15, 16
    src, dst = (np.asarray(x, np.int64) for x in generate_edges(scale, edgefactor, 0, edgefactor << scale)[:2])
    keep = src != dst
    u, v = np.concatenate((src[keep], dst[keep])), np.concatenate((dst[keep], src[keep]))
    figures = import_script("block_occupancy").block_figures(Grid(R, C, 1 << scale), u, v)
    assert figures["column_share"] == pytest.approx(expected_reaching_share(scale, edgefactor, R), rel=0.02)
    assert figures["row_share"] == pytest.approx(expected_reaching_share(scale, edgefactor, C), rel=0.02)
