"""The grid of the device-driven small levels (dbfs.ops.peer_levels.blocks): every rank's cooperative grid
must be resident at once, because the ranks' kernels wait for each other -- a rank of its own GPU takes
the GPU, ranks sharing one under CUDA MPS take three quarters of their share, and an MPS client never
more than its CUDA_MPS_ACTIVE_THREAD_PERCENTAGE of the multiprocessors (whatever the backend was told:
a grid sized for the whole GPU on a 50% client waited forever for blocks that could not be resident);
none more than PEER_BLOCKS."""

from types import SimpleNamespace

import pytest

from dbfs.ops.peer_levels import PEER_BLOCKS, blocks


def backend(multiprocessors: int, sharing: int):
    return SimpleNamespace(multiprocessors=multiprocessors, sharing=sharing,
                           resident_blocks=lambda kernel, threads: max(1, multiprocessors // sharing))


@pytest.mark.parametrize("multiprocessors,sharing,percentage,expected", [
    (132, 1, None, PEER_BLOCKS),  # a GPU of its own: at most PEER_BLOCKS
    (16, 1, None, 16),
    (132, 4, "25", 24),          # four ranks under MPS, each its quarter
    (132, 1, "50", min(49, PEER_BLOCKS)),   # the client's share caps a backend not told of the sharing
    (132, 2, None, min(49, PEER_BLOCKS)),
    (132, 16, "6", 5),
    (8, 16, None, 1),            # never less than one block
])
def test_grid_fits_the_rank_share(monkeypatch, multiprocessors, sharing, percentage, expected):
    if percentage is None:
        monkeypatch.delenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", raising=False)
    else:
        monkeypatch.setenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", percentage)
    assert blocks(backend(multiprocessors, sharing), kernel=None) == expected
