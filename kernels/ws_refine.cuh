// Vertex Refinement boxes of the WS engine (paper 000, section IV-B, Figure 7), for one vertex program.
//
// Included by ws_engine.cuh after the program has defined `Vertex`. Online refinement: at the end of an
// iteration each warp ballots "updated and marked as boundary" over its lanes, one lane reserves the
// warp's region of the outbox with a single atomicAdd of the popcount, the region's start is shuffled
// to the others and each eligible lane writes at start + (eligible lanes below it). The inbox side
// spreads received (index, value) pairs over VertexValues; the MS baseline gathers the values of the
// whole preselected boundary list every iteration.
#pragma once

#define WS_FULL_MASK 0xffffffffu
#define WS_BOX_THREADS 256

// Every lane of the warp must call it. `updated`: this lane's vertex got a new value; `send`: it must
// also go to the outbox (updated and boundary, refinement on). Sets *changed when any lane updated.
__device__ __forceinline__ void ws_finish_warp(bool updated, bool send, u32 vertex, const Vertex& value,
                                               u32* changed, u32* out_count, u32* out_idx,
                                               Vertex* out_val)
{
    const unsigned updaters = __ballot_sync(WS_FULL_MASK, updated);
    if (updaters == 0) return;
    const int lane = threadIdx.x & 31;
    if (lane == __ffs(updaters) - 1) *changed = 1u;
    const unsigned senders = __ballot_sync(WS_FULL_MASK, send);
    if (senders == 0) return;
    const int leader = __ffs(senders) - 1;
    u32 start = 0;
    if (lane == leader) start = atomicAdd(out_count, (u32)__popc(senders));
    start = __shfl_sync(WS_FULL_MASK, start, leader);
    if (send) {
        const u32 slot = start + __popc(senders & ((1u << lane) - 1u));
        out_idx[slot] = vertex;
        out_val[slot] = value;
    }
}

// Inbox unloading: values[idx[k]] = val[k] for k < n (indices distinct, owned by the sender).
extern "C" __global__ void __launch_bounds__(WS_BOX_THREADS)
ws_apply(const u32* __restrict__ idx, const Vertex* __restrict__ val, u32 n, Vertex* __restrict__ values)
{
    const u32 k = blockIdx.x * WS_BOX_THREADS + threadIdx.x;
    if (k < n) values[idx[k]] = val[k];
}

// MS outbox loading: out[k] = values[idx[k]] for the preselected boundary vertices idx[0..n).
extern "C" __global__ void __launch_bounds__(WS_BOX_THREADS)
ws_gather(const u32* __restrict__ idx, u32 n, const Vertex* __restrict__ values, Vertex* __restrict__ out)
{
    const u32 k = blockIdx.x * WS_BOX_THREADS + threadIdx.x;
    if (k < n) out[k] = values[idx[k]];
}
