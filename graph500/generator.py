"""Graph500 Kronecker edge generator, bit-identical to the reference `make_graph` of version 3.0.0.

Reference: `generator/graph_generator.c` (generate_kronecker_range, make_one_edge,
generate_4way_bernoulli, scramble); notes in docs/graph500.md section 1. Edge i depends only on
(seed, scale, i): its random stream is the seeded MRG state skipped i*2^64 steps. Each of the SCALE
levels (most significant bit first) takes one draw u, redrawn while u < 3647 so that u mod 10000 is
unbiased; r = u mod 10000 picks quadrant B (r < 1900: src bit 0, dst bit 1), C (r < 3800: 1, 0),
A (r < 9500: 0, 0) or D (1, 1). While the src and dst prefixes are equal a C is flipped into a B
(clip-and-flip, so the unscrambled tuple has src <= dst). With weights, the next draw of the same
stream becomes a float32 weight in [0, 1). Both ends are then relabelled by the reference's bijective
hash `scramble` (keys val0, val1 from the stream skipped 50*2^128 + 7*2^64 steps). Self-loops and
duplicate tuples are kept, as the specification requires.

NumPy (`xp=numpy`): chunks of 8192 edges. The per-edge states come from two exact modular matrix
products with stacked powers of B = A^(2^64), the SCALE level draws of all edges of a chunk from one
more ([edges x 5] @ [5 x levels], see graph500.mrg.mod_matmul). u mod 10000 maps through a table to the
quadrant's unflipped src/dst bits, which one float64 product packs into per-edge bit masks; clip-and-flip
is then a few bit operations (the tie ends at the highest bit where the two masks differ). Edges with a
rejected draw (about one in 30000 at SCALE 20) are redone in one bounded extra pass. No Python loop
runs per edge or per level. CuPy (`xp=cupy`): kernels/generator.cu, one thread per strided run of edges.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from dbfs.errors import DbfsError
from graph500 import mrg

MAX_SCALE = 42
DEFAULT_SEED = (2, 3)
GENERATOR_NAME = "graph500-3.0.0"

# Initiator 0.57/0.19/0.19/0.05 in units of 1/10000; draws below m mod 10000 are redrawn.
DENOMINATOR = 10000
BC_NUMERATOR = 1900
A_NUMERATOR = 5700
REJECT_BELOW = mrg.MODULUS % DENOMINATOR
_C_BELOW = 2 * BC_NUMERATOR
_D_FROM = 2 * BC_NUMERATOR + A_NUMERATOR
# floor(u / 10000) == (u * _DIV_MAGIC) >> _DIV_SHIFT for all u < 2^31 (round-up reciprocal; the error
# term 1168*u stays below 2^45), cheaper than an integer division.
_DIV_SHIFT = 45
_DIV_MAGIC = -(-(1 << _DIV_SHIFT) // DENOMINATOR)

_SCRAMBLE_MUL0 = 0x4519840211493211
_SCRAMBLE_MUL1 = 0x3050852102C843A5
_MASK64 = (1 << 64) - 1
_EDGE_SKIP = 1 << 64
_KEY_SKIP = 50 * 2**128 + 7 * 2**64

# NumPy chunking: edges per chunk (keeps the [edges x levels] temporaries in cache) and the split of a
# chunk into OUTER x INNER for the two-step state computation.
_CHUNK = 8192
_INNER = 64
# Level draws are folded into masks by one float64 product: level code s*2^26 + d (s, d = the unflipped
# src/dst bits of the quadrant) weighted by powers of two, in groups of at most 26 levels so that the
# two 26-bit halves of a group stay apart and the sums stay exact.
_GROUP = 26


def _quadrant_codes() -> np.ndarray:
    r = np.arange(DENOMINATOR)
    is_b = r < BC_NUMERATOR
    is_c = (r >= BC_NUMERATOR) & (r < _C_BELOW)
    is_d = r >= _D_FROM
    return (is_c | is_d) * float(1 << _GROUP) + (is_b | is_d)


_LEVEL_CODES = _quadrant_codes()


def check_parameters(scale: int, edgefactor: int, seed=DEFAULT_SEED) -> None:
    """Raise DbfsError for a scale outside 1..42, an edgefactor below 1, or seeds that are not uint64."""
    if isinstance(scale, bool) or not isinstance(scale, (int, np.integer)) or not 1 <= scale <= MAX_SCALE:
        raise DbfsError(f"scale must be an integer in 1..{MAX_SCALE}, got {scale!r}", collective=True)
    if isinstance(edgefactor, bool) or not isinstance(edgefactor, (int, np.integer)) or edgefactor < 1:
        raise DbfsError(f"edgefactor must be an integer >= 1, got {edgefactor!r}", collective=True)
    if (edgefactor << scale) >= 2**63:
        raise DbfsError(f"edgefactor {edgefactor} << scale {scale} does not fit in 63 bits", collective=True)
    if len(seed) != 2 or not all(isinstance(s, (int, np.integer)) and 0 <= s < 2**64 for s in seed):
        raise DbfsError(f"seed must be two integers in [0, 2^64), got {seed!r}", collective=True)


def edge_count(scale: int, edgefactor: int) -> int:
    """M = edgefactor * 2^scale input tuples."""
    return int(edgefactor) << int(scale)


def expected_reaching_share(scale: int, edgefactor: int, parts: int) -> float:
    """The expected share of the vertices with an edge to a given one of `parts` equal random parts of
    the vertex set (what a CSC block of an R x C grid holds: its non-empty columns, parts = R). At every
    level a tuple sets its source's bit with probability 0.24 (quadrants C or D) and its destination's
    likewise (B or D), so a vertex with k bits set (before the scramble) is an end of about
    2 M 0.76^(scale-k) 0.24^k of the M tuples, Poisson distributed, and the scramble spreads its
    neighbours over the parts evenly. Within 1% of the generator's blocks at scales 18-24
    (bench/NOTES.md, 2026-11-26, the plan's non-empty columns)."""
    one = (BC_NUMERATOR + DENOMINATOR - _D_FROM) / DENOMINATOR
    ends = 2.0 * edge_count(scale, edgefactor)
    return sum(math.comb(scale, k) / 2.0 ** scale * -math.expm1(-ends * (1 - one) ** (scale - k) * one ** k / parts)
               for k in range(scale + 1))


def edge_range(n_edges: int, rank: int, nranks: int) -> tuple[int, int]:
    """Balanced [lo, hi) of rank among nranks: the first n_edges % nranks ranks get one extra edge."""
    if nranks < 1 or not 0 <= rank < nranks or n_edges < 0:
        raise ValueError(f"bad range request: {n_edges} edges, rank {rank} of {nranks}")
    base, extra = divmod(n_edges, nranks)
    lo = rank * base + min(rank, extra)
    return lo, lo + base + (1 if rank < extra else 0)


@lru_cache(maxsize=16)
def scramble_keys(seed=DEFAULT_SEED) -> tuple[int, int]:
    """(val0, val1) of the reference's vertex hash, from the stream skipped 50*2^128 + 7*2^64 steps."""
    state = mrg.skip(mrg.make_mrg_seed(*seed), _KEY_SKIP)
    draws = []
    for _ in range(4):
        value, state = mrg.next_uint(state)
        draws.append(value)
    val0 = (draws[0] * 0xFFFFFFFF + draws[1]) & _MASK64
    val1 = (draws[2] * 0xFFFFFFFF + draws[3]) & _MASK64
    return val0, val1


def edge_state(seed, index: int) -> mrg.State:
    """MRG state of edge `index` before its first draw."""
    return mrg.skip(mrg.make_mrg_seed(*seed), index * _EDGE_SKIP)


def generate_edges(scale: int, edgefactor: int, lo: int, hi: int, seed=DEFAULT_SEED, weights: bool = False,
                   xp=np):
    """Edges [lo, hi) of the Graph500 graph as (src, dst) int64 arrays, plus float32 weights if asked.

    Arrays live in `xp` (numpy or cupy). Bit-identical to the reference for every range split.
    """
    seed = tuple(int(s) for s in seed)
    check_parameters(scale, edgefactor, seed)
    scale, edgefactor = int(scale), int(edgefactor)
    n_edges = edge_count(scale, edgefactor)
    if not 0 <= lo <= hi <= n_edges:
        raise DbfsError(f"edge range [{lo}, {hi}) is outside [0, {n_edges})")
    if xp is np:
        return _generate_numpy(scale, int(lo), int(hi), seed, weights)
    return _generate_cuda(xp, scale, int(lo), int(hi), seed, weights)


# ---------------------------------------------------------------------------------------------- NumPy
@lru_cache(maxsize=1)
def _state_tables():
    """Constant factors of the per-edge state computation: split B^b (b < INNER), split B^(INNER*a)
    (a < CHUNK/INNER), and B^CHUNK (exact) to advance from chunk to chunk."""
    edge_step = mrg.skip_matrix(_EDGE_SKIP)
    inner = mrg.split_operand(mrg.stacked_powers(edge_step, _INNER))
    outer = mrg.split_operand(mrg.stacked_powers(mrg.skip_matrix(_INNER * _EDGE_SKIP), _CHUNK // _INNER))
    return inner, outer, mrg.skip_matrix(_CHUNK * _EDGE_SKIP)


class _Chunker:
    """Generates chunks of up to _CHUNK edges, reusing preallocated buffers.

    Reusing the large temporaries matters: freshly allocated multi-megabyte arrays are returned to the
    OS and page-faulted in again on every chunk, which costs more than the arithmetic.
    """

    def __init__(self, scale: int, weights: bool, seed):
        self.scale = scale
        self.weights = weights
        self.keys = scramble_keys(seed)
        rows = mrg.output_rows(scale + 1)
        self.level_factor = mrg.widen_operand(rows[:scale].T)
        self.weight_factor = mrg.widen_operand(rows[scale:].T)
        blocks = _CHUNK // _INNER
        self.block_product = np.empty((blocks * mrg.STATE_SIZE, _INNER))
        self.block_states = np.empty((blocks * mrg.STATE_SIZE, _INNER), np.int64)
        self.block_scratch = np.empty((blocks * mrg.STATE_SIZE, _INNER), np.int64)
        self.states = np.empty((_CHUNK, mrg.STATE_SIZE), np.int64)
        self.state_scratch = np.empty((_CHUNK, mrg.STATE_SIZE), np.int64)
        self.split = np.empty((_CHUNK, 2 * mrg.STATE_SIZE))
        self.product = np.empty((_CHUNK, scale))
        self.draws = np.empty((_CHUNK, scale), np.int64)
        self.scratch = np.empty((_CHUNK, scale), np.int64)
        self.codes = np.empty((_CHUNK, scale))

    def edges(self, first_state, count: int):
        """(src, dst, weight or None) of `count` consecutive edges, the first having `first_state`."""
        scale = self.scale
        states = self.edge_states(first_state, count)
        split = mrg.split_operand(states, out=self.split[:count], scratch=self.state_scratch[:count])
        product = self.product[:count]
        np.matmul(split, self.level_factor, out=product)
        levels = mrg.reduce_mod(product, out=self.draws[:count], scratch=self.scratch[:count])
        weight_draws = mrg.reduce_mod(split @ self.weight_factor)[:, 0] if self.weights else None
        if levels.min() < REJECT_BELOW:
            rejected = np.flatnonzero((levels < REJECT_BELOW).any(axis=1))
            redrawn = _redraw(states[rejected], scale, scale + (1 if self.weights else 0))
            levels[rejected] = redrawn[:, :scale]
            if self.weights:
                weight_draws[rejected] = redrawn[:, scale]
        ends = scramble(np.concatenate(self.levels_to_ids(levels)), scale, *self.keys).view(np.int64)
        weight = mrg.uints_to_floats(weight_draws) if self.weights else None
        return ends[:count], ends[count:], weight

    def edge_states(self, first_state, count: int) -> np.ndarray:
        """int64 [count, 5]: the states of `count` consecutive edges, the first having `first_state`."""
        inner, outer, _ = _state_tables()
        near = mrg.reduce_mod(inner @ mrg.widen_operand(np.reshape(first_state, (mrg.STATE_SIZE, 1))))
        near = near.reshape(_INNER, mrg.STATE_SIZE).T                   # column b: B^b s
        rows = -(-count // _INNER) * mrg.STATE_SIZE
        product, block_states = self.block_product[:rows], self.block_states[:rows]
        np.matmul(outer[:rows], mrg.widen_operand(near), out=product)    # row block a: B^(64a) B^b s
        mrg.reduce_mod(product, out=block_states, scratch=self.block_scratch[:rows])
        states = self.states[:rows // mrg.STATE_SIZE * _INNER]
        states.reshape(-1, _INNER, mrg.STATE_SIZE)[...] = \
            block_states.reshape(-1, mrg.STATE_SIZE, _INNER).transpose(0, 2, 1)
        return states[:count]

    def levels_to_ids(self, level_draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Accepted level draws [n, scale] -> unscrambled (src, dst) uint64, clip-and-flip applied."""
        count, scale = level_draws.shape
        r = self.scratch[:count]
        np.multiply(level_draws, _DIV_MAGIC, out=r)
        r >>= _DIV_SHIFT
        r *= -DENOMINATOR
        r += level_draws                                               # u mod 10000
        codes = self.codes[:count]
        np.take(_LEVEL_CODES, r, out=codes, mode="clip")
        packed = (codes @ _level_weights(scale)).astype(np.uint64)
        src_raw = np.zeros(count, np.uint64)
        dst_raw = np.zeros(count, np.uint64)
        low = np.uint64((1 << _GROUP) - 1)
        for g in range(packed.shape[1]):                               # at most 2 groups (scale <= 42)
            bits = np.uint64(min(_GROUP, scale - g * _GROUP))
            src_raw = (src_raw << bits) | (packed[:, g] >> np.uint64(_GROUP))
            dst_raw = (dst_raw << bits) | (packed[:, g] & low)
        # The prefixes stay tied up to and including the first (most significant) B or C level, i.e.
        # the first bit where the raw src and dst differ; a C level (src bit only) there becomes a B.
        past_tie = src_raw ^ dst_raw
        for shift in (1, 2, 4, 8, 16, 32):
            past_tie |= past_tie >> np.uint64(shift)
        past_tie >>= np.uint64(1)
        return src_raw & (dst_raw | past_tie), dst_raw | (src_raw & ~past_tie)


def _redraw(states: np.ndarray, scale: int, n_draws: int) -> np.ndarray:
    """Draws [k, n_draws] of edges that had a rejected level draw: the first `scale` accepted draws,
    then (when n_draws > scale) the raw draw right after the last of them (the weight draw)."""
    count = states.shape[0]
    extra = 4
    while True:
        draws = mrg.mod_matmul(states, mrg.output_rows(n_draws + extra).T)
        accepted = draws >= REJECT_BELOW
        accepted_so_far = np.cumsum(accepted, axis=1)
        # the scale-th accepted draw must leave room for the n_draws - scale draws that follow it
        if (accepted_so_far[:, -1 - (n_draws - scale)] >= scale).all():
            break
        extra *= 2
    out = np.empty((count, n_draws), np.int64)
    out[:, :scale] = draws[accepted & (accepted_so_far <= scale)].reshape(count, scale)
    if n_draws > scale:
        last_level = np.argmax(accepted_so_far >= scale, axis=1)
        out[:, scale] = draws[np.arange(count), last_level + 1]
    return out


@lru_cache(maxsize=None)
def _level_weights(scale: int) -> np.ndarray:
    """float64 [scale, groups]: level t of group g (levels 26g ..) weighs 2^(bits of g after t)."""
    groups = -(-scale // _GROUP)
    weights = np.zeros((scale, groups))
    for t in range(scale):
        g, end = t // _GROUP, min((t // _GROUP + 1) * _GROUP, scale)
        weights[t, g] = 2.0 ** (end - 1 - t)
    return weights


def _bitreverse(values: np.ndarray) -> np.ndarray:
    x = values.byteswap()
    for shift, mask in ((4, 0x0F0F0F0F0F0F0F0F), (2, 0x3333333333333333), (1, 0x5555555555555555)):
        shift, mask = np.uint64(shift), np.uint64(mask)
        x = ((x >> shift) & mask) | ((x & mask) << shift)
    return x


def scramble(vertices: np.ndarray, scale: int, val0: int, val1: int) -> np.ndarray:
    """The reference's bijective relabelling of [0, 2^scale) (uint64 in, uint64 out)."""
    shift = np.uint64(64 - scale)
    v = vertices + np.uint64((val0 + val1) & _MASK64)
    v *= np.uint64(val0 | _SCRAMBLE_MUL0)
    v = _bitreverse(v) >> shift
    v *= np.uint64(val1 | _SCRAMBLE_MUL1)
    return _bitreverse(v) >> shift


def _generate_numpy(scale: int, lo: int, hi: int, seed, weights: bool):
    count = hi - lo
    src = np.empty(count, np.int64)
    dst = np.empty(count, np.int64)
    weight = np.empty(count, np.float32) if weights else None
    chunker = _Chunker(scale, weights, seed)
    chunk_step = _state_tables()[2]
    state = edge_state(seed, lo)
    for start in range(0, count, _CHUNK):
        stop = min(start + _CHUNK, count)
        src[start:stop], dst[start:stop], chunk_weight = chunker.edges(state, stop - start)
        if weights:
            weight[start:stop] = chunk_weight
        state = mrg.mat_vec(chunk_step, state)
    return (src, dst, weight) if weights else (src, dst)


# ----------------------------------------------------------------------------------------------- CUDA
_THREADS_PER_BLOCK = 256
_JUMP_DIGITS = 8          # hexadecimal digits of a thread's first edge offset (< 2^32)


@lru_cache(maxsize=1)
def _jump_table() -> np.ndarray:
    """uint32 [8*16, 25]: entry 16k + d is B^(d * 16^k) (d = 0 gives the identity), row-major."""
    table = np.empty((_JUMP_DIGITS * 16, mrg.STATE_SIZE * mrg.STATE_SIZE), np.uint32)
    for k in range(_JUMP_DIGITS):
        for d in range(16):
            table[16 * k + d] = np.ravel(mrg.skip_matrix((d << (4 * k)) * _EDGE_SKIP))
    return table


def _launch_shape(xp, count: int) -> tuple[int, int]:
    """(blocks, threads per block): enough threads to fill the device, each with a run of edges."""
    sms = xp.cuda.Device().attributes["MultiProcessorCount"]
    blocks = min(-(-count // _THREADS_PER_BLOCK), 8 * sms)
    return max(blocks, 1), _THREADS_PER_BLOCK


def _generate_cuda(xp, scale: int, lo: int, hi: int, seed, weights: bool):
    from dbfs.backend import _compile

    count = hi - lo
    src = xp.empty(count, xp.int64)
    dst = xp.empty(count, xp.int64)
    weight = xp.empty(max(count, 1) if weights else 1, xp.float32)
    if count:
        blocks, threads = _launch_shape(xp, count)
        stride = blocks * threads
        val0, val1 = scramble_keys(seed)
        first = np.asarray(edge_state(seed, lo), np.uint32)
        step = np.ravel(np.asarray(mrg.skip_matrix(stride * _EDGE_SKIP), np.uint32))
        kernel = _compile("generator").get_function("kronecker_edges")
        kernel((blocks,), (threads,),
               (xp.asarray(_jump_table()), xp.asarray(step), xp.asarray(first),
                np.uint64(val0), np.uint64(val1), np.int32(scale), np.int64(count), np.int32(weights),
                src, dst, weight))
    return (src, dst, weight[:count]) if weights else (src, dst)
