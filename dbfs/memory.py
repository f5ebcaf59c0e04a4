"""Per-rank memory of a main-mode run, part by part, known before anything is allocated (design.md
"Memory": what fits decides the scale), and the measured device peak to hold it against.

Method: each part is one function that counts the bytes of the arrays its code allocates, from the
grid (dbfs.grid.Grid: block b, N'/R local rows, N'/C local columns), the rank's CSC entries and the
run's options:
  graph_bytes           the resident graph (dbfs.build, dbfs.graph.LocalGraph), exact
  construction_bytes    one chunk's transients of the streaming build (dbfs.build)
  certificate_bytes     the construction certificate's id tables and chunk (dbfs.certificate)
  search_state_bytes    the search state (dbfs.search_state.layout) and the exchanges' buffers (exact
                        on the CPU backend); a search's result is a view of it, nothing is copied
  validation_bytes      the working memory of graph500.validate.validate_bfs beyond the search
                        state's idle arrays, which it borrows (dbfs.workspace)
The phases add up what is alive together: construction (the CSC being filled plus one chunk, then
the degrees), certificate (graph + certificate) and search (graph + state + validation); on the CPU
backend also the NumPy twins' largest step of the search, the file reader's buffers and the run's
Python objects. The estimate is the largest phase. A rank's entries are taken as 2m/P (m/P for a
directed graph), its non-empty local columns as all of them and a frontier queue's group as the owned
block until the build has counted them (Estimate.with_counts).

Measurement (DevicePeak): on a GPU every allocation goes through CuPy's default memory pool; after
each one the bytes in use (the pool's live arrays, in CuPy's 512-byte units, and dbfs's arrays on the
NVSHMEM symmetric heap, dbfs.nvshmem.held_bytes) and the pool's reserved bytes (what CUDA has handed
to it) are compared with their high-water marks. Neither counts CUDA's context, NCCL's own buffers,
NVSHMEM's unused heap or pinned host memory, as the estimate does not. On the CPU backend the device is
the host: tracemalloc, which NumPy tells of every array's data, gives the high-water mark of what the
rank allocated since the measurement began (arrays and Python objects alike; what was allocated before,
the interpreter and its modules, is not counted).
"""

from __future__ import annotations

import math
import re
import tracemalloc
from dataclasses import dataclass, field

from mpi4py import MPI

from dbfs import edgelist, nvshmem, runtime
from dbfs.errors import DbfsError
from dbfs.graph import building_offsets, csc_is_row_major, holds_columns_by_position, offset_dtype, widened_dtype
from dbfs.grid import Grid, default_grid
from dbfs.ops.arrays import TWIN_CHUNK, TWIN_ITEMS
from dbfs.ops.sparse import positions_bytes
from graph500.generator import expected_reaching_share

GIB = 1 << 30
MIN_CHUNK_EDGES = 1 << 16
MAX_CHUNK_EDGES = 1 << 26
MAX_LANDING_CHUNK_EDGES = 1 << 24  # a chunk that sizes construction's NVSHMEM landing: 512 MiB of the 1 GiB heap
CHUNK_SHARE = 0.05            # construction transients at most this share of the resident graph
LANDING_SHARE = 2             # construction's NVSHMEM landing: twice a rank's average incoming words a chunk
MOST_RANKS = 1 << 20          # the most ranks that the advice on what would fit looks at
# Transient bytes per tuple of a chunk at the peak of a streaming pass (dbfs.build), counted from its
# code: the chunk's src and dst (16), then routing, in one kernel on a GPU. One GPU rank routes one
# direction at a time: its int32 columns and rows (8). Several GPU ranks route a chunk's d entries a
# tuple together (d = 2, both directions; 1 for a directed graph): owner ranks, columns and rows
# (int32, 12 d), then the grouped send buffer beside them (8 d); what follows is smaller (the send and
# the received buffers, 16 d; the received one and its columns and rows, 16 d). The CPU backend's peak
# is instead its NumPy twins': on one rank the routing twin (the int32 columns (4) while to_local_row
# holds four int64 temporaries (32), the self-loop mask (1), with a row copy the rows as well (4)) or
# the scatter twin's sort of a chunk's entries beside their columns and rows (8); on several ranks the
# routing twin (the mask, then 12 d beside one direction's ownership math, 32), the grouping by owner
# and the scatter over the d entries of a tuple, by the entries a rank receives (which exceed the even
# share where its block holds more), the received words' 8 B and the send buffer's 8 beside the sort.
# The sort (dbfs.ops.csc_build.scatter_values) holds 53 B an entry and 20 a distinct key (the keys
# present, int32, their first entries and counts, int64): tracemalloc, within 0.1% from 1% of the keys
# distinct to all. A chunk's distinct keys are at most its entries and its block's non-empty columns (rows,
# in the row copy's scatter): 4% of a Kronecker block's entries at scale 14 on 2x2, 59% of a lattice's,
# whose columns hold one or two entries (construction_bytes); the chunk is sized before they are counted,
# with one a placed entry (chunk_edges). NumPy elides an expression's temporaries only from 256 KiB (its
# NPY_MIN_ELIDE_BYTES): a sort of fewer than 32,768 entries keeps one more int64 temporary in its slots' line,
# 61 B an entry beside the same 20 a key (tracemalloc: 61.3 against 53.2 from 32,768 entries on). Any rank's
# chunk brings it at most the largest rank's entries, so where those are a few more than the line, a rank just
# below it holds more (construction_bytes).
# The host-staged exchange's page-locked buffers are host memory, not counted.
# The NumPy generator's own buffers while it makes a chunk (CPU only): its 8192-edge block's states and
# products, 8192 x (32 SCALE + 380) bytes, measured with tracemalloc at scales 14 to 26.
GENERATOR_BYTES_BASE = 8192 * 380
GENERATOR_BYTES_PER_SCALE = 8192 * 32
CHUNK_TUPLE_BYTES = 16
ROUTE_ONE_RANK_BYTES = 8
TWIN_ROUTE_ONE_RANK_BYTES = 1 + 4 + 32
ROUTED_ENTRY_BYTES = 12
GROUPED_ENTRY_BYTES = 8
TWIN_ROUTE_BYTES = 1 + 32
TWIN_SORT_BYTES = (53, 20)
TWIN_SORT_ELIDED_ENTRIES = (256 << 10) // 8      # NumPy's NPY_MIN_ELIDE_BYTES of int64 slots
TWIN_SORT_BYTES_BELOW_ELISION = (61, 20)
TWIN_SCATTER_ENTRY_BYTES = 8
TWIN_ROUTED_ENTRY_BYTES = 8 + 8
# The CPU backend's NumPy twins in the search phase work in steps (dbfs.ops.arrays: TWIN_ITEMS vertices
# a step, their entries in groups of about TWIN_CHUNK), one at a time; a step's bytes, measured with
# tracemalloc: an expansion 64 B a frontier column and 48 an entry (64 where every row it reaches is new;
# Graph500 levels at scales 18-20 hold less), a bottom-up step (TWIN_BOTTOM_UP_*, below). The validation's entry
# pass (dbfs.ops.validate._entries_numpy: a chunk's entries, in the piece's columns they span) makes its temporaries
# in place or drops them once used, so NumPy's elision of temporaries changes nothing; it peaks at the largest of its
# stages, each so many bytes an entry + a column + in all (TWIN_CHECK_BYTES): 17 + 4, the entries' int32 columns
# and both levels (12) beside each one's test against its column's expected parent row (that row gathered, 4, and
# the mask, 1; the expected rows, 4 a column); 16 + 4 + NumPy's buffer for gathering by an int32 index (8,192
# int64: more than the mask where a step has fewer entries); 12 + 8 + the buffer and 12 + 9, the parents' local
# rows (_local_rows: their blocks, then offsets, and the rows); 4 + 16, the columns repeated by their degrees
# (which NumPy copies to int64). A directed graph's: 29 an entry + the buffer where every row is reached (a reached
# row's entries look up its parent against the column's int64 id), less where fewer are, or 4 + 16. A step also
# holds 6 KiB of objects; beside it the piece's levels decoded to int32 (4 B a column and a row). tracemalloc, int32
# parents (graphs of fewer than 2^31 vertices): 2,026 steps of lattices and Kronecker graphs on 1 to 16 ranks, 7 kB
# to 20 MB, none above the count, those from 300 kB within 1.1% of it; directed, 454 steps of lattices and Kronecker
# graphs stored one way and both ways, none above it, a lattice stored both ways (every row reached) within 0.05%.
# What the CPU backend holds besides its arrays:
# Python's objects made during the run (modules imported, records), about half a MiB, measured likewise; in the
# construction, which comes first, 16 KiB (15.3 kB at the placing pass's peak on a lattice file at 2x2) and the
# generator's cached tables (graph500.mrg's jump matrices, made with its first chunk and kept: 439-441 kB at
# scales 14 and 20).
CPU_PYTHON_BYTES = 1 << 19
CPU_BUILD_PYTHON_BYTES = 1 << 14
GENERATOR_TABLES_BYTES = 440_000
TWIN_EXPAND_BYTES = (64, 48)
TWIN_INDEX_BUFFER_BYTES = 8192 * 8
# A bottom-up twin step (dbfs.ops.bottom_up._search_words) of n rows, its largest group of G searched entries
# (at most the most entries of any TWIN_ITEMS consecutive rows once the build has counted them, and TWIN_CHUNK),
# holds however many entries are in the frontier: each row's searched entries before it and whether it was found
# (8 + 1 B a row; where the rows' offsets are held by position, the step's offsets gathered beside them, at their
# width w); before the groups, the rows' lengths beside the first (8 + w a row, or 8 + 2 w with held offsets); in a
# group the largest of 28 B a row + 4 an entry (the running count of hits beside the rows found and their first
# hits), 8 an entry (the entries' 32-bit index, or 16 where the window's rows span 2^31 entries and it is 64-bit;
# then their columns, then their words) + NumPy's buffer for gathering by a 32-bit index + a step of frontier
# words and, where the finds are held by position, 28 a row + Positions.at's steps (MEMBERS_STEP members,
# 247.6 kB); and some 6-14 kB of objects. tracemalloc, 600 synthetic steps (32 to 32,768 rows, 0.3 to 64 entries
# a row and power-law rows, 0-90% visited, 0-100% of the columns in the frontier, int32 and int64 offsets, held
# or not): none above, those of more than 1 MiB of entries within 2%.
TWIN_BOTTOM_UP_BEFORE_BYTES = 8
TWIN_BOTTOM_UP_ROW_BYTES = TWIN_BOTTOM_UP_BEFORE_BYTES + 1
TWIN_BOTTOM_UP_GROUP_BYTES = (28, 4)
TWIN_BOTTOM_UP_ENTRY_BYTES = 8
TWIN_POSITIONS_AT_BYTES = 248 << 10
TWIN_BOTTOM_UP_STEP_BYTES = 16 << 10
TWIN_CHECK_BYTES = ((17, 4, 0), (16, 4, TWIN_INDEX_BUFFER_BYTES), (12, 8, TWIN_INDEX_BUFFER_BYTES), (12, 9, 0),
                    (4, 16, 0))
TWIN_CHECK_DIRECTED_BYTES = ((29, 0, TWIN_INDEX_BUFFER_BYTES), (4, 16, 0))
TWIN_CHECK_STEP_BYTES = 6 << 10
TWIN_DECODED_LEVEL_BYTES = 4
# The rows' order's twin (dbfs.ops.row_order, after the build's passes): a group of at most TWIN_ITEMS rows
# and about TWIN_CHUNK entries at a time, 40 B a row and 48 an entry (tracemalloc, 4 to 128 entries a row:
# 48-80 B an entry in all).
TWIN_ORDER_BYTES = (40, 48)
# An undirected graph's row copy on a grid of one column appends the rank's own block of column segments
# (dbfs.build._Passes.gather_rows; dbfs.ops.csc_build.append_segments' NumPy twin): TWIN_ITEMS segments a step,
# their entries at most TWIN_CHUNK at a time, two offsets a segment (its slots' base, its entries in the step)
# and two an entry (its slot, the slots kept) beside 5 B (the mask of slots kept, the values with the offset
# added); tracemalloc, int32 and int64 offsets, within 0.5%.
TWIN_APPEND_OFFSETS = (2, 2)
TWIN_APPEND_ENTRY_BYTES = 5
# The certificate's NumPy twin (dbfs.ops.certificate.hash_entries): an entry of its step holds its index,
# column and the two global ids (8 each) and the two mixes' temporaries; measured with tracemalloc, 56 B.
TWIN_HASH_ENTRY_BYTES = 56
TWIN_HASH_TUPLE_BYTES = 41      # its hash_tuples, a tuple of its step (measured likewise)
UNITS = {"B": 1, "kB": 10**3, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
         "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}


def parse_size(text: str) -> int:
    """'80GiB', '141GB', '512MiB', '1.5TB', '80gib', '80 GiB' -> bytes (units: see UNITS, any case)."""
    units = {unit.lower(): size for unit, size in UNITS.items()}
    match = re.fullmatch(r"(\d+(?:\.\d+)?) ?([a-z]+)", text.strip().lower())
    if not match or match.group(2) not in units or float(match.group(1)) <= 0:
        raise DbfsError(f"--memory must be a positive size with a unit, like 80GiB, 141GB or 512MiB "
                        f"(units: {', '.join(UNITS)}, in any case), got {text!r}", collective=True)
    return int(float(match.group(1)) * units[match.group(2)])


def row_major_layout(grid: Grid, symmetric: bool, direction: str, row_copy: bool = True) -> str:
    """'none' (a top-down search), 'shared' (1x1 undirected: the CSC is its own row-major copy), 'copy',
    or 'columns' (an undirected graph on several ranks without the copy: bottom-up on the CSC's
    columns, dbfs.grid_loop)."""
    if direction != "auto":
        return "none"
    if csc_is_row_major(grid, symmetric):
        return "shared"
    return "copy" if row_copy or not symmetric else "columns"


def resolve_row_copy(setting: str, grid: Grid, n_edges: int, symmetric: bool, direction: str,
                     transport: str = "mpi", device: str = "gpu", limit: int | None = None,
                     columns: str | None = None) -> bool:
    """--row-copy: 'on', 'off', or 'auto': on where the run's estimate with it fits `limit` (None:
    nothing to fit), else off. Nothing to choose (True) for a top-down search or where the CSC is its
    own copy (1x1, undirected); a directed graph's bottom-up search needs it (DbfsError for 'off')."""
    if direction != "auto" or csc_is_row_major(grid, symmetric):
        return True
    if not symmetric:
        if setting == "off":
            raise DbfsError("--row-copy off: a directed graph's bottom-up search needs the row-major copy; "
                            "--direction topdown runs without it", collective=True)
        return True
    if setting != "auto":
        return setting == "on"
    return estimate(grid, n_edges, symmetric, direction, transport, device, limit=limit, columns=columns).fits


def sized_transport(comm: str) -> str:
    """The transport whose buffers a run's estimate counts for --comm `comm`: `auto` is sized as nccl, before
    it is resolved (resolving it needs the sizes)."""
    return "nccl" if comm == "auto" else comm


# `columns` of an estimate for a Graph500 graph not yet built (`plan`): graph500_columns of its grid.
EXPECTED_COLUMNS = "expected"


def graph500_columns(grid: Grid, edgefactor: int) -> int:
    """The non-empty local columns a rank's block of a Graph500 graph over grid.n_vertices = 2^SCALE
    vertices is expected to hold, what the build will count (graph500.generator.expected_reaching_share
    over the grid's R row ranges, for the fullest column range)."""
    scale = grid.n_vertices.bit_length() - 1
    share = expected_reaching_share(scale, edgefactor, grid.R)
    return min(grid.cols_per_rank, math.ceil(share * min(grid.cols_per_rank, grid.n_vertices)))


def graph500_rows(grid: Grid, edgefactor: int) -> int:
    """The non-empty local rows expected likewise: the share over the grid's C column ranges."""
    scale = grid.n_vertices.bit_length() - 1
    share = expected_reaching_share(scale, edgefactor, grid.C)
    return min(grid.rows_per_rank, math.ceil(share * min(grid.rows_per_rank, grid.n_vertices)))


def graph500_segment(grid: Grid, edgefactor: int, parts: int) -> int:
    """The members with an entry that one segment of b vertices of a Graph500 graph over grid.n_vertices =
    2^SCALE vertices is expected to hold, at least one, what the build will count
    (graph500.generator.expected_reaching_share over `parts` parts): over one part the owned vertices
    with an edge (a queue's own group, dbfs.graph.LocalGraph.group_slots), over the grid's C column
    ranges a segment's rows (the other owners' groups, segment_slots), over its R row ranges a
    segment's columns (segment_columns)."""
    scale = grid.n_vertices.bit_length() - 1
    return max(1, min(grid.block, math.ceil(expected_reaching_share(scale, edgefactor, parts) * grid.block)))


def graph500_counts(grid: Grid, n_edges: int, symmetric: bool) -> dict:
    """What a Graph500 graph's block is expected to take (EXPECTED_COLUMNS), as estimate's arguments: its
    non-empty columns and a segment's, and for an undirected graph its non-empty rows and its queue
    groups' slots."""
    edgefactor = n_edges // grid.n_vertices
    counts = {"columns": graph500_columns(grid, edgefactor),
              "segment_columns": graph500_segment(grid, edgefactor, grid.R)}
    if symmetric:
        counts.update(rows=graph500_rows(grid, edgefactor), slots=graph500_segment(grid, edgefactor, 1),
                      segment_slots=graph500_segment(grid, edgefactor, grid.C))
    return counts


def entries_per_rank(grid: Grid, n_edges: int, symmetric: bool) -> int:
    """The CSC entries of a rank if they spread evenly (self-loops counted: an upper bound)."""
    return -(-(2 if symmetric else 1) * n_edges // grid.size)


GRAPH_ARRAYS = ("col_ptr", "row_idx", "degree", "row_ptr", "col_idx")


def graph_bytes(grid: Grid, entries: int, row_major: str, offset: int | None = None,
                columns: int | None = None) -> dict:
    """The resident LocalGraph arrays of a rank holding `entries` CSC entries, its offsets of `offset`
    bytes (default: as wide as dbfs.graph.offset_dtype makes them once built); `columns`: the grid's most
    non-empty local columns of a block, by whose positions the searches hold the column offsets where
    dbfs.graph.holds_columns_by_position (None: not counted, every column's offset, as the build holds
    them)."""
    offset = offset_dtype(entries).itemsize if offset is None else offset
    cols = grid.cols_per_rank
    col_ptr = (offset * (columns + 1) + positions_bytes(cols) if holds_columns_by_position(grid, columns)
               else offset * (cols + 1))
    parts = {"col_ptr": col_ptr, "row_idx": 4 * entries, "degree": 4 * grid.block}
    if row_major == "copy":
        parts.update(row_ptr=offset * (grid.rows_per_rank + 1), col_idx=4 * entries)
    return parts


def chunk_edges(grid: Grid, n_edges: int, symmetric: bool, row_copy: bool, device: str = "gpu",
                room: int = 0, transport: str = "mpi") -> int:
    """Tuples per chunk of the streaming build over `transport`: a power of two keeping the
    construction transients (over NVSHMEM on several GPU ranks, its landing too) within CHUNK_SHARE of
    the resident graph or within `room` (what the search adds to the resident graph later, so the run's
    peak does not move), whichever is more, between MIN_CHUNK_EDGES and MAX_CHUNK_EDGES
    (MAX_LANDING_CHUNK_EDGES with a landing, which lives on the symmetric heap). Fewer, larger chunks:
    each costs several ranks a few host waits and collectives (bench/NOTES.md, 2026-11-25,
    construction's chunks in the search's room; 2026-11-27, chunks up to 2^26 tuples)."""
    graph = sum(graph_bytes(grid, entries_per_rank(grid, n_edges, symmetric),
                            "copy" if row_copy else "none").values())
    landing = _landing_bytes(grid, 1, symmetric, device, transport)
    per_tuple = _tuple_bytes(grid, symmetric, row_copy, device) + landing
    fitting = max(1, int(max(CHUNK_SHARE * graph, room) / per_tuple))
    most = MAX_LANDING_CHUNK_EDGES if landing else MAX_CHUNK_EDGES
    return min(most, max(MIN_CHUNK_EDGES, 1 << (fitting.bit_length() - 1)))


def counts_at_source(grid: Grid, chunk: int, symmetric: bool, row_copy: bool, device: str, transport: str) -> bool:
    """Whether the build's counting pass counts each chunk's entries where they are produced, by owner
    and local column into a uint32 histogram over every rank's local columns whose blocks one round of
    the exchange brings to their owners (dbfs.build), instead of sending the entries: several GPU ranks
    building over NCCL, where the histogram beside a chunk's tuples, and beside the blocks received,
    takes no more than a chunk's routing (so the estimate does not move) (bench/NOTES.md, 2026-11-27,
    the counting pass without the entries' exchange)."""
    if grid.size == 1 or device != "gpu" or transport != "nccl":
        return False
    histogram, received = 4 * grid.size * grid.cols_per_rank, 4 * (grid.size - 1) * grid.cols_per_rank
    routing = chunk * _tuple_bytes(grid, symmetric, row_copy, device)
    return histogram + max(CHUNK_TUPLE_BYTES * chunk, received) <= routing


def rows_from_peers(grid: Grid, symmetric: bool, row_copy: bool) -> bool:
    """Whether the build takes an undirected graph's row copy from the column segments the ranks send each
    other after the placing pass: a grid of one column of several ranks (dbfs.build)."""
    return row_copy and symmetric and grid.C == 1 and grid.size > 1


def counts_kept_keys(grid: Grid, chunk: int, symmetric: bool, row_copy: bool, device: str, transport: str) -> bool:
    """Whether the build's counting pass keeps its entries' columns and counts them once every column's
    presence is known, so that a hypersparse block's offsets are built held by its non-empty columns
    (dbfs.build): on several ranks, but where it counts at the source (counts_at_source) or takes the row
    copy from the column segments (rows_from_peers)."""
    return (grid.size > 1 and not rows_from_peers(grid, symmetric, row_copy)
            and not counts_at_source(grid, chunk, symmetric, row_copy, device, transport))


def _tuple_bytes(grid: Grid, symmetric: bool, row_copy: bool, device: str, skew: float = 1.0,
                 keys: float = 1.0, elided: bool = True) -> float:
    """Transient bytes per tuple of a chunk during the scatter pass (see CHUNK_TUPLE_BYTES); skew: the
    rank's entries over the even share, by which a chunk brings it more entries than the average; keys:
    the distinct keys of a chunk's entries over its entries (at most 1, the default; the CPU twin's
    scatter sorts them, TWIN_SORT_BYTES); elided: a chunk brings the rank at least TWIN_SORT_ELIDED_ENTRIES
    to sort (else TWIN_SORT_BYTES_BELOW_ELISION)."""
    per_entry, per_key = TWIN_SORT_BYTES if elided else TWIN_SORT_BYTES_BELOW_ELISION
    sort = per_entry + per_key * keys
    if grid.size == 1:
        if device == "cpu":
            return CHUNK_TUPLE_BYTES + max(TWIN_ROUTE_ONE_RANK_BYTES + (4 if row_copy else 0),
                                           TWIN_SCATTER_ENTRY_BYTES + sort)
        return CHUNK_TUPLE_BYTES + ROUTE_ONE_RANK_BYTES
    entries = 2 if symmetric else 1
    if device == "cpu":
        return CHUNK_TUPLE_BYTES + max(ROUTED_ENTRY_BYTES * entries + TWIN_ROUTE_BYTES,
                                       (TWIN_ROUTED_ENTRY_BYTES + sort) * entries * skew)
    return CHUNK_TUPLE_BYTES + (ROUTED_ENTRY_BYTES + GROUPED_ENTRY_BYTES) * entries


def _landing_bytes(grid: Grid, chunk: int, symmetric: bool, device: str, transport: str) -> int:
    """Construction's NVSHMEM landing for chunks of `chunk` tuples (dbfs.build; several GPU ranks building
    over NVSHMEM, `transport`, else none), without its signal words."""
    several_gpus = grid.size > 1 and device == "gpu" and transport == "nvshmem"
    return 4 * landing_words(chunk, symmetric) if several_gpus else 0


def construction_bytes(grid: Grid, n_edges: int, chunk: int, symmetric: bool, row_copy: bool,
                       device: str = "gpu", transport: str = "mpi", generated: bool = True,
                       reading: int = 0, entries: int | None = None, keys: int | None = None) -> int:
    """Transients of a streaming pass: one chunk (at most the largest rank's share of tuples) being routed,
    or on the CPU being generated beside the generator's buffers (generator_bytes) or read beside the
    reader's (`reading`), and where the build goes over NVSHMEM (`transport`) on several GPU ranks the
    symmetric landing kept for the whole build (sized by the chunk) and its signal words. entries: the
    rank's counted entries, where more than the even share (a chunk brings it as many more); keys: the
    most keys a scatter of the placing pass sorts on the CPU, the block's non-empty columns or rows (None:
    one an entry), of which a chunk holds as many as if its entries were drawn at random from the rank's
    and every key held as many (for any spread of the entries over the keys, at least the mean). On the
    CPU a chunk bringing a rank just fewer entries than NumPy elides the sort's temporaries for holds more
    than one bringing a few more (TWIN_SORT_BYTES_BELOW_ELISION): with several ranks, any rank's chunk
    brings it at most the largest rank's entries, and the larger of the two is counted."""
    share = -(-n_edges // grid.size)
    tuples = min(chunk, share)
    landing = _landing_bytes(grid, chunk, symmetric, device, transport)
    even = entries_per_rank(grid, n_edges, symmetric)
    skew = max(1.0, entries / even) if entries else 1.0
    drawn = tuples / share if tuples else 0.0

    def sorted_entries(rank_skew: float) -> float:
        """A rank's entries that the placing pass's scatters sort (one rank: a direction at a time)."""
        return rank_skew * even / (2 if grid.size == 1 and symmetric else 1)

    def routing_at(rank_skew: float) -> float:
        """One chunk's transients at a rank holding rank_skew times the even share of entries."""
        distinct = 1.0
        if keys and tuples:
            held = keys if drawn == 1 else -keys * math.expm1(math.log1p(-drawn) * sorted_entries(rank_skew) / keys)
            distinct = min(1.0, held / (drawn * sorted_entries(rank_skew)))
        elided = drawn * sorted_entries(rank_skew) >= TWIN_SORT_ELIDED_ENTRIES
        return tuples * _tuple_bytes(grid, symmetric, row_copy, device, rank_skew, distinct, elided)

    routing = routing_at(skew)
    placed = drawn * sorted_entries(skew)
    if device == "cpu" and grid.size > 1 and placed >= TWIN_SORT_ELIDED_ENTRIES:
        routing = max(routing, routing_at(skew * (TWIN_SORT_ELIDED_ENTRIES - 1) / placed))
    routing = int(routing)
    generating = 16 * tuples + generator_bytes(grid, device, generated) + reading
    return max(routing, generating) + landing + (8 * grid.size if landing else 0)


def certificate_bytes(grid: Grid, n_edges: int, chunk: int, entries: int, device: str = "gpu",
                      generated: bool = True, reading: int = 0) -> int:
    """dbfs.certificate: first one chunk of tuples (16 B each; on the CPU beside the generator's buffers
    or the hashing twin's step, TWIN_HASH_TUPLE_BYTES a tuple), then the rank's `entries` hashed with
    their global ids computed per entry (nothing on a GPU; on the CPU the twin's step,
    TWIN_HASH_ENTRY_BYTES an entry); an accumulator. reading: the file reader's buffers beside a chunk
    (estimate's read_buffers; on the CPU, gone before the chunk is hashed)."""
    share = -(-n_edges // grid.size)
    tuples = min(chunk, share)
    cpu = device == "cpu"
    tuple_pass = 16 * tuples + (max(generator_bytes(grid, device, generated), reading,
                                    TWIN_HASH_TUPLE_BYTES * min(TWIN_CHUNK, tuples)) if cpu else 0)
    entry_pass = TWIN_HASH_ENTRY_BYTES * min(TWIN_CHUNK, entries) if cpu else 0
    return max(tuple_pass, entry_pass) + 24


def twin_order_bytes(grid: Grid, entries: int) -> int:
    """The rows' order's NumPy twin after the build's passes (CPU backend): a group of rows, at most
    TWIN_ITEMS, with their share of the rank's `entries` (at most TWIN_CHUNK), beside the whole graph."""
    rows = min(TWIN_ITEMS, grid.rows_per_rank)
    group = min(TWIN_CHUNK, -(-entries * rows // max(grid.rows_per_rank, 1)))
    return TWIN_ORDER_BYTES[0] * rows + TWIN_ORDER_BYTES[1] * group


def twin_append_bytes(grid: Grid, entries: int, width: int) -> int:
    """The row copy's own column segments appended on a grid of one column (CPU backend): a step of at most
    TWIN_ITEMS of the block's segments with their share of the rank's `entries` in its own block (one of
    the grid's R), at most TWIN_CHUNK, at offsets of `width` bytes, beside the graph being filled."""
    segments = min(TWIN_ITEMS, grid.block)
    step = min(TWIN_CHUNK, -(-entries * segments // (grid.R * grid.block)))
    return (TWIN_APPEND_OFFSETS[0] * width * segments
            + (TWIN_APPEND_OFFSETS[1] * width + TWIN_APPEND_ENTRY_BYTES) * step)


def generator_bytes(grid: Grid, device: str, generated: bool = True) -> int:
    """The NumPy Graph500 generator's own buffers while it makes a chunk (graph500.generator; the CUDA
    generator writes the chunk alone): GENERATOR_BYTES_BASE + GENERATOR_BYTES_PER_SCALE x SCALE."""
    if device != "cpu" or not generated:
        return 0
    return GENERATOR_BYTES_BASE + GENERATOR_BYTES_PER_SCALE * max(1, (grid.n_vertices - 1).bit_length())


def search_state_bytes(grid: Grid, direction: str, entries: int, transport: str = "mpi",
                       device: str = "gpu", encoding: str = "adaptive", by_columns: bool = False,
                       columns: int | None = None, symmetric: bool = True, scan_lent: int = 0,
                       slots: int | None = None, log_levels: bool = False, rows: int | None = None,
                       segment_slots: int | None = None, segment_columns: int | None = None) -> int:
    """What dbfs.bfs.BFS allocates: the search state's arrays (dbfs.search_state.layout, exact; columns and
    rows: the block's non-empty columns and rows, slots and segment_slots an own queue group's and another
    owner's, segment_columns a segment's most columns with an entry, None while not counted; scan_lent:
    dbfs.grid_loop.scan_lent_bytes; log_levels: the run keeps the per-level log),
    the loop's buffers (the exchanges' among them), and on the CPU backend the loop's host buffers
    (pinned host memory on a GPU, so not device memory there)."""
    from dbfs import bfs, device_loop, grid_loop, search_state
    one_rank = grid.size == 1
    cpu = device == "cpu"
    total = search_state.layout_bytes(grid, direction, entries, bfs.LOG_CAPACITY if one_rank else 0, by_columns,
                                      columns, symmetric, scan_lent, slots, rows,
                                      grid_loop.finds_read_in_place(transport, cpu), segment_slots)
    if one_rank:
        return total + (device_loop.host_buffer_bytes() if cpu else 0)
    held = search_state.held_segments(grid, by_columns, columns, rows, segment_slots, segment_columns)
    return total + grid_loop.buffer_bytes(grid, encoding, transport, cpu, direction, by_columns, log_levels, held)


def twin_search_bytes(grid: Grid, direction: str, entries: int, checking: int = 0,
                      step_entries: int | None = None, rows_held: bool = False, finds_held: bool = False) -> int:
    """The CPU backend's largest NumPy-twin step of the search phase: an expansion (top-down levels; with
    direction auto a top-down level's frontier edges stay below the unvisited ones / alpha, the
    direction rule's), a bottom-up step (direction auto; of at most `step_entries` entries where counted,
    dbfs.graph.LocalGraph.bottom_up_step_entries, else the rank's; rows_held, finds_held: twin_bottom_up_bytes),
    the validation's entry pass (`checking`, twin_check_bytes; 0 where nothing is validated)."""
    from dbfs.direction import DEFAULT_ALPHA
    expanded = min(TWIN_CHUNK, entries if direction != "auto" else int(entries / DEFAULT_ALPHA))
    steps = [TWIN_EXPAND_BYTES[0] * min(TWIN_ITEMS, grid.cols_per_rank) + TWIN_EXPAND_BYTES[1] * expanded,
             checking]
    if direction == "auto":
        steps.append(twin_bottom_up_bytes(grid, entries, step_entries, rows_held, finds_held))
    return max(steps)


def twin_bottom_up_bytes(grid: Grid, entries: int, step_entries: int | None = None, rows_held: bool = False,
                         finds_held: bool = False) -> int:
    """A bottom-up step of the CPU backend's NumPy twin (TWIN_BOTTOM_UP_*): TWIN_ITEMS rows of the block, a group
    of at most TWIN_CHUNK of `step_entries` (else the rank's `entries`); rows_held: their offsets held by
    position, at the block's width; finds_held: pred_row too."""
    from dbfs.ops.bottom_up import HIT_WORDS_STEP
    rows = min(TWIN_ITEMS, grid.block)
    window = entries if step_entries is None else step_entries
    group = min(TWIN_CHUNK, window)
    width = offset_dtype(entries).itemsize
    held = width if rows_held else 0
    per_row, per_entry = TWIN_BOTTOM_UP_GROUP_BYTES
    buffers = 8 * min(group, TWIN_INDEX_BUFFER_BYTES // 8) + 4 * min(group, HIT_WORDS_STEP)
    indexed = TWIN_BOTTOM_UP_ENTRY_BYTES * (2 if window >= 2**31 else 1) * group
    in_group = max(per_row * rows + per_entry * group, indexed + buffers,
                   per_row * rows + (TWIN_POSITIONS_AT_BYTES if finds_held else 0))
    lengths = (TWIN_BOTTOM_UP_BEFORE_BYTES + width + held) * rows
    return max(lengths, (TWIN_BOTTOM_UP_ROW_BYTES + held) * rows + in_group) + TWIN_BOTTOM_UP_STEP_BYTES


def twin_check_bytes(grid: Grid, symmetric: bool, entries: int, lenders: list, columns: int | None = None) -> int:
    """The validation's entry pass on the CPU backend (dbfs.ops.validate.check_entries' NumPy twin) over its
    largest piece: graph500.validate.pieces picks them for the `lenders` (validation_lenders) as the run does,
    here for the narrowest compact levels (uint8, a Graph500 search's), whose pieces are the largest. The
    piece's levels decoded; with the column offsets held by position (`columns`, the grid's most non-empty
    ones) its every column's offset, at the offsets' width; and a chunk's step: at most TWIN_CHUNK of the
    piece's share of the rank's `entries` (a column piece's all, where the rows come in pieces too: a bound),
    in whole columns, the same share of the piece's."""
    from graph500.validate import piece_lengths, pieces
    from dbfs.search_state import parent_dtype
    split = pieces(grid, parent_dtype(grid).itemsize, not symmetric, 1, lenders, entries)
    piece_columns, piece_rows = piece_lengths(grid, split)
    piece_entries = -(-entries * piece_columns // grid.cols_per_rank)
    chunk = min(TWIN_CHUNK, piece_entries)
    spanned = -(-piece_columns * chunk // piece_entries) if piece_entries else 0
    stages = TWIN_CHECK_BYTES if symmetric else TWIN_CHECK_DIRECTED_BYTES
    step = TWIN_CHECK_STEP_BYTES + max(per_entry * chunk + per_column * spanned + fixed
                                       for per_entry, per_column, fixed in stages) if chunk else 0
    starts = offset_dtype(entries).itemsize * (piece_columns + 1) if holds_columns_by_position(grid, columns) else 0
    return TWIN_DECODED_LEVEL_BYTES * (piece_columns + piece_rows) + starts + step


def placing_words(chunk: int, symmetric: bool) -> int:
    """The words one chunk of the placing pass brings a rank on average (every rank produces `chunk`
    tuples a round: both directions of each undirected one, a column and a row an entry)."""
    return chunk * (2 if symmetric else 1) * 2


def landing_words(chunk: int, symmetric: bool) -> int:
    """Construction's landing over NVSHMEM (dbfs.build): LANDING_SHARE times placing_words."""
    return LANDING_SHARE * placing_words(chunk, symmetric)


def row_round_words(chunk: int) -> int:
    """Words a rank receives at most in a round of the row copy's exchange on a grid of one column
    (dbfs.build, after the placing pass, an undirected graph), its row lengths included: placing_words,
    so that a round's buffers (those words, what it sends, the segments' starts) stay within one such
    chunk's transients (_tuple_bytes) and within construction's NVSHMEM landing."""
    return placing_words(chunk, True)


def symmetric_heap_bytes(grid: Grid, n_edges: int, symmetric: bool, direction: str, encoding: str = "adaptive",
                         device: str = "gpu", row_copy: bool = True, build_transport: str = "nvshmem",
                         columns: str | None = None) -> int:
    """What a rank of a --comm nvshmem run holds on the NVSHMEM symmetric heap at most: construction's
    landing and signal words (where the build goes over NVSHMEM too: build_transport, from
    dbfs.transport.bulk_transport), or later the search's (counted in its search state too): the level
    exchanges' buffers, the once-a-search rounds' and the device-driven levels' landings (columns:
    EXPECTED_COLUMNS, the records read in place and the queues as a Graph500 graph's blocks are expected
    to hold them, as estimate counts them; None: bounds, every local row and column)."""
    from dbfs import grid_loop
    if grid.size == 1:
        return 0
    counts = graph500_counts(grid, n_edges, symmetric) if columns == EXPECTED_COLUMNS else {}
    construction = 0
    if build_transport == "nvshmem":
        chunk = estimate(grid, n_edges, symmetric, direction, "nvshmem", device, row_copy=row_copy).inputs["chunk"]
        construction = _landing_bytes(grid, chunk, symmetric, device, "nvshmem") + 8 * grid.size
    by_columns = row_major_layout(grid, symmetric, direction, row_copy) == "columns"
    return max(construction, grid_loop.symmetric_bytes(grid, encoding, direction, by_columns, counts.get("columns"),
                                                       counts.get("rows"), counts.get("slots"),
                                                       counts.get("segment_slots")))


def validation_lenders(grid: Grid, symmetric: bool, entries: int, direction: str = "auto",
                       by_columns: bool = False, columns: int | None = None, scan_lent: int = 0,
                       slots: int | None = None, rows: int | None = None, segment_slots: int | None = None) -> list:
    """The byte sizes of the search state's idle arrays (dbfs.search_state.idle_after_search), which
    dbfs.bfs.BFS.idle_memory lends graph500.validate.validate_bfs."""
    from dbfs.search_state import idle_after_search, layout
    arrays = layout(grid, direction, entries, by_columns=by_columns, columns=columns, symmetric=symmetric,
                    scan_lent=scan_lent, slots=slots, rows=rows, segment_slots=segment_slots)
    return [arrays[name][0].itemsize * arrays[name][1] for name in idle_after_search(grid, by_columns)]


def validation_bytes(grid: Grid, symmetric: bool, entries: int, lenders: list) -> int:
    """graph500.validate.validate_bfs's device arrays (its gathered arrays, whole or by owned block as
    graph500.validate.pieces picks for the `lenders`, validation_lenders, with the widest compact levels,
    int32, and the entry pass's table of chunk columns, dbfs.ops.validate) beyond what the lenders hold."""
    from dbfs.search_state import parent_dtype
    from graph500.validate import validation_bytes as validator_bytes
    return validator_bytes(grid, parent_dtype(grid).itemsize, directed=not symmetric, level_itemsize=4,
                           lenders=lenders, entries=entries)


@dataclass(frozen=True)
class Estimate:
    """Bytes per rank by part and by phase; `limit` the bytes available (None: not checked)."""

    parts: dict
    phases: dict
    limit: int | None
    inputs: dict = field(repr=False)

    @property
    def peak(self) -> int:
        return max(self.phases.values())

    @property
    def peak_phase(self) -> str:
        return max(self.phases, key=self.phases.get)

    @property
    def resident(self) -> int:
        """The resident graph's bytes."""
        return sum(size for name, size in self.parts.items() if name in GRAPH_ARRAYS)

    @property
    def fits(self) -> bool:
        return self.limit is None or self.peak <= self.limit

    def with_counts(self, entries: int, columns: int, slots: int | None = None, rows: int | None = None,
                    segment_slots: int | None = None, segment_columns: int | None = None,
                    step_entries: int | None = None) -> "Estimate":
        """The same estimate for a rank holding exactly `entries` CSC entries in `columns` non-empty
        local columns, and own queue groups of `slots`, `rows` non-empty local rows, the other owners'
        groups of `segment_slots`, a segment's most columns with an entry `segment_columns` and a bottom-up
        twin step's most entries `step_entries` once counted (until then the estimate's own: a Graph500
        graph's expected ones, else bounds)."""
        counted = {"slots": slots, "rows": rows, "segment_slots": segment_slots, "segment_columns": segment_columns,
                   "step_entries": step_entries}
        counted = {name: self.inputs[name] if n is None else n for name, n in counted.items()}
        return estimate(**{**self.inputs, "entries": entries, "columns": columns, **counted})

    def summary(self) -> str:
        phases = ", ".join(f"{name} {readable(size)}" for name, size in self.phases.items())
        return f"{readable(self.peak)} at the {self.peak_phase} phase ({phases})"


def unit_of(size: int) -> tuple[str, int]:
    """(name, bytes) of the largest of TiB, GiB, MiB, KiB and B that shows `size` with a digit before the
    point."""
    return next(((unit, scale) for unit, scale in (("TiB", 1 << 40), ("GiB", GIB), ("MiB", 1 << 20), ("KiB", 1 << 10))
                 if size >= scale), ("B", 1))


def readable(size: int) -> str:
    """Bytes in TiB, GiB, MiB or KiB, whichever shows them with a digit before the point."""
    unit, scale = unit_of(size)
    return f"{size} B" if scale == 1 else f"{size / scale:.2f} {unit}"


def estimate(grid: Grid, n_edges: int, symmetric: bool = True, direction: str = "auto",
             transport: str = "mpi", device: str = "gpu", entries: int | None = None,
             chunk: int | None = None, limit: int | None = None, row_copy: bool = True,
             generated: bool = True, read_buffers: tuple = (0, 0), columns: int | str | None = None,
             certified: bool = True, build_transport: str | None = None, slots: int | None = None,
             log_levels: bool = False, rows: int | None = None, segment_slots: int | None = None,
             segment_columns: int | None = None, keeps_keys: bool | None = None,
             step_entries: int | None = None) -> Estimate:
    """Every part and phase of one rank (the one with `entries` entries, `columns` non-empty local
    columns and `rows` non-empty local rows, its own queue groups of `slots` and the other owners' of
    `segment_slots` (also a segment's most rows with an entry), a segment's most columns with an entry
    `segment_columns`; default: the even share, every local column and row and the owned block, bounds
    until the build has counted; EXPECTED_COLUMNS: as many columns, rows and slots as a Graph500 graph's
    block is expected to take, graph500_counts). The
    build's chunk (`chunk`; default: chunk_edges with the search state and validation as its room) is
    kept in `inputs`, so the estimate redone with the counted entries assumes the chunk the build took.
    row_copy: the bottom-up search keeps the row-major copy (row_major_layout); generated: the tuples come
    from the Graph500 generator (not a file); read_buffers: the file reader's host buffers
    (edgelist.read_buffer_bytes) while it reads a chunk's tuples and while it reads the roots' original
    ids, counted on the CPU backend, whose memory they share: the first in the build's and the
    certificate's phases, the second in the search's; certified=False: no certificate phase, nor the
    validation's NumPy twin (--validate none runs neither); build_transport: the build's, where it is not
    the search's (dbfs.transport.bulk_transport: NCCL between GPUs of their own under an NVSHMEM search,
    whose landing then does not exist);
    log_levels: the run keeps the per-level log (--log-levels); keeps_keys: the build keeps its counting
    pass's keys, so that a hypersparse block's offsets are built held (None: where counts_kept_keys allows
    it and every column's offsets would make the construction the run's peak; kept in `inputs`, so the
    estimate redone with the counted entries assumes the build's choice)."""
    from dbfs import grid_loop
    from dbfs.search_state import discoverers_held, held_segments
    layout = row_major_layout(grid, symmetric, direction, row_copy)
    built_over = transport if build_transport is None else build_transport
    counted = entries_per_rank(grid, n_edges, symmetric) if entries is None else entries
    by_columns = layout == "columns"
    nonempty, group = columns, slots
    if columns == EXPECTED_COLUMNS:             # counted ones, where given, stand
        expected = graph500_counts(grid, n_edges, symmetric)
        nonempty = expected["columns"]
        rows = expected.get("rows") if rows is None else rows
        group = expected.get("slots") if slots is None else slots
        segment_slots = expected.get("segment_slots") if segment_slots is None else segment_slots
        segment_columns = expected["segment_columns"] if segment_columns is None else segment_columns
    held = held_segments(grid, by_columns, nonempty, rows, segment_slots, segment_columns)
    scan_lent = grid_loop.scan_lent_bytes(grid, transport, device == "cpu", by_columns, held)
    state = search_state_bytes(grid, direction, counted, transport, device, by_columns=by_columns,
                               columns=nonempty, symmetric=symmetric, scan_lent=scan_lent, slots=group,
                               log_levels=log_levels, rows=rows, segment_slots=segment_slots,
                               segment_columns=segment_columns)
    lenders = validation_lenders(grid, symmetric, counted, direction, by_columns, nonempty, scan_lent, group, rows,
                                 segment_slots)
    checking = validation_bytes(grid, symmetric, counted, lenders)
    # the build holds its offsets as wide as twice a block's share of the entries needs, or the block's
    # own where wider (dbfs.graph.building_offsets, widened), the search at the block's width: the search's
    # room less that difference (every column's offsets held, as the build may hold them) is what the
    # build's transients may take without raising the peak
    building_offset = widened_dtype(building_offsets(grid.size, n_edges, symmetric), counted).itemsize

    def widening_of(built_columns):
        return (sum(graph_bytes(grid, counted, layout, building_offset, built_columns).values())
                - sum(graph_bytes(grid, counted, layout, columns=built_columns).values()))
    if chunk is None:
        chunk = chunk_edges(grid, n_edges, symmetric, layout == "copy", device,
                            max(0, state + checking - widening_of(None)), built_over)
    graph = graph_bytes(grid, counted, layout, columns=nonempty)
    resident = sum(graph.values())
    # the placing pass sorts each chunk's entries by column, and with a row copy not taken from the column
    # segments by row too
    rows_gathered = layout == "copy" and rows_from_peers(grid, symmetric, True)
    placed_keys = grid.cols_per_rank if nonempty is None else nonempty
    if layout == "copy" and not rows_gathered:
        placed_keys = max(placed_keys, grid.rows_per_rank if rows is None else rows)
    tuples_read, ids_read = read_buffers if device == "cpu" else (0, 0)
    parts = {**graph,
             "construction transients": construction_bytes(grid, n_edges, chunk, symmetric, layout == "copy",
                                                           device, built_over, generated, tuples_read, counted,
                                                           placed_keys),
             "certificate": certificate_bytes(grid, n_edges, chunk_edges(grid, n_edges, symmetric, False, device),
                                              counted, device, generated, tuples_read),
             "search state": state,
             "validation": checking}
    host = built_host = 0                       # the CPU backend's Python objects (see CPU_PYTHON_BYTES)
    if device == "cpu":
        entry_pass = twin_check_bytes(grid, symmetric, counted, lenders, nonempty) if certified else 0
        rows_held = by_columns and holds_columns_by_position(grid, nonempty)
        finds_held = rows_held or not by_columns and discoverers_held(grid, rows)
        parts["NumPy twins' steps"] = twin_search_bytes(grid, direction, counted, entry_pass, step_entries, rows_held,
                                                        finds_held)
        parts["Python objects"] = host = CPU_PYTHON_BYTES
        built_host = CPU_BUILD_PYTHON_BYTES + (GENERATOR_TABLES_BYTES if generated else 0)
        if layout in ("copy", "shared"):
            parts["rows' order"] = twin_order_bytes(grid, counted)
        if rows_gathered:
            parts["row copy's own segments"] = twin_append_bytes(grid, counted, building_offset)
    if tuples_read or ids_read:
        parts["file reader buffers"] = max(tuples_read, ids_read)
    searching = (resident + parts["search state"] + parts["validation"] + host
                 + max(parts.get("NumPy twins' steps", 0), ids_read))   # the ids are read before the searches

    def built(held: bool) -> dict:
        """The build's phases where it builds the offsets held by position (`held`) or every column's."""
        built_columns = nonempty if held else None
        widening = widening_of(built_columns)
        # the build and its certificate hold the offsets as built; where that is every column's, the
        # search's set-up then holds the held ones beside them
        resident_built = sum(graph_bytes(grid, counted, layout, columns=built_columns).values())
        # narrowed at the build's end (LocalGraph.narrow_offsets) while its NVSHMEM landing lives: int32
        # copies of the int64 offsets, as large as what the int64 ones hold beyond them
        narrowing = widening + _landing_bytes(grid, chunk, symmetric, device, built_over) if widening else 0
        # the owned degrees (dbfs.build): from the row copy's whole rows on a grid of one column, else the
        # column lengths and, on several grid rows, their reduction, which in NCCL's round receives the
        # column's R blocks beside them (NVSHMEM's lands them in its landing, or goes through host
        # memory); where the offsets are built held, a ring of one owned block a round: the partial sum
        # sent, the one received and the own lengths added to it
        received = 4 * grid.cols_per_rank if device != "cpu" and built_over == "nccl" else 0
        if layout == "copy" and symmetric and grid.C == 1:
            degrees = 4 * grid.block
        elif held:
            degrees = 4 * grid.block * (3 if grid.R > 1 else 1)
        else:
            degrees = 4 * grid.cols_per_rank + (4 * grid.block + received if grid.R > 1 else 0)
        phases = {"construction": resident_built + widening + built_host
                  + max(max(parts["construction transients"], degrees, parts.get("row copy's own segments", 0))
                        - graph["degree"], parts.get("rows' order", 0), narrowing),
                  "certificate": resident_built + parts["certificate"] + host,
                  "search": searching}
        if resident_built != resident:          # the Positions made beside every column's offsets
            phases["columns by position"] = resident_built + positions_bytes(grid.cols_per_rank) + host
        return phases

    # a build that keeps its counting pass's keys (counts_kept_keys) builds a hypersparse block's offsets
    # held by position, at some cost in time (bench/NOTES.md, 2026-11-28, the build writes a hypersparse
    # block's offsets held): it does so where every column's offsets would make the construction the
    # run's peak; the others hold every column's until the search's set-up holds them so
    if keeps_keys is None:
        keeps_keys = (counts_kept_keys(grid, chunk, symmetric, layout == "copy", device, built_over)
                      and built(False)["construction"] > searching)
    phases = built(keeps_keys and holds_columns_by_position(grid, nonempty))
    inputs = dict(grid=grid, n_edges=n_edges, symmetric=symmetric, direction=direction, transport=transport,
                  device=device, entries=entries, chunk=chunk, limit=limit, row_copy=row_copy, generated=generated,
                  read_buffers=read_buffers, columns=columns, certified=certified, build_transport=build_transport,
                  slots=group, log_levels=log_levels, rows=rows,   # the expected slots and rows kept until counted
                  segment_slots=segment_slots, segment_columns=segment_columns, keeps_keys=keeps_keys,
                  step_entries=step_entries)
    if not certified:
        del parts["certificate"], phases["certificate"]
    return Estimate(parts, phases, limit, inputs)


def fits_some_layout(grid: Grid, n_edges: int, symmetric: bool, direction: str, transport: str, device: str,
                     limit: int, row_copy: str, columns: int | str | None = None) -> bool:
    """Whether the estimate (with `columns`) fits `limit` with the row-major copy or without it, as
    --row-copy `row_copy` allows ('on', 'off', 'auto': either)."""
    return any(estimate(grid, n_edges, symmetric, direction, transport, device, limit=limit, row_copy=copy,
                        columns=columns).fits
               for copy in {"on": (True,), "off": (False,), "auto": (True, False)}[row_copy])


def largest_scale(R: int, C: int, edgefactor: int, limit: int, direction: str = "auto",
                  transport: str = "mpi", device: str = "gpu", row_copy: str = "auto",
                  columns: str | None = None) -> int | None:
    """The largest Graph500 scale whose estimate (None: every local column; EXPECTED_COLUMNS) fits in
    `limit` bytes per rank on an R x C grid with --row-copy `row_copy` (None when not even scale 1
    does)."""
    best = None
    for scale in range(1, 43):
        n_edges = edgefactor << scale
        try:
            grid = Grid(R, C, 1 << scale)
        except ValueError:                      # local indices beyond 32 bits: not a runnable size
            break
        if n_edges >= 2**63 or not fits_some_layout(grid, n_edges, True, direction, transport, device, limit,
                                                    row_copy, columns):
            break
        best = scale
    return best


def check(plan: Estimate, comm=runtime.WORLD, what: str = "memory estimate per rank") -> None:
    """Collective: log the estimate; DbfsError on every rank when it exceeds some rank's limit."""
    runtime.log(f"{what}: {plan.summary()}"
                + (f", {readable(plan.limit)} available" if plan.limit is not None else ""))
    error = None
    if not plan.fits:
        error = (f"the graph does not fit: estimated {readable(plan.peak)} per rank at the {plan.peak_phase} "
                 f"phase, {readable(plan.limit)} available on rank {comm.Get_rank()}; {fit_advice(plan)} "
                 "(`python -m dbfs plan` shows each structure)")
    runtime.agree(error, comm)


EXACT_RANK_SPAN = 4096         # rank counts fit_advice tries one by one (0.1-0.3 ms an estimate)


def _fewest_ranks(holds, ranks: int, most_ranks: int) -> int | None:
    """The fewest rank counts above `ranks` for which holds(count) (see fit_advice), or None up to
    most_ranks."""
    low, high = ranks, 2 * ranks
    while high <= most_ranks and not holds(high):
        low, high = high, 2 * high
    if high > most_ranks:
        return None
    if high - low <= EXACT_RANK_SPAN:
        return next(count for count in range(low + 1, high + 1) if holds(count))
    while high - low > 1:                       # holds(high), not holds(low)
        middle = (low + high) // 2
        low, high = (low, middle) if holds(middle) else (middle, high)
    return high


def fit_advice(plan: Estimate, most_ranks: int = MOST_RANKS) -> str:
    """What would fit instead of an estimate over its limit: the fewest ranks that hold the same graph on
    the default grid, each with this rank's memory (doubling the ranks until they do, then each count
    above the last that did not, or past EXACT_RANK_SPAN of them a bisection, which may stop above the
    fewest: a count whose squarest grid is tall, a prime's, can hold less than a smaller one; on the CPU
    backend, whose ranks on one node share its memory, more nodes instead), the same ranks without the
    row-major copy or else without the bottom-up search when that is enough, and for a Graph500-shaped
    graph (undirected, 2^SCALE vertices, an integer edgefactor) the largest scale these ranks hold."""
    grid, n_edges, limit = plan.inputs["grid"], plan.inputs["n_edges"], plan.limit
    n = grid.n_vertices
    options = []
    if plan.inputs["device"] == "cpu":          # more ranks on the same host split its memory further
        options.append("more nodes (the ranks of one node share its memory)")
    else:
        fewest = fewest_ranks(plan, most_ranks)
        if fewest is not None:
            shape = default_grid(fewest)
            options.append(f"{fewest} ranks (grid {shape[0]}x{shape[1]}) hold it")
    on = runtime.count(grid.size, "rank")
    inputs = {**plan.inputs, "chunk": None}
    if row_major_layout(grid, inputs["symmetric"], inputs["direction"], inputs["row_copy"]) == "copy" and \
            inputs["symmetric"] and estimate(**{**inputs, "row_copy": False}).fits:
        options.append(f"--row-copy off (the bottom-up search on the CSC's columns) on {on}")
    elif inputs["direction"] == "auto" and estimate(**{**inputs, "direction": "topdown"}).fits:
        options.append(f"--direction topdown (no bottom-up search) on {on}")
    if plan.inputs["symmetric"] and n & (n - 1) == 0 and n_edges % n == 0:
        largest = largest_scale(grid.R, grid.C, n_edges // n, limit, plan.inputs["direction"],
                                plan.inputs["transport"], plan.inputs["device"],
                                "on" if plan.inputs["row_copy"] else "off",
                                EXPECTED_COLUMNS if plan.inputs["columns"] == EXPECTED_COLUMNS else None)
        options.append(f"scale {largest} at most on {on}" if largest is not None else f"no scale on {on}")
    return ", or ".join(options) if options else f"no grid of up to {most_ranks} ranks holds it"


def fewest_ranks(plan: Estimate, most_ranks: int = MOST_RANKS) -> int | None:
    """The fewest ranks above the plan's that hold its graph on the default grid, within both the 32-bit
    local ids and the plan's memory a rank (see fit_advice), or None up to most_ranks."""
    n = plan.inputs["grid"].n_vertices
    kept = {k: v for k, v in plan.inputs.items()
            if k not in ("grid", "entries", "chunk", "slots", "rows", "segment_slots", "segment_columns",
                         "step_entries")}

    def holds(ranks: int) -> bool:
        try:
            wider = Grid(*default_grid(ranks), n)
        except ValueError:                      # local ids past 32 bits
            return False
        return estimate(wider, **kept).fits

    return _fewest_ranks(holds, plan.inputs["grid"].size, most_ranks)


def plan_run(grid: Grid, source, direction: str, transport: str, backend, heap_need: int | None,
             row_copy: bool = True, certified: bool = True, build_transport: str | None = None,
             log_levels: bool = False) -> Estimate:
    """Collective: the run's estimate against this rank's available memory, logged and checked
    before anything is allocated (a generated Graph500 graph's with the non-empty columns and queue slots
    its blocks are expected to take, as `plan` counts them, and on several ranks construction's chunk
    within the room that leaves; the build checks the counted ones again before it allocates the block);
    with --comm nvshmem the symmetric heap too, against `heap_need`
    (symmetric_heap_bytes; None where the search cannot run over NVSHMEM); certified=False: a run without
    the construction certificate and the validation; build_transport: the build's, log_levels: a run with
    the per-level log (estimate)."""
    reading = (0, 0)
    if source.info is not None and backend.name == "cpu":
        from dbfs.source import rank_io_threads
        chunk = estimate(grid, source.n_edges, source.symmetric, direction, transport, backend.name,
                         row_copy=row_copy, generated=False, build_transport=build_transport).inputs["chunk"]
        reading = (edgelist.read_buffer_bytes(source.info.path, rank_io_threads(), chunk),
                   edgelist.read_buffer_bytes(source.info.path, 1, 1, [edgelist.IDS_DATASET]))
    sizes = dict(limit=backend.memory_limit(), row_copy=row_copy, generated=source.info is None,
                 read_buffers=reading, certified=certified, build_transport=build_transport, log_levels=log_levels)
    plan = estimate(grid, source.n_edges, source.symmetric, direction, transport, backend.name, **sizes)
    if source.info is None:
        # several ranks: construction's chunk within the room the expected search leaves, so the build
        # does not set the peak; one rank keeps the bounds' larger chunk (its build is faster so)
        plan = estimate(grid, source.n_edges, source.symmetric, direction, transport, backend.name, **sizes,
                        chunk=plan.inputs["chunk"] if grid.size == 1 else None, columns=EXPECTED_COLUMNS)
    check(plan)
    if transport == "nvshmem":
        runtime.agree(nvshmem.heap_problem(heap_need))
    return plan


_TRACING_OURS = False        # tracemalloc runs because a DevicePeak started it


class DevicePeak:
    """High-water marks of this rank's device memory from here on (see the module docstring): `used`
    (bytes of live arrays) and `reserved` (the pool's size; None on the CPU backend). restart() begins
    a new phase; close() ends the measurement."""

    def __init__(self, backend):
        self._pool = None
        self._started_tracing = False
        self.used = self.reserved = None
        if backend.is_gpu:
            import cupy
            self._pool = cupy.get_default_memory_pool()
            self.restart()
            cupy.cuda.set_allocator(self._malloc)
        else:
            self._start_tracing()
            self.restart()

    def _start_tracing(self) -> None:
        """Trace the host's allocations from now on, from a fresh start (a run that stopped early leaves
        its tracing on: what it holds counts nothing here), unless the user traces them (-X tracemalloc)."""
        global _TRACING_OURS
        if tracemalloc.is_tracing() and not _TRACING_OURS:
            return
        tracemalloc.stop()
        tracemalloc.start()
        _TRACING_OURS = self._started_tracing = True

    def _malloc(self, size: int):
        memory = self._pool.malloc(size)
        self.used = max(self.used, self._in_use())
        self.reserved = max(self.reserved, self._pool.total_bytes())
        return memory

    def _in_use(self) -> int:
        return self._pool.used_bytes() + nvshmem.held_bytes()

    def restart(self) -> None:
        if self._pool is not None:
            self.used, self.reserved = self._in_use(), self._pool.total_bytes()
        elif tracemalloc.is_tracing():
            tracemalloc.reset_peak()
            self.used = tracemalloc.get_traced_memory()[0]

    def close(self) -> None:
        """Stop tracing the host's allocations where this measurement started it (the CPU backend)."""
        global _TRACING_OURS
        if self._started_tracing:
            tracemalloc.stop()
            _TRACING_OURS = self._started_tracing = False

    def largest(self, comm=runtime.WORLD) -> int | None:
        """Collective: the largest rank's `used` high-water mark (None once a CPU measurement is closed)."""
        if self._pool is None and tracemalloc.is_tracing():
            self.used = tracemalloc.get_traced_memory()[1]
        return None if self.used is None else comm.allreduce(self.used, op=MPI.MAX)
