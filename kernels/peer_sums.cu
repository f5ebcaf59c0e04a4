// A span of every NVLink peer's memory read at once (dbfs.link_wake): block p sums the `words` uint64
// at address table[p] (a peer's copy of a symmetric array, mapped here by NVSHMEM). Its loads are
// independent of each other, so all of a block's round trips overlap, and the span's addresses spread
// them over every link to the peer: a link that slept wakes then, all of them together, instead of at
// a search's first message over it (bench/NOTES.md, 2026-11-27, the links' first access after idling).
#include "common.cuh"

extern "C" __global__ void peer_sums(const u64* __restrict__ table, i64 words, u64* __restrict__ sums)
{
    __shared__ u64 block_sum;
    const u64* span = (const u64*)table[blockIdx.x];
    if (threadIdx.x == 0) block_sum = 0;
    __syncthreads();
    u64 sum = 0;
    for (i64 k = threadIdx.x; k < words; k += blockDim.x) sum += __ldcv(span + k);   // fetched, not cached
    sum = warp_sum(sum);
    if ((threadIdx.x & 31) == 0) atomicAdd(&block_sum, sum);
    __syncthreads();
    if (threadIdx.x == 0) sums[blockIdx.x] = block_sum;
}
