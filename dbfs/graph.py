"""Problem state of one rank: its grid communicators and its CSC block of the adjacency matrix.

Paper 004 section 3.1: rank (i, j) stores its (N/R) x (N/C) block of A (A[v][u] = 1 for the edge
u -> v) as a CSC: `col_ptr` (one entry per local column + 1) and `row_idx` (int32 local rows), and
for the bottom-up search optionally the same block row-major (`row_ptr`, `col_idx`). The offsets are
int32 where the block's entries fit (offset_dtype: half their bytes), else int64; the
kernels that read them are compiled for either width (kernels/common.cuh offset_t). Where most of a
block's N/C columns hold no entry (a hypersparse block: at Graph500 density two in three on a 4 x 4 grid,
and more as the grid grows), its searches hold the column offsets of the non-empty columns alone, with
the Positions of those columns (dbfs.ops.sparse: a quarter byte a column), and read any column's start
through them (hold_columns_by_position; one rank keeps every column's offset). An undirected graph
can do without that second copy: A is symmetric, so a column of the block lists the neighbours that its
vertex has among the block's rows, and its bottom-up search can run on the CSC, the columns looking for
parents among the rows (dbfs.grid_loop; slower, with half the graph's memory: --row-copy). On a 1x1
grid of an undirected graph the rows and columns are the same vertices and the row-major fields name
the CSC arrays themselves. Undirected input is stored in both directions; self-loops are
left out of the CSC, duplicates kept. What each byte is for: dbfs.build; index math: dbfs.grid; this
module holds the state (and, for the run's bulk rounds, each grid line's NCCL communicator, made on
first use).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from mpi4py import MPI

from dbfs.grid import Grid
from dbfs.ops.arrays import TWIN_ITEMS
from dbfs.ops.csc_build import count_nonempty
from dbfs.ops.sparse import Positions, by_position, held_offsets

# The most entries a block may hold for its offsets to be int32 (the tests lower it, so that small graphs
# run the 64-bit kernels too).
NARROW_OFFSETS_MAX = int(np.iinfo(np.int32).max)


def offset_dtype(entries: int) -> np.dtype:
    """The dtype of the offsets of a block of `entries` entries: int32 where they fit, else int64."""
    return np.dtype(np.int32 if entries <= NARROW_OFFSETS_MAX else np.int64)


def building_offsets(ranks: int, n_edges: int, symmetric: bool) -> np.dtype:
    """The dtype of the offsets while a block of `ranks` blocks is built, before its entries are counted:
    as for twice a block's even share of the entries (both directions of each tuple where undirected), the
    whole graph's at most. A Graph500 block stays well within twice its share (the generator permutes the
    ids); a block of a file's graph that passes int32 while counted widens there (dbfs.build)."""
    entries = (2 if symmetric else 1) * n_edges
    return offset_dtype(min(entries, 2 * -(-entries // ranks)))


def widened_dtype(dtype, entries: int) -> np.dtype:
    """The wider of `dtype` and the offsets' dtype of a block of `entries` entries."""
    return max(np.dtype(dtype), offset_dtype(entries), key=lambda d: d.itemsize)


def widened(offsets, entries: int):
    """`offsets` (None passes) as wide as a block of `entries` entries needs: the same array where it is."""
    if offsets is None:
        return None
    dtype = widened_dtype(offsets.dtype, entries)
    return offsets if dtype == offsets.dtype else offsets.astype(dtype)


@dataclass
class GridComms:
    """World, row (same i, ordered by j, size C) and column (same j, ordered by i, size R) communicators,
    and the run's bulk transport (dbfs.collectives): "nccl" gives each line its NCCL communicator, made
    on first use."""

    grid: Grid
    world: MPI.Comm
    row: MPI.Comm
    col: MPI.Comm
    i: int
    j: int
    bulk: str = "mpi"
    lines: dict = field(default_factory=dict)     # id of a line's MPI communicator -> its NCCL one

    @classmethod
    def create(cls, grid: Grid, world: MPI.Comm = MPI.COMM_WORLD) -> "GridComms":
        if world.Get_size() != grid.size:
            raise ValueError(f"grid {grid.R}x{grid.C} needs {grid.size} ranks, have {world.Get_size()}")
        i, j = grid.coords(world.Get_rank())
        row = world.Split(color=i, key=j)
        col = world.Split(color=j, key=i)
        return cls(grid, world, row, col, i, j)

    def nccl(self, comm: MPI.Comm, backend):
        """Collective over `comm` (self.row or self.col) on first use: its NCCL communicator when the
        bulk transport is NCCL, else None."""
        if self.bulk != "nccl" or not backend.is_gpu:
            return None
        if id(comm) not in self.lines:
            from dbfs.exchange import nccl_communicator
            self.lines[id(comm)] = nccl_communicator(comm, backend)
        return self.lines[id(comm)]

    def free(self) -> None:
        for line in self.lines.values():
            line.destroy()
        self.lines.clear()
        self.row.Free()
        self.col.Free()


def holds_columns_by_position(grid: Grid, most_nonempty_columns: int | None) -> bool:
    """Whether the blocks of a grid of several ranks hold their column offsets by the positions of their
    non-empty columns (LocalGraph.hold_columns_by_position), the grid's blocks having at most
    `most_nonempty_columns` of them: where that takes fewer bytes (by_position). One rank keeps every
    column's offset: its loop's kernels (dbfs.device_loop) read them directly, and at Graph500 density about
    half its columns hold an entry."""
    return grid.size > 1 and by_position(grid.cols_per_rank, most_nonempty_columns)


def csc_is_row_major(grid: Grid, symmetric: bool) -> bool:
    """The CSC block is its own row-major copy: a 1x1 grid of an undirected graph (a symmetric block
    whose local rows and columns are the same vertices)."""
    return grid.size == 1 and symmetric


@dataclass
class LocalGraph:
    """The CSC block held by rank (i, j), resident on the backend's device."""

    comms: GridComms
    backend: object               # dbfs.backend.Backend
    col_ptr: object               # xp offset_dtype(nnz) [cols_per_rank + 1], or [columns.count + 1]: the
                                  # non-empty columns' offsets (hold_columns_by_position)
    row_idx: object               # xp int32 [nnz], local rows of the edges u -> v of each column u
    n_edges: int                  # input tuples of the whole graph (self-loops and duplicates included)
    degree: object                # xp int32 [block]: owned vertices' non-self-loop entries (TEPS,
                                  # direction heuristic, root sampling)
    row_ptr: object = None        # xp, as col_ptr [rows_per_rank + 1]: row-major copy for bottom-up search
                                  # (1x1 undirected: col_ptr itself)
    col_idx: object = None        # xp int32 [nnz], local columns of the entries of each row
    info: dict = field(default_factory=dict)
    columns: object = None        # Positions of the non-empty local columns where col_ptr is held by them

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

    @cached_property
    def nonempty_columns(self) -> int:
        """The local columns with an entry (counted once)."""
        return self.columns.count if self.columns is not None else count_nonempty(self.backend, self.col_ptr)

    @cached_property
    def _row_counts(self) -> tuple[int, int]:
        """(the local rows with an entry, the most of them in one grid column's segment of b rows),
        counted once through a bitmap of them."""
        xp, rows, b = self.backend.xp, self.grid.rows_per_rank, self.grid.block
        held = Positions.of_rows(self.backend, self.row_idx, xp.zeros(rows // 32, xp.uint32),
                                 xp.zeros(rows // 32 + 1, xp.int32))
        return held.count, int(np.diff(held.block_bounds(self.backend, b)).max())

    @property
    def nonempty_rows(self) -> int:
        """The local rows with an entry."""
        return self._row_counts[0]

    @cached_property
    def most_nonempty_rows(self) -> int | None:
        """Collective on first use: the most local rows with an entry of any rank's block; None on a grid
        of one column, where nothing is held by the rows' positions (the local rows are the owned block,
        dbfs.search_state)."""
        return self.comms.world.allreduce(self.nonempty_rows, op=MPI.MAX) if self.grid.C > 1 else None

    @cached_property
    def most_nonempty_columns(self) -> int:
        """Collective on first use: the most local columns with an entry of any rank's block (the search
        state, alike on every rank where NVSHMEM maps it, is sized by it)."""
        return self.comms.world.allreduce(self.nonempty_columns, op=MPI.MAX)

    @cached_property
    def group_slots(self) -> int:
        """Collective on first use (every rank of the grid at once): the slots of a frontier queue's group
        (dbfs.search_state), the most owned vertices with an edge on any rank, at least one (a root
        without an edge is a frontier of one); the owned block for a directed graph, whose vertices with
        no out-edge, degree 0, may still be reached."""
        if self.info.get("directed"):
            return self.grid.block
        with_edges = int(self.backend.xp.count_nonzero(self.degree))
        return max(1, self.comms.world.allreduce(with_edges, op=MPI.MAX))

    @cached_property
    def segment_slots(self) -> int:
        """Collective on first use: the slots of another owner's queue group (dbfs.search_state), the most
        rows with an entry in one segment of any rank's block, at least one."""
        return max(1, self.comms.world.allreduce(self._row_counts[1], op=MPI.MAX))

    @cached_property
    def segment_columns(self) -> int:
        """Collective on first use: the most columns with an entry in one segment of b local columns (a
        grid row's owned block) of any rank's block, at least one."""
        b, R = self.grid.block, self.grid.R
        if self.columns is not None:
            most = int(np.diff(self.columns.block_bounds(self.backend, b)).max())
        else:
            most = max(count_nonempty(self.backend, self.col_ptr[k * b:(k + 1) * b + 1]) for k in range(R))
        return max(1, self.comms.world.allreduce(most, op=MPI.MAX))

    @cached_property
    def bottom_up_step_entries(self) -> int:
        """Collective on first use: at least the most entries of TWIN_ITEMS consecutive rows that a bottom-up
        level searches (the row copy's, or the CSC's columns where it searches those), of any rank's block;
        the NumPy twin takes at most that many rows a step (dbfs.ops.bottom_up), so its step holds at most
        these entries (dbfs.memory). Read off every eighth of a step's offsets (any step's rows lie within
        nine such runs: a bound at most an eighth of a step above, made without an array of the block's
        length); where the offsets are held by position, consecutive held rows (a bound too)."""
        ptr = self.col_ptr if self.bottom_up_by_columns else self.row_ptr
        most = 0
        if ptr is not None:
            xp, run = self.backend.xp, TWIN_ITEMS // 8
            marks = xp.concatenate([ptr[::run], ptr[-1:]])
            most = int((marks[9:] - marks[:-9]).max() if marks.shape[0] > 9 else marks[-1] - marks[0])
        return self.comms.world.allreduce(most, op=MPI.MAX)

    @property
    def bottom_up_by_columns(self) -> bool:
        """An undirected graph on a grid of several ranks without the row-major copy: bottom-up levels
        search the CSC's columns (dbfs.grid_loop)."""
        return self.grid.size > 1 and not self.info.get("directed") and self.row_ptr is None

    def searches_columns(self, direction: str) -> bool:
        """Whether a search of `direction` runs its bottom-up levels on the CSC's columns."""
        return direction == "auto" and self.bottom_up_by_columns

    @property
    def bottom_up_ready(self) -> bool:
        """Whether the graph holds what a bottom-up level reads."""
        return self.row_ptr is not None or self.bottom_up_by_columns

    @property
    def row_major_shared(self) -> bool:
        """The row-major fields name the CSC arrays themselves (1x1 grid, undirected graph)."""
        return self.row_ptr is self.col_ptr

    def hold_columns_by_position(self) -> None:
        """Collective on first use: where holds_columns_by_position, col_ptr becomes the offsets of the
        block's non-empty columns alone and `columns` their Positions (kernels/positions.cuh
        ColumnStarts reads a column's start from them). A block that the build held so already
        (dbfs.build: where its counting pass keeps its keys) stays as it is; this holds the others (built
        with every column's offset: counted where the tuples are produced, or on a grid of one column
        with the row copy from the column segments) before the search state is allocated."""
        if self.columns is not None or not holds_columns_by_position(self.grid, self.most_nonempty_columns):
            return
        offsets, self.columns = held_offsets(self.backend, self.col_ptr)
        self.col_ptr = None                             # every column's offsets go before the held ones come
        self.col_ptr = self.backend.asarray(offsets)

    def narrow_offsets(self) -> None:
        """Hold col_ptr and row_ptr as offset_dtype(nnz): the build counts and places at the width of
        twice a block's even share of the entries (building_offsets), and a block whose own entries fit
        int32 keeps half of those bytes (a partition cache entry is loaded at the width it was stored)."""
        dtype = offset_dtype(self.nnz)
        shared = self.row_major_shared
        self.col_ptr = self.col_ptr.astype(dtype, copy=False)
        if shared:
            self.row_ptr = self.col_ptr
        elif self.row_ptr is not None:
            self.row_ptr = self.row_ptr.astype(dtype, copy=False)
