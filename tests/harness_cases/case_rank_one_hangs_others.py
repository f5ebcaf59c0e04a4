"""Harness case: rank 1 fails before a collective that the other ranks enter, which would hang them
forever; the watchdog (DBFS_TEST_TIMEOUT) must end the job."""

import pytest
from mpi4py import MPI

WORLD = MPI.COMM_WORLD


@pytest.mark.mpi(min_size=2)
def test_rank_one_leaves_the_others_in_a_barrier():
    if WORLD.Get_rank() == 1:
        raise RuntimeError("rank one failed before the barrier")
    WORLD.Barrier()
