// Shared fixed-width types for the dbfs kernels (NVRTC has no <cstdint> by default).
#pragma once
typedef unsigned int u32;
typedef int i32;
typedef unsigned long long u64;
typedef long long i64;

// Append `value` to the group counted by *counter for every lane with `active` set, with one atomicAdd
// per group of lanes sharing a counter (warp aggregation: a single counter hit once per discovery
// serializes at the L2). Every lane of the warp must call it. Returns nothing; the slot is written.
__device__ __forceinline__ void warp_append(bool active, i32* counter, i32* group, i32 value)
{
    const unsigned voters = __ballot_sync(0xffffffffu, active);
    if (!active) return;
    const unsigned peers = __match_any_sync(voters, (unsigned long long)counter);
    const int lane = threadIdx.x & 31;
    const int leader = __ffs(peers) - 1;
    i32 base = 0;
    if (lane == leader) base = atomicAdd(counter, __popc(peers));
    base = __shfl_sync(peers, base, leader);
    group[base + __popc(peers & ((1u << lane) - 1))] = value;
}
