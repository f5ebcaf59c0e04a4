"""Exchange messages (dbfs.ops.message, kernels/message.cu): encoding lists and bitmaps into messages
whose heads say their form and size, staging them at that size, decoding them into a list or bitmap
segments, and the GPU-initiated put, signal and wait -- the NumPy twins against a plain reading of the
contract, and on a GPU the kernels against the twins."""

import numpy as np
import pytest

from dbfs.backend import Backend
from dbfs.kernels import HEAD, HEAD_WORDS, MSG, STAT, STAT_WORDS
from dbfs.ops import message
from dbfs.ops.sparse import held_offsets

pytestmark = pytest.mark.one_rank

CPU = Backend("cpu")
BLOCK = 4096


def random_sets(rng, groups, counts):
    return [np.sort(rng.choice(BLOCK, size=c, replace=False)).astype(np.int32) for c in counts[:groups]]


def sparse_col_ptr(xp, ncols):
    """CSC column offsets over ncols columns where every third column (and the last) has no entry."""
    lengths = np.where(np.arange(ncols) % 3 == 1, 0, 2)
    lengths[-1] = 0
    return xp.asarray(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))


def columns_with_entries(columns, col_ptr):
    return columns[col_ptr[columns + 1] > col_ptr[columns]]


def lists_of(sets, skip: int):
    """The sets' lists in groups of BLOCK slots, that of message `skip` left out (encode_lists), and counts."""
    lists = np.zeros(len(sets) * BLOCK, np.int32)
    for k, offsets in enumerate(s for y, s in enumerate(sets) if y != skip):
        lists[k * BLOCK:k * BLOCK + offsets.size] = offsets
    return lists, np.array([s.size for s in sets], np.int32)


@pytest.mark.parametrize("encoding", ["adaptive", "list", "bitmap"])
def test_encode_stage_decode_round_trip(encoding):
    rng = np.random.default_rng(1)
    sets = random_sets(rng, 4, [0, 3, BLOCK // 32, BLOCK // 2])
    lists, counts = lists_of(sets, 2)
    stride = HEAD_WORDS + message.capacity(BLOCK, encoding)
    out = np.zeros(4 * stride, np.uint32)
    message.encode_lists(CPU, lists, BLOCK, counts, 2, BLOCK, encoding, out, stride, 4)
    host = np.zeros_like(out)
    message.stage(CPU, out, stride, 2, host, stride, 4)
    for y, offsets in enumerate(sets):
        head = host[y * stride:y * stride + HEAD_WORDS]
        if y == 2:
            assert not head.any(), "the skipped message was written"
            continue
        assert head[HEAD.FORM] == message.form(offsets.size, BLOCK, encoding)
        assert head[HEAD.COUNT] == offsets.size
        assert message.size(head) == HEAD_WORDS + (BLOCK // 32 if head[HEAD.FORM] == MSG.BITMAP else offsets.size)
    sources = message.SourceTable(CPU, [out[y * stride:(y + 1) * stride] if y != 2 else None for y in range(4)])
    bases = np.arange(4, dtype=np.int32) * BLOCK
    gathered, count = np.zeros(4 * BLOCK, np.int32), np.zeros(1, np.int32)
    col_ptr = sparse_col_ptr(np, 4 * BLOCK)
    expected = columns_with_entries(np.concatenate([s + y * BLOCK for y, s in enumerate(sets) if y != 2]), col_ptr)
    assert 0 < expected.size < sum(s.size for y, s in enumerate(sets) if y != 2)
    for offsets, columns in ((col_ptr, None), held_offsets(CPU, col_ptr)):   # every column's, the held ones'
        message.to_list(CPU, sources, bases, BLOCK, offsets, gathered, count, columns)
        np.testing.assert_array_equal(np.sort(gathered[:count[0]]), np.sort(expected))
    segments = np.full(4 * BLOCK // 32, 0xFFFFFFFF, np.uint32)
    message.to_bitmaps(CPU, sources, BLOCK // 32, segments)
    for y, offsets in enumerate(sets):
        bits = np.unpackbits(segments[y * BLOCK // 32:(y + 1) * BLOCK // 32].view(np.uint8), bitorder="little")
        if y == 2:
            assert bits.all(), "the segment of no message was touched"
        else:
            np.testing.assert_array_equal(np.flatnonzero(bits), offsets)


@pytest.mark.parametrize("count", [5, BLOCK // 8])
def test_encode_bits_gives_the_set_bits(count):
    rng = np.random.default_rng(2)
    offsets = np.sort(rng.choice(BLOCK, size=count, replace=False))
    bits = np.zeros(BLOCK, bool)
    bits[offsets] = True
    words = np.packbits(bits, bitorder="little").view(np.uint32)
    stats = np.zeros(STAT_WORDS, np.int64)
    stats[STAT.COUNT] = count
    out = np.zeros(HEAD_WORDS + BLOCK // 32, np.uint32)
    message.encode_bits(CPU, words, stats, BLOCK, "adaptive", out, np.zeros(1, np.int32))
    np.testing.assert_array_equal(message.items(out, BLOCK), offsets)


def test_put_and_post_deliver_each_message_and_its_round():
    rng = np.random.default_rng(3)
    sets = random_sets(rng, 3, [7, BLOCK // 4, 1])
    lists, counts = lists_of(sets, 1)
    stride = HEAD_WORDS + message.capacity(BLOCK, "adaptive")
    out = np.zeros(3 * stride, np.uint32)
    message.encode_lists(CPU, lists, BLOCK, counts, 1, BLOCK, "adaptive", out, stride, 3)
    landings = [np.zeros(stride, np.uint32) if y != 1 else None for y in range(3)]
    for y in (0, 2):                            # each message at its size (its head's)
        message.put(CPU, out[y * stride:], message.size(out[y * stride:]), landings[y:y + 1])
    # rank 1 of three: its signal words on ranks 0 and 2, and its own words, which they set
    theirs, mine, count = np.zeros(3, np.uint64), np.zeros(3, np.uint64), np.full(1, 3, np.uint64)
    peers = [theirs[y:y + 1] if y != 1 else None for y in range(3)]
    with pytest.raises(RuntimeError, match="have not been put"):
        message.post(CPU, peers, mine, 1, count)
    assert int(count[0]) == 3 and theirs.tolist() == [4, 0, 4]     # signalled, the round not passed
    mine[[0, 2]] = 4
    message.post(CPU, peers, mine, 1, count)
    assert int(count[0]) == 4                                     # the wait advanced the count
    with pytest.raises(RuntimeError, match="below 5"):
        message.post(CPU, peers, mine, 1, count)
    for y in (0, 2):
        np.testing.assert_array_equal(message.items(landings[y], BLOCK), sets[y])


@pytest.mark.gpu
@pytest.mark.parametrize("encoding", ["adaptive", "list", "bitmap"])
def test_gpu_message_kernels_match_the_twins(encoding):
    import cupy
    gpu = Backend("gpu", 0)
    rng = np.random.default_rng(4)
    sets = random_sets(rng, 4, [0, 9, BLOCK // 32 + 1, BLOCK // 3])
    lists, counts = lists_of(sets, 0)
    stride = HEAD_WORDS + message.capacity(BLOCK, encoding)
    out_cpu = np.zeros(4 * stride, np.uint32)
    message.encode_lists(CPU, lists, BLOCK, counts, 0, BLOCK, encoding, out_cpu, stride, 4)
    out = cupy.zeros(4 * stride, cupy.uint32)
    message.encode_lists(gpu, cupy.asarray(lists), BLOCK, cupy.asarray(counts), 0, BLOCK, encoding, out, stride, 4)
    host = gpu.pinned_empty(4 * stride, np.uint32)
    host[:] = 0
    message.stage(gpu, out, stride, 0, host, stride, 4)
    cupy.cuda.get_current_stream().synchronize()
    for y in range(1, 4):
        n = message.size(out_cpu[y * stride:])
        got = host[y * stride:y * stride + n]
        np.testing.assert_array_equal(got[:HEAD_WORDS], out_cpu[y * stride:y * stride + HEAD_WORDS])
        np.testing.assert_array_equal(np.sort(message.items(got, BLOCK)), sets[y])
    sources = message.SourceTable(gpu, [None, host[stride:2 * stride], out[2 * stride:3 * stride], out[3 * stride:]])
    bases = cupy.arange(4, dtype=cupy.int32) * BLOCK
    gathered, count = cupy.zeros(4 * BLOCK, cupy.int32), cupy.zeros(1, cupy.int32)
    col_ptr = sparse_col_ptr(cupy, 4 * BLOCK)
    expected = np.concatenate([s + y * BLOCK for y, s in enumerate(sets) if y])
    expected = columns_with_entries(expected, cupy.asnumpy(col_ptr))
    held, columns = held_offsets(gpu, col_ptr)
    for offsets, columns in ((col_ptr, None), (cupy.asarray(held), columns)):
        message.to_list(gpu, sources, bases, BLOCK, offsets, gathered, count, columns)
        np.testing.assert_array_equal(np.sort(cupy.asnumpy(gathered[:int(count[0])])), np.sort(expected))
    segments = cupy.zeros(4 * BLOCK // 32, cupy.uint32)
    message.to_bitmaps(gpu, sources, BLOCK // 32, segments)
    for y in range(1, 4):
        bits = np.unpackbits(cupy.asnumpy(segments[y * BLOCK // 32:(y + 1) * BLOCK // 32]).view(np.uint8),
                             bitorder="little")
        np.testing.assert_array_equal(np.flatnonzero(bits), sets[y])
    landing = cupy.zeros(4 * stride, cupy.uint32)
    dests = cupy.asarray(np.array([0] + [landing[y * stride:].data.ptr for y in range(1, 4)], np.uint64))
    signals = cupy.zeros(4, cupy.uint64)
    for y in range(1, 4):
        message.put(gpu, out[y * stride:], message.size(host[y * stride:]), dests[y:y + 1])
    rounds = cupy.full(1, 6, cupy.uint64)
    message.post(gpu, cupy.asarray(np.array([0] + [signals[y:].data.ptr for y in range(1, 4)], np.uint64)),
                 signals, 0, rounds)
    assert int(rounds[0]) == 7 and cupy.asnumpy(signals).tolist() == [0, 7, 7, 7]
    for y in range(1, 4):
        np.testing.assert_array_equal(np.sort(message.items(cupy.asnumpy(landing[y * stride:(y + 1) * stride]),
                                                            BLOCK)), sets[y])
