// The figures of a new frontier list that termination and the direction rule need: its size, degree
// sum and largest degree (stats[STAT_COUNT], [STAT_DEGREES], [STAT_MAX_DEGREE]); on one GPU the same
// pass also moves the list from the queue the expansion filled back to queue 0 (copy_to).
//
// A separate pass rather than a degree read in the expansion and update kernels: there the read would
// come after the claim and hold every chunk of edges for one more memory round trip, here the reads
// are independent and the list is read anyway. Launched with a control block it runs only after a bulk
// top-down level. At a level's end publish_figures hands the counters to the host and clears them.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
frontier_figures(const i32* __restrict__ list, const i32* __restrict__ count, i32 length,
                 const i32* __restrict__ degree, i64* __restrict__ stats, i32* __restrict__ copy_to,
                 const i64* __restrict__ ctl)
{
    if (!gate_open(ctl, 1 << STEP_TOPDOWN, -1)) return;
    const i32 n = length_of(count, length);
    i64 vertices = 0, degrees = 0, largest = 0;
    for (i32 t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += gridDim.x * blockDim.x) {
        const i32 v = list[t];
        if (copy_to != nullptr) copy_to[t] = v;
        const i64 d = degree[v];
        ++vertices;
        degrees += d;
        largest = max(largest, d);
    }
    add_discoveries(vertices, degrees, largest, stats);
}

// A level's counters handed to the host at the level's end and cleared for the next: status is pinned
// host memory written through its mapped address. One kernel node where a copy node and a memset node
// stood (each costs a node's launch and ~2 us of the GPU; bench/NOTES.md, 2026-11-27, the level's
// counters handed over by its kernels).
extern "C" __global__ void publish_figures(i64* __restrict__ stats, i64* __restrict__ status)
{
    const i32 t = threadIdx.x;
    if (t < STAT_WORDS) {
        status[t] = stats[t];
        stats[t] = 0;
    }
}
