// Shared fixed-width types for the dbfs kernels (NVRTC has no <cstdint> by default).
#pragma once
typedef unsigned int u32;
typedef int i32;
typedef unsigned long long u64;
typedef long long i64;

// Slot in the group counted by *counter for every lane with `active` set: one atomicAdd per group of
// lanes sharing a counter (warp aggregation). Every lane of the warp must call it; inactive lanes get -1.
__device__ __forceinline__ i32 warp_reserve(bool active, i32* counter)
{
    const unsigned voters = __ballot_sync(0xffffffffu, active);
    if (!active) return -1;
    const unsigned peers = __match_any_sync(voters, (unsigned long long)counter);
    const int lane = threadIdx.x & 31;
    const int leader = __ffs(peers) - 1;
    i32 base = 0;
    if (lane == leader) base = atomicAdd(counter, __popc(peers));
    base = __shfl_sync(peers, base, leader);
    return base + __popc(peers & ((1u << lane) - 1));
}

// Block-wide slot reservation in `ngroups` global groups counted by counters[0 .. ngroups): item e of
// a thread wants a slot in group group[e] when active[e]; slot[e] receives its index in that group.
// Lanes reserve in shared memory first (warp-aggregated), then one thread per group takes the block's
// total with a single global atomicAdd: the group counters are few and hot, and an L2 atomic on one
// address serialises (one per warp still cost ~8 ms of a 17 ms level at scale 26). `shared` holds
// 2*ngroups ints (dynamic shared memory). Every thread of the block must call it (three barriers).
template <int ITEMS>
__device__ __forceinline__ void block_reserve(const bool (&active)[ITEMS], const i32 (&group)[ITEMS],
                                              i32 ngroups, i32* counters, i32* shared, i32 (&slot)[ITEMS])
{
    i32* block_fill = shared;
    i32* block_base = shared + ngroups;
    for (i32 g = threadIdx.x; g < ngroups; g += blockDim.x) block_fill[g] = 0;
    __syncthreads();
#pragma unroll
    for (int e = 0; e < ITEMS; ++e) slot[e] = warp_reserve(active[e], &block_fill[active[e] ? group[e] : 0]);
    __syncthreads();
    for (i32 g = threadIdx.x; g < ngroups; g += blockDim.x)
        if (block_fill[g]) block_base[g] = atomicAdd(&counters[g], block_fill[g]);
    __syncthreads();
#pragma unroll
    for (int e = 0; e < ITEMS; ++e)
        if (active[e]) slot[e] += block_base[group[e]];
}
