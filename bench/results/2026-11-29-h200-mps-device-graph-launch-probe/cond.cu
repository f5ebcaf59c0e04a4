// Probe (kept with its results, never part of dbfs): a search as one graph, a WHILE node over a SWITCH of level
// kinds set on the device.
#include <cuda_runtime.h>
#include <cooperative_groups.h>

extern "C" __global__ void work(float* a, int n, unsigned int* ran)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(ran, 1u);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = a[i] * 0.5f + 1.0f;
}

extern "C" __global__ void coop_work(float* a, int n, unsigned int* ran)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(ran + 1, 1u);
    cooperative_groups::this_grid().sync();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] += 1.0f;
    cooperative_groups::this_grid().sync();
}

// at an iteration's start: which kind of level runs (0 plain, 1 cooperative, 2 both, in turn)
extern "C" __global__ void pick_kind(const unsigned long long* count, unsigned long long kind_handle, int kinds)
{
    cudaGraphSetConditional((cudaGraphConditionalHandle)kind_handle, (unsigned int)(*count % kinds));
}

// at an iteration's end: count it, go on while under the limit
extern "C" __global__ void go_on(unsigned long long* count, unsigned long long limit, unsigned long long loop_handle,
                                 unsigned int* kinds_seen)
{
    unsigned long long c = *count;
    kinds_seen[c % 3] += 1;
    *count = c + 1;
    cudaGraphSetConditional((cudaGraphConditionalHandle)loop_handle, c + 1 < limit ? 1u : 0u);
}

extern "C" __global__ void raise_flag(volatile int* flag)
{
    __threadfence_system();
    *flag = 1;
}
