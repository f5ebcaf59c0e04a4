"""Harness case: parametrization that depends on the rank (rank 1+ collects one more test). The
harness must stop every rank before any test runs, as with any other collection error."""

import pytest
from mpi4py import MPI

RANK = MPI.COMM_WORLD.Get_rank()


@pytest.mark.parametrize("index", range(min(RANK, 1) + 1))
def test_parameters_depend_on_the_rank(index):
    assert index >= 0
