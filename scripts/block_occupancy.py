"""How hypersparse the 2D blocks of a Kronecker graph are: per block of an R x C grid, the entries, and
the non-empty local columns and rows per entry and as a share of the block's ranges (N/C columns,
N/R rows). A block's average entries per column slot is 32/R at edgefactor 16 (2 entries a tuple), so
the Graph500 record's load (scale 41 on 8,192 GPUs, a 128x64 grid: 0.25) is met by scale 20 on the
same grid; the figures say what a format that stores only non-empty columns or rows (doubly compressed
columns, compressed row ranges) would hold there (bench/NOTES.md, 2026-11-26, what the record's
graph needs of a block).

    python scripts/block_occupancy.py --scale 20 --grids 16x16 128x64

The tuples come from the Graph500 generator (graph500.generator), on the CPU, all at once: scale 20
takes ~1 GiB and two to three minutes on two cores, scale 22 ~4 GiB and about seven. The ownership math is
dbfs.grid's.
"""

from __future__ import annotations

import argparse

import numpy as np

from dbfs.grid import Grid
from graph500.generator import generate_edges


def block_figures(grid: Grid, u, v) -> dict:
    """Entries u -> v (global ids) per block of `grid`: mean and largest entries, and the mean
    non-empty columns and rows, per entry and as a share of the ranges."""
    rank = grid.rank(grid.owner(v)[0], grid.col_block(u)).astype(np.int64)
    cols = grid.to_local_col(u).astype(np.int64)
    rows = grid.to_local_row(v).astype(np.int64)
    entries = np.bincount(rank, minlength=grid.size)
    nonempty_cols = np.unique(rank * grid.cols_per_rank + cols) // grid.cols_per_rank
    nonempty_rows = np.unique(rank * grid.rows_per_rank + rows) // grid.rows_per_rank
    mean = entries.mean()
    col_count = np.bincount(nonempty_cols, minlength=grid.size).mean()
    row_count = np.bincount(nonempty_rows, minlength=grid.size).mean()
    return {"entries": mean, "largest": int(entries.max()), "per_column_slot": mean / grid.cols_per_rank,
            "columns_per_entry": col_count / mean, "column_share": col_count / grid.cols_per_rank,
            "rows_per_entry": row_count / mean, "row_share": row_count / grid.rows_per_rank}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--scale", type=int, default=20, help="Graph500 scale")
    parser.add_argument("--edgefactor", type=int, default=16, help="tuples per vertex")
    parser.add_argument("--grids", nargs="+", default=["1x1", "16x16", "128x64"], help="grids RxC")
    args = parser.parse_args()
    n, m = 1 << args.scale, args.edgefactor << args.scale
    src, dst = (np.asarray(x, np.int64) for x in generate_edges(args.scale, args.edgefactor, 0, m)[:2])
    keep = src != dst
    u, v = np.concatenate([src[keep], dst[keep]]), np.concatenate([dst[keep], src[keep]])
    print("| scale | grid | entries a block (largest) | entries a column slot | non-empty columns an entry "
          "(share of range) | non-empty rows an entry (share of range) |")
    print("|---|---|---|---|---|---|")
    for text in args.grids:
        R, C = (int(x) for x in text.split("x"))
        f = block_figures(Grid(R, C, n), u, v)
        print(f"| {args.scale} | {R}x{C} | {f['entries']:.0f} ({f['largest']}) | {f['per_column_slot']:.3f} | "
              f"{f['columns_per_entry']:.3f} ({f['column_share']:.3f}) | {f['rows_per_entry']:.3f} "
              f"({f['row_share']:.3f}) |", flush=True)


if __name__ == "__main__":
    main()
