// Small copies between device memory and pinned host memory made by a kernel, which reads or writes the
// host side through its mapped address (unified addressing), in place of a copy engine's transfer. Ranks
// sharing a GPU under CUDA MPS share its copy engines, so each rank's graphs' small transfers (a level's
// control block, its timer stamps) waited behind the others'; as kernel nodes they run beside them
// (bench/NOTES.md, 2026-11-28, small host copies by a kernel where ranks share a GPU).
#include "common.cuh"

extern "C" __global__ void copy_words(u32* __restrict__ dst, const u32* __restrict__ src, i64 words)
{
    for (i64 k = threadIdx.x; k < words; k += blockDim.x) dst[k] = src[k];
}
