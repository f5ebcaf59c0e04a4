"""Harness case: a test module whose import fails on rank 1 only."""

from mpi4py import MPI

if MPI.COMM_WORLD.Get_rank() == 1:
    raise ImportError("rank one cannot import a dependency")


def test_collected_where_the_import_worked():
    assert MPI.COMM_WORLD.Get_rank() != 1
