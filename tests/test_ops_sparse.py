"""Sparse int32 blocks as presence bitmap + present values (dbfs.ops.sparse): the NumPy twin against a
direct reading of the contract, the GPU kernels against the twin, and the argument checks."""

import numpy as np
import pytest

from dbfs.backend import Backend
from dbfs.ops.sparse import held_entries, pack_present, word_starts

pytestmark = pytest.mark.one_rank

CPU = Backend("cpu")


def random_block(rng, n, density):
    values = np.full(n, -1, np.int32)
    present = rng.random(n) < density
    values[present] = rng.integers(0, 1 << 30, int(present.sum()))
    return values


def buffers(xp, n):
    return xp.zeros(n // 32, xp.uint32), xp.zeros(n // 32 + 1, xp.int32), xp.zeros(n, xp.int32)


@pytest.mark.parametrize("n, density", [(32, 0.0), (32, 1.0), (4096, 0.3), (1 << 16, 0.02)])
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
    words, starts, packed = buffers(np, 64)
    with pytest.raises(ValueError, match="multiple of 32"):
        pack_present(CPU, np.zeros(48, np.int32), words, starts, packed)
    with pytest.raises(TypeError, match="int32"):
        pack_present(CPU, np.zeros(64, np.int64), words, starts, packed)


@pytest.mark.gpu
@pytest.mark.parametrize("n, density", [(32, 0.0), (1 << 20, 0.47), (1 << 20, 1.0), ((1 << 20) + 96, 0.001)])
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
