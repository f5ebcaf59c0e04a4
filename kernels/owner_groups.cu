// The graph builder's entries grouped by owner rank (Graph500 kernel 1): a counting partition into one
// send buffer, so that one message per peer carries a chunk's entries, with no sort.
//
// owner_counts: counts[o] += the entries whose owner is o, for 0 <= o < ranks (any other owner marks an
// entry to leave out, e.g. a self-loop). Each block counts the owners below SHARED_OWNERS in shared
// memory and adds its nonzero totals to the global counts once; larger owners (grids of more than
// SHARED_OWNERS ranks) are counted in global memory directly.
// owner_scatter: with cursor = the groups' starts (the exclusive scan of the counts) every kept entry
// takes slot cursor[o]++ and writes its column there, or its (column, row) pair as two interleaved
// words. The lanes of a warp that share an owner claim their slots with one atomic (__match_any_sync:
// a grid of two ranks would otherwise put every entry's atomic on two addresses). The order inside a
// group is whatever the atomics give; the receivers place every entry with atomics anyway.
//
// Both kernels are grid-stride loops whose stride is a multiple of 32, so a warp's lanes stay in the
// same iteration (the warp-wide match needs every lane). Slots outside [0, capacity) are never written.
#include "common.cuh"

#define SHARED_OWNERS 4096

extern "C" __global__ void owner_counts(const i32* __restrict__ owner, i64 n, i32 ranks,
                                        u64* __restrict__ counts)
{
    __shared__ u32 block_counts[SHARED_OWNERS];
    const i32 shared = min(ranks, SHARED_OWNERS);
    for (i32 o = threadIdx.x; o < shared; o += blockDim.x) block_counts[o] = 0;
    __syncthreads();
    for (i64 e = blockIdx.x * (i64)blockDim.x + threadIdx.x; e < n; e += (i64)gridDim.x * blockDim.x) {
        const i32 o = owner[e];
        if (o < 0 || o >= ranks) continue;
        if (o < SHARED_OWNERS) atomicAdd(&block_counts[o], 1u);
        else atomicAdd(&counts[o], 1ULL);
    }
    __syncthreads();
    for (i32 o = threadIdx.x; o < shared; o += blockDim.x)
        if (block_counts[o]) atomicAdd(&counts[o], (u64)block_counts[o]);
}

// rows == nullptr: one word per entry (its column); else two (column, row).
extern "C" __global__ void owner_scatter(const i32* __restrict__ owner, const i32* __restrict__ cols,
                                         const i32* __restrict__ rows, i64 n, i32 ranks,
                                         u64* __restrict__ cursor, i32* __restrict__ out, i64 capacity)
{
    const u32 lane = threadIdx.x & 31u, lanes_below = (1u << lane) - 1u;
    for (i64 e = blockIdx.x * (i64)blockDim.x + threadIdx.x; e - lane < n; e += (i64)gridDim.x * blockDim.x) {
        const i32 o = e < n ? owner[e] : -1;
        const bool kept = o >= 0 && o < ranks;
        const u32 peers = __match_any_sync(0xffffffffu, kept ? o : -1);
        if (!kept) continue;
        const int leader = __ffs(peers) - 1;
        u64 base = 0;
        if (lane == (u32)leader) base = atomicAdd(&cursor[o], (u64)__popc(peers));
        const u64 slot = __shfl_sync(peers, base, leader) + __popc(peers & lanes_below);
        if (slot >= (u64)capacity) continue;
        if (rows == nullptr) out[slot] = cols[e];
        else reinterpret_cast<int2*>(out)[slot] = make_int2(cols[e], rows[e]);
    }
}
