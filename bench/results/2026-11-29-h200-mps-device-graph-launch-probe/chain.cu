// Probe (kept with its results, never part of dbfs): a chain of "levels" each a CUDA graph, the next one
// launched by the device itself.
#include <cuda_runtime.h>
#include <cooperative_groups.h>

// a level's stand-in work
extern "C" __global__ void work(float* a, int n, unsigned int* ran)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(ran, 1u);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = a[i] * 0.5f + 1.0f;
}

// the same, launched cooperatively, with a grid barrier (the stretch kernel's shape)
extern "C" __global__ void coop_work(float* a, int n, unsigned int* ran)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(ran, 1u);
    cooperative_groups::this_grid().sync();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] += 1.0f;
}

// the scheduler at a level's end: counts the levels, tail-launches the next level's graph (table[count % 2],
// as the parities alternate) until `limit`, then raises the host's flag
extern "C" __global__ void next_level(unsigned long long* count, unsigned long long limit,
                                      const cudaGraphExec_t* table, volatile int* flag, int* error)
{
    unsigned long long c = ++*count;
    if (c < limit) {
        cudaError_t e = cudaGraphLaunch(table[c & 1], cudaStreamGraphTailLaunch);
        if (e != cudaSuccess) { *error = (int)e; *flag = 1; __threadfence_system(); }
    } else {
        __threadfence_system();
        *flag = 1;
    }
}

// the host-driven loop's end of a level: raise the flag the host waits on
extern "C" __global__ void raise_flag(volatile int* flag)
{
    __threadfence_system();
    *flag = 1;
}
