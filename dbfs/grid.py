"""2D ownership math: the single place that maps global vertex ids to ranks and local indices.

Method (paper 004, section 2.2 and Figure 1): P = R x C ranks form a grid; rank (i, j) has MPI rank
i*C + j. The vertex range is padded to N' = R*C*b with b = ceil(N / (R*C)) rounded up to a multiple of
32 (so every block starts on a 32-bit word of any bitmap over rows or columns) and cut into R*C blocks of
b vertices; block k is owned by rank (k mod R, k div R), i.e. block jR+i by P(i, j).

Rank (i, j) stores the (N'/R) x (N'/C) CSC block of A (A[v][u] = 1 for the edge u -> v):
  - its columns are the vertices of column block j = blocks jR .. jR+R-1 (the vertices owned by the R
    ranks of grid column j), local column c = u - j*R*b, identical on every rank of that grid column;
  - its rows are the vertices of the blocks mR+i, m = 0..C-1 (the vertices owned by the C ranks of grid
    row i), local row r = m*b + (v mod b), identical on every rank of that grid row.
Hence a vertex's adjacency is spread over its grid column (expand) and every row vertex is owned by a
rank of the same grid row (fold). Owned vertices are addressed by their offset o = v mod b in the block.

All functions accept NumPy/CuPy integer arrays or Python ints; local indices fit in 32 bits, global ids
are 64-bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

BLOCK_ALIGN = 32
LOCAL_LIMIT = 2**31                   # local ids are 32-bit: local ranges stay below this
MAX_SIDE = (LOCAL_LIMIT - 1) // BLOCK_ALIGN     # a range holds BLOCK_ALIGN x the other side at least
SIDES_TRIED = 1 << 12                 # grid columns fitting_grid tries past the least possible


def parse_grid(text: str) -> tuple[int, int]:
    """'RxC' -> (R, C), both >= 1."""
    parts = text.lower().split("x")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise ValueError(f"grid must look like RxC (e.g. 2x4), got {text!r}")
    r, c = (int(p) for p in parts)
    if r < 1 or c < 1:
        raise ValueError(f"grid dimensions must be >= 1, got {text!r}")
    return r, c


def default_grid(nranks: int) -> tuple[int, int]:
    """The squarest R x C = nranks with R >= C. Tall rather than wide: a bottom-up level runs C rotation
    sub-steps along a grid row, and a top-down level folds over C ranks, so C = 1 at 2 ranks makes both
    local (two H100 on NVLink, scale 28: 2x1 searches 1.26x faster than 1x2, bench/NOTES.md,
    2026-11-25, two H100 on NVLink)."""
    c = int(math.isqrt(nranks))
    while nranks % c:
        c -= 1
    return nranks // c, c


def fitting_grid(n_vertices: int, ranks: int) -> tuple[int, int] | None:
    """A grid whose local index ranges fit Grid's 32-bit limit for n_vertices: the squarest R x C =
    ranks (R >= C) that fits, else the squarest that fits of the fewest ranks above `ranks`; None when
    the search finds none (past about 2^56 vertices none exists: both ranges hold BLOCK_ALIGN x a side)."""
    shape = _squarest_fitting(n_vertices, ranks)
    if shape is not None:
        return shape
    # Both sides of a fitting grid exceed N / 2^31 (the ranges are about N/R rows and N/C columns). For
    # each C from there, the fewest rows R whose range fits (it shrinks as R grows) above `ranks` ranks,
    # if the columns' range fits with it (it grows with R), until C alone squares past the best.
    def rows_fit(r: int, c: int) -> bool:
        return local_ranges(r, c, n_vertices)[0] < LOCAL_LIMIT

    best, least_side = None, max(1, n_vertices >> 31)
    for c in range(least_side, min(least_side + SIDES_TRIED, MAX_SIDE + 1)):
        if best is not None and c * c > best[0] * best[1]:
            break
        low, high = max(c, -(-(ranks + 1) // c)), MAX_SIDE
        if low > high or not rows_fit(high, c):
            continue
        while low < high:
            middle = (low + high) // 2
            low, high = (low, middle) if rows_fit(middle, c) else (middle + 1, high)
        if _fits(low, c, n_vertices) and (best is None or low * c <= best[0] * best[1]):
            best = (low, c)
    return best


def _squarest_fitting(n_vertices: int, ranks: int) -> tuple[int, int] | None:
    for c in range(math.isqrt(ranks), 0, -1):
        if ranks % c == 0 and _fits(ranks // c, c, n_vertices):
            return ranks // c, c
    return None


def grid_advice(n_vertices: int, R: int, C: int, largest_scale: int | None = None,
                ranks: str | None = None) -> str:
    """Why an R x C grid cannot hold n_vertices (local ids are 32-bit), the grid or rank count that can
    (`ranks` where the caller knows what also holds it in memory), and the most vertices this grid holds:
    by its ids, or `largest_scale` where the caller knows what its memory holds as well."""
    if largest_scale is None:
        largest_scale = next((s for s in range(62, 0, -1) if _fits(R, C, 1 << s)), None)
    scale = (f", or at most 2^{largest_scale} vertices (scale {largest_scale}) on this grid" if largest_scale
             else ", and this grid holds no Graph500 scale")
    return (f"{n_vertices} vertices on a {R}x{C} grid give local index ranges over 2^31, and local ids are "
            f"32-bit; {ranks or rank_advice(n_vertices, R, C)}{scale}")


def rank_advice(n_vertices: int, R: int, C: int) -> str:
    """The grid of R * C ranks, or else the rank count, whose local ids hold n_vertices."""
    fit = fitting_grid(n_vertices, R * C)
    if fit is None:
        return "no grid keeps that many vertices within 32-bit local ids"
    return (f"use --grid {fit[0]}x{fit[1]}" if fit[0] * fit[1] == R * C else
            f"use at least {fit[0] * fit[1]} ranks (e.g. --grid {fit[0]}x{fit[1]})")


def block_size(R: int, C: int, n_vertices: int) -> int:
    """b of an R x C grid over n_vertices: ceil(N / (R C)) rounded up to a multiple of BLOCK_ALIGN."""
    per_rank = -(-n_vertices // (R * C))
    return -(-per_rank // BLOCK_ALIGN) * BLOCK_ALIGN


def local_ranges(R: int, C: int, n_vertices: int) -> tuple[int, int]:
    """(local rows, local columns) of a rank of an R x C grid over n_vertices: b C and b R."""
    b = block_size(R, C, n_vertices)
    return b * C, b * R


def _fits(R: int, C: int, n_vertices: int) -> bool:
    """Whether an R x C grid holds n_vertices with 32-bit local ids."""
    try:
        Grid(R, C, n_vertices)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class Grid:
    """An R x C process grid over n_vertices vertices."""

    R: int
    C: int
    n_vertices: int

    def __post_init__(self):
        if self.R < 1 or self.C < 1:
            raise ValueError("grid dimensions must be >= 1")
        if self.n_vertices < 1:
            raise ValueError("a graph needs at least one vertex")
        if self.rows_per_rank >= LOCAL_LIMIT or self.cols_per_rank >= LOCAL_LIMIT:
            raise ValueError(
                f"{self.n_vertices} vertices on a {self.R}x{self.C} grid give local index ranges over "
                "2^31; use more ranks")

    # sizes -------------------------------------------------------------------------------------
    @property
    def size(self) -> int:
        return self.R * self.C

    @property
    def block(self) -> int:
        """b: vertices per owned block, a multiple of BLOCK_ALIGN."""
        return block_size(self.R, self.C, self.n_vertices)

    @property
    def n_padded(self) -> int:
        return self.block * self.R * self.C

    @property
    def rows_per_rank(self) -> int:
        """N'/R: local rows (the vertices owned by one grid row)."""
        return self.block * self.C

    @property
    def cols_per_rank(self) -> int:
        """N'/C: local columns (the vertices owned by one grid column)."""
        return self.block * self.R

    # ranks ---------------------------------------------------------------------------------------
    def rank(self, i, j):
        return i * self.C + j

    def coords(self, rank: int) -> tuple[int, int]:
        return rank // self.C, rank % self.C

    def owner(self, v):
        """Grid coordinates (i, j) of the owner of global vertex v."""
        k = v // self.block
        return k % self.R, k // self.R

    def owner_rank(self, v):
        i, j = self.owner(v)
        return self.rank(i, j)

    def row_group(self, r):
        """Grid column of the owner of local row r (the same on every rank of a grid row): the group
        of the fold exchange that the row's discovery goes to."""
        return r // self.block

    def row_offset(self, r):
        """Offset of local row r in its owner's block."""
        return r % self.block

    def owned_offset(self, v):
        """Offset of global vertex v in its owner's block."""
        return v % self.block

    def owns(self, i, j, v) -> bool:
        """Does rank (i, j) own global vertex v?"""
        return tuple(int(x) for x in self.owner(v)) == (i, j)

    # global <-> local --------------------------------------------------------------------------
    def to_local_row(self, v):
        """Local row index of v on any rank of its owner's grid row."""
        k = v // self.block
        return (k // self.R) * self.block + v % self.block

    def to_local_col(self, u):
        """Local column index of u on any rank of its owner's grid column."""
        return u - (u // self.cols_per_rank) * self.cols_per_rank

    def col_block(self, u):
        """Grid column j whose ranks hold the adjacency (CSC column) of u."""
        return u // self.cols_per_rank

    def to_global_row(self, i, r):
        """Global id of local row r on grid row i."""
        m = r // self.block
        return (m * self.R + i) * self.block + r % self.block

    def to_global_col(self, j, c):
        """Global id of local column c on grid column j."""
        return j * self.cols_per_rank + c

    def global_col_segments(self, j) -> tuple[int, int, int]:
        """(base, length, stride): local column c of grid column j is global id base + (c // length) *
        stride + c % length (to_global_col as one segment), the form in which kernels take the map."""
        return self.to_global_col(j, 0), self.cols_per_rank, self.cols_per_rank

    def global_row_segments(self, i) -> tuple[int, int, int]:
        """(base, length, stride) as in global_col_segments for the local rows of grid row i (to_global_row:
        C segments of b rows, one per owner in the grid row)."""
        base = self.to_global_row(i, 0)
        return base, self.block, self.to_global_row(i, self.block) - base

    def to_global_owned(self, i, j, o):
        """Global id of offset o in the block owned by (i, j)."""
        return (j * self.R + i) * self.block + o

    def owned_range(self, i, j) -> tuple[int, int]:
        """[lo, hi) global ids owned by (i, j), clipped to the real vertices (may be empty)."""
        lo = (j * self.R + i) * self.block
        return min(lo, self.n_vertices), min(lo + self.block, self.n_vertices)

    def owned_row(self, j, o):
        """Local row of offset o of the block owned by a rank of grid column j (same on every grid row)."""
        return j * self.block + o

    def owned_col(self, i, o):
        """Local column of offset o of the block owned by a rank of grid row i (same on every grid
        column)."""
        return i * self.block + o

    def owned_row_start(self, j) -> int:
        """First local row of the block owned by a rank of grid column j."""
        return self.owned_row(j, 0)

    def owned_col_start(self, i) -> int:
        """First local column of the block owned by a rank of grid row i."""
        return self.owned_col(i, 0)
