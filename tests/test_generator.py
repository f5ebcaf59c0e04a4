"""Graph500 generator: the MRG, the reference test vector, a scalar transcription of the reference
per-edge algorithm, range independence, rank splits, the GPU kernel's tables and the GPU twin."""

import numpy as np
import pytest
from mpi4py import MPI

from dbfs.errors import DbfsError
from graph500 import generator, mrg
from graph500.generator import edge_range, generate_edges

M = mrg.MODULUS


# ------------------------------------------------------------------------------------ scalar oracle
def bitreverse64(v: int) -> int:
    return int(f"{v:064b}"[::-1], 2)


def scramble_scalar(v: int, scale: int, val0: int, val1: int) -> int:
    mask = (1 << 64) - 1
    v = (v + val0 + val1) & mask
    v = (v * (val0 | 0x4519840211493211)) & mask
    v = bitreverse64(v) >> (64 - scale)
    v = (v * (val1 | 0x3050852102C843A5)) & mask
    return bitreverse64(v) >> (64 - scale)


def reference_edge(scale: int, index: int, seed=(2, 3)):
    """make_one_edge + the weight draw, one draw at a time: (src, dst, weight, rejected draws)."""
    state = mrg.skip(mrg.make_mrg_seed(*seed), index * 2**64)
    src = dst = 0
    tied = True
    rejected = 0
    for _ in range(scale):
        u, state = mrg.next_uint(state)
        while u < 3647:
            rejected += 1
            u, state = mrg.next_uint(state)
        r = u % 10000
        s, d = (0, 1) if r < 1900 else (1, 0) if r < 3800 else (0, 0) if r < 9500 else (1, 1)
        if tied and s > d:
            s, d = d, s
        tied = tied and s == d
        src, dst = 2 * src + s, 2 * dst + d
    u, state = mrg.next_uint(state)
    weight = np.float32(float(np.float32(u)) * float(".000000000465661287524579692"))
    val0, val1 = generator.scramble_keys(seed)
    return scramble_scalar(src, scale, val0, val1), scramble_scalar(dst, scale, val0, val1), weight, rejected


# ------------------------------------------------------------------------------------------- MRG
def test_make_mrg_seed():
    assert mrg.make_mrg_seed(2, 3) == (3, 1, 4, 1, 1)
    top = 2**64 - 1
    assert mrg.make_mrg_seed(top, top) == (2**30, 2**30, 2**30, 2**30, (15 << 4) + 15 + 1)
    with pytest.raises(ValueError):
        mrg.make_mrg_seed(-1, 3)


def test_skip_equals_stepping_and_composes():
    state = mrg.make_mrg_seed(2, 3)
    stepped = state
    for n in range(1, 40):
        _, stepped = mrg.next_uint(stepped)
        assert mrg.skip(state, n) == stepped
    a, b = 2**100 + 12345, 7 * 2**64 + 3
    assert mrg.skip_matrix(a + b) == mrg.mat_mul(mrg.skip_matrix(a), mrg.skip_matrix(b))
    assert mrg.skip(mrg.skip(state, a), b) == mrg.skip(state, a + b)
    assert mrg.mat_vec(mrg.skip_matrix(a), state) == mrg.skip(state, a)


def test_next_uints_and_rows():
    state = (17, 2**31 - 2, 5, 0, 123456789)
    expected = []
    s = state
    for _ in range(100):
        u, s = mrg.next_uint(s)
        expected.append(u)
    draws, after = mrg.next_uints(state, 100)
    assert draws.tolist() == expected and after == s


def test_mod_matmul_is_exact():
    rng = np.random.default_rng(5)
    left = rng.integers(0, M, (40, 5))
    right = rng.integers(0, M, (5, 30))
    left[0] = M - 1
    right[:, 0] = M - 1
    exact = (left.astype(object) @ right.astype(object)) % M
    assert np.array_equal(mrg.mod_matmul(left, right), exact.astype(np.int64))


def test_reduce_mod():
    values = np.array([0, 1, M - 1, M, M + 1, 2 * M, 2**31, 2**31 + 2**22, 2**53 - 1, 7 * M + 5], np.int64)
    assert np.array_equal(mrg.reduce_mod(values), values % M)
    assert np.array_equal(mrg.reduce_mod(values.astype(np.float64)), values % M)


def test_draw_conversions_follow_the_reference():
    u1, u2 = 123456789, 2**31 - 2
    assert mrg.uints_to_doubles(np.array([u1]), np.array([u2]))[0] == \
        u1 * .000000000465661287524579692 + u2 * .0000000000000000002168404346990492787
    state = mrg.skip(mrg.make_mrg_seed(2, 3), 2 * 2**128 + 2 * 7)
    draws = []
    for _ in range(4):
        u, state = mrg.next_uint(state)
        draws.append(u)
    expected = [draws[0] * mrg.DOUBLE_SCALE_1 + draws[1] * mrg.DOUBLE_SCALE_2,
                draws[2] * mrg.DOUBLE_SCALE_1 + draws[3] * mrg.DOUBLE_SCALE_2]
    assert mrg.make_random_numbers(2, 2, 3, 7).tolist() == expected


def test_division_magic_is_exact():
    u = np.concatenate([np.arange(0, 10**6), np.arange(M - 10**6, M),
                        np.random.default_rng(1).integers(0, M, 10**6)]).astype(np.int64)
    q = (u * generator._DIV_MAGIC) >> generator._DIV_SHIFT
    assert np.array_equal(q, u // 10000)


# ------------------------------------------------------------------------------------- generator
def test_reference_vector():
    src, dst, weight = generate_edges(10, 16, 0, 5, weights=True)
    assert list(zip(src.tolist(), dst.tolist())) == \
        [(299, 797), (684, 861), (185, 385), (428, 328), (490, 200)]
    assert np.allclose(weight[:3], [0.490170419, 0.528551459, 0.651318908], rtol=0, atol=5e-10)
    assert src.dtype == np.int64 and dst.dtype == np.int64 and weight.dtype == np.float32
    plain = generate_edges(10, 16, 0, 5)
    assert len(plain) == 2 and np.array_equal(plain[0], src) and np.array_equal(plain[1], dst)


def test_scalar_oracle_reproduces_the_vector():
    assert [reference_edge(10, i)[:2] for i in range(5)] == \
        [(299, 797), (684, 861), (185, 385), (428, 328), (490, 200)]


@pytest.mark.parametrize("scale,edgefactor,indices", [
    (1, 16, range(32)),
    (5, 2, range(0, 64, 3)),
    (12, 16, [0, 8191, 8192, 49555, 49556, 49557, 65535]),    # 49556 has a rejected level draw
    (16, 16, [152390, 298590, 1048575]),                    # both rejected edges
    (42, 1, [0, 1, 2**42 - 1]),
])
def test_matches_scalar_reference(scale, edgefactor, indices):
    for i in indices:
        src, dst, weight = generate_edges(scale, edgefactor, i, i + 1, weights=True)
        ref_src, ref_dst, ref_weight, _ = reference_edge(scale, i)
        assert (int(src[0]), int(dst[0])) == (ref_src, ref_dst), f"edge {i}"
        assert weight[0] == ref_weight, f"weight {i}"


def test_rejection_cases_are_real():
    """The rejection indices used above really exercise the redraw path (else the test proves nothing)."""
    assert reference_edge(12, 49556)[3] == 1
    assert reference_edge(16, 152390)[3] == 1 and reference_edge(16, 298590)[3] == 1
    assert reference_edge(12, 49555)[3] == 0


def test_redraw_handles_consecutive_rejections():
    # state (0, 0, 0, y^-1, 0) yields the draws 0, 1, 107374182, ...: two rejections in a row
    inverse = pow(mrg.MULT_Z5, M - 2, M)
    states = np.array([[0, 0, 0, inverse, 0], [5, 6, 7, 8, 9]], np.int64)
    scale = 3
    got = generator._redraw(states, scale, scale + 1)
    for row, state in zip(got, states):
        s = tuple(int(z) for z in state)
        accepted = []
        while len(accepted) < scale:
            u, s = mrg.next_uint(s)
            if u >= 3647:
                accepted.append(u)
        u, s = mrg.next_uint(s)
        assert row.tolist() == accepted + [u]
    assert got[0, 0] == mrg.MULT_Z1


def test_ranges_are_independent_of_the_split():
    scale, edgefactor = 11, 16
    n = edgefactor << scale
    whole = generate_edges(scale, edgefactor, 0, n, weights=True)
    cuts = [0, 1, 8191, 8193, 20000, 20000, n - 3, n]      # chunk boundaries and an empty range
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        part = generate_edges(scale, edgefactor, lo, hi, weights=True)
        for a, b in zip(part, whole):
            assert np.array_equal(a, b[lo:hi])
    assert all(0 <= v < 2**scale for v in (whole[0].min(), whole[0].max(), whole[1].min(), whole[1].max()))
    assert 0 <= whole[2].min() and whole[2].max() < 1
    assert (whole[0] == whole[1]).any(), "self-loops are kept"


def test_seed_changes_the_graph():
    a = generate_edges(8, 4, 0, 256, seed=(2, 3))
    b = generate_edges(8, 4, 0, 256, seed=(3, 2))
    assert not np.array_equal(a[0], b[0])
    assert reference_edge(8, 100, seed=(3, 2))[:2] == (int(b[0][100]), int(b[1][100]))


@pytest.mark.parametrize("args", [(0, 16, 0, 1), (43, 16, 0, 1), (10, 0, 0, 1), (True, 16, 0, 1),
                                  (10, 16, 5, 4), (10, 16, 0, 16385), (10, 16, -1, 3)])
def test_rejects_bad_input(args):
    with pytest.raises(DbfsError):
        generate_edges(*args)


def test_rejects_bad_seed():
    with pytest.raises(DbfsError):
        generate_edges(4, 1, 0, 1, seed=(2**64, 3))


@pytest.mark.parametrize("n_edges", [0, 1, 7, 100, 2**20 + 3])
def test_edge_range_is_balanced(n_edges):
    for nranks in range(1, 6):
        ranges = [edge_range(n_edges, r, nranks) for r in range(nranks)]
        assert ranges[0][0] == 0 and ranges[-1][1] == n_edges
        assert all(a[1] == b[0] for a, b in zip(ranges[:-1], ranges[1:]))
        sizes = [hi - lo for lo, hi in ranges]
        assert max(sizes) - min(sizes) <= 1


# --------------------------------------------------------------------------------- GPU tables (CPU)
def test_jump_table_and_stride_step_reach_every_edge():
    """The kernel's contract: first state jumped by the hex digits of g, then one step per edge."""
    seed, lo, stride = (2, 3), 12345, 1000
    table = generator._jump_table().astype(np.int64).reshape(-1, 5, 5)
    step = tuple(map(tuple, np.asarray(mrg.skip_matrix(stride * 2**64))))
    for g in (0, 1, 15, 16, 255, 999, 0xFEDCBA98):
        state = generator.edge_state(seed, lo)
        for k in range(8):
            digit = (g >> (4 * k)) & 15
            state = mrg.mat_vec(tuple(map(tuple, table[16 * k + digit])), state)
        assert state == generator.edge_state(seed, lo + g)
        assert mrg.mat_vec(step, state) == generator.edge_state(seed, lo + g + stride)


# ------------------------------------------------------------------------------------------- MPI
@pytest.mark.mpi(min_size=2)
def test_each_rank_range_matches_serial():
    comm = MPI.COMM_WORLD
    scale, edgefactor = 10, 16
    n = edgefactor << scale
    lo, hi = edge_range(n, comm.Get_rank(), comm.Get_size())
    mine = generate_edges(scale, edgefactor, lo, hi, weights=True)
    gathered = comm.allgather(mine)
    serial = generate_edges(scale, edgefactor, 0, n, weights=True)
    for k in range(3):
        assert np.array_equal(np.concatenate([g[k] for g in gathered]), serial[k])


# ------------------------------------------------------------------------------------------- GPU
@pytest.mark.gpu
def test_gpu_matches_numpy_scale_16():
    import cupy
    n = 16 << 16
    cpu = generate_edges(16, 16, 0, n, weights=True)
    gpu = generate_edges(16, 16, 0, n, weights=True, xp=cupy)
    for a, b in zip(cpu, gpu):
        assert isinstance(b, cupy.ndarray)
        assert np.array_equal(a, cupy.asnumpy(b))
    plain = generate_edges(16, 16, 0, n, xp=cupy)
    assert len(plain) == 2 and np.array_equal(cpu[0], cupy.asnumpy(plain[0]))


@pytest.mark.gpu
def test_gpu_matches_numpy_scale_26_tail_and_odd_ranges():
    import cupy
    n = 16 << 26
    for lo, hi in ((n - 300000, n), (n // 2 + 1, n // 2 + 18), (5, 5)):
        cpu = generate_edges(26, 16, lo, hi, weights=True)
        gpu = generate_edges(26, 16, lo, hi, weights=True, xp=cupy)
        for a, b in zip(cpu, gpu):
            assert np.array_equal(a, cupy.asnumpy(b)), (lo, hi)
