// The graph builder's entries routed and grouped by owner rank (Graph500 kernel 1): a counting
// partition into one send buffer, so that one message per peer carries a chunk's entries, with no sort.
//
// owner_entries: one thread per tuple (u, v) of a chunk writes its entry u -> v (and, both_ways, the
// entry v -> u, at index n + t) as owner rank, local column and local row, the ownership math of
// dbfs.grid.Grid (owner_rank of (owner(v)'s grid row, col_block(u)), to_local_col(u), to_local_row(v));
// a self-loop's entries get owner `ranks` (left out of every group). It counts the entries per owner as
// it goes: each block counts the owners below SHARED_OWNERS in shared memory, one atomic per warp and
// owner (__match_any_sync: on a grid of two ranks every entry would otherwise put its atomic on one of
// two addresses), and adds its nonzero totals to the global counts once; larger owners (grids of more
// than SHARED_OWNERS ranks) are counted in global memory directly. One pass over the tuples instead of
// a CuPy kernel per step of the math, each with its int64 temporaries. Without owners (one rank, whose
// entries stay where they are) it writes columns and rows alone, -1 for a self-loop's, and counts nothing.
// owner_scatter: with cursor = the groups' starts (the exclusive scan of the counts) every kept entry
// takes slot cursor[o]++ and writes its column there, or its (column, row) pair as two interleaved
// words. A block takes tiles of BLOCK_THREADS * OWNER_TILE_ITEMS entries: it counts a tile's entries
// per owner in shared memory (one shared atomic per warp and owner, the entry's place kept in a
// register), claims each owner's run of slots with one global atomic, then writes every entry at its
// run's start plus its place (owners from TILE_OWNERS up, on larger grids, claim per warp from the
// global cursor directly). One global atomic per warp and owner put a chunk of 2^24 tuples' 2^20 warp
// atomics on the two cursors of a grid of two ranks. The order inside a group is whatever the atomics
// give; the receivers place every entry with atomics anyway.
//
// owner_column_counts: the counting pass without sending the entries (a GPU build over NCCL where the
// counts fit: dbfs.memory.counts_at_source): each entry of a chunk is counted where it is produced, in
// counts[owner * cols_per_rank + local column], a histogram over every rank's local columns whose
// blocks one round of the build's exchange brings to their owners after the last chunk; and, given
// `totals`, the chunk's entries per owner as owner_entries counts them.
// owner_tuple_scatter: owner_entries and owner_scatter in one pass where the groups' sizes are known
// before (the counting pass's totals of the same chunk): every kept entry (entry e < n is the tuple's
// u -> v, entry n + t its reverse) is routed with owner_entries' math and takes its slot as in
// owner_scatter (both are scatter_tiles over their entries), so no owner, column and row arrays are
// written and read back and no count waits for the host.
//
// The kernels are grid-stride loops whose stride is a multiple of 32, so a warp's lanes stay in the
// same iteration (the warp-wide match needs every lane). Slots outside [0, capacity) are never written.
#include "common.cuh"

#define SHARED_OWNERS 4096
#define TILE_OWNERS 1024

// Where the entry u -> v lives on an R x C grid of owned blocks of b (dbfs.grid's math): its owner
// rank, its local column (*col) and the owned block of v (*k), whose offset gives its local row.
__device__ __forceinline__ i32 entry_owner(i64 u, i64 v, i64 b, i32 R, i32 C, i64* col, i64* k)
{
    const i64 column_range = (i64)R * b;
    const i64 j = u / column_range;              // col_block(u)
    *k = v / b;
    *col = u - j * column_range;
    return (i32)(*k % R) * C + (i32)j;
}

// Adds this warp's entries of owner o (kept lanes only) to the block's or the global count.
__device__ __forceinline__ void count_owner(i32 o, bool kept, i32 ranks, u32* block_counts, u64* counts)
{
    const u32 lane = threadIdx.x & 31u;
    const u32 peers = __match_any_sync(0xffffffffu, kept ? o : -1);
    if (!kept || lane != (u32)(__ffs(peers) - 1)) return;
    if (o < SHARED_OWNERS) atomicAdd(&block_counts[o], (u32)__popc(peers));
    else atomicAdd(&counts[o], (u64)__popc(peers));
}

// rows == nullptr: no local rows written; owner == nullptr: no owners or counts, a self-loop's column
// and row -1. owner, cols (and rows) hold (both_ways ? 2 : 1) * n entries.
extern "C" __global__ void owner_entries(const i64* __restrict__ src, const i64* __restrict__ dst, i64 n,
                                         i32 both_ways, i64 b, i32 R, i32 C, i32* __restrict__ owner,
                                         i32* __restrict__ cols, i32* __restrict__ rows,
                                         u64* __restrict__ counts)
{
    __shared__ u32 block_counts[SHARED_OWNERS];
    const i32 ranks = R * C, shared = min(ranks, SHARED_OWNERS);
    for (i32 o = threadIdx.x; o < shared; o += blockDim.x) block_counts[o] = 0;
    __syncthreads();
    const u32 lane = threadIdx.x & 31u;
    for (i64 t = blockIdx.x * (i64)blockDim.x + threadIdx.x; t - lane < n; t += (i64)gridDim.x * blockDim.x) {
        const bool inside = t < n;
        const i64 a = inside ? src[t] : 0, z = inside ? dst[t] : 0;
        const bool kept = inside && a != z;
        for (i32 d = 0; d <= both_ways; ++d) {
            const i64 u = d ? z : a, v = d ? a : z;
            i64 col, k;
            const i32 placed_at = entry_owner(u, v, b, R, C, &col, &k);
            const i32 o = kept ? placed_at : ranks;
            if (inside) {
                const i64 e = d * n + t;
                const bool placed = kept || owner != nullptr;
                if (owner != nullptr) owner[e] = o;
                cols[e] = placed ? (i32)col : -1;
                if (rows != nullptr) rows[e] = placed ? (i32)((k / R) * b + (v - k * b)) : -1;
            }
            if (owner != nullptr) count_owner(o, kept, ranks, block_counts, counts);   // uniform: the warp matches
        }
    }
    __syncthreads();
    for (i32 o = threadIdx.x; o < shared; o += blockDim.x)
        if (block_counts[o]) atomicAdd(&counts[o], (u64)block_counts[o]);
}

// The tiles of owner_scatter and owner_tuple_scatter: entry(e, &col, &row) is entry e's owner, or -1 where
// it is left out; every kept entry writes its column (with_rows: its (column, row) pair) at its slot.
template <typename Entry>
__device__ __forceinline__ void scatter_tiles(i64 n, i32 ranks, bool with_rows, u64* __restrict__ cursor,
                                              i32* __restrict__ out, i64 capacity, const Entry& entry)
{
    __shared__ unsigned long long run[TILE_OWNERS];   // a tile's entries per owner, then its run's first slot
    const u32 lane = threadIdx.x & 31u, lanes_below = (1u << lane) - 1u;
    const i32 tiled = min(ranks, TILE_OWNERS);
    const i64 tile = (i64)BLOCK_THREADS * OWNER_TILE_ITEMS;
    for (i64 first = (i64)blockIdx.x * tile; first < n; first += (i64)gridDim.x * tile) {
        for (i32 o = threadIdx.x; o < tiled; o += BLOCK_THREADS) run[o] = 0;
        __syncthreads();
        i32 owners[OWNER_TILE_ITEMS], cols[OWNER_TILE_ITEMS], rows[OWNER_TILE_ITEMS];
        u64 place[OWNER_TILE_ITEMS];
#pragma unroll
        for (int k = 0; k < OWNER_TILE_ITEMS; ++k) {
            const i64 e = first + (i64)k * BLOCK_THREADS + threadIdx.x;
            const i32 o = e < n ? entry(e, cols[k], rows[k]) : -1;
            const u32 peers = __match_any_sync(0xffffffffu, o);
            const int leader = __ffs(peers) - 1;
            u64 base = 0;
            if (o >= 0 && lane == (u32)leader)
                base = atomicAdd(o < TILE_OWNERS ? &run[o] : &cursor[o], (unsigned long long)__popc(peers));
            owners[k] = o;
            place[k] = __shfl_sync(0xffffffffu, base, leader) + __popc(peers & lanes_below);
        }
        __syncthreads();
        for (i32 o = threadIdx.x; o < tiled; o += BLOCK_THREADS)
            if (run[o]) run[o] = atomicAdd(&cursor[o], run[o]);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < OWNER_TILE_ITEMS; ++k) {
            const i32 o = owners[k];
            if (o < 0) continue;
            const u64 slot = (o < TILE_OWNERS ? run[o] : 0) + place[k];
            if (slot >= (u64)capacity) continue;
            if (!with_rows) out[slot] = cols[k];
            else reinterpret_cast<int2*>(out)[slot] = make_int2(cols[k], rows[k]);
        }
        __syncthreads();                         // the runs are read before the next tile clears them
    }
}

// Entries routed already (owner_entries): owner, column and row arrays.
struct RoutedEntry {
    const i32* __restrict__ owner;
    const i32* __restrict__ cols;
    const i32* __restrict__ rows;
    i32 ranks;
    __device__ __forceinline__ i32 operator()(i64 e, i32& col, i32& row) const
    {
        const i32 o = owner[e];
        if (o < 0 || o >= ranks) return -1;
        col = cols[e];
        row = rows != nullptr ? rows[e] : 0;
        return o;
    }
};

// Entries of a chunk of tuples, routed here: entry e < n is tuple e's u -> v, entry n + t tuple t's v -> u.
struct TupleEntry {
    const i64* __restrict__ src;
    const i64* __restrict__ dst;
    i64 n, b;
    i32 R, C;
    __device__ __forceinline__ i32 operator()(i64 e, i32& col, i32& row) const
    {
        const bool reverse = e >= n;
        const i64 t = reverse ? e - n : e;
        const i64 u = reverse ? dst[t] : src[t], v = reverse ? src[t] : dst[t];
        if (u == v) return -1;                   // a self-loop: no entry
        i64 column, block;
        const i32 o = entry_owner(u, v, b, R, C, &column, &block);
        col = (i32)column;
        row = (i32)((block / R) * b + (v - block * b));
        return o;
    }
};

// rows == nullptr: one word per entry (its column); else two (column, row).
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
owner_scatter(const i32* __restrict__ owner, const i32* __restrict__ cols, const i32* __restrict__ rows, i64 n,
              i32 ranks, u64* __restrict__ cursor, i32* __restrict__ out, i64 capacity)
{
    scatter_tiles(n, ranks, rows != nullptr, cursor, out, capacity, RoutedEntry{owner, cols, rows, ranks});
}

extern "C" __global__ void owner_column_counts(const i64* __restrict__ src, const i64* __restrict__ dst, i64 n,
                                               i32 both_ways, i64 b, i32 R, i32 C, i64 cols_per_rank,
                                               u32* __restrict__ counts, u64* __restrict__ totals)
{
    __shared__ u32 block_counts[SHARED_OWNERS];
    const i32 ranks = R * C, shared = totals != nullptr ? min(ranks, SHARED_OWNERS) : 0;
    for (i32 o = threadIdx.x; o < shared; o += blockDim.x) block_counts[o] = 0;
    __syncthreads();
    const u32 lane = threadIdx.x & 31u;
    for (i64 t = blockIdx.x * (i64)blockDim.x + threadIdx.x; t - lane < n; t += (i64)gridDim.x * blockDim.x) {
        const bool inside = t < n;
        const i64 a = inside ? src[t] : 0, z = inside ? dst[t] : 0;
        const bool kept = inside && a != z;      // a self-loop: no entry
        for (i32 d = 0; d <= both_ways; ++d) {
            i64 col, k;
            const i32 o = entry_owner(d ? z : a, d ? a : z, b, R, C, &col, &k);
            if (kept) atomicAdd(&counts[o * cols_per_rank + col], 1u);
            if (totals != nullptr) count_owner(o, kept, ranks, block_counts, totals);   // uniform: the warp matches
        }
    }
    __syncthreads();
    for (i32 o = threadIdx.x; o < shared; o += blockDim.x)
        if (block_counts[o]) atomicAdd(&totals[o], (u64)block_counts[o]);
}

// with_rows 0: one word per entry (its column); else two (column, row).
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
owner_tuple_scatter(const i64* __restrict__ src, const i64* __restrict__ dst, i64 n, i32 both_ways, i64 b, i32 R,
                    i32 C, i32 with_rows, u64* __restrict__ cursor, i32* __restrict__ out, i64 capacity)
{
    scatter_tiles((both_ways ? 2 : 1) * n, R * C, with_rows != 0, cursor, out, capacity,
                  TupleEntry{src, dst, n, b, R, C});
}
