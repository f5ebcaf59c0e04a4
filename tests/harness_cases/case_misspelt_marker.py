"""Harness case: a misspelt pytest-mpi keyword (minsize) must be a collection error, not ignored."""

import pytest


@pytest.mark.mpi(minsize=2)
def test_needs_two_ranks():
    pass
