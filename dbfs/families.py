"""High-diameter graph families for benchmarks and tests: 2D and 3D lattices (optionally with edges
removed and ids scrambled), `python -m dbfs generate --lattice`, and small test graphs.

Graph500's Kronecker graphs have a diameter of about ten levels; road networks and meshes have
thousands. A lattice of dims (n_0, ..., n_{D-1}) (D = 2 or 3) has vertex x = sum_a x_a * s_a (row-major,
s_a = n_{a+1} * ... * n_{D-1}) and an edge between x and x + s_a for every axis a with x_a < n_a - 1.

Method (every edge is a function of its index alone, as in the Kronecker generator, so every rank
generates its own slice and any range can be generated twice):
- Lattice edge k: the edges of axis 0 come first, then axis 1, ...; within axis a the edges are the
  vertices with x_a < n_a - 1 in row-major order, so the edge k' of that axis (k' counted from the
  axis's first edge) joins u = k' + floor(k' / ((n_a - 1) s_a)) * s_a and u + s_a.
- Removal (--remove-fraction F): lattice edge k is removed when the keyed 64-bit hash
  splitmix64(k * golden + key) lies below floor(F * 2^64); the file holds the kept edges in lattice
  order. Its edge count is known before writing from a counting pass: kept edges per block of
  BLOCK_EDGES lattice edges (the ranks count their share of the blocks and exchange the counts), whose
  prefix sums map a position in the file to the blocks holding it.
- Scrambling (the default): vertex v becomes P(v), a bijection of [0, n) keyed by the seed: a 4-round
  Feistel network (round function: the same hash; halves of ceil(b/2) and floor(b/2) bits) permuting
  [0, 2^b), 2^b the smallest power of two >= max(n, 4), walked along its cycles until the value falls
  below n (cycle walking keeps it a bijection of [0, n); a step leaves [0, n) with probability < 1/2).
All of it is vectorised over edges in the array namespace `xp` (NumPy or CuPy: elementwise integer
operations only); keys come from the two seeds A, B of --seed.

The test graphs at the end (a lattice with holes, any lattice, a caterpillar, a graph of several
components) are small NumPy edge lists for the BFS correctness tests.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from dbfs import edgelist, outputs, runtime
from dbfs.progress import Progress
from dbfs.backend import select
from dbfs.errors import DbfsError
from dbfs.textparse import is_decimal
from graph500.generator import DEFAULT_SEED, edge_range

FAMILY = "lattice"
GENERATOR_VERSION = "dbfs-lattice-1"       # part of the generator attribute: bump when edges change
MAX_DIMENSIONS = 3
MAX_VERTICES = 1 << 48
BLOCK_EDGES = 1 << 14                      # lattice edges per block of the kept-edge counts
COUNT_SPAN_BLOCKS = 256                    # blocks hashed at once by the counting pass
FEISTEL_ROUNDS = 4
CPU_CHUNK_EDGES = 1 << 18
GPU_CHUNK_EDGES = 1 << 24                  # 1-2 GiB of device temporaries

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_U64 = np.uint64


def mix64(x):
    """splitmix64's finalizer, a bijection of uint64 (array in, new array out, any xp)."""
    x = x ^ (x >> _U64(30))
    x *= _MIX1
    x ^= x >> _U64(27)
    x *= _MIX2
    x ^= x >> _U64(31)
    return x


def keyed_hash(values, key):
    """splitmix64 output number `values` of the stream keyed by `key` (uint64 arrays, any xp)."""
    return mix64(values * _GOLDEN + key)


def family_keys(seed) -> tuple[np.uint64, tuple[np.uint64, ...]]:
    """(removal key, Feistel round keys) derived from the seed pair (A, B)."""
    a, b = (int(s) for s in seed)
    base = keyed_hash(np.array([a], np.uint64), np.uint64(0)) ^ np.uint64(b)
    keys = keyed_hash(np.arange(1, 2 + FEISTEL_ROUNDS, dtype=np.uint64), mix64(base))
    return keys[0], tuple(keys[1:])


def parse_dims(text: str) -> tuple[int, ...]:
    """'4096x4096' or '300x200x100' -> the dims (DbfsError for anything else)."""
    parts = str(text).lower().split("x")
    if not 2 <= len(parts) <= MAX_DIMENSIONS or not all(is_decimal(p.strip()) and int(p) > 0 for p in parts):
        raise DbfsError(f"--lattice must be 2 or 3 positive integers joined by 'x' (e.g. 4096x4096 or "
                        f"300x200x100), got {text!r}", collective=True)
    return tuple(int(p) for p in parts)


@dataclass(frozen=True)
class Lattice:
    """A 2D or 3D lattice with a fraction of its edges removed and its ids optionally scrambled.

    Its edges, in the order the graph file holds them, are LatticeEdgeList(lattice).edges(lo, hi)."""

    dims: tuple[int, ...]
    remove_fraction: float = 0.0
    seed: tuple[int, int] = DEFAULT_SEED
    scramble: bool = True

    def __post_init__(self):
        dims = tuple(self.dims)
        if not 2 <= len(dims) <= MAX_DIMENSIONS or any(
                isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1 for d in dims):
            raise DbfsError(f"lattice dims must be 2 or 3 integers >= 1, got {dims!r}", collective=True)
        object.__setattr__(self, "dims", tuple(int(d) for d in dims))
        if math.prod(self.dims) > MAX_VERTICES:
            raise DbfsError(f"lattice {self.dims_text} has {math.prod(self.dims)} vertices, more than "
                            f"the 2^{MAX_VERTICES.bit_length() - 1} supported", collective=True)
        if self.lattice_edge_count == 0:
            raise DbfsError(f"lattice {self.dims_text} has no edges (give a dimension >= 2)",
                            collective=True)
        fraction = self.remove_fraction
        if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or \
                not 0 <= fraction < 1:                         # also rejects NaN
            raise DbfsError(f"--remove-fraction must be a number with 0 <= F < 1, got {fraction!r}",
                            collective=True)
        object.__setattr__(self, "remove_fraction", float(fraction))
        if len(self.seed) != 2 or not all(isinstance(s, (int, np.integer)) and 0 <= s < 2**64
                                          for s in self.seed):
            raise DbfsError(f"seed must be two integers in [0, 2^64), got {self.seed!r}", collective=True)
        object.__setattr__(self, "seed", tuple(int(s) for s in self.seed))

    # ------------------------------------------------------------------------------------ sizes
    @property
    def dims_text(self) -> str:
        return "x".join(map(str, self.dims))

    @property
    def n_vertices(self) -> int:
        return math.prod(self.dims)

    @cached_property
    def strides(self) -> tuple[int, ...]:
        return tuple(math.prod(self.dims[a + 1:]) for a in range(len(self.dims)))

    @cached_property
    def axis_edge_counts(self) -> tuple[int, ...]:
        return tuple((d - 1) * self.n_vertices // d for d in self.dims)

    @property
    def lattice_edge_count(self) -> int:
        """Edges before removal."""
        return sum(self.axis_edge_counts)

    @property
    def n_blocks(self) -> int:
        return -(-self.lattice_edge_count // BLOCK_EDGES)

    @property
    def generator(self) -> str:
        """The file's `generator` attribute: the family, its version and every parameter but the seed
        (which has its own attribute), so that the partition cache tells lattices apart."""
        ids = "scrambled" if self.scramble else "row-major"
        return f"{GENERATOR_VERSION} {self.dims_text} remove_fraction={self.remove_fraction!r} {ids}"

    @property
    def attrs(self) -> dict:
        """Attributes of the graph file, except n_edges (known after counting)."""
        return {"generator": self.generator, "family": FAMILY, "dims": np.array(self.dims, np.int64),
                "remove_fraction": self.remove_fraction, "seed": np.array(self.seed, np.uint64),
                "scrambled": self.scramble, "lattice_edges": self.lattice_edge_count,
                "n_vertices": self.n_vertices, "directed": False}

    @cached_property
    def _keys(self):
        return family_keys(self.seed)

    @property
    def _threshold(self) -> np.uint64:
        return np.uint64(int(self.remove_fraction * 2.0**64))    # exact: a float times a power of 2

    # ------------------------------------------------------------------------------------ edges
    def endpoints(self, index, xp=np):
        """Unscrambled ends (u, v), u < v, int64, of the lattice edges `index` (ascending int64)."""
        u = xp.empty(index.shape, np.int64)
        step = xp.empty(index.shape, np.int64)
        starts = np.cumsum((0,) + self.axis_edge_counts)
        cuts = xp.searchsorted(index, xp.asarray(starts)).tolist()
        for axis, (dim, stride) in enumerate(zip(self.dims, self.strides)):
            a, b = cuts[axis], cuts[axis + 1]
            if a < b:
                k = index[a:b] - int(starts[axis])
                u[a:b] = k + (k // ((dim - 1) * stride)) * stride
                step[a:b] = stride
        return u, u + step

    def removed(self, lo: int, hi: int, xp=np):
        """bool [hi - lo]: whether each lattice edge of [lo, hi) is removed."""
        index = xp.arange(lo, hi, dtype=np.uint64)
        return keyed_hash(index, self._keys[0]) < self._threshold

    def kept_per_block(self, first: int, stop: int, xp=np) -> np.ndarray:
        """int64 [stop - first] (NumPy): kept edges of each block [first, stop) of BLOCK_EDGES."""
        total = self.lattice_edge_count
        if self._threshold == 0:
            ends = np.minimum(np.arange(first + 1, stop + 1, dtype=np.int64) * BLOCK_EDGES, total)
            return ends - np.arange(first, stop, dtype=np.int64) * BLOCK_EDGES
        counts = []
        for span in range(first, stop, COUNT_SPAN_BLOCKS):
            span_stop = min(span + COUNT_SPAN_BLOCKS, stop)
            lo, hi = span * BLOCK_EDGES, min(span_stop * BLOCK_EDGES, total)
            kept = xp.zeros((span_stop - span) * BLOCK_EDGES, dtype=bool)
            kept[:hi - lo] = ~self.removed(lo, hi, xp)
            counts.append(kept.reshape(-1, BLOCK_EDGES).sum(axis=1))
        return np.concatenate([np.asarray(_to_host(c), np.int64) for c in counts]) if counts else \
            np.zeros(0, np.int64)

    def kept_indices(self, lo: int, hi: int, xp=np):
        """int64, ascending: the lattice edges of [lo, hi) that are kept."""
        if self._threshold == 0:
            return xp.arange(lo, hi, dtype=np.int64)
        pieces = [xp.flatnonzero(~self.removed(a, min(a + COUNT_SPAN_BLOCKS * BLOCK_EDGES, hi), xp)) + a
                  for a in range(lo, hi, COUNT_SPAN_BLOCKS * BLOCK_EDGES)]
        return xp.concatenate(pieces) if pieces else xp.zeros(0, np.int64)

    # ------------------------------------------------------------------------------- scrambling
    @cached_property
    def _id_bits(self) -> int:
        return max(2, (self.n_vertices - 1).bit_length())

    def _feistel(self, x):
        """One pass of the keyed Feistel permutation of [0, 2^bits) (uint64 array in, new array out).

        The halves have ceil(bits / 2) and floor(bits / 2) bits; each round puts the low half on top and
        below it the high half xor the hash of the low half, so the widths alternate and an even
        number of rounds restores them."""
        high, low = (self._id_bits + 1) // 2, self._id_bits // 2
        for key in self._keys[1]:
            top, bottom = x >> _U64(low), x & _U64((1 << low) - 1)
            x = (bottom << _U64(high)) | (top ^ (keyed_hash(bottom, key) >> _U64(64 - high)))
            high, low = low, high
        return x

    def relabel(self, vertices, xp=np):
        """The scrambled ids (int64) of `vertices` (int64); the ids themselves without scrambling."""
        if not self.scramble:
            return vertices
        n = _U64(self.n_vertices)
        y = self._feistel(vertices.astype(np.uint64))
        walking = xp.flatnonzero(y >= n)
        while walking.size:
            y[walking] = self._feistel(y[walking])
            walking = walking[y[walking] >= n]
        return y.view(np.int64)


def _to_host(array) -> np.ndarray:
    return array.get() if hasattr(array, "get") else np.asarray(array)


class LatticeEdgeList:
    """The kept edges of a lattice in lattice order: the rows of its graph file.

    kept_per_block: the counts of all blocks (Lattice.kept_per_block(0, n_blocks)); computed here when
    not given (the command spreads that pass over the ranks)."""

    def __init__(self, lattice: Lattice, kept_per_block: np.ndarray | None = None, xp=np):
        if kept_per_block is None:
            kept_per_block = lattice.kept_per_block(0, lattice.n_blocks, xp)
        if len(kept_per_block) != lattice.n_blocks:
            raise ValueError(f"{len(kept_per_block)} block counts for {lattice.n_blocks} blocks")
        self.lattice = lattice
        self.offsets = np.concatenate(([0], np.cumsum(kept_per_block, dtype=np.int64)))

    @property
    def n_edges(self) -> int:
        return int(self.offsets[-1])

    def edges(self, lo: int, hi: int, xp=np):
        """Rows [lo, hi) of the graph file: (src, dst) int64 arrays in `xp`."""
        if not 0 <= lo <= hi <= self.n_edges:
            raise ValueError(f"edge range [{lo}, {hi}) is outside [0, {self.n_edges})")
        lattice = self.lattice
        first = int(np.searchsorted(self.offsets, lo, side="right")) - 1
        stop = int(np.searchsorted(self.offsets, hi, side="left"))
        index = lattice.kept_indices(first * BLOCK_EDGES, min(stop * BLOCK_EDGES, lattice.lattice_edge_count),
                                     xp)
        skip = lo - int(self.offsets[first])
        u, v = lattice.endpoints(index[skip:skip + hi - lo], xp)
        return lattice.relabel(u, xp), lattice.relabel(v, xp)


def lattice_graph(dims, remove_fraction: float = 0.0, seed=DEFAULT_SEED, scramble: bool = True):
    """(n_vertices, src, dst) of a whole lattice (NumPy int64): the edges `generate --lattice` writes."""
    edges = LatticeEdgeList(Lattice(tuple(dims), remove_fraction, tuple(seed), scramble))
    return (edges.lattice.n_vertices, *edges.edges(0, edges.n_edges))


# -------------------------------------------------------------------------- generate --lattice
def add_arguments(parser, graph_group) -> None:
    """The lattice options of `generate`; --lattice joins --scale in the required one-of group."""
    graph_group.add_argument("--lattice", metavar="DIMS",
                             help="instead of --scale: a 2D or 3D lattice (grid graph) of these dimensions, "
                                  "e.g. 4096x4096 or 300x200x100")
    parser.add_argument("--remove-fraction", type=float, default=0.0, metavar="F",
                        help="with --lattice: remove each edge with probability F, 0 <= F < 1, decided by a "
                             "hash of the edge and --seed")
    parser.add_argument("--no-scramble", action="store_true",
                        help="with --lattice: keep the row-major vertex ids instead of relabelling them by "
                             "a pseudo-random bijection keyed by --seed")


def reject_lattice_options(args) -> None:
    """DbfsError when lattice-only options come without --lattice."""
    for given, option in ((args.remove_fraction != 0, "--remove-fraction"),
                          (args.no_scramble, "--no-scramble")):
        if given:
            raise DbfsError(f"{option} applies to --lattice graphs only", collective=True)


def generate_lattice(args, seed) -> int:
    """`generate --lattice`: check everything, then write the file with every rank (runtime.WORLD),
    rank 0's share of the work shown on stderr."""
    lattice = Lattice(parse_dims(args.lattice), args.remove_fraction, seed, not args.no_scramble)
    if args.weights:
        raise DbfsError("--weights applies to --scale graphs only: lattice edges have no weights",
                        collective=True)
    outputs.check([outputs.Target("--out", args.out, args.force)])
    backend = select(args.backend)
    nranks = runtime.size()
    runtime.log(f"generate: lattice {lattice.dims_text}, {lattice.n_vertices} vertices, "
                f"{lattice.lattice_edge_count} lattice edges, remove fraction {lattice.remove_fraction}, "
                f"ids {'scrambled' if lattice.scramble else 'row-major'}, seed {seed[0]},{seed[1]} on "
                f"{nranks} rank{'s' if nranks > 1 else ''} ({backend.describe()}) -> {args.out}")
    started = time.perf_counter()
    n_edges = write_lattice(args.out, lattice, runtime.WORLD, args.force, backend.xp,
                            GPU_CHUNK_EDGES if backend.is_gpu else CPU_CHUNK_EDGES,
                            lambda total: Progress("generate", total, "M edges (rank 0)"))
    runtime.log(f"generate: wrote {n_edges} edges in {time.perf_counter() - started:.2f} s")
    runtime.out(f"{args.out}: lattice {lattice.dims_text}, {lattice.n_vertices} vertices, {n_edges} edges")
    return 0


def write_lattice(path, lattice: Lattice, comm=runtime.WORLD, force: bool = False, xp=np,
                  chunk_edges: int = CPU_CHUNK_EDGES, progress=None) -> int:
    """Collective: write the lattice's graph file with every rank of comm; returns its edge count.

    The ranks first count the kept edges of their share of the blocks (skipped without removal) and
    exchange the counts; then each writes its balanced slice of the kept edges."""
    rank, nranks = comm.Get_rank(), comm.Get_size()
    first, stop = edge_range(lattice.n_blocks, rank, nranks)
    started = time.perf_counter()
    counts = np.concatenate(comm.allgather(lattice.kept_per_block(first, stop, xp)))
    if lattice.remove_fraction > 0:
        runtime.log(f"generate: counted the kept edges in {time.perf_counter() - started:.2f} s")
    edges = LatticeEdgeList(lattice, counts)
    if edges.n_edges == 0:                   # every edge removed: nothing a search could traverse
        raise DbfsError(f"lattice {lattice.dims_text} keeps no edge with --remove-fraction "
                        f"{lattice.remove_fraction}: give a smaller fraction", collective=True)
    lo, hi = edge_range(edges.n_edges, rank, nranks)
    reporter = progress(hi - lo) if progress else None

    def produce(a: int, b: int):
        src, dst = edges.edges(a, b, xp)
        if reporter:
            reporter.advance(b - a)
        return _to_host(src), _to_host(dst)

    edgelist.write_edge_list(path, edges.n_edges, {**lattice.attrs, "n_edges": edges.n_edges}, produce,
                             comm, force, chunk_edges=chunk_edges)
    return edges.n_edges


# --------------------------------------------------------------------------------- test graphs
def lattice_with_holes(rows: int = 40, cols: int = 60, period: int = 6, hole: int = 3):
    """A rows x cols lattice (vertex r * cols + c, row-major) with square holes: the vertices with
    1 <= r % period <= hole and 1 <= c % period <= hole lose all their edges (they stay, isolated).
    Between the holes run corridors period - hole vertices wide (row and column 0 among them), so the
    other vertices form one component whose paths bend around the holes. Returns (n_vertices, src,
    dst), NumPy int64, each edge once (u < v)."""
    if not 1 <= hole < period:
        raise ValueError(f"hole {hole} must be at least 1 and leave corridors in period {period}")
    n, src, dst = lattice_graph((rows, cols), scramble=False)
    in_hole = np.zeros(n, bool)
    r, c = np.divmod(np.arange(n), cols)
    in_hole[(1 <= r % period) & (r % period <= hole) & (1 <= c % period) & (c % period <= hole)] = True
    keep = ~(in_hole[src] | in_hole[dst])
    return n, src[keep], dst[keep]


def caterpillar(spine: int = 300, longest_leg: int = 3):
    """A long path with branches: the spine 0 - 1 - ... - (spine - 1), and from spine vertex i a leg,
    a path of i % (longest_leg + 1) further vertices. Leg vertices come after the spine, leg by leg,
    each leg from the spine outwards. One component, a tree (n_vertices - 1 edges) whose vertex 0 is
    spine - 1 levels from the spine's far end. Returns (n_vertices, src, dst), NumPy int64, each edge
    once."""
    legs = np.arange(spine, dtype=np.int64) % (longest_leg + 1)
    n = spine + int(legs.sum())
    leg_start = spine + np.concatenate(([0], np.cumsum(legs)[:-1]))
    owner = np.repeat(np.arange(spine, dtype=np.int64), legs)          # spine vertex of each leg vertex
    leg_vertices = np.arange(spine, n, dtype=np.int64)
    first_of_leg = leg_vertices == leg_start[owner]
    parent = np.where(first_of_leg, owner, leg_vertices - 1)
    src = np.concatenate((np.arange(spine - 1, dtype=np.int64), parent))
    dst = np.concatenate((np.arange(1, spine, dtype=np.int64), leg_vertices))
    return n, src, dst


def several_components(seed: int = 7):
    """A disconnected graph of 86 vertices: a path of 40 vertices, a cycle of 12, a 5x4 lattice, a star
    (a centre and 6 leaves), a single edge and 5 isolated vertices: 10 components in all.
    The ids are shuffled (numpy.random.default_rng(seed)) so that every component spreads over the id
    range, except that vertex 85, the largest, is always isolated. Returns (n_vertices, src, dst), NumPy
    int64, each edge once, no self-loops or duplicates."""
    parts = [(40, np.arange(39), np.arange(1, 40)),
             (12, np.arange(12), (np.arange(12) + 1) % 12),
             lattice_graph((5, 4), scramble=False),
             (7, np.zeros(6, np.int64), np.arange(1, 7)),
             (2, np.array([0]), np.array([1])),
             (5, np.zeros(0, np.int64), np.zeros(0, np.int64))]
    sizes = [p[0] for p in parts]
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    src = np.concatenate([p[1] + s for p, s in zip(parts, starts)]).astype(np.int64)
    dst = np.concatenate([p[2] + s for p, s in zip(parts, starts)]).astype(np.int64)
    n = int(sum(sizes))
    label = np.append(np.random.default_rng(seed).permutation(n - 1), n - 1)   # the last is isolated
    return n, label[src], label[dst]
