// Small copies between device memory and pinned host memory made by a kernel, which reads or writes the
// host side through its mapped address (unified addressing), in place of a copy engine's transfer. Ranks
// sharing a GPU under CUDA MPS share its copy engines, so each rank's graphs' small transfers (a level's
// control block, its timer stamps) waited behind the others'; as kernel nodes they run beside them
// (bench/NOTES.md, 2026-11-28, small host copies by a kernel where ranks share a GPU).
// A copy given a flag sets it (pinned, 1) after every word, and everything the stream wrote to pinned memory
// before the copy, is visible to the host: a host spinning on that word sees a replayed level end ~13 us
// sooner than the driver's stream query tells it (bench/NOTES.md, 2026-11-29, the host woken by a flag).
#include "common.cuh"

extern "C" __global__ void copy_words(u32* __restrict__ dst, const u32* __restrict__ src, i64 words,
                                      i64* flag)
{
    for (i64 k = threadIdx.x; k < words; k += blockDim.x) dst[k] = src[k];
    if (flag == nullptr) return;
    __threadfence_system();
    __syncthreads();
    if (threadIdx.x == 0) *reinterpret_cast<volatile i64*>(flag) = 1;
}
