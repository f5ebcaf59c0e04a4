"""Exchange messages on the device (kernels/message.cu) and their NumPy twins: encoding a level's
outgoing sets into fixed-capacity message buffers whose heads the kernels write (paper 004, section 5:
each message a list of offsets or a bitmap of the receiver's block, whichever is smaller), copying
them at their exact size to host staging buffers, putting them from the GPU into other ranks' memory
with a signal and waiting for the peers' signals (the `nvshmem` transport), and decoding received
messages into the gathered frontier, as a list (top-down) or as bitmap segments (bottom-up).

A message buffer is uint32 [HEAD_WORDS + capacity]: head (form, count, payload words), payload. A
launch handles several messages at once (message y at buffer base + y * stride; a skipped y is the
sender's own group), so a level costs the same number of launches whatever the number of peers.
Received messages are named by a SourceTable (one per exchange and run): on a GPU a device array of
their addresses, which may be mapped pinned host memory that the kernels read in place.
"""

from __future__ import annotations

import numpy as np

from dbfs.kernels import BLOCK_THREADS, HEAD, HEAD_WORDS, MSG, STAT
from dbfs.ops.arrays import blocks_for, require_array, require_offsets
from dbfs.ops.bitmap import offsets_of, words_of
from dbfs.ops.sparse import column_starts, held_args

FORCED = {"adaptive": -1, "list": MSG.LIST, "bitmap": MSG.BITMAP}


def capacity(block: int, encoding: str) -> int:
    """Payload words of the largest message over a block of `block` vertices: a bitmap bounds every
    adaptive message; forced lists may name every vertex."""
    return block if encoding == "list" else block // 32


def form(count: int, block: int, encoding: str) -> int:
    """NumPy twin of message.cuh message_form."""
    forced = FORCED[encoding]
    if forced >= 0:
        return forced
    return MSG.BITMAP if 32 * count > block else MSG.LIST


def size(message) -> int:
    """Head plus payload words of an encoded message (a host or NumPy array)."""
    return HEAD_WORDS + int(message[HEAD.SIZE])


class SourceTable:
    """The messages a decoding launch reads: entry y is a uint32 message buffer (a device array or a
    pinned host array, which the GPU reads through its mapped address) or None."""

    def __init__(self, backend, messages):
        self.messages = list(messages)
        self.pointers = None
        if backend.is_gpu:
            addresses = [0 if m is None else (m.ctypes.data if isinstance(m, np.ndarray) else m.data.ptr)
                         for m in self.messages]
            self.pointers = backend.xp.asarray(np.array(addresses, np.uint64))

    def __len__(self) -> int:
        return len(self.messages)


def _grid(backend, kernel, items: int, messages: int):
    return (min(blocks_for(items), backend.resident_blocks(kernel, BLOCK_THREADS)), messages)


def encode_lists(backend, lists, list_stride: int, counts, skip: int, block: int, encoding: str, out,
                 out_stride: int, messages: int) -> None:
    """Message y (y < messages, y != skip) := its group of `lists` (counts[y] offsets in [0, block)), in
    out[y*out_stride:]. The lists hold the groups of the messages but skip, in order: message y's at
    lists[k*list_stride:], k = y - (y > skip) (skip -1: none skipped, k = y).

      lists   int32 [>= messages*list_stride]  read
      counts  int32 [messages]                 read (on the device)
      out     uint32 [messages*out_stride]     write  head and payload of each message
    GPU: two kernels (head and zeroed bitmap; payload), no host synchronisation."""
    if backend.is_gpu:
        for name, array, dtype in (("lists", lists, np.int32), ("counts", counts, np.int32), ("out", out, np.uint32)):
            require_array(name, array, dtype)
        begin, fill = backend.kernel("message", "message_begin"), backend.kernel("message", "message_fill")
        begin(_grid(backend, begin, block // 32, messages), (BLOCK_THREADS,),
              (counts, np.int32(skip), np.int32(block), np.int32(FORCED[encoding]), out, np.int64(out_stride)))
        fill(_grid(backend, fill, list_stride, messages), (BLOCK_THREADS,),
             (lists, np.int64(list_stride), counts, np.int32(skip), out, np.int64(out_stride)))
        return
    for y in range(messages):
        if y != skip:
            count, at = int(counts[y]), (y - (0 <= skip < y)) * list_stride
            _encode(lists[at:at + count], count, block, encoding, out[y * out_stride:(y + 1) * out_stride])


def encode_bits(backend, words, count, block: int, encoding: str, out, cursor) -> None:
    """One message := the set bits of `words` (uint32 [block/32]), count[STAT.COUNT] of them (the level
    counters, int64, on the device), in `out`; cursor: int32 [1] scratch. GPU: one kernel (and a
    memset), no host synchronisation."""
    if backend.is_gpu:
        for name, array, dtype in (("words", words, np.uint32), ("count", count, np.int64), ("out", out, np.uint32)):
            require_array(name, array, dtype)
        backend.zero(cursor)
        kernel = backend.kernel("message", "message_from_bits")
        kernel(_grid(backend, kernel, block // 32, 1), (BLOCK_THREADS,),
               (words, count[STAT.COUNT:], np.int32(block), np.int32(FORCED[encoding]), out, cursor))
        return
    _encode(offsets_of(words).astype(np.int32), int(count[STAT.COUNT]), block, encoding, out)


def _encode(offsets, count: int, block: int, encoding: str, out) -> None:
    kind = form(count, block, encoding)
    payload = block // 32 if kind == MSG.BITMAP else count
    out[:HEAD_WORDS] = (kind, count, payload)
    if kind == MSG.BITMAP:
        out[HEAD_WORDS:HEAD_WORDS + payload] = words_of(offsets, block)
    else:
        out[HEAD_WORDS:HEAD_WORDS + count] = offsets


def stage(backend, out, out_stride: int, skip: int, host, host_stride: int, messages: int,
          payload_too: bool = True) -> None:
    """host[y*host_stride:] := message y's head and (payload_too) payload, at its exact size (host:
    pinned memory, written by the GPU through its mapped address). GPU: one kernel."""
    if backend.is_gpu:
        kernel = backend.kernel("message", "message_stage")
        kernel(_grid(backend, kernel, out_stride, messages), (BLOCK_THREADS,),
               (out, np.int64(out_stride), np.int32(skip), np.uint64(host.ctypes.data), np.int64(host_stride),
                np.int32(payload_too)))
        return
    for y in range(messages):
        if y != skip:
            message = out[y * out_stride:(y + 1) * out_stride]
            n = size(message) if payload_too else HEAD_WORDS
            host[y * host_stride:y * host_stride + n] = message[:n]


def items(message, block: int) -> np.ndarray:
    """NumPy twin of message.cuh message_item over a whole message: its offsets (int64)."""
    payload = message[HEAD_WORDS:]
    if int(message[HEAD.FORM]) == MSG.BITMAP:
        return offsets_of(payload[:block // 32])
    return payload[:int(message[HEAD.COUNT])].astype(np.int64)


def to_list(backend, sources: SourceTable, bases, block: int, col_ptr, out, count, columns=None) -> None:
    """out[:k] := every offset of every source message plus bases[y] (any order) that is a column with
    an entry in the CSC block; count[0] := k (at most the block's non-empty columns).

      bases    int32 [len(sources)] (device; host on the CPU)   col_ptr  int32/int64 [ncols+1], or held by
      out      int32 [>= k]                                              the Positions `columns` (expand)
      count    int32 [1]
    GPU: a memset and one kernel, no host synchronisation (k stays on the device)."""
    if backend.is_gpu:
        offsets = require_offsets("col_ptr", col_ptr)
        backend.zero(count)
        kernel = backend.kernel("message", "messages_to_list", offsets)
        kernel(_grid(backend, kernel, block, len(sources)), (BLOCK_THREADS,),
               (sources.pointers, bases, np.int32(block), col_ptr, *held_args(columns), out, count))
        return
    at = 0
    for message, base in zip(sources.messages, bases):
        if message is not None:
            offsets = items(message, block) + int(base)
            offsets = offsets[column_starts(col_ptr, columns, offsets + 1) > column_starts(col_ptr, columns, offsets)]
            out[at:at + offsets.shape[0]] = offsets
            at += offsets.shape[0]
    count[0] = at


def to_bitmaps(backend, sources: SourceTable, nwords: int, out) -> None:
    """out[y*nwords:(y+1)*nwords] := source y's set as a bitmap (sources that are None: untouched).
    GPU: two kernels (zero the targets of list messages; copy or set bits)."""
    if backend.is_gpu:
        clear, fill = (backend.kernel("message", name) for name in ("messages_clear_lists", "messages_to_bitmaps"))
        clear(_grid(backend, clear, nwords, len(sources)), (BLOCK_THREADS,), (sources.pointers, np.int32(nwords), out))
        fill(_grid(backend, fill, 32 * nwords, len(sources)), (BLOCK_THREADS,),
             (sources.pointers, np.int32(nwords), out))
        return
    for y, message in enumerate(sources.messages):
        if message is not None:
            out[y * nwords:(y + 1) * nwords] = words_of(items(message, 32 * nwords), 32 * nwords)


def put(backend, out, words: int, dests) -> None:
    """The first `words` words of `out` (uint32) copied into each of dests. GPU: dests is a uint64 device
    array of addresses (0: none; another rank's memory mapped here, dbfs.nvshmem); one kernel. NumPy: a
    list of uint32 arrays or None."""
    if backend.is_gpu:
        kernel = backend.kernel("message", "message_put")
        kernel(_grid(backend, kernel, words, dests.shape[0]), (BLOCK_THREADS,), (out, np.int32(words), dests))
        return
    for dest in dests:
        if dest is not None:
            dest[:words] = out[:words]


def post(backend, peers, words, skip: int, count) -> None:
    """One round's signals and wait, after the puts queued before: every peer's signal word named by
    `peers` := the round, count[0] + 1 (count: this rank's uint64 count of its rounds); then a wait
    until every word of this rank's `words` (uint64) but `skip` is at least the round; then count[0] :=
    the round. GPU: one kernel of one block (peers: a uint64 device array of addresses, 0 for none).
    NumPy: peers a list of one-word uint64 arrays or None, and this rank's words must already be set."""
    if backend.is_gpu:
        backend.kernel("message", "message_post")(
            (1,), (max(32, len(peers), words.shape[0]),),
            (peers, np.int32(len(peers)), words, np.int32(words.shape[0]), np.int32(skip), count))
        return
    round_ = int(count[0]) + 1
    for word in peers:
        if word is not None:
            word[0] = round_
    late = [y for y in range(words.shape[0]) if y != skip and int(words[y]) < round_]
    if late:
        raise RuntimeError(f"signals {late} are below {round_}: their messages have not been put")
    count[0] = round_
