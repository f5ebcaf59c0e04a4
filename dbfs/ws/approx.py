"""Approximate layouts of the ws mode (`--approx`), after Singh and Nasre's approximate-computing poster
(paper 003): preprocessing of the input edge list that trades exactness for speed, and the inaccuracy
of a program's result on the approximate graph against the exact one.

  coalesce    renumber the vertices by a BFS tree from the highest-degree vertex, level by level,
              round-robin over the parents (the first child of every parent, then every second child,
              ...), each level starting at a multiple of 32; the holes this leaves at the end of a
              level's last chunk of 32 are filled with replicas of outside vertices that have at least
              `threshold` edges into the chunk (most first; vertices of at most 1024 neighbours, so a hub
              is never copied): a replica copies the vertex's edges and gains an edge to every vertex of
              the chunk (weight: the mean of the vertex's edges into the chunk). Vertices the tree does
              not reach follow in their original order.
  latency     the vertices of 2 .. `degree` neighbours with the highest clustering coefficients below 1
              (the top `fraction` of all vertices, coefficient > 0: the best-connected neighbourhoods
              that are not cliques yet) get their neighbourhoods completed to cliques, so values cross
              the subgraph in one step (weight of a new edge: the mean weight of the centre's edges). A
              graph without triangles (a lattice) has no such vertex and stays as it is.
  divergence  renumber the vertices by degree (a warp's 32 vertices have similar degrees), then bring
              every vertex whose degree is more than `tolerance` away from its warp's mean (over the
              warp's non-isolated vertices; at least 1) to that mean: a vertex above drops edges
              picked uniformly at random (by a hash of the edge), a vertex below gains edges to 2-hop
              neighbours (weight: the sum of the two edges' weights). The graph is undirected, so an
              edge leaves only where both its ends are above their means and picked it, and a new
              edge joins two vertices below their means.

All three are functions of the graph alone (`approximate`), written for NumPy and CuPy alike.
`position[v]` is the id of original vertex v in the approximate graph: results are compared there.
Inaccuracy (`inaccuracy`): the fraction of the original vertices whose value differs from the exact
run's (for programs compared within a tolerance, PageRank: by more than 1e-4 relative) and the mean
relative error |approx - exact| / |exact| over them (|approx - exact| where exact is 0; a vertex reached
in one run and not in the other counts as 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dbfs.ws.graph import build_csr
from dbfs.ws.launch import ranges_with_owner

KINDS = ("coalesce", "latency", "divergence")
DEFAULTS = {"threshold": 2, "degree": 16, "fraction": 0.05, "tolerance": 0.25}
REPLICA_DEGREE = 1024
PR_TOLERANCE = 1e-4
_GOLDEN = 0x9E3779B97F4A7C15


@dataclass
class Approximation:
    kind: str
    params: dict
    n: int                 # vertices of the approximate graph
    src: object            # xp int64 tuples of the approximate graph
    dst: object
    weights: object        # xp float32 or None
    position: object       # xp int64 [original n]: new id of every original vertex
    added: int             # tuples added
    removed: int           # tuples removed
    replicas: int = 0

    def describe(self) -> dict:
        return {"kind": self.kind, **self.params, "vertices": self.n, "tuples": int(self.src.shape[0]),
                "added_tuples": self.added, "removed_tuples": self.removed, "replicas": self.replicas}


def _hash(xp, x, salt: int):
    """Pseudo-random uint64 of int64 keys (splitmix64 finaliser), the same on every backend."""
    z = x.astype(xp.uint64) * xp.uint64(_GOLDEN) + xp.uint64(salt * 0xBF58476D1CE4E5B9 & 0xFFFFFFFFFFFFFFFF)
    z = (z ^ (z >> xp.uint64(30))) * xp.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> xp.uint64(27))) * xp.uint64(0x94D049BB133111EB)
    return z ^ (z >> xp.uint64(31))


def _rank_in_groups(xp, sorted_keys):
    """Place of every element among the equal keys before it (sorted_keys sorted)."""
    count = sorted_keys.shape[0]
    start = xp.ones(count, bool)
    start[1:] = sorted_keys[1:] != sorted_keys[:-1]
    starts = xp.flatnonzero(start)
    k = xp.arange(count)
    return k - starts[xp.searchsorted(starts, k, side="right") - 1]


def _member(xp, sorted_set, values):
    """bool: values found in the sorted array sorted_set."""
    if sorted_set.shape[0] == 0:
        return xp.zeros(values.shape[0], bool)
    at = xp.minimum(xp.searchsorted(sorted_set, values), sorted_set.shape[0] - 1)
    return sorted_set[at] == values


def _edge_keys(xp, n, a, b):
    return xp.minimum(a, b) * n + xp.maximum(a, b)


def _coalesce(xp, n, src, dst, weights, csr, threshold):
    rowptr, nbrs = csr.rowptr, csr.nbrs.astype(xp.int64)
    degree = csr.degree
    new = xp.full(n, -1, xp.int64)
    root = int(xp.argmax(degree))
    new[root] = 0
    frontier = xp.array([root], xp.int64)
    end, holes = 1, []                          # holes: (chunk, first hole slot) per level
    while frontier.shape[0]:
        owner, entry = ranges_with_owner(xp, rowptr[frontier], rowptr[frontier + 1])
        child, parent = nbrs[entry], new[frontier[owner]]
        fresh = new[child] < 0
        child, parent = child[fresh], parent[fresh]
        if child.shape[0] == 0:
            break
        order = xp.lexsort(xp.stack((parent, child)))         # by child, then its smallest parent
        child, parent = child[order], parent[order]
        first = xp.ones(child.shape[0], bool)
        first[1:] = child[1:] != child[:-1]
        child, parent = child[first], parent[first]
        order = xp.lexsort(xp.stack((child, parent)))         # siblings together, by id
        child, parent = child[order], parent[order]
        rank = _rank_in_groups(xp, parent)
        order = xp.lexsort(xp.stack((parent, rank)))          # round-robin: every first child, then ...
        base = -(-end // 32) * 32
        if base > end:
            holes.append((end // 32, end))
        new[child[order]] = base + xp.arange(child.shape[0])
        end = base + child.shape[0]
        frontier = child[order]
    base = -(-end // 32) * 32
    if base > end:
        holes.append((end // 32, end))
    rest = xp.flatnonzero(new < 0)
    new[rest] = base + xp.arange(rest.shape[0])
    n_new = base + int(rest.shape[0])
    src_new, dst_new = new[src], new[dst]
    added_src, added_dst, added_w = [], [], []
    replicas = 0
    if holes:
        hole_chunk = xp.array([c for c, _ in holes], xp.int64)
        hole_first = xp.array([f for _, f in holes], xp.int64)
        # pairs (chunk, outside vertex x, weight) over the edges of the chunks' vertices
        inverse = xp.empty(n_new, xp.int64)
        inverse[:] = -1
        inverse[new] = xp.arange(n)
        members_new = (hole_chunk[:, None] * 32 + xp.arange(32)[None, :]).ravel()
        member_chunk = xp.repeat(xp.arange(hole_chunk.shape[0]), 32)
        keep = members_new < hole_first[member_chunk]
        members, member_chunk = inverse[members_new[keep]], member_chunk[keep]
        owner, entry = ranges_with_owner(xp, rowptr[members], rowptr[members + 1])
        x, chunk = nbrs[entry], member_chunk[owner]
        w = csr.weights[entry] if csr.weights is not None else xp.ones(entry.shape[0], xp.float32)
        outside = (new[x] // 32 != hole_chunk[chunk]) & (degree[x] <= REPLICA_DEGREE)
        x, chunk, w = x[outside], chunk[outside], w[outside]
        key = chunk * n + x
        keys, inv, counts = xp.unique(key, return_inverse=True, return_counts=True)
        weight_sum = xp.bincount(inv.ravel(), weights=w.astype(xp.float64), minlength=keys.shape[0])
        good = counts >= threshold
        keys, counts, weight_sum = keys[good], counts[good], weight_sum[good]
        chunk, x = keys // n, keys % n
        order = xp.lexsort(xp.stack((x, -counts, chunk)))
        chunk, x, counts, weight_sum = chunk[order], x[order], counts[order], weight_sum[order]
        rank = _rank_in_groups(xp, chunk)
        slot = hole_first[chunk] + rank
        fits = slot < (hole_chunk[chunk] + 1) * 32
        chunk, x, slot, mean_w = chunk[fits], x[fits], slot[fits], (weight_sum / counts)[fits]
        replicas = int(x.shape[0])
        if replicas:
            # the replica's copies of x's edges
            owner, entry = ranges_with_owner(xp, rowptr[x], rowptr[x + 1])
            added_src.append(slot[owner])
            added_dst.append(new[nbrs[entry]])
            added_w.append(csr.weights[entry] if csr.weights is not None else None)
            # and an edge to every vertex of its chunk
            first_new = hole_chunk[chunk] * 32
            owner, member = ranges_with_owner(xp, first_new, hole_first[chunk])
            added_src.append(slot[owner])
            added_dst.append(member)
            added_w.append(mean_w[owner].astype(xp.float32))
            n_new = max(n_new, int(slot.max()) + 1)
    return new, n_new, src_new, dst_new, added_src, added_dst, added_w, replicas


def _latency(xp, n, csr, degree_cap, fraction):
    rowptr, nbrs, degree = csr.rowptr, csr.nbrs.astype(xp.int64), csr.degree
    candidates = xp.flatnonzero((degree >= 2) & (degree <= degree_cap))
    owner, entry = ranges_with_owner(xp, rowptr[candidates], rowptr[candidates + 1])
    position = entry - rowptr[candidates][owner]
    later = degree[candidates][owner] - 1 - position              # partners after this entry in the row
    pair_owner, offset = ranges_with_owner(xp, xp.zeros_like(later), later)
    first = entry[pair_owner]
    second = first + 1 + offset
    centre = candidates[owner[pair_owner]]
    a, b = nbrs[first], nbrs[second]
    rows = _rows_of(xp, rowptr, nbrs.shape[0])
    keys = xp.unique(_edge_keys(xp, n, nbrs, rows))
    pair_key = _edge_keys(xp, n, a, b)
    at = xp.minimum(xp.searchsorted(keys, pair_key), keys.shape[0] - 1)
    adjacent = (keys[at] == pair_key) | (a == b)
    triangles = xp.bincount(xp.searchsorted(candidates, centre[adjacent & (a != b)]), minlength=candidates.shape[0])
    d = degree[candidates].astype(xp.float64)
    cc = triangles / (d * (d - 1) / 2)
    open_cc = xp.where(cc < 1, cc, 0)                             # a clique already has nothing to add
    take = int(np.ceil(fraction * n))
    order = xp.lexsort(xp.stack((candidates, -open_cc)))[:take]
    chosen = candidates[order][open_cc[order] > 0]
    pick = _member(xp, xp.sort(chosen), centre) & ~adjacent
    new_keys, first_at = xp.unique(pair_key[pick], return_index=True)
    if csr.weights is None:
        return a[pick][first_at], b[pick][first_at], None
    sums = xp.bincount(rows, weights=csr.weights.astype(xp.float64), minlength=n)
    mean = (sums / xp.maximum(degree, 1)).astype(xp.float32)
    return a[pick][first_at], b[pick][first_at], mean[centre[pick][first_at]]


def _rows_of(xp, rowptr, entries):
    return xp.searchsorted(rowptr[1:], xp.arange(entries, dtype=xp.int64), side="right")


def _divergence(xp, n, src, dst, weights, csr, tolerance):
    degree = csr.degree
    order = xp.lexsort(xp.stack((xp.arange(n), degree)))
    new = xp.empty(n, xp.int64)
    new[order] = xp.arange(n)
    warp = new // 32
    connected = xp.bincount(warp, weights=(degree > 0).astype(xp.float64))
    warp_mean = xp.bincount(warp, weights=degree.astype(xp.float64)) / xp.maximum(connected, 1)
    mean = xp.maximum(warp_mean[warp], 1)
    target = xp.rint(mean).astype(xp.int64)
    over = degree > (1 + tolerance) * mean
    under = (degree < (1 - tolerance) * mean) & (degree > 0)
    # removal: each tuple, seen from both endpoints, ranked among its endpoint's tuples by a hash
    keep = src != dst
    tuples = xp.flatnonzero(keep)
    vertex = xp.concatenate((src[tuples], dst[tuples]))
    tuple_of = xp.concatenate((tuples, tuples))
    salt = (_hash(xp, tuple_of, 1) >> xp.uint64(1)).astype(xp.int64)     # lexsort keys of one type
    by = xp.lexsort(xp.stack((tuple_of, salt, vertex)))
    vertex_sorted = vertex[by]
    rank = _rank_in_groups(xp, vertex_sorted)
    drop_entry = over[vertex_sorted] & (rank >= target[vertex_sorted])
    dropped = xp.bincount(tuple_of[by][drop_entry], minlength=src.shape[0]) == 2   # both ends shed it
    # addition: 2-hop neighbours, picked by hashes of (vertex, k)
    deficient = xp.flatnonzero(under)
    need = xp.maximum(target[deficient] - degree[deficient], 0)
    owner, k = ranges_with_owner(xp, xp.zeros_like(need), need)
    v = deficient[owner]
    key = v * 64 + k
    rowptr, nbrs = csr.rowptr, csr.nbrs.astype(xp.int64)
    e1 = rowptr[v] + (_hash(xp, key, 2) % degree[v].astype(xp.uint64)).astype(xp.int64)
    b = nbrs[e1]
    degree_b = xp.maximum(degree[b], 1)
    e2 = rowptr[b] + (_hash(xp, key, 3) % degree_b.astype(xp.uint64)).astype(xp.int64)
    c = nbrs[e2]
    good = (c != v) & under[c]
    new_src, new_dst = v[good], c[good]
    new_w = None if csr.weights is None else (csr.weights[e1] + csr.weights[e2])[good]
    return new, dropped, new_src, new_dst, new_w


def approximate(kind: str, n: int, src, dst, weights, xp=np, **params) -> Approximation:
    """The approximate graph of the tuples (src, dst int64, weights float32 or None, arrays in xp)."""
    if kind not in KINDS:
        raise ValueError(f"unknown approximation {kind!r}")
    params = {name: params.get(name, DEFAULTS[name]) for name in
              {"coalesce": ("threshold",), "latency": ("degree", "fraction"), "divergence": ("tolerance",)}[kind]}
    csr = build_csr(xp, n, src, dst, weights)
    if kind == "coalesce":
        new, n_new, s, d, add_s, add_d, add_w, replicas = _coalesce(xp, n, src, dst, weights, csr,
                                                                    params["threshold"])
        w = weights
        if add_s:
            s = xp.concatenate([s] + add_s)
            d = xp.concatenate([d] + add_d)
            if weights is not None:
                w = xp.concatenate([weights] + [a.astype(xp.float32) for a in add_w])
        added = int(s.shape[0] - src.shape[0])
        return Approximation(kind, params, n_new, s, d, w, new, added, 0, replicas)
    if kind == "latency":
        a, b, w_new = _latency(xp, n, csr, params["degree"], params["fraction"])
        w = None if weights is None else xp.concatenate((weights, w_new))
        return Approximation(kind, params, n, xp.concatenate((src, a)), xp.concatenate((dst, b)), w,
                             xp.arange(n, dtype=xp.int64), int(a.shape[0]), 0)
    new, dropped, add_s, add_d, add_w = _divergence(xp, n, src, dst, weights, csr, params["tolerance"])
    kept = ~dropped
    s = xp.concatenate((new[src[kept]], new[add_s]))
    d = xp.concatenate((new[dst[kept]], new[add_d]))
    w = None if weights is None else xp.concatenate((weights[kept], add_w))
    return Approximation(kind, params, n, s, d, w, new, int(add_s.shape[0]), int(dropped.sum()))


def inaccuracy(program, exact: np.ndarray, approx: np.ndarray, position: np.ndarray) -> dict:
    """How far the approximate run's values (at `position`) are from the exact run's (host arrays)."""
    got = approx[position]
    if exact.dtype.names:                      # a struct vertex: compare its first field
        exact, got = exact[exact.dtype.names[0]], got[exact.dtype.names[0]]
    e, a = exact.astype(np.float64), got.astype(np.float64)
    if exact.dtype == np.uint32:
        e[exact == np.uint32(0xFFFFFFFF)] = np.inf
        a[got == np.uint32(0xFFFFFFFF)] = np.inf
    both_inf = np.isinf(e) & np.isinf(a) & (np.sign(e) == np.sign(a))
    one_inf = np.isinf(e) != np.isinf(a)
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = np.where(both_inf | one_inf, 0.0, np.abs(a - e))
        relative = np.where(e == 0, diff, diff / np.abs(e))
    relative = np.where(one_inf, 1.0, np.where(both_inf, 0.0, relative))
    differs = relative > PR_TOLERANCE if not program.exact else (one_inf | (diff > 0))
    return {"vertices": int(e.shape[0]), "differ_fraction": float(differs.mean()) if e.size else 0.0,
            "mean_relative_error": float(relative.mean()) if e.size else 0.0}
