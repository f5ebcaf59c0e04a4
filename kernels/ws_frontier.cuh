// Active lists of the WS engine, built just in time with SIMD-X's filters (paper 001, section 4): the
// online filter (thread bins filled while the metadata is updated, overflow threshold 64), the ballot
// filter (a warp-ballot scan of the metadata: sorted and non-redundant) and the JIT rule between them
// (online first; where a bin overflowed, the ballot filter builds the list). Included by ws_engine.cuh.
//
// The engine pulls: a vertex needs computing again only when one of its neighbours changed. Metadata:
// one bit per owned vertex (`next_bits`, words of 32 vertices = one WS warp's group), set for the
// neighbours of every vertex updated in this iteration (ws_mark, from the iteration's changed_bits) and
// of every vertex another partition sent (ws_mark_remote, through the partition's remote index). The
// list holds groups (word indices): a WS warp processes the 32 vertices of a listed group, a VWC kernel
// the group's vertices W lanes each. A group enters a thread's bin when that thread's atomicOr turns its
// word from zero to non-zero, so bins hold each group once; bins are interleaved, entry k of thread t at
// bins[k * WS_BIN_THREADS + t], and every marking kernel runs on the fixed grid of WS_BIN_THREADS
// threads, so a thread owns its bin across the kernels of one round.
// Hub rows (see ws_engine.cuh) are marked slice by slice, one warp per slice, as they are reduced.
#pragma once

#define WS_MARK_BLOCKS 512
#define WS_BIN_THREADS (WS_MARK_BLOCKS * 256)

// u (partition-local) becomes active; a thread that activates its group records it in its bin.
__device__ __forceinline__ void ws_activate(u32 u, u32* next_bits, u32* bins, u32* bin_count, u32 threshold,
                                            u32* overflow, u32 thread)
{
    const u32 bit = 1u << (u & 31);
    if (*(volatile u32*)&next_bits[u >> 5] & bit) return;
    const u32 old = atomicOr(&next_bits[u >> 5], bit);
    if (old != 0 || bins == nullptr) return;
    const u32 k = bin_count[thread]++;
    if (k < threshold) bins[(u64)k * WS_BIN_THREADS + thread] = u >> 5;
    else *overflow = 1u;
}

// After an iteration: every vertex updated in it (changed_bits of the processed groups, or of all
// groups when groups is null) activates its neighbours; a hub's neighbours are marked by the warps of its
// slices. Fixed grid: WS_MARK_BLOCKS blocks of 256 threads; warps stride over groups, then slices.
extern "C" __global__ void __launch_bounds__(256)
ws_mark(const u32* __restrict__ groups, const u32* __restrict__ group_count, u32 all_groups,
        const u32* __restrict__ changed_bits, const u64* __restrict__ rowptr, const u32* __restrict__ nbrs,
        u32 lo, u32 count, u32 hub_degree, const u64* __restrict__ slice_begin, const u64* __restrict__ slice_end,
        const u32* __restrict__ slice_vertex, u32 slices, u32* next_bits, u32* bins, u32* bin_count,
        u32 threshold, u32* overflow)
{
    const u32 thread = blockIdx.x * 256 + threadIdx.x, lane = threadIdx.x & 31;
    const u32 warps = gridDim.x * 256 / 32;
    const u32 listed = groups ? *group_count : all_groups;
    for (u32 k = thread / 32; k < listed + slices; k += warps) {
        u64 begin, end;
        if (k < listed) {
            const u32 g = groups ? groups[k] : k;
            for (u32 word = changed_bits[g]; word; word &= word - 1) {
                const u32 v = g * 32 + __ffs(word) - 1;
                begin = rowptr[v] & ~WS_BOUNDARY;
                end = rowptr[v + 1] & ~WS_BOUNDARY;
                if (end - begin > hub_degree) continue;
                for (u64 e = begin + lane; e < end; e += 32) {
                    const u32 u = nbrs[e] - lo;
                    if (u < count) ws_activate(u, next_bits, bins, bin_count, threshold, overflow, thread);
                }
            }
        } else {
            const u32 s = k - listed, h = slice_vertex[s];
            if (!((changed_bits[h >> 5] >> (h & 31)) & 1u)) continue;
            for (u64 e = slice_begin[s] + lane; e < slice_end[s]; e += 32) {
                const u32 u = nbrs[e] - lo;
                if (u < count) ws_activate(u, next_bits, bins, bin_count, threshold, overflow, thread);
            }
        }
    }
}

// After an exchange: the owned readers of each received vertex (idx[k], or first + k when idx is null)
// become active. keys: the sorted remote vertices the partition reads; rows[key_ptr[i] .. key_ptr[i+1]):
// the local vertices that read keys[i]. Fixed grid as ws_mark.
extern "C" __global__ void __launch_bounds__(256)
ws_mark_remote(const u32* __restrict__ idx, u32 first, u32 n, const u32* __restrict__ keys, u32 n_keys,
               const u64* __restrict__ key_ptr, const u32* __restrict__ rows, u32* next_bits, u32* bins,
               u32* bin_count, u32 threshold, u32* overflow)
{
    const u32 thread = blockIdx.x * 256 + threadIdx.x;
    for (u32 k = thread; k < n; k += WS_BIN_THREADS) {
        const u32 v = idx ? idx[k] : first + k;
        u32 low = 0, high = n_keys;
        while (low < high) {
            const u32 mid = (low + high) / 2;
            if (keys[mid] < v) low = mid + 1;
            else high = mid;
        }
        if (low == n_keys || keys[low] != v) continue;
        for (u64 r = key_ptr[low]; r < key_ptr[low + 1]; ++r)
            ws_activate(rows[r], next_bits, bins, bin_count, threshold, overflow, thread);
    }
}

// The online filter: unless a bin overflowed, the bins are concatenated into the list (unsorted; a warp
// reserves its threads' room with one atomicAdd). Fixed grid as ws_mark; *list_len zeroed before.
extern "C" __global__ void __launch_bounds__(256)
ws_filter_online(const u32* __restrict__ bins, const u32* __restrict__ bin_count, u32 threshold,
                 const u32* __restrict__ overflow, u32* __restrict__ list, u32* list_len)
{
    if (*overflow) return;
    const u32 thread = blockIdx.x * 256 + threadIdx.x, lane = threadIdx.x & 31;
    const u32 mine = min(bin_count[thread], threshold);
    u32 before = mine;
#pragma unroll
    for (u32 step = 1; step < 32; step <<= 1) {
        const u32 other = __shfl_up_sync(WS_FULL_MASK, before, step);
        if (lane >= step) before += other;
    }
    u32 base = 0;
    if (lane == 31 && before) base = atomicAdd(list_len, before);
    base = __shfl_sync(WS_FULL_MASK, base, 31);
    before -= mine;
    for (u32 k = 0; k < mine; ++k) list[base + before + k] = bins[(u64)k * WS_BIN_THREADS + thread];
}

// The ballot filter, pass 1: warp w counts the non-zero words of its contiguous range of the metadata.
// With only_on_overflow (JIT), it runs only where the online filter overflowed. Fixed grid as ws_mark.
extern "C" __global__ void __launch_bounds__(256)
ws_ballot_count(const u32* __restrict__ next_bits, u32 words, const u32* __restrict__ overflow,
                int only_on_overflow, u32* __restrict__ warp_count)
{
    if (only_on_overflow && !*overflow) return;
    const u32 warp = (blockIdx.x * 256 + threadIdx.x) / 32, lane = threadIdx.x & 31;
    const u32 per_warp = (words + WS_BIN_THREADS / 32 - 1) / (WS_BIN_THREADS / 32);
    const u32 begin = min(warp * per_warp, words), end = min(begin + per_warp, words);
    u32 found = 0;
    for (u32 w = begin; w < end; w += 32) {
        const bool active = w + lane < end && next_bits[w + lane] != 0;
        found += __popc(__ballot_sync(WS_FULL_MASK, active));
    }
    if (lane == 0) warp_count[warp] = found;
}

// Pass 2, after an exclusive scan of the counts (offsets [warps + 1]): the sorted list of active groups.
extern "C" __global__ void __launch_bounds__(256)
ws_ballot_write(const u32* __restrict__ next_bits, u32 words, const u32* __restrict__ overflow,
                int only_on_overflow, const u64* __restrict__ offsets, u32* __restrict__ list, u32* list_len)
{
    if (only_on_overflow && !*overflow) return;
    const u32 warp = (blockIdx.x * 256 + threadIdx.x) / 32, lane = threadIdx.x & 31;
    const u32 per_warp = (words + WS_BIN_THREADS / 32 - 1) / (WS_BIN_THREADS / 32);
    const u32 begin = min(warp * per_warp, words), end = min(begin + per_warp, words);
    u64 at = offsets[warp];
    for (u32 w = begin; w < end; w += 32) {
        const bool active = w + lane < end && next_bits[w + lane] != 0;
        const unsigned ballot = __ballot_sync(WS_FULL_MASK, active);
        if (active) list[at + __popc(ballot & ((1u << lane) - 1u))] = w + lane;
        at += __popc(ballot);
    }
    if (warp == 0 && lane == 0) *list_len = (u32)offsets[WS_BIN_THREADS / 32];
}

// The online filter alone, after an overflow: the next iteration processes every group.
extern "C" __global__ void __launch_bounds__(256)
ws_filter_all(const u32* __restrict__ overflow, u32 groups, u32* __restrict__ list, u32* list_len)
{
    if (!*overflow) return;
    const u32 k = blockIdx.x * 256 + threadIdx.x;
    if (k < groups) list[k] = k;
    if (k == 0) *list_len = groups;
}
