// CuSha's G-Shards and Concatenated Windows in the vertex-program engine (the representations paper 000
// compares Warp Segmentation against, Tables V-VI; CuSha, HPDC'14). Included by ws_engine.cuh after the
// program's Vertex, Edge and four device functions, for the same programs as ws_iterate.
//
// Representation of one partition owning vertices [lo, lo + count): the owned vertices are cut into
// windows of `window` consecutive vertices; shard j holds every incoming edge of window j as the entries
// [shard_ptr[j], shard_ptr[j+1]) sorted by source: dest (the partition-local destination), src_value (a
// copy of the source's value, read instead of values[src]: consecutive, so coalesced), edges (Edge).
// Inside shard j the entries whose source lies in window i form the window W_ij, the consecutive entries
// window_ptr[j * (shards + 1) + i] .. [i + 1] (offsets from shard_ptr[j]); entries before window_ptr[j *
// (shards + 1)] and from window_ptr[j * (shards + 1) + shards] on have remote sources (other partitions).
//   G-Shards (gs): src u32 [entries], the source of every entry; after updating window i, block i walks
//                  W_ij of every shard j (one warp per window) and refreshes the copies of its updated
//                  vertices. Windows of sparse graphs are short, so most warps idle (CuSha's weakness).
//   Concatenated Windows (cw): the windows W_i0, W_i1, ... concatenated into CW_i = [cw_ptr[i],
//                  cw_ptr[i+1]) of cw_src (the source) and cw_map (where its copy sits in the shard
//                  arrays); block i walks CW_i with all its threads. The remote entries follow as one
//                  last range [cw_ptr[shards], cw_ptr[shards+1]).
// One block per shard (gs_iterate, cw_iterate): (1) init_vertex of the window's vertices into shared
// memory; (2) every entry's compute_nbr(src_value, edge) is folded into its destination's shared value,
// in rounds of WS_SHARD_CHUNKS x 256 consecutive entries: each warp takes WS_SHARD_CHUNKS groups of 32,
// the lanes of a group with the same destination combine theirs with shuffles (reduce by key, at most
// five steps), then the warps fold their groups' results in warp order, one warp at a time, so every
// vertex reduces its entries in the same order in every iteration. A non-associative reduction
// (PageRank's float sum) in an order that followed the warps' timing rounded differently each time: hubs
// of thousands of entries then moved by more than PageRank's 1e-6 tolerance in every iteration and
// never settled. (3) is_updated decides, the winners are written to values, flagged, refined as in
// ws_iterate; (4) the copies of the updated vertices are refreshed in the windows (gs) or the
// concatenated window (cw). Copies are updated while other blocks run, so, as with ws_iterate, a block
// may already read values of the same iteration.
// Dynamic shared memory: window * (sizeof(Vertex) + 4) bytes.
#pragma once

#define WS_SHARD_THREADS 256
#define WS_SHARD_CHUNKS 4   // groups of 32 entries a warp takes per round of step 2

// Shuffle of any trivial vertex type from lane `src` (every lane of the warp must call it).
template <typename T>
__device__ __forceinline__ T ws_shfl(T value, int src)
{
    union { T value; u32 word[sizeof(T) / 4]; } w;
    w.value = value;
#pragma unroll
    for (int k = 0; k < (int)(sizeof(T) / 4); ++k) w.word[k] = __shfl_sync(WS_FULL_MASK, w.word[k], src);
    return w.value;
}

// Reduce by key over the warp, one entry per lane: lanes with the same destination d combine their
// `local` in a fixed tree; returns whether this lane is the lowest of its destination (its `local` then
// holds the group's reduction). Every lane of the warp must call it.
__device__ __forceinline__ bool ws_shard_combine(bool active, u32 d, Vertex& local)
{
    const u32 lane = threadIdx.x & 31;
    const unsigned peers = __match_any_sync(WS_FULL_MASK, active ? d : ~0u);   // d < window: no clash
    const unsigned below = peers & ((1u << lane) - 1u);
    unsigned above = active ? peers & ~below & ~(1u << lane) : 0u;
    u32 rank = __popc(below);
    while (__any_sync(WS_FULL_MASK, above != 0)) {
        const int next = __ffs(above);
        const Vertex other = ws_shfl(local, next ? next - 1 : (int)lane);
        if (next) reduce_vertices(&local, &other);
        above &= __ballot_sync(WS_FULL_MASK, (rank & 1u) == 0);   // lanes at odd ranks are done
        rank >>= 1;
    }
    return active && below == 0;
}

#define WS_SHARD_PARAMS                                                                                \
    const u64* __restrict__ shard_ptr, const u32* __restrict__ dest, Vertex* src_value,               \
    const Edge* __restrict__ edges, Vertex* values, u32 lo, u32 count, u32 window, u32* changed,      \
    int refine, u32* out_count, u32* out_idx, Vertex* out_val, const u32* __restrict__ marked
#define WS_SHARD_ARGS                                                                                  \
    shard_ptr, dest, src_value, edges, values, lo, count, window, changed, refine, out_count, out_idx, \
    out_val, marked

// Steps 1-3 of this block's shard; returns the window's first local vertex and, in shared memory, its
// values and, in word[0 .. window size), which of them were updated.
__device__ __forceinline__ void ws_shard_update(WS_SHARD_PARAMS, Vertex*& shared_value, u32*& word, u32& base)
{
    extern __shared__ __align__(16) unsigned char ws_shard_memory[];
    shared_value = reinterpret_cast<Vertex*>(ws_shard_memory);
    word = reinterpret_cast<u32*>(ws_shard_memory + ((window * sizeof(Vertex) + 15) & ~15u));
    const u32 shard = blockIdx.x;
    base = shard * window;
    const u32 size = min(window, count - base);
    for (u32 v = threadIdx.x; v < size; v += WS_SHARD_THREADS) {
        const Vertex current = values[lo + base + v];
        init_vertex(&shared_value[v], &current);
    }
    __syncthreads();
    // Step 2: a round's loads first, then its reductions by key, then the warps' folds in warp order (a
    // warp's groups in entry order): each destination's entries in shard order.
    const u32 warp = threadIdx.x / 32, lane = threadIdx.x & 31;
    const u64 end = shard_ptr[shard + 1];
    for (u64 round = shard_ptr[shard]; round < end; round += WS_SHARD_THREADS * WS_SHARD_CHUNKS) {
        const u64 first = round + (u64)warp * 32 * WS_SHARD_CHUNKS + lane;
        Vertex local[WS_SHARD_CHUNKS];
        Edge edge[WS_SHARD_CHUNKS];
        u32 d[WS_SHARD_CHUNKS];
#pragma unroll
        for (int k = 0; k < WS_SHARD_CHUNKS; ++k) {
            const u64 e = first + 32 * k;
            local[k] = Vertex();
            edge[k] = Edge();
            d[k] = 0;
            if (e < end) {
                local[k] = src_value[e];
#if WS_EDGE_VALUES
                edge[k] = edges[e];
#endif
                d[k] = dest[e] - base;
            }
        }
        bool head[WS_SHARD_CHUNKS];
#pragma unroll
        for (int k = 0; k < WS_SHARD_CHUNKS; ++k) {
            const bool active = first + 32 * k < end;
            if (active) compute_nbr(local[k], &edge[k], &local[k]);
            head[k] = ws_shard_combine(active, d[k], local[k]);
        }
        for (u32 turn = 0; turn < WS_SHARD_THREADS / 32; ++turn) {
            if (warp == turn) {
#pragma unroll
                for (int k = 0; k < WS_SHARD_CHUNKS; ++k) {
                    if (head[k]) reduce_vertices(&shared_value[d[k]], &local[k]);
                    __syncwarp();
                }
            }
            __syncthreads();
        }
    }
    for (u32 first = 0; first < size; first += WS_SHARD_THREADS) {
        const u32 v = first + threadIdx.x;
        bool updated = false, boundary = false;
        Vertex computed = Vertex();
        if (v < size) {
            const Vertex current = values[lo + base + v];
            computed = shared_value[v];
            updated = is_updated(&computed, &current);
            if (updated) values[lo + base + v] = computed;
            word[v] = updated;
            boundary = (marked[(base + v) >> 5] >> ((base + v) & 31)) & 1u;
        }
        ws_finish_warp(updated, updated && refine && boundary, lo + base + v, computed, changed, out_count,
                       out_idx, out_val);
    }
    __syncthreads();
}

extern "C" __global__ void __launch_bounds__(WS_SHARD_THREADS)
gs_iterate(WS_SHARD_PARAMS, const u32* __restrict__ window_ptr, const u32* __restrict__ src, u32 shards)
{
    Vertex* shared_value;
    u32 *word, base;
    ws_shard_update(WS_SHARD_ARGS, shared_value, word, base);
    // Step 4, G-Shards: window W_ij of every shard j, a warp per window.
    const u32 i = blockIdx.x, lane = threadIdx.x & 31;
    for (u32 j = threadIdx.x / 32; j < shards; j += WS_SHARD_THREADS / 32) {
        const u64 start = shard_ptr[j];
        const u32* offsets = window_ptr + (u64)j * (shards + 1);
        const u64 stop = start + offsets[i + 1];
        for (u64 e = start + offsets[i] + lane; e < stop; e += 32) {
            const u32 s = src[e] - lo - base;
            if (word[s]) src_value[e] = shared_value[s];
        }
    }
}

extern "C" __global__ void __launch_bounds__(WS_SHARD_THREADS)
cw_iterate(WS_SHARD_PARAMS, const u64* __restrict__ cw_ptr, const u32* __restrict__ cw_src,
           const u32* __restrict__ cw_map)
{
    Vertex* shared_value;
    u32 *word, base;
    ws_shard_update(WS_SHARD_ARGS, shared_value, word, base);
    // Step 4, Concatenated Windows: CW_i with all the block's threads.
    const u64 stop = cw_ptr[blockIdx.x + 1];
    for (u64 k = cw_ptr[blockIdx.x] + threadIdx.x; k < stop; k += WS_SHARD_THREADS) {
        const u32 s = cw_src[k] - lo - base;
        if (word[s]) src_value[cw_map[k]] = shared_value[s];
    }
}

// The copies of remote sources, after the exchange has brought their new values: block j refreshes the
// remote entries of shard j (gs), or thread k entry k of the remote range of the concatenated windows
// (cw). With every range (load), the same kernels fill all copies.
extern "C" __global__ void __launch_bounds__(WS_SHARD_THREADS)
gs_refresh(const u64* __restrict__ shard_ptr, const u32* __restrict__ window_ptr, u32 shards,
           const u32* __restrict__ src, const Vertex* __restrict__ values, Vertex* __restrict__ src_value,
           int everything)
{
    const u64 start = shard_ptr[blockIdx.x], end = shard_ptr[blockIdx.x + 1];
    const u32* offsets = window_ptr + (u64)blockIdx.x * (shards + 1);
    const u64 own_begin = everything ? end : start + offsets[0];
    const u64 own_end = everything ? end : start + offsets[shards];
    for (u64 e = start + threadIdx.x; e < own_begin; e += WS_SHARD_THREADS) src_value[e] = values[src[e]];
    for (u64 e = own_end + threadIdx.x; e < end; e += WS_SHARD_THREADS) src_value[e] = values[src[e]];
}

extern "C" __global__ void __launch_bounds__(WS_SHARD_THREADS)
cw_refresh(u64 begin, u64 end, const u32* __restrict__ cw_src, const u32* __restrict__ cw_map,
           const Vertex* __restrict__ values, Vertex* __restrict__ src_value)
{
    const u64 k = begin + (u64)blockIdx.x * WS_SHARD_THREADS + threadIdx.x;
    if (k < end) src_value[cw_map[k]] = values[cw_src[k]];
}
