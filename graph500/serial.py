"""A serial reference BFS over a whole undirected tuple list, for checking the distributed search on
small graphs: level-synchronous over a CSR of both edge directions (self-loops dropped), NumPy only.
Also the Graph500 v3 TEPS edge count of the traversed component."""

from __future__ import annotations

import numpy as np


def serial_bfs(n_vertices: int, src, dst, root: int) -> tuple[np.ndarray, np.ndarray]:
    """(level, parent) int64 arrays over all vertices; -1 where unreached, parent[root] = root.

    The parent of a vertex is its smallest-id neighbour on the previous level.
    """
    src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
    keep = src != dst
    u = np.concatenate((src[keep], dst[keep]))
    v = np.concatenate((dst[keep], src[keep]))
    order = np.argsort(u, kind="stable")
    u, v = u[order], v[order]
    start = np.searchsorted(u, np.arange(n_vertices + 1))
    level = np.full(n_vertices, -1, np.int64)
    parent = np.full(n_vertices, -1, np.int64)
    level[root], parent[root] = 0, root
    frontier, depth = np.array([root], np.int64), 0
    while frontier.size:
        depth += 1
        counts = start[frontier + 1] - start[frontier]
        sources = np.repeat(frontier, counts)
        first = np.repeat(start[frontier] - np.cumsum(counts) + counts, counts)
        targets = v[first + np.arange(counts.sum())]
        fresh = level[targets] < 0
        sources, targets = sources[fresh], targets[fresh]
        order = np.lexsort((sources, targets))
        targets, sources = targets[order], sources[order]
        frontier, idx = np.unique(targets, return_index=True)
        level[frontier], parent[frontier] = depth, sources[idx]
    return level, parent


def component_nedge(src, dst, level) -> int:
    """Graph500 v3 TEPS count: non-self-loop tuples with a visited endpoint, duplicates counted."""
    src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
    return int(np.count_nonzero((src != dst) & (level[src] >= 0)))
