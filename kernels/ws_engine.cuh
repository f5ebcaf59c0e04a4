// Warp Segmentation and VWC iteration kernels of the vertex-program engine (paper 000, sections II-III,
// Figures 3-5). Included last by the source dbfs/ws/program.py assembles for one vertex program, which
// first defines the value types `Vertex` (trivial, a multiple of 4 bytes) and `Edge`, WS_EDGE_VALUES
// (0: no per-edge values are read) and the four device functions of Figure 5:
//   void init_vertex(Vertex* shared, const Vertex* current)        start of the vertex's reduction
//   void compute_nbr(Vertex nbr, const Edge* edge, Vertex* local)  one incoming neighbour's contribution
//   void reduce_vertices(Vertex* first, const Vertex* second)      *first = *first (+) *second
//   bool is_updated(const Vertex* computed, const Vertex* current) does the new value replace the old?
//
// Graph of one partition, a CSR of incoming edges: rowptr u64 [count+1] (the partition's own offsets;
// bit 63 of rowptr[v] marks a boundary vertex, one that another partition reads, and is masked off for
// everything else), nbrs u32 global vertex ids, edges Edge [entries], values Vertex [all vertices] of
// which the partition owns values[lo .. lo+count). Updates are in place, so a warp may already read what
// another warp wrote in the same iteration (the paper's asynchronous processing).
//
// ws_iterate: a warp owns 32 consecutive vertices. Step 1: each lane initialises its vertex's value in
// shared memory and stores its row start, relative to the warp's first edge, in NIdx, whose 33rd entry
// is the end of the last row. Step 2: the warp walks the 32 rows' edges in chunks of 32, one edge per
// lane. A lane first issues the loads of its neighbour index, neighbour value and edge value, and while
// they are in flight finds the vertex its edge belongs to (a 5-step binary search of NIdx), its index
// inside that vertex's segment and the segment's size, both clipped to the chunk. After compute_nbr the
// segments are reduced with shuffles in as many steps as the widest segment of the chunk needs (at most
// five), and every segment's head folds the result into the vertex's shared value. WS_CHUNKS chunks are
// in flight at once. Step 3: is_updated decides; the owning lane writes the value back, raises the
// convergence flag and, when refining, takes part in the outbox ballot (ws_refine.cuh).
// Hubs, rows of more than hub_degree neighbours (dbfs/ws/graph.py says why): one warp walking a hub's
// 750K edges, one dependent step after the other, would bound the whole iteration. Their rows are left
// out of the walk (the walk covers the pieces of the warp's edges between its hubs' rows) and reduced
// before ws_iterate by ws_hub_slices, one warp per slice of hub_slice edges striding over it like a
// 32-lane virtual warp; the owning warp then combines each hub's partials (all 32 lanes striding over
// them, then a shuffle tree) into the hub's shared value before step 3. Slices are numbered in row
// order, so a warp's hubs own the consecutive partials from warp_slice[warp] on.
// vwc_iterate_<W>: the virtual-warp-centric baseline. W lanes per vertex stride over its edges, each
// reducing privately; a log2(W)-step shuffle tree combines them and lane 0 of the virtual warp runs step 3.
#pragma once
#include "ws_refine.cuh"

#define WS_THREADS 256
#define WS_CHUNKS 4
#define WS_BOUNDARY (1ull << 63)

// Shuffle of any trivial vertex type, word by word; plain shuffles for the scalar types.
template <typename T>
__device__ __forceinline__ T ws_shfl_down(T value, unsigned delta)
{
    static_assert(sizeof(T) % 4 == 0, "Vertex must be a multiple of 4 bytes");
    union { T value; u32 word[sizeof(T) / 4]; } w;
    w.value = value;
#pragma unroll
    for (int k = 0; k < (int)(sizeof(T) / 4); ++k) w.word[k] = __shfl_down_sync(WS_FULL_MASK, w.word[k], delta);
    return w.value;
}
__device__ __forceinline__ float ws_shfl_down(float v, unsigned d) { return __shfl_down_sync(WS_FULL_MASK, v, d); }
__device__ __forceinline__ double ws_shfl_down(double v, unsigned d) { return __shfl_down_sync(WS_FULL_MASK, v, d); }
__device__ __forceinline__ u32 ws_shfl_down(u32 v, unsigned d) { return __shfl_down_sync(WS_FULL_MASK, v, d); }
__device__ __forceinline__ i32 ws_shfl_down(i32 v, unsigned d) { return __shfl_down_sync(WS_FULL_MASK, v, d); }
__device__ __forceinline__ u64 ws_shfl_down(u64 v, unsigned d) { return __shfl_down_sync(WS_FULL_MASK, v, d); }
__device__ __forceinline__ i64 ws_shfl_down(i64 v, unsigned d) { return __shfl_down_sync(WS_FULL_MASK, v, d); }

// Folds `item` into a lane's private reduction (`has`: acc already holds something).
__device__ __forceinline__ void ws_fold(Vertex& acc, bool& has, const Vertex& item)
{
    if (has) reduce_vertices(&acc, &item);
    else acc = item;
    has = true;
}

// Lane `sub` of a group of W lanes folds compute_nbr of the entries begin + sub, begin + sub + W, ...
// below end into its private reduction.
template <int W>
__device__ __forceinline__ void ws_stride(const u32* __restrict__ nbrs, const Edge* __restrict__ edges,
                                          const Vertex* values, u64 begin, u64 end, u32 sub, Vertex& acc,
                                          bool& has)
{
#pragma unroll 4
    for (u64 e = begin + sub; e < end; e += W) {
        Edge edge = Edge();
#if WS_EDGE_VALUES
        edge = edges[e];
#endif
        Vertex local = Vertex();
        compute_nbr(values[nbrs[e]], &edge, &local);
        ws_fold(acc, has, local);
    }
}

// Combines the private reductions of each aligned group of W lanes in log2(W) shuffle steps: lane 0 of
// the group ends with the reduction of all of them (every lane of the warp must call it).
template <int W>
__device__ __forceinline__ void ws_group_reduce(Vertex& acc, bool& has, u32 sub)
{
#pragma unroll
    for (u32 step = W / 2; step > 0; step >>= 1) {
        const Vertex other = ws_shfl_down(acc, step);
        const bool other_has = __shfl_down_sync(WS_FULL_MASK, (int)has, step);
        if (sub < step && other_has) ws_fold(acc, has, other);
    }
}

// Lanes of the warp whose row, nidx[lane] .. nidx[lane + 1], is a hub's.
__device__ __forceinline__ unsigned ws_hub_lanes(const u32* nidx, u32 hub_degree)
{
    const u32 lane = threadIdx.x & 31;
    return __ballot_sync(WS_FULL_MASK, nidx[lane + 1] - nidx[lane] > hub_degree);
}

// groups, group_count: with an active list (ws_frontier.cuh), the listed groups of 32 vertices and their
// number (on the device); null: every vertex. changed_bits (or null): the updated vertices, one bit each.
#define WS_ITERATE_PARAMS                                                                              \
    const u64* __restrict__ rowptr, const u32* __restrict__ nbrs, const Edge* __restrict__ edges,     \
    Vertex* values, u32 lo, u32 count, u32* changed, int refine, u32* out_count, u32* out_idx,        \
    Vertex* out_val, const u32* __restrict__ groups, const u32* __restrict__ group_count,              \
    u32* changed_bits
#define WS_ITERATE_ARGS                                                                                \
    rowptr, nbrs, edges, values, lo, count, changed, refine, out_count, out_idx, out_val, groups,     \
    group_count, changed_bits

// The hub pass: warp s reduces the entries [slice_begin[s], slice_end[s]) (never empty) into partials[s];
// with an active list, only the slices of hubs (slice_vertex, local) whose group is active.
extern "C" __global__ void __launch_bounds__(WS_THREADS)
ws_hub_slices(const u64* __restrict__ slice_begin, const u64* __restrict__ slice_end, u32 slices,
              const u32* __restrict__ nbrs, const Edge* __restrict__ edges, const Vertex* values,
              Vertex* __restrict__ partials, const u32* __restrict__ slice_vertex,
              const u32* __restrict__ active_bits)
{
    const u32 s = (blockIdx.x * WS_THREADS + threadIdx.x) / 32, lane = threadIdx.x & 31;
    if (s >= slices) return;                        // the whole warp is past the last slice
    if (active_bits && !active_bits[slice_vertex[s] >> 5]) return;
    Vertex acc = Vertex();
    bool has = false;
    ws_stride<32>(nbrs, edges, values, slice_begin[s], slice_end[s], lane, acc, has);
    ws_group_reduce<32>(acc, has, lane);
    if (lane == 0) partials[s] = acc;
}

extern "C" __global__ void __launch_bounds__(WS_THREADS)
ws_iterate(WS_ITERATE_PARAMS, u32 hub_degree, u32 hub_slice, const u32* __restrict__ warp_slice,
           const Vertex* __restrict__ partials)
{
    __shared__ u32 nidx_block[WS_THREADS / 32 * 33];
    __shared__ Vertex vertex_block[WS_THREADS];
    const u32 lane = threadIdx.x & 31, warp_offset = threadIdx.x & ~31u;
    u32 first = blockIdx.x * WS_THREADS + warp_offset;
    if (groups) {
        if (first / 32 >= *group_count) return;
        first = groups[first / 32] * 32;
    }
    if (first >= count) return;
    u32* nidx = nidx_block + warp_offset / 32 * 33;
    Vertex* shared_value = vertex_block + warp_offset;

    // Step 1
    const u32 v = first + lane;
    const bool own = v < count;
    const u64 base = rowptr[first] & ~WS_BOUNDARY;
    const u32 total = (u32)((rowptr[min(first + 32u, count)] & ~WS_BOUNDARY) - base);
    const u64 row = own ? rowptr[v] : 0;
    nidx[lane] = own ? (u32)((row & ~WS_BOUNDARY) - base) : total;
    if (lane == 0) nidx[32] = total;
    Vertex current = Vertex();
    if (own) {
        current = values[lo + v];
        init_vertex(&shared_value[lane], &current);
    }
    __syncwarp();

    // Step 2, WS_CHUNKS chunks of 32 edges at a time: all their loads first, then all their segment
    // searches and reductions (independent, so they overlap), then the heads' updates in chunk order.
    // The walk leaves out the hubs' rows: it covers the pieces of the warp's edges between them, each
    // piece ending where a hub's row starts (so no segment crosses piece_end).
    unsigned later = ws_hub_lanes(nidx, hub_degree);      // hubs beyond the current piece
    u32 group = 0, piece_end = nidx[later ? __ffs(later) - 1 : 32];
    for (;;) {
        if (group >= piece_end) {
            if (!later) break;
            group = nidx[__ffs(later)];                    // the next piece starts after the hub's row
            later &= later - 1;
            piece_end = nidx[later ? __ffs(later) - 1 : 32];
            continue;
        }
        u32 nbr[WS_CHUNKS];
#pragma unroll
        for (int k = 0; k < WS_CHUNKS; ++k) {
            const u32 e = group + 32 * k + lane;
            nbr[k] = e < piece_end ? nbrs[base + e] : 0;
        }
        Vertex local[WS_CHUNKS];
        Edge edge[WS_CHUNKS];
#pragma unroll
        for (int k = 0; k < WS_CHUNKS; ++k) {
            const u32 e = group + 32 * k + lane;
            local[k] = Vertex();
            edge[k] = Edge();
            if (e < piece_end) {
                local[k] = values[nbr[k]];
#if WS_EDGE_VALUES
                edge[k] = edges[base + e];
#endif
            }
        }
        u32 owner[WS_CHUNKS], in_seg[WS_CHUNKS], seg_size[WS_CHUNKS];
#pragma unroll
        for (int k = 0; k < WS_CHUNKS; ++k) {
            const u32 e = group + 32 * k + lane;
            u32 i = 0;
#pragma unroll
            for (u32 step = 16; step > 0; step >>= 1)
                if (nidx[i + step] <= e) i += step;
            const u32 seg_next = nidx[i + 1];
            owner[k] = i;
            in_seg[k] = min(lane, e - nidx[i]);
            seg_size[k] = e < piece_end ? in_seg[k] + 1 + min(31 - lane, seg_next - e - 1) : 0;
        }
#pragma unroll
        for (int k = 0; k < WS_CHUNKS; ++k) {
            const bool active = seg_size[k] > 0;
            if (active) compute_nbr(local[k], &edge[k], &local[k]);
            const u32 widest = __reduce_max_sync(WS_FULL_MASK, seg_size[k]);
            for (u32 step = 1; step < widest; step <<= 1) {
                const Vertex other = ws_shfl_down(local[k], step);
                if (active && (in_seg[k] & (2 * step - 1)) == 0 && in_seg[k] + step < seg_size[k])
                    reduce_vertices(&local[k], &other);
            }
        }
#pragma unroll
        for (int k = 0; k < WS_CHUNKS; ++k) {
            if (seg_size[k] > 0 && in_seg[k] == 0) reduce_vertices(&shared_value[owner[k]], &local[k]);
            __syncwarp();
        }
        group += 32 * WS_CHUNKS;
    }

    // The hubs' partials, from the hub pass of this iteration, one hub at a time (the hub lanes are found
    // again rather than kept through step 2, which would cost PageRank a register step of occupancy).
    const unsigned hubs = ws_hub_lanes(nidx, hub_degree);
    if (hubs) {
        u32 slice = warp_slice[first / 32];
        for (unsigned later = hubs; later; later &= later - 1) {
            const u32 hub = __ffs(later) - 1;
            const u32 degree = nidx[hub + 1] - nidx[hub];
            const u32 slices = (degree - 1) / hub_slice + 1;
            Vertex acc = Vertex();
            bool has = false;
#pragma unroll 4
            for (u32 k = lane; k < slices; k += 32) ws_fold(acc, has, partials[slice + k]);
            ws_group_reduce<32>(acc, has, lane);
            if (lane == 0) reduce_vertices(&shared_value[hub], &acc);
            slice += slices;
        }
        __syncwarp();
    }

    // Step 3
    bool updated = false;
    Vertex computed = Vertex();
    if (own) {
        computed = shared_value[lane];
        if (is_updated(&computed, &current)) {
            values[lo + v] = computed;
            updated = true;
        }
    }
    if (changed_bits) {
        const unsigned bits = __ballot_sync(WS_FULL_MASK, updated);
        if (lane == 0 && bits) atomicOr(&changed_bits[first / 32], bits);
    }
    ws_finish_warp(updated, updated && refine && (row & WS_BOUNDARY), lo + v, computed, changed, out_count,
                   out_idx, out_val);
}

template <int W>
__device__ __forceinline__ void vwc_iterate(WS_ITERATE_PARAMS)
{
    const u64 t = (u64)blockIdx.x * WS_THREADS + threadIdx.x;
    const u32 sub = (u32)(t % W);
    u32 v;
    if (groups) {                                   // a listed group is 32 * W threads, whole warps
        if (t / (32 * W) >= *group_count) return;
        v = groups[t / (32 * W)] * 32 + (u32)(t % (32 * W)) / W;
    } else {
        if ((t & ~31ull) / W >= count) return;      // the whole warp is past the partition
        v = (u32)(t / W);
    }
    const bool own = v < count;
    u64 row = 0, begin = 0, end = 0;
    if (own) {
        row = rowptr[v];
        begin = row & ~WS_BOUNDARY;
        end = rowptr[v + 1] & ~WS_BOUNDARY;
    }
    Vertex acc = Vertex();
    bool has = false;
    ws_stride<W>(nbrs, edges, values, begin, end, sub, acc, has);
    ws_group_reduce<W>(acc, has, sub);
    bool updated = false;
    Vertex computed = Vertex();
    if (own && sub == 0) {
        const Vertex current = values[lo + v];
        init_vertex(&computed, &current);
        if (has) reduce_vertices(&computed, &acc);
        if (is_updated(&computed, &current)) {
            values[lo + v] = computed;
            updated = true;
        }
    }
    if (changed_bits) {                             // the warp's 32 / W vertices are consecutive in a group
        const unsigned lanes = __ballot_sync(WS_FULL_MASK, updated);
        const u32 first = __shfl_sync(WS_FULL_MASK, v, 0);
        unsigned bits = 0;
#pragma unroll
        for (int k = 0; k < 32 / W; ++k) bits |= ((lanes >> (k * W)) & 1u) << k;
        if ((threadIdx.x & 31) == 0 && bits) atomicOr(&changed_bits[first / 32], bits << (first & 31));
    }
    ws_finish_warp(updated, updated && refine && (row & WS_BOUNDARY), lo + v, computed, changed, out_count,
                   out_idx, out_val);
}

#define WS_VWC_KERNEL(W)                                                                               \
    extern "C" __global__ void __launch_bounds__(WS_THREADS) vwc_iterate_##W(WS_ITERATE_PARAMS)        \
    {                                                                                                  \
        vwc_iterate<W>(WS_ITERATE_ARGS);                                                               \
    }
WS_VWC_KERNEL(2)
WS_VWC_KERNEL(4)
WS_VWC_KERNEL(8)
WS_VWC_KERNEL(16)
WS_VWC_KERNEL(32)
#include "ws_shards.cuh"
#include "ws_frontier.cuh"
