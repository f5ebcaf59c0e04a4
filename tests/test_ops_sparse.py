"""Sparse int32 blocks as presence bitmap + present values (dbfs.ops.sparse): the NumPy twin against a
direct reading of the contract, the GPU kernels against the twin, and the argument checks."""

import numpy as np
import pytest

from dbfs.backend import Backend
from dbfs.ops.sparse import GROUP_MEMBERS, Positions, held_entries, pack_present, starts_length, word_starts

pytestmark = pytest.mark.one_rank

CPU = Backend("cpu")


def random_block(rng, n, density):
    values = np.full(n, -1, np.int32)
    present = rng.random(n) < density
    values[present] = rng.integers(0, 1 << 30, int(present.sum()))
    return values


def buffers(xp, n):
    return xp.zeros(n // 32, xp.uint32), xp.zeros(starts_length(n), xp.int32), xp.zeros(n, xp.int32)


@pytest.mark.parametrize("n, density", [(128, 0.0), (128, 1.0), (4096, 0.3), (1 << 16, 0.02)])
def test_numpy_twin_round_trip(n, density):
    values = random_block(np.random.default_rng(n), n, density)
    words, starts, packed = buffers(np, n)
    k = pack_present(CPU, values, words, starts, packed)
    present = values >= 0
    assert k == present.sum()
    assert np.array_equal(packed[:k], values[present])
    assert all(bool(words[o // 32] >> (o % 32) & 1) == present[o] for o in range(0, n, max(1, n // 500)))
    word_starts(CPU, words, starts)            # as a receiver places the words it got
    assert np.array_equal(held_entries(packed[:k], words, starts, np.arange(n)), np.where(present, values, -1))


def test_sizes_and_types_are_checked():
    words, starts, packed = buffers(np, 256)
    with pytest.raises(ValueError, match="multiple of 128"):
        pack_present(CPU, np.zeros(192, np.int32), words, starts, packed)
    with pytest.raises(TypeError, match="int32"):
        pack_present(CPU, np.zeros(256, np.int64), words, starts, packed)
    with pytest.raises(ValueError, match="a multiple of 4"):
        word_starts(CPU, np.zeros(6, np.uint32), np.zeros(2, np.int32))


@pytest.mark.gpu
@pytest.mark.parametrize("n, density", [(128, 0.0), (1 << 20, 0.47), (1 << 20, 1.0), ((1 << 20) + 384, 0.001)])
def test_gpu_matches_numpy(n, density):
    import cupy
    gpu = Backend("gpu", 0)
    values = random_block(np.random.default_rng(n + int(density * 100)), n, density)
    host = buffers(np, n)
    k = pack_present(CPU, values, *host)
    dev = buffers(cupy, n)
    assert pack_present(gpu, cupy.asarray(values), *dev) == k
    assert np.array_equal(cupy.asnumpy(dev[0]), host[0])
    assert np.array_equal(cupy.asnumpy(dev[2][:k]), host[2][:k])


@pytest.mark.parametrize("n, density", [(128, 0.0), (128, 1.0), (384, 0.5), (1 << 14, 0.03), (1 << 14, 0.97)])
def test_positions_read_as_their_contract_says(n, density):
    """A Positions' starts, one a group of POSITION_WORDS words, against a direct count: each held
    member's position is the number held below it, below(k) for every k in [0, n] (n and the group
    bounds among them), member() the inverse of at(); a block cut from the range and its tail read the
    same positions."""
    rng = np.random.default_rng(n + int(100 * density))
    held = rng.random(n) < density
    words = np.packbits(held, bitorder="little").view(np.uint32).copy()
    starts = np.zeros(starts_length(n), np.int32)
    positions = Positions(words, starts, word_starts(CPU, words, starts))
    below = np.concatenate(([0], np.cumsum(held)))
    assert positions.count == held.sum() and np.array_equal(starts, below[::GROUP_MEMBERS])
    members = np.flatnonzero(held)
    assert np.array_equal(positions.at(members), below[members])
    assert np.array_equal(positions.below(np.arange(n + 1)), below)
    assert np.array_equal(positions.member(np.arange(positions.count)), members)
    if n // 2 % GROUP_MEMBERS == 0:             # a block and a tail cut at a group's bound
        inside = members[members >= n // 2] - n // 2
        for part in (positions.block(1, n // 2), positions.tail(n // 2)):
            assert np.array_equal(part.at(inside), below[inside + n // 2])
