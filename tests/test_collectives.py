"""Bulk collectives along a grid line (dbfs.collectives): the gather concatenates every rank's block in
line order and the OR-reduction leaves each rank the OR of its own block; over NCCL (GPUs of their own)
exactly what the host-staged MPI path gives."""

from __future__ import annotations

import numpy as np
import pytest
from mpi4py import MPI

from dbfs import collectives
from dbfs.backend import Backend, gpu_count
from dbfs.graph import GridComms
from dbfs.grid import Grid
from dbfs.transport import shares_a_gpu
from dbfs.workspace import Workspace

WORLD = MPI.COMM_WORLD
WORDS = 96                                      # a rank's block of marks


def blocks(rank: int, dtype):
    rng = np.random.default_rng(rank)
    return rng.integers(0, 120, 1000).astype(dtype)


def marks(rank: int, size: int):
    rng = np.random.default_rng(100 + rank)
    return rng.integers(0, 2**32, size * WORDS, dtype=np.uint64).astype(np.uint32)


def expected_or(size: int, me: int):
    return np.bitwise_or.reduce(np.stack([marks(r, size)[me * WORDS:(me + 1) * WORDS] for r in range(size)]))


def check_line(comms: GridComms, backend) -> None:
    """The gathers into a lender's memory (dirty) and into arrays of their own alike."""
    comm, me, size = comms.col, comms.col.Get_rank(), comms.col.Get_size()
    lender = backend.xp.full(8 * 1000 * size, 0x5A, backend.xp.uint8)
    for workspace in (Workspace(backend, [lender]), Workspace(backend)):
        for dtype in (np.uint8, np.uint16, np.int32, np.int64):
            gathered = collectives.allgather(comms, comm, backend, backend.asarray(blocks(me, dtype)), workspace)
            got = backend.asnumpy(gathered)
            assert got.dtype == dtype
            np.testing.assert_array_equal(got, np.concatenate([blocks(r, dtype) for r in range(size)]))
    assert workspace.allocated == (15 * 1000 * size if size > 1 else 0)
    got = backend.asnumpy(collectives.or_to_owners(comms, comm, backend, backend.asarray(marks(me, size))))
    np.testing.assert_array_equal(got, expected_or(size, me))


def test_host_staged_line_collectives():
    comms = GridComms.create(Grid(WORLD.Get_size(), 1, 1 << 12))
    try:
        check_line(comms, Backend("cpu"))
    finally:
        comms.free()


@pytest.mark.gpu
@pytest.mark.skipif(WORLD.Get_size() < 2, reason="one rank gathers nothing")
def test_nccl_line_collectives_match_the_host_path():
    local = WORLD.Split_type(MPI.COMM_TYPE_SHARED).Get_rank()
    backend = Backend("gpu", local % gpu_count())
    if shares_a_gpu(WORLD, backend):
        pytest.skip("NCCL needs a GPU per rank")
    comms = GridComms.create(Grid(WORLD.Get_size(), 1, 1 << 12))
    comms.bulk = "nccl"
    try:
        check_line(comms, backend)
        assert comms.lines                      # the NCCL path ran
    finally:
        comms.free()
