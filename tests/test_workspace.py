"""The lender of idle memory (dbfs.workspace): best fit in the order asked, aligned views of the
lenders' memory, what no lender holds allocated and counted, and the size-only replay the memory
estimate uses agreeing with what a Workspace does."""

import numpy as np
import pytest

from dbfs.backend import Backend
from dbfs.workspace import ALIGN, Workspace, allocated_bytes, placement

pytestmark = pytest.mark.one_rank

CPU = Backend("cpu")


def test_best_fit_takes_the_tightest_lender_that_holds_a_request():
    # 100 B: the 300 B lender is the tightest; 250 B then fits only the 1000 B one; 2000 B none
    assert placement([1000, 300], [100, 250, 2000, 40]) == [1, 0, None, 1]
    assert placement([], [8]) == [None]
    # each loan takes whole ALIGN-byte units
    assert placement([2 * ALIGN], [1, 1, 1]) == [0, 0, None]


def test_allocated_bytes_are_what_no_lender_holds():
    assert allocated_bytes([300, 1000], [100, 250, 2000, 40]) == 2000
    assert allocated_bytes([], [5, 7]) == 12


def test_arrays_are_views_of_the_lenders_or_their_own():
    small = np.full(64, -1, np.int64)           # 512 B
    large = np.full(4096, -1, np.int32)         # 16 KiB
    workspace = Workspace(CPU, [small, large])
    levels = workspace.zeros(100, np.int32)     # 400 B: the small lender
    parents = workspace.empty(1000, np.int64)   # 8000 B: the large one
    marks = workspace.empty(3000, np.uint32)    # 12000 B: no room left anywhere
    assert np.shares_memory(levels, small) and np.shares_memory(parents, large)
    assert not np.shares_memory(marks, small) and not np.shares_memory(marks, large)
    assert (levels == 0).all() and levels.dtype == np.int32 and parents.shape == (1000,)
    assert workspace.allocated == marks.nbytes
    parents[:] = 7                              # the loans do not overlap
    assert (levels == 0).all()


@pytest.mark.parametrize("seed", range(5))
def test_the_size_replay_matches_a_workspace(seed):
    rng = np.random.default_rng(seed)
    lenders = [np.empty(int(n), np.uint8) for n in rng.integers(1, 5000, 4)]
    requests = [int(n) for n in rng.integers(0, 3000, 12)]
    workspace = Workspace(CPU, lenders)
    for size in requests:
        workspace.empty(size, np.uint8)
    assert workspace.allocated == allocated_bytes([a.nbytes for a in lenders], requests)
