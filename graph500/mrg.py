"""The Graph500 random number stream: L'Ecuyer's order-5 multiple recursive generator (MRG).

Graph500 reference 3.0.0 (`generator/splittable_mrg.c`, `generator/utils.c`, `generator/make_graph.c`;
notes in docs/graph500.md section 1). The state is five values z1..z5 modulo the Mersenne prime
m = 2^31 - 1; one step computes z = (107374182*z1 + 104480*z5) mod m, shifts z5 <- z4 <- .. <- z1 <- z
and outputs the new z1. As a column vector the step is the companion matrix A, so skipping n steps is
A^n applied to the state. A^n is computed here from the binary powers A^(2^k) by repeated squaring
(exact Python integers), never read from a table.

Vectorized draws use the identity "output t after state s = row 0 of A^t dotted with s", evaluated for
many (t, s) pairs at once by `mod_matmul`, an exact modular matrix product done with one float64 matrix
multiplication: one operand is split into 16-bit halves so that all partial sums stay below 2^53.

Conversions follow the reference bit for bit: a double draw is u1*C1 + u2*C2 with C1 = (2^31-1)^-1 and
C2 = (2^31-1)^-2 as the decimal constants of `mrg_get_double_orig`; a float draw is float32(u)
promoted to double, times C1, rounded to float32 (`mrg_get_float_orig`: a float times a double
literal is evaluated in double).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

MODULUS = 2**31 - 1
MULT_Z1 = 107374182
MULT_Z5 = 104480
STATE_SIZE = 5
# The reference writes the two scale factors as decimal literals; Python parses them to the same doubles.
DOUBLE_SCALE_1 = float(".000000000465661287524579692")
DOUBLE_SCALE_2 = float(".0000000000000000002168404346990492787")
# Every skip the reference makes is below 2^192 (three 64-bit words).
_MAX_SKIP_BITS = 192

Matrix = tuple[tuple[int, ...], ...]
State = tuple[int, int, int, int, int]


def transition_matrix() -> Matrix:
    """A: the one-step transition of the state column vector (z1, .., z5)."""
    return ((MULT_Z1, 0, 0, 0, MULT_Z5),
            (1, 0, 0, 0, 0),
            (0, 1, 0, 0, 0),
            (0, 0, 1, 0, 0),
            (0, 0, 0, 1, 0))


def identity_matrix() -> Matrix:
    return tuple(tuple(int(i == j) for j in range(STATE_SIZE)) for i in range(STATE_SIZE))


def mat_mul(a: Matrix, b: Matrix) -> Matrix:
    """a @ b mod m on exact integers."""
    cols = list(zip(*b))
    return tuple(tuple(sum(int(x) * int(y) for x, y in zip(row, col)) % MODULUS for col in cols)
                 for row in a)


def mat_vec(a: Matrix, v) -> State:
    """a @ v mod m on exact integers."""
    return tuple(sum(int(x) * int(y) for x, y in zip(row, v)) % MODULUS for row in a)


@lru_cache(maxsize=1)
def _binary_powers() -> tuple[Matrix, ...]:
    """A^(2^k) for k = 0 .. 191, by repeated squaring."""
    powers = [transition_matrix()]
    for _ in range(_MAX_SKIP_BITS - 1):
        powers.append(mat_mul(powers[-1], powers[-1]))
    return tuple(powers)


def _check_steps(steps: int) -> None:
    if steps < 0 or steps >= 1 << _MAX_SKIP_BITS:
        raise ValueError(f"skip of {steps} steps is outside [0, 2^{_MAX_SKIP_BITS})")


@lru_cache(maxsize=256)
def skip_matrix(steps: int) -> Matrix:
    """A^steps mod m for any 0 <= steps < 2^192."""
    _check_steps(steps)
    result = identity_matrix()
    powers = _binary_powers()
    for k in range(steps.bit_length()):
        if steps >> k & 1:
            result = mat_mul(powers[k], result)
    return result


def skip(state, steps: int) -> State:
    """The state after `steps` steps (jump-ahead; powers of A commute, so the bit order is free)."""
    _check_steps(steps)
    powers = _binary_powers()
    for k in range(steps.bit_length()):
        if steps >> k & 1:
            state = mat_vec(powers[k], state)
    return tuple(int(z) for z in state)


def make_mrg_seed(seed1: int, seed2: int) -> State:
    """Spread two 64-bit user seeds over the five nonzero state values (`make_mrg_seed`)."""
    for seed in (seed1, seed2):
        if not 0 <= seed < 2**64:
            raise ValueError(f"seed {seed} is not an unsigned 64-bit integer")
    low30 = 0x3FFFFFFF
    return ((seed1 & low30) + 1,
            ((seed1 >> 30) & low30) + 1,
            (seed2 & low30) + 1,
            ((seed2 >> 30) & low30) + 1,
            ((seed2 >> 60) << 4) + (seed1 >> 60) + 1)


def next_uint(state) -> tuple[int, State]:
    """One step of the original recurrence: (output in [0, m), new state)."""
    z1, z2, z3, z4, z5 = state
    z = (MULT_Z1 * z1 + MULT_Z5 * z5) % MODULUS
    return z, (z, z1, z2, z3, z4)


def next_uints(state, count: int) -> tuple[np.ndarray, State]:
    """`count` consecutive outputs (int64) and the state after them, computed in one vectorized product."""
    draws = mod_matmul(output_rows(count), np.asarray(state, np.int64).reshape(STATE_SIZE, 1))[:, 0]
    return draws, skip(state, count)


@lru_cache(maxsize=8)
def _output_rows_cached(count: int) -> np.ndarray:
    rows = np.empty((max(count, 1), STATE_SIZE), np.int64)
    rows[0] = transition_matrix()[0]
    have = 1
    while have < count:                  # rows[h + t] = rows[t] @ A^h
        take = min(have, count - have)
        rows[have:have + take] = mod_matmul(rows[:take], np.asarray(skip_matrix(have), np.int64))
        have += take
    rows = rows[:count]
    rows.flags.writeable = False
    return rows


def output_rows(count: int) -> np.ndarray:
    """int64 [count, 5]: row t-1 is row 0 of A^t, so output t after state s is rows[t-1] . s mod m."""
    return _output_rows_cached(int(count))


def strided_states(state, count: int, stride: int) -> np.ndarray:
    """int64 [count, 5]: row k is the state `state` advanced k*stride steps (by doubling)."""
    states = np.empty((max(count, 1), STATE_SIZE), np.int64)
    states[0] = state
    have = 1
    while have < count:                  # states[h + k] = A^(h*stride) states[k]
        take = min(have, count - have)
        jump = np.asarray(skip_matrix(have * stride), np.int64)
        states[have:have + take] = mod_matmul(states[:take], jump.T)
        have += take
    return states[:count]


def stacked_powers(matrix: Matrix, count: int) -> np.ndarray:
    """int64 [count*5, 5]: matrix^0, matrix^1, .., matrix^(count-1) stacked by rows."""
    out = np.empty((count, STATE_SIZE, STATE_SIZE), np.int64)
    power = identity_matrix()
    for k in range(count):
        out[k] = power
        power = mat_mul(matrix, power)
    return out.reshape(count * STATE_SIZE, STATE_SIZE)


_LOW16 = 0xFFFF


def times_2_16(values: np.ndarray) -> np.ndarray:
    """values * 2^16 mod m for int64 values in [0, m): a 31-bit left rotation by 16, since 2^31 = 1 mod m."""
    return ((values & 0x7FFF) << 16) | (values >> 15)


def split_operand(left: np.ndarray, out: np.ndarray | None = None,
                  scratch: np.ndarray | None = None) -> np.ndarray:
    """float64 [a, 10] = [left mod 2^16, left div 2^16]: the left factor of `mod_matmul` (int64 [a, 5] in)."""
    if out is None:
        out = np.empty((left.shape[0], 2 * STATE_SIZE))
    if scratch is None:
        scratch = np.empty(left.shape, np.int64)
    np.bitwise_and(left, _LOW16, out=scratch)
    out[:, :STATE_SIZE] = scratch
    np.right_shift(left, 16, out=scratch)
    out[:, STATE_SIZE:] = scratch
    return out


def widen_operand(right: np.ndarray) -> np.ndarray:
    """float64 [10, b] = [right; right*2^16 mod m]: the right factor of `mod_matmul` (int64 [5, b] in)."""
    right = np.asarray(right, np.int64)
    return np.concatenate([right, times_2_16(right)], axis=0).astype(np.float64)


def mod_matmul(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """(left @ right) mod m, exact, for int64 operands in [0, m) with an inner dimension of 5.

    left = hi*2^16 + lo with lo < 2^16 and hi < 2^15, so left @ right = lo @ right + hi @ (right*2^16 mod m)
    (mod m): one float64 product with inner dimension 10 (`split_operand` @ `widen_operand`) whose terms
    are below 2^47 and whose sums are below 2^51, hence exact in double precision (fused multiply-adds
    included); `reduce_mod` then folds the result.
    """
    return reduce_mod(split_operand(np.asarray(left, np.int64)) @ widen_operand(right))


def reduce_mod(values: np.ndarray, out: np.ndarray | None = None,
               scratch: np.ndarray | None = None) -> np.ndarray:
    """Nonnegative integers below 2^53 (float64 or int64) -> int64 residues mod m, by Mersenne folding.

    `out` and `scratch` (contiguous int64 of the shape of values) may be given to avoid allocating.
    """
    if out is None:
        out = np.empty(values.shape, np.int64)
    if scratch is None:
        scratch = np.empty(values.shape, np.int64)
    out[...] = values
    np.right_shift(out, 31, out=scratch)
    np.bitwise_and(out, MODULUS, out=out)
    out += scratch                       # y < 2^31 + 2^22, and y >= m for a small fraction only
    over = scratch.reshape(-1).view(np.bool_)[:out.size].reshape(out.shape)
    np.greater_equal(out, MODULUS, out=over)
    out[over] -= MODULUS
    return out


def uints_to_doubles(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """The reference's double draw from two consecutive outputs: first*C1 + second*C2."""
    return (np.asarray(first, np.float64) * DOUBLE_SCALE_1
            + np.asarray(second, np.float64) * DOUBLE_SCALE_2)


def uints_to_floats(draws: np.ndarray) -> np.ndarray:
    """The reference's float draw: float32(float64(float32(u)) * C1)."""
    as_float = np.asarray(draws).astype(np.float32).astype(np.float64)
    return (as_float * DOUBLE_SCALE_1).astype(np.float32)


def make_random_numbers(n: int, seed1: int, seed2: int, position: int) -> np.ndarray:
    """`make_random_numbers`: n doubles from the seeded stream after skipping 2*2^128 + 2*position steps."""
    if n < 0 or position < 0:
        raise ValueError("n and position must be nonnegative")
    state = skip(make_mrg_seed(seed1, seed2), 2 * 2**128 + 2 * position)
    draws, _ = next_uints(state, 2 * n)
    return uints_to_doubles(draws[0::2], draws[1::2])
