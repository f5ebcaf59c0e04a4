"""ws mode, CPU: the CSR build, the edge-balanced cuts, the offline boundary marking and the hub tables
against brute force."""

import numpy as np
import pytest

from dbfs.errors import DbfsError
from dbfs.ws.graph import BOUNDARY_BIT, boundary_mask, build_csr, cut_points, find_hubs, split
from ws_cases import kronecker

pytestmark = pytest.mark.one_rank


def test_csr_holds_both_directions_sorted_without_self_loops():
    rng = np.random.default_rng(5)
    n = 90
    src = np.concatenate((rng.integers(0, n, 400), [4, 4, 7, 7]))
    dst = np.concatenate((rng.integers(0, n, 400), [4, 9, 7, 9]))
    w = rng.uniform(0, 1, src.shape[0]).astype(np.float32)
    csr = build_csr(np, n, src, dst, w)
    keep = src != dst
    expected = sorted(zip(np.concatenate((dst[keep], src[keep])), np.concatenate((src[keep], dst[keep])),
                          np.concatenate((w[keep], w[keep]))))
    rows = np.repeat(np.arange(n), np.diff(csr.rowptr))
    got = sorted(zip(rows, csr.nbrs, csr.weights))
    assert got == expected
    for v in range(n):                             # neighbours in increasing order within each row
        row = csr.nbrs[csr.rowptr[v]:csr.rowptr[v + 1]]
        assert np.all(row[1:] >= row[:-1])
    assert csr.n_tuples == src.shape[0] and csr.entries == 2 * np.count_nonzero(keep)
    assert build_csr(np, n, src, dst).weights is None


def test_csr_rejects_endpoints_outside_the_vertex_range():
    with pytest.raises(DbfsError, match="outside the vertex range 0 .. 9"):
        build_csr(np, 10, np.array([1, 2]), np.array([3, 10]))


@pytest.mark.parametrize("parts", [1, 2, 3, 4, 7])
def test_cuts_balance_edges_on_warp_boundaries(parts):
    n, src, dst, w = kronecker(12)
    csr = build_csr(np, n, src, dst, w)
    bounds = cut_points(csr.rowptr, parts)
    assert bounds[0] == 0 and bounds[-1] == n and np.all(np.diff(bounds) >= 0)
    assert np.all(bounds[1:-1] % 32 == 0)
    degree = np.diff(csr.rowptr)
    window = np.convolve(degree, np.ones(33, np.int64), mode="same").max()   # a cut moves <= 16 rows
    entries = np.diff(csr.rowptr[bounds])
    assert np.all(np.abs(entries - csr.entries / parts) <= window), entries


@pytest.mark.parametrize("parts", [2, 3])
def test_boundary_marks_exactly_the_vertices_read_elsewhere(parts):
    n, src, dst, w = kronecker(10)
    csr = build_csr(np, n, src, dst, w)
    bounds = cut_points(csr.rowptr, parts)
    owner = np.searchsorted(bounds, np.arange(n), side="right") - 1
    rows = np.repeat(np.arange(n), np.diff(csr.rowptr))
    expected = np.zeros(n, bool)
    expected[csr.nbrs[owner[rows] != owner[csr.nbrs]]] = True
    assert np.array_equal(boundary_mask(csr, bounds), expected)
    for p in split(csr, parts):
        assert (p.lo, p.hi) == (bounds[p.index], bounds[p.index + 1])
        local = p.rowptr & ~BOUNDARY_BIT
        assert np.array_equal(local.astype(np.int64), csr.rowptr[p.lo:p.hi + 1] - csr.rowptr[p.lo])
        assert np.array_equal(p.rowptr[:-1] >= BOUNDARY_BIT, expected[p.lo:p.hi])
        assert np.array_equal(p.boundary, np.flatnonzero(expected[p.lo:p.hi]) + p.lo)
        assert np.array_equal(p.nbrs, csr.nbrs[csr.rowptr[p.lo]:csr.rowptr[p.hi]])


@pytest.mark.parametrize("parts", [1, 3])
@pytest.mark.parametrize("hub_degree, hub_slice", [(8, 4), (0, 1), (20, 64), (100000, 8)])
def test_hubs_are_the_long_rows_cut_into_slices(parts, hub_degree, hub_slice):
    n, src, dst, w = kronecker(10)
    csr = build_csr(np, n, src, dst, w)
    for p in split(csr, parts, hub_degree, hub_slice):
        rowptr = (p.rowptr & ~BOUNDARY_BIT).astype(np.int64)
        degree = np.diff(rowptr)
        hubs = p.hubs
        assert (hubs.degree, hubs.slice) == (hub_degree, hub_slice)
        assert np.array_equal(hubs.vertices, np.flatnonzero(degree > hub_degree))
        slices = [(b, min(b + hub_slice, rowptr[v + 1])) for v in hubs.vertices
                  for b in range(rowptr[v], rowptr[v + 1], hub_slice)]
        assert list(zip(hubs.slice_begin.tolist(), hubs.slice_end.tolist())) == slices
        assert hubs.slices == len(slices)
        per_vertex = np.where(degree > hub_degree, -(-degree // hub_slice), 0)
        before = np.concatenate(([0], np.cumsum(per_vertex)))
        warps = -(-p.count // 32)
        assert np.array_equal(hubs.warp_slice, before[np.minimum(32 * np.arange(warps + 1), p.count)])
        owners = [v for v in hubs.vertices for _ in range(rowptr[v], rowptr[v + 1], hub_slice)]
        assert hubs.slice_vertex.tolist() == owners
        for table in (hubs.vertices, hubs.warp_slice, hubs.slice_vertex):
            assert table.dtype == np.uint32
        assert hubs.slice_begin.dtype == hubs.slice_end.dtype == np.uint64


def test_hub_parameters_are_checked():
    rowptr = np.array([0, 3, 5])
    with pytest.raises(ValueError, match="hub degree must be >= 0 and hub slice >= 1"):
        find_hubs(np, rowptr, -1, 4)
    with pytest.raises(ValueError, match="hub degree must be >= 0 and hub slice >= 1"):
        find_hubs(np, rowptr, 4, 0)
