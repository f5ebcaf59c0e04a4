// Exchange messages on the device (paper 004, section 5; dbfs.ops.message): encoding the lists or
// bitmaps a level sends into fixed-capacity message buffers whose heads the kernels write, copying
// them to host staging buffers at their exact size, putting them into other ranks' memory with a signal
// and waiting for signals (GPU-initiated messages), and decoding received messages into the gathered
// frontier (a list, top-down) or its bitmap segments (bottom-up). Message y of a launch is blockIdx.y;
// its buffer is base + y * stride (u32 words); a message's sources and targets may be mapped pinned
// host memory, which kernels read and write directly.
#include "message.cuh"
#include "positions.cuh"

// Head of message y (group y of the lists, counts[y] offsets), and its bitmap payload zeroed when the
// message is a bitmap. Message `skip` (the sender's own group) is left alone.
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
message_begin(const i32* __restrict__ counts, i32 skip, i32 b, i32 forced, u32* __restrict__ out,
              i64 out_stride)
{
    const i32 y = blockIdx.y;
    if (y == skip) return;
    const i32 count = counts[y];
    const i32 form = message_form(count, b, forced);
    u32* m = out + y * out_stride;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        m[HEAD_FORM] = form;
        m[HEAD_COUNT] = count;
        m[HEAD_SIZE] = message_size(form, count, b);
    }
    if (form != MSG_BITMAP) return;
    for (i32 w = blockIdx.x * blockDim.x + threadIdx.x; w < b / 32; w += gridDim.x * blockDim.x)
        m[HEAD_WORDS + w] = 0;
}

// Payload of message y from its group of the lists, which hold those of the messages but skip in order
// (lists + (y - (y > skip)) * list_stride; skip -1: every message's): the offsets themselves, or their
// bits (the payload zeroed by message_begin).
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
message_fill(const i32* __restrict__ lists, i64 list_stride, const i32* __restrict__ counts, i32 skip,
             u32* __restrict__ out, i64 out_stride)
{
    const i32 y = blockIdx.y;
    if (y == skip) return;
    const i32 count = counts[y];
    const i32* list = lists + (y - (skip >= 0 && y > skip)) * list_stride;
    u32* m = out + y * out_stride;
    u32* payload = m + HEAD_WORDS;
    const bool bits = m[HEAD_FORM] == MSG_BITMAP;
    for (i32 t = blockIdx.x * blockDim.x + threadIdx.x; t < count; t += gridDim.x * blockDim.x) {
        const i32 o = list[t];
        if (bits) atomicOr(&payload[o >> 5], 1u << (o & 31));
        else payload[t] = (u32)o;
    }
}

// One message from a bitmap of b bits holding *count set bits (the own frontier after a bottom-up
// level): the words themselves, or the list of set bits (common.cuh unpack_words; *cursor zeroed by
// the caller).
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
message_from_bits(const u32* __restrict__ words, const i64* __restrict__ count, i32 b, i32 forced,
                  u32* __restrict__ out, i32* __restrict__ cursor)
{
    const i64 n = *count;
    const i32 form = message_form(n, b, forced);
    const i32 nwords = b / 32;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        out[HEAD_FORM] = form;
        out[HEAD_COUNT] = (u32)n;
        out[HEAD_SIZE] = message_size(form, (i32)n, b);
    }
    u32* payload = out + HEAD_WORDS;
    if (form == MSG_BITMAP) {
        for (i32 w = blockIdx.x * blockDim.x + threadIdx.x; w < nwords; w += gridDim.x * blockDim.x)
            payload[w] = words[w];
        return;
    }
    unpack_words(words, nwords, payload, cursor);
}

// Message y's head and (payload_too) payload, at its exact size, from out to host (mapped pinned
// memory): what a host-staged transport hands to MPI.
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
message_stage(const u32* __restrict__ out, i64 out_stride, i32 skip, u32* __restrict__ host, i64 host_stride,
              i32 payload_too)
{
    const i32 y = blockIdx.y;
    if (y == skip) return;
    const u32* m = out + y * out_stride;
    u32* h = host + y * host_stride;
    const i32 n = HEAD_WORDS + (payload_too ? (i32)m[HEAD_SIZE] : 0);
    for (i32 t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += gridDim.x * blockDim.x) h[t] = m[t];
}

// The offsets of every message (sources[y], null for none), each plus bases[y], appended to out in
// any order where that local column has an entry in the block (col_ptr, read through positions.cuh
// ColumnStarts); *count (zeroed by the caller) ends as their number. The top-down expand's gather: out
// is sized by the block's non-empty columns.
// The head is read once a thread, and a block reserves its slots with one atomic (block_reserve): with
// an atomic a warp on the one counter, two lists of 352 K offsets took 370 us of a level on two H100
// (bench/NOTES.md, 2026-11-27, where a pair's level goes, kernel by kernel).
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
messages_to_list(const u64* __restrict__ sources, const i32* __restrict__ bases, i32 b,
                 const offset_t* __restrict__ col_ptr, const u32* col_words, const i32* col_starts,
                 i32* __restrict__ out, i32* __restrict__ count)
{
    const ColumnStarts columns{col_ptr, Positions{col_words, col_starts}};
    __shared__ i32 reserve_scratch[2];
    const u32* m = (const u32*)sources[blockIdx.y];
    if (m == nullptr) return;
    const bool bitmap = m[HEAD_FORM] == MSG_BITMAP;
    const i64 items = message_items(m, b);
    const i32 base = bases[blockIdx.y];
    // Loop bounds uniform across the block: block_reserve is block-collective.
    const i64 stride = (i64)gridDim.x * blockDim.x;
    for (i64 first = (i64)blockIdx.x * blockDim.x; first < items; first += stride) {
        const i64 t = first + threadIdx.x;
        i32 o = t < items ? payload_item(m + HEAD_WORDS, bitmap, t) : -1;
        if (o >= 0 && !columns.nonempty(o + base)) o = -1;
        const bool keep[1] = {o >= 0};
        const i32 group[1] = {0};
        i32 slot[1];
        block_reserve<1>(keep, group, 1, count, reserve_scratch, slot);
        if (keep[0]) out[slot[0]] = o + base;
    }
}

// Bottom-up expand, first pass: the target segment of every list message (out + y * nwords) zeroed.
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
messages_clear_lists(const u64* __restrict__ sources, i32 nwords, u32* __restrict__ out)
{
    const u32* m = (const u32*)sources[blockIdx.y];
    if (m == nullptr || m[HEAD_FORM] == MSG_BITMAP) return;
    u32* target = out + (i64)blockIdx.y * nwords;
    for (i32 w = blockIdx.x * blockDim.x + threadIdx.x; w < nwords; w += gridDim.x * blockDim.x) target[w] = 0;
}

// Bottom-up expand, second pass: message y as the bitmap segment y of out (copied, or its list's bits set).
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
messages_to_bitmaps(const u64* __restrict__ sources, i32 nwords, u32* __restrict__ out)
{
    const u32* m = (const u32*)sources[blockIdx.y];
    if (m == nullptr) return;
    u32* target = out + (i64)blockIdx.y * nwords;
    const u32* payload = m + HEAD_WORDS;
    const i32 stride = gridDim.x * blockDim.x;
    if (m[HEAD_FORM] == MSG_BITMAP) {
        for (i32 w = blockIdx.x * blockDim.x + threadIdx.x; w < nwords; w += stride) target[w] = payload[w];
        return;
    }
    const i32 n = (i32)m[HEAD_COUNT];
    for (i32 t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += stride) {
        const u32 o = payload[t];
        atomicOr(&target[o >> 5], 1u << (o & 31));
    }
}

// GPU-initiated messages between ranks whose memory NVSHMEM mapped into each other's address space
// (dbfs.nvshmem: the ranks of a node): the `words` words of `out` copied by the blocks of column y into
// dests[y], an address in its receiver's landing buffer (0: none).
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
message_put(const u32* __restrict__ out, i32 words, const u64* __restrict__ dests)
{
    u32* dest = (u32*)dests[blockIdx.y];
    if (dest == nullptr) return;
    for (i32 t = blockIdx.x * blockDim.x + threadIdx.x; t < words; t += gridDim.x * blockDim.x) dest[t] = out[t];
}

// After message_put (the kernel boundary: every copy performed), one round: every peer's signal word
// (peers[y], an address in that rank's memory, 0 for none) := the round, *count + 1, behind a
// system-wide fence; then a wait until every word of this rank's `n` (but `skip`) reads at least the
// round, and *count := the round. The round is this rank's count of its rounds, kept on the device, so
// no round number comes from the host and a round replays from a CUDA graph. One block, a thread per
// word, sleeping between reads so that the ranks sharing the GPU keep their multiprocessors.
extern "C" __global__ void message_post(const u64* __restrict__ peers, i32 n_peers, const u64* words, i32 n,
                                        i32 skip, u64* __restrict__ count)
{
    const i32 y = threadIdx.x;
    const u64 round = *count + 1;
    if (y < n_peers && peers[y] != 0) {
        __threadfence_system();
        *(volatile u64*)peers[y] = round;
    }
    if (y < n && y != skip) {
        const volatile u64* word = words + y;
        while (*word < round) __nanosleep(256);
    }
    __syncthreads();
    if (y == 0) *count = round;
    __threadfence();
}
