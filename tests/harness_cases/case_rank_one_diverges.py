"""Harness case (run by tests/test_harness.py in a subprocess, not collected by the suite): rank 1
departs from the other ranks in each phase. At 1 rank every test passes; at 2+ ranks the harness must
report the departures on every rank and keep the ranks' collectives matched."""

import pytest
from mpi4py import MPI

WORLD = MPI.COMM_WORLD


@pytest.fixture
def rank_one_setup_fails():
    if WORLD.Get_rank() == 1:
        raise RuntimeError("fixture broke on rank one")


@pytest.fixture
def rank_one_setup_skips():
    if WORLD.Get_rank() == 1:
        pytest.skip("rank one lacks a resource")


@pytest.mark.mpi
def test_assertion_fails_on_rank_one():
    assert WORLD.Get_rank() != 1, "rank one computed the wrong answer"


@pytest.mark.mpi
def test_setup_failure_on_rank_one(rank_one_setup_fails):
    WORLD.Barrier()


@pytest.mark.mpi
def test_setup_skip_on_rank_one(rank_one_setup_skips):
    WORLD.Barrier()


@pytest.mark.mpi
def test_call_skip_on_rank_one():
    if WORLD.Get_rank() == 1:
        pytest.skip("rank one gave up inside the test")


@pytest.mark.mpi
def test_ranks_still_in_step():
    assert WORLD.allreduce(1) == WORLD.Get_size()
