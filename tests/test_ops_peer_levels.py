"""The grid of the device-driven small levels (dbfs.ops.peer_levels.blocks): every rank's cooperative grid
must be resident at once, because the ranks' kernels wait for each other -- a rank of its own GPU takes
the GPU, ranks sharing one under CUDA MPS take three quarters of their share, and an MPS client never
more than its CUDA_MPS_ACTIVE_THREAD_PERCENTAGE of the multiprocessors (whatever the backend was told:
a grid sized for the whole GPU on a 50% client waited forever for blocks that could not be resident);
none more than PEER_BLOCKS. The bulk levels' totals (level_totals): the twin's contract here, the kernel
against an allreduce on the GPUs (tests/test_bfs.py)."""

from types import SimpleNamespace

import numpy as np
import pytest

from dbfs.backend import Backend
from dbfs.kernels import PEER_RECORD_WORDS, STAT, STAT_WORDS
from dbfs.ops.peer_levels import PEER_BLOCKS, blocks, level_totals

pytestmark = pytest.mark.one_rank


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


def test_level_totals_twin_sums_every_rank_record():
    """The sums, this rank's record on every rank, and the level's counters handed over and cleared."""
    P, W = 3, PEER_RECORD_WORDS
    records = [np.zeros(2 * P * W, np.int64) for _ in range(P)]
    for p, record in ((1, (5, 50, 1)), (2, (7, 70, 1))):      # ranks 1 and 2 put round 1 (odd half) on rank 0
        records[0][(P + p) * W:(P + p + 1) * W] = record
    stats, rounds, totals = np.zeros(STAT_WORDS, np.int64), np.zeros(1, np.uint64), np.zeros(2, np.int64)
    status = np.full(STAT_WORDS, -1, np.int64)
    stats[STAT.COUNT], stats[STAT.DEGREES], stats[STAT.CHECKED] = 3, 30, 300
    level_totals(Backend("cpu"), stats, records, records[0], rounds, totals, status)     # rank 0: slot 0 of each
    assert totals.tolist() == [15, 150] and int(rounds[0]) == 1
    assert all(r[P * W:(P + 1) * W].tolist() == [3, 30, 1] for r in records)  # its record on every rank
    assert status[[STAT.COUNT, STAT.DEGREES, STAT.CHECKED]].tolist() == [3, 30, 300] and not stats.any()
    with pytest.raises(RuntimeError, match=r"ranks \[1, 2\] are not of round 2"):
        level_totals(Backend("cpu"), stats, records, records[0], rounds, totals, status)
