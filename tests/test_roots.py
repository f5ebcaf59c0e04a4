"""Graph500 root sampling: the reference candidate stream, its rejection rules, batching of the
collective has_edge callback, running out of candidates, and identical roots on every rank."""

import numpy as np
import pytest
from mpi4py import MPI

from dbfs.errors import DbfsError
from graph500 import mrg
from graph500.generator import edge_range, generate_edges
from graph500.roots import candidate_roots, check_root, sample_roots


def reference_candidate(n_vertices: int, counter: int, seed=(2, 3)) -> int:
    """main.c: make_random_numbers(2, seed1, seed2, counter), root = int64((d0 + d1) * N) % N."""
    state = mrg.skip(mrg.make_mrg_seed(*seed), 2 * 2**128 + 2 * counter)
    u = []
    for _ in range(4):
        value, state = mrg.next_uint(state)
        u.append(value)
    d0 = u[0] * .000000000465661287524579692 + u[1] * .0000000000000000002168404346990492787
    d1 = u[2] * .000000000465661287524579692 + u[3] * .0000000000000000002168404346990492787
    return int((d0 + d1) * n_vertices) % n_vertices


def reference_roots(n_vertices: int, count: int, good, seed=(2, 3)) -> list[int]:
    """The reference loop, one candidate at a time, stopping (not padding) when counter passes 2N."""
    roots, counter = [], 0
    while len(roots) < count:
        root = reference_candidate(n_vertices, counter, seed)
        counter += 2
        if counter > 2 * n_vertices:
            break
        if root in roots or not good(root):
            continue
        roots.append(root)
    return roots


@pytest.mark.parametrize("n_vertices", [1024, 1000, 2**40])
def test_candidates_follow_the_reference_stream(n_vertices):
    got = candidate_roots(n_vertices, 0, 40)
    assert got.tolist() == [reference_candidate(n_vertices, 2 * k) for k in range(40)]
    assert candidate_roots(n_vertices, 17, 5).tolist() == got[17:22].tolist()


class Recorder:
    """has_edge from a predicate on vertex ids, recording every batch it is asked."""

    def __init__(self, good):
        self.good = good
        self.calls = []

    def __call__(self, candidates):
        assert candidates.dtype == np.int64
        self.calls.append(candidates.copy())
        return np.array([self.good(int(v)) for v in candidates], dtype=bool)


def test_all_good_takes_first_unique_candidates_in_one_call():
    has_edge = Recorder(lambda v: True)
    roots = sample_roots(2**16, 64, has_edge)
    assert roots.dtype == np.int64
    assert roots.tolist() == reference_roots(2**16, 64, lambda v: True)
    assert len(set(roots.tolist())) == 64
    assert len(has_edge.calls) == 1


def test_rejected_vertices_are_skipped_in_reference_order():
    good = lambda v: v % 3 == 1  # noqa: E731
    roots = sample_roots(4096, 64, Recorder(good))
    assert roots.tolist() == reference_roots(4096, 64, good)
    assert all(good(int(v)) for v in roots)


def test_duplicates_rejected_and_fewer_roots_when_candidates_run_out():
    # 16 vertices: the 16 candidates repeat, so fewer than 16 unique roots exist in the stream
    roots = sample_roots(16, 16, Recorder(lambda v: True))
    expected = reference_roots(16, 16, lambda v: True)
    assert roots.tolist() == expected
    assert len(expected) < 16 and len(set(expected)) == len(expected)
    assert len(set(candidate_roots(16, 0, 16).tolist())) == len(expected)


def test_too_few_good_vertices():
    good_set = {3, 700, 701}
    has_edge = Recorder(lambda v: v in good_set)
    roots = sample_roots(1024, 64, has_edge)
    assert roots.tolist() == reference_roots(1024, 64, lambda v: v in good_set)
    assert set(roots.tolist()) <= good_set
    asked = np.concatenate(has_edge.calls)
    assert len(asked) <= 1024, "each candidate of the stream is asked at most once (a vertex may recur)"
    assert len(has_edge.calls) <= 6, "candidates are checked in batches"


@pytest.mark.one_rank
def test_few_good_vertices_among_many():
    """A graph of 2^22 vertices with 4 having an edge: the sampler walks the whole candidate stream
    (about a second; it once kept every rejected vertex in a sorted set it merged at every batch: 19 s
    here, 114 s at 2^24) and returns the good vertices the stream reaches."""
    n, good = 1 << 22, np.array([0, 5, 6, (1 << 22) - 1])
    roots = sample_roots(n, 64, lambda candidates: np.isin(candidates, good))
    stream = candidate_roots(n, 0, n)
    reached = stream[np.isin(stream, good)]
    _, first = np.unique(reached, return_index=True)
    assert roots.size and roots.tolist() == reached[np.sort(first)].tolist()


def has_edge_from_edges(n_vertices, src, dst):
    """The root sampler's rule (an owned degree above 0): an endpoint of at least one edge that is not a
    self-loop."""
    flags = np.zeros(n_vertices, bool)
    keep = src != dst
    flags[src[keep]] = True
    flags[dst[keep]] = True
    return flags


def test_isolated_and_self_loop_only_candidates_are_rejected():
    n = 64
    stream = candidate_roots(n, 0, n).tolist()
    first, second, third = sorted(set(stream), key=stream.index)[:3]      # first three distinct candidates
    # `first` has only a self-loop, `second` no edge at all, every other vertex sits on a cycle
    others = np.array([v for v in range(n) if v not in (first, second)])
    src = np.concatenate([others, [first]])
    dst = np.concatenate([np.roll(others, 1), [first]])
    flags = has_edge_from_edges(n, src, dst)
    roots = sample_roots(n, 8, lambda c: flags[c])
    assert first not in roots and second not in roots
    assert roots[0] == third
    assert roots.tolist() == reference_roots(n, 8, lambda v: bool(flags[v]))


def test_generated_graph_roots_have_edges():
    scale = 7
    n = 1 << scale
    flags = has_edge_from_edges(n, *generate_edges(scale, 1, 0, n))
    assert (~flags).any()
    roots = sample_roots(n, 64, lambda c: flags[c])
    assert roots.tolist() == reference_roots(n, 64, lambda v: bool(flags[v]))
    assert flags[roots].all()


def test_zero_roots_and_bad_input():
    has_edge = Recorder(lambda v: True)
    assert sample_roots(100, 0, has_edge).size == 0 and has_edge.calls == []
    with pytest.raises(DbfsError):
        sample_roots(0, 4, has_edge)
    with pytest.raises(ValueError):
        sample_roots(100, 4, lambda c: np.ones(len(c) + 1, bool))


def test_check_root():
    assert check_root(10, 9) == 9 and check_root(10, "3") == 3
    for bad in (-1, 10, "x", None):
        with pytest.raises(DbfsError):
            check_root(10, bad)


@pytest.mark.mpi(min_size=2)
def test_same_roots_on_every_rank_with_a_collective_has_edge():
    comm = MPI.COMM_WORLD
    scale = 9
    n = 1 << scale
    # each rank knows the endpoints of its own edges only; has_edge combines them with an allreduce
    lo, hi = edge_range(4 << scale, comm.Get_rank(), comm.Get_size())
    local = has_edge_from_edges(n, *generate_edges(scale, 4, lo, hi))

    def has_edge(candidates):
        mine = local[candidates].astype(np.int8)
        out = np.empty_like(mine)
        comm.Allreduce(mine, out, op=MPI.MAX)
        return out.astype(bool)

    roots = sample_roots(n, 64, has_edge)
    everyone = comm.allgather(roots.tolist())
    assert all(r == everyone[0] for r in everyone)
    full = has_edge_from_edges(n, *generate_edges(scale, 4, 0, 4 << scale))
    assert roots.tolist() == reference_roots(n, 64, lambda v: bool(full[v]))
