"""Graph500 search-key (BFS root) sampling, following the reference candidate stream of version 3.0.0.

Reference: `src/main.c` (the loop after kernel 1) with `make_random_numbers` of
`generator/make_graph.c`; notes in docs/graph500.md section 2. Candidate k (counter = 2k) is
int64((d0 + d1) * N) mod N, where d0, d1 are the reference's double draws at stream position 2k, i.e.
the MRG seeded with (seed1, seed2), skipped 2*2^128 + 4k steps, then four outputs. A candidate is
rejected when it duplicates an accepted root or has no edge other than self-loops. The reference gives up
once the counter passes 2N, so only candidates 0 .. N-1 are ever considered.

One deliberate difference: when the candidates run out, the reference still stores the last unchecked
candidate in every remaining slot; here the sampler returns the roots it found (fewer than asked), as the
specification says ("run fewer if there are not enough").

Candidates are generated in vectorized batches (their MRG states by doubling, see
graph500.mrg.strided_states), and the collective `has_edge` callback is asked once per batch.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from dbfs.errors import DbfsError
from graph500 import mrg

DEFAULT_SEED = (2, 3)
_STREAM_SKIP = 2 * 2**128
_DRAWS_PER_CANDIDATE = 4
_MIN_BATCH = 64
_MAX_BATCH = 1 << 16           # candidates a batch: their MRG states hold ~160 B each while made


def candidate_roots(n_vertices: int, start: int, count: int, seed=DEFAULT_SEED) -> np.ndarray:
    """int64 candidates start .. start+count-1 of the reference stream (candidate k has counter 2k)."""
    if n_vertices < 1 or start < 0 or count < 0:
        raise ValueError(f"bad candidate request: {n_vertices} vertices, [{start}, {start + count})")
    first = mrg.skip(mrg.make_mrg_seed(*seed), _STREAM_SKIP + _DRAWS_PER_CANDIDATE * start)
    states = mrg.strided_states(first, count, _DRAWS_PER_CANDIDATE)
    draws = mrg.mod_matmul(states, mrg.output_rows(_DRAWS_PER_CANDIDATE).T)       # [count, 4]
    d0 = mrg.uints_to_doubles(draws[:, 0], draws[:, 1])
    d1 = mrg.uints_to_doubles(draws[:, 2], draws[:, 3])
    return ((d0 + d1) * n_vertices).astype(np.int64) % n_vertices


def shortfall(n_vertices: int, found: int, asked: int, option: str) -> str:
    """What a run says when the sampler found fewer roots than asked: none at all (`option` names the
    way to give one), or how many its candidates held."""
    candidates = f"among its {n_vertices} random candidates (the reference draws as many as the graph has vertices)"
    if found == 0:
        return (f"the Graph500 root sampler found no vertex with an edge {candidates}, self-loops not counted (a "
                f"search never follows one): name one with {option}")
    return f"the Graph500 root sampler found {found} root{'s' if found != 1 else ''} {candidates}; asked for {asked}"


def sample_roots(n_vertices: int, count: int, has_edge: Callable[[np.ndarray], np.ndarray],
                 seed=DEFAULT_SEED) -> np.ndarray:
    """Up to `count` unique roots (int64, in the reference's order).

    has_edge(candidates) -> bool array: whether each vertex has a non-self-loop edge. It is collective:
    every rank calls it with the same candidates (sorted, unique) and must get the same answer, so every
    rank returns the same roots.
    """
    if n_vertices < 1:
        raise DbfsError(f"cannot sample roots of a graph with {n_vertices} vertices")
    if count < 0:
        raise DbfsError(f"number of roots must be >= 0, got {count}")
    seed = tuple(int(s) for s in seed)
    roots = np.empty(0, np.int64)
    next_candidate = 0
    batch = max(_MIN_BATCH, 4 * count)
    while roots.size < count and next_candidate < n_vertices:
        size = min(batch, n_vertices - next_candidate)
        candidates = candidate_roots(n_vertices, next_candidate, size, seed)
        next_candidate += size
        batch = min(2 * batch, _MAX_BATCH)
        # a repeat within the batch is rejected too: either as a duplicate or, like its first occurrence,
        # for lacking an edge. A vertex found without an edge in an earlier batch is asked again (the
        # same answer): remembering every such vertex made each batch sort a set growing towards N.
        unique, first_index = np.unique(candidates, return_index=True)
        fresh = ~np.isin(unique, roots)
        asked = unique[fresh]
        if asked.size == 0:
            continue
        answer = np.asarray(has_edge(asked), dtype=bool)
        if answer.shape != asked.shape:
            raise ValueError(f"has_edge returned shape {answer.shape} for {asked.shape[0]} candidates")
        accepted_index = np.sort(first_index[fresh][answer])
        roots = np.concatenate([roots, candidates[accepted_index][:count - roots.size]])
    return roots


def check_root(n_vertices: int, root: int) -> int:
    """A user-given root (e.g. --root V) as int, or DbfsError when it is not a vertex id."""
    try:
        value = int(root)
    except (TypeError, ValueError):
        raise DbfsError(f"root must be an integer vertex id, got {root!r}", collective=True) from None
    if not 0 <= value < n_vertices:
        raise DbfsError(f"root {value} is not a vertex (the graph has vertices 0 .. {n_vertices - 1})",
                        collective=True)
    return value
