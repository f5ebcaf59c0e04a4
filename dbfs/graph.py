"""Problem state of one rank: its grid communicators and its CSC block of the adjacency matrix.

Paper 004 section 3.1: rank (i, j) stores its (N/R) x (N/C) block of A (A[v][u] = 1 for the edge
u -> v) as a CSC: `col_ptr` (int64, one entry per local column + 1) and `row_idx` (int32 local rows), and
for the bottom-up search optionally the same block row-major (`row_ptr`, `col_idx`).
Undirected input is stored in both directions; self-loops are left out of the CSC, duplicates kept.
Index math lives in dbfs.grid; this module only holds the state.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mpi4py import MPI

from dbfs.grid import Grid


@dataclass
class GridComms:
    """World, row (same i, ordered by j, size C) and column (same j, ordered by i, size R) communicators."""

    grid: Grid
    world: MPI.Comm
    row: MPI.Comm
    col: MPI.Comm
    i: int
    j: int

    @classmethod
    def create(cls, grid: Grid, world: MPI.Comm = MPI.COMM_WORLD) -> "GridComms":
        if world.Get_size() != grid.size:
            raise ValueError(f"grid {grid.R}x{grid.C} needs {grid.size} ranks, have {world.Get_size()}")
        i, j = grid.coords(world.Get_rank())
        row = world.Split(color=i, key=j)
        col = world.Split(color=j, key=i)
        return cls(grid, world, row, col, i, j)

    def free(self) -> None:
        self.row.Free()
        self.col.Free()


@dataclass
class LocalGraph:
    """The CSC block held by rank (i, j), resident on the backend's device."""

    comms: GridComms
    backend: object               # dbfs.backend.Backend
    col_ptr: object               # xp int64 [cols_per_rank + 1]
    row_idx: object               # xp int32 [nnz], local rows of the edges u -> v of each column u
    n_edges: int                  # input tuples of the whole graph (self-loops and duplicates included)
    has_edge: object              # xp bool [block]: owned vertex has a non-self-loop edge (root sampling)
    degree: object = None         # xp int32 [block]: owned vertices' non-self-loop entries (TEPS, heuristic)
    row_ptr: object = None        # xp int64 [rows_per_rank + 1]: row-major copy for bottom-up search
    col_idx: object = None        # xp int32 [nnz], local columns of the entries of each row
    info: dict = field(default_factory=dict)

    @property
    def grid(self) -> Grid:
        return self.comms.grid

    @property
    def i(self) -> int:
        return self.comms.i

    @property
    def j(self) -> int:
        return self.comms.j

    @property
    def nnz(self) -> int:
        return int(self.row_idx.shape[0])
