// The kernel that ends every graph of a search the device drives (dbfs.level_chain; issue 29's way past the
// host's turn between levels, bench/NOTES.md, 2026-11-29, levels that the device launches itself): it
// charges the graph's timer marks and sends to the search's sums, advances where the search stands as the
// host-driven grid loop would (dbfs.grid_loop.GridLoop._run: a stretch's end from its control block, a
// whole level's global totals, Beamer's rule), and launches the next level's graph from the device (a tail
// launch, which starts once this graph has ended); once the frontier is empty, the parents' resolution,
// whose own end copies the standing and sums to pinned host memory and raises the host's flag. One thread.
#ifndef __CUDACC_RTC__
#include <cuda_runtime.h>                      // (NVRTC declares the device runtime itself)
#endif
#include "level_control.cuh"

// A level graph's code: what it runs (CHAIN_KIND_STRETCH, _TOPDOWN, _BOTTOMUP) from which frontier form,
// queue parity and message half (dbfs.ops.schedule.code_of); the search's start and the parents' resolutions
// come after them (CHAIN_START_CODE).
__device__ __forceinline__ i32 code_of(i32 action, i64 form, i64 parity, i64 half)
{
    return (i32)(((action * 2 + form) * 2 + parity) * 2 + half);
}

// Bytes of one send whose heads the graph staged to pinned memory (dbfs.exchange.LevelExchange.staged_bytes).
__device__ i64 staged_bytes(const i64* send)
{
    const volatile u32* heads = (const volatile u32*)send[PLAN_SEND0_HEADS - PLAN_SEND0_HEADS];
    const i64 stride = send[PLAN_SEND0_STRIDE - PLAN_SEND0_HEADS], skip = send[PLAN_SEND0_SKIP - PLAN_SEND0_HEADS];
    i64 words = 0;
    for (i64 slot = 0; slot < send[PLAN_SEND0_SLOTS - PLAN_SEND0_HEADS]; ++slot)
        if (slot != skip) words += HEAD_WORDS + heads[slot * stride + HEAD_SIZE];
    return 4 * words * send[PLAN_SEND0_COPIES - PLAN_SEND0_HEADS];
}

// The graph's marks and sends added to the sums: traffic holds (messages, bytes) per CHAIN_TRAFFIC phase,
// phase_ns the nanoseconds per clock phase.
__device__ void charge(const i64* plan, i64* traffic, i64* phase_ns)
{
    const i64* stamps = (const i64*)plan[PLAN_MARKS];
    const i32* phases = (const i32*)plan[PLAN_MARK_PHASES];
    for (i64 k = 0; k + 1 < plan[PLAN_MARK_COUNT]; ++k)
        if (phases[k] >= 0) phase_ns[phases[k]] += stamps[k + 1] - stamps[k];
    for (int s = 0; s < CHAIN_SENDS; ++s) {
        const i64* send = plan + PLAN_SEND0_HEADS + s * CHAIN_SEND_WORDS;
        if (send[0] == 0) continue;
        const i64 phase = send[PLAN_SEND0_PHASE - PLAN_SEND0_HEADS];
        traffic[2 * phase] += send[PLAN_SEND0_MESSAGES - PLAN_SEND0_HEADS];
        traffic[2 * phase + 1] += staged_bytes(send);
    }
    for (int f = 0; f < CHAIN_FIXED; ++f) {
        const i64* fixed = plan + PLAN_FIXED0_PHASE + f * CHAIN_FIXED_WORDS;
        const i64 phase = fixed[PLAN_FIXED0_PHASE - PLAN_FIXED0_PHASE];
        traffic[2 * phase] += fixed[PLAN_FIXED0_MESSAGES - PLAN_FIXED0_PHASE];
        traffic[2 * phase + 1] += fixed[PLAN_FIXED0_BYTES - PLAN_FIXED0_PHASE];
    }
}

//   chain       int64 [CHAIN_WORDS + 2 * CHAIN_TRAFFIC_PHASES + clock_phases]  read, write  the standing, sums
//   plan        int64 [codes, CHAIN_PLAN_WORDS]    read   each code's graph (PLAN_*)
//   code        the code of the graph this kernel ends
//   totals      pinned int64 [2]                   read   a whole level's global frontier size and degree sum
//   peer_ctl    int64 [CTL_WORDS] or null          read, write  the stretches' control block (null: none)
//   control     int64 [CTL_WORDS]                  write  the whole levels' level number and step
//   chain_host  pinned int64, as chain             write  the standing and sums, once the search is over
//   flag        pinned int64 [1]                   write  1 once chain_host is written (or on an error)
//   launch      0: decide and record the next code (CHAIN_CODE) without launching it (the tests)
extern "C" __global__ void schedule_next(i64* chain, const i64* plan, i32 code, const i64* totals, i64* peer_ctl,
                                         i64* control, i32 clock_phases, double alpha, double beta, i64 n,
                                         i64 capacity, i64 edge_limit, i32 R, i32 C, i64* chain_host, i64* flag,
                                         i32 launch)
{
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    const i64* graph = plan + (i64)code * CHAIN_PLAN_WORDS;
    i64* traffic = chain + CHAIN_WORDS;
    const i64 kind = graph[PLAN_KIND];
    i64 lvl = chain[CHAIN_LEVEL], form = chain[CHAIN_FORM], parity = chain[CHAIN_PARITY], half = chain[CHAIN_HALF];
    i64 nf = chain[CHAIN_FRONTIER], mf = chain[CHAIN_FRONTIER_EDGES], mu = chain[CHAIN_UNVISITED_EDGES];
    i64 visited = chain[CHAIN_VISITED];
    bool bottom_up = chain[CHAIN_BOTTOMUP] != 0, done = kind == CHAIN_KIND_RESOLVE;
    if (kind != CHAIN_KIND_START) charge(graph, traffic, traffic + 2 * CHAIN_TRAFFIC_PHASES);
    if (kind == CHAIN_KIND_STRETCH) {
        const i64 step = peer_ctl[CTL_STEP], levels = peer_ctl[CTL_LOGGED];
        lvl = peer_ctl[CTL_LEVEL] - 1;
        visited = peer_ctl[CTL_VISITED];
        mu = peer_ctl[CTL_UNVISITED_EDGES];
        nf = peer_ctl[CTL_FRONTIER];
        mf = peer_ctl[CTL_FRONTIER_EDGES];
        traffic[0] += levels * (R - 1);              // every level of a stretch messages every peer
        traffic[1] += peer_ctl[CTL_EXPAND_BYTES];
        traffic[2] += levels * (C - 1);
        traffic[3] += peer_ctl[CTL_FOLD_BYTES];
        done = step == STEP_DONE;
        bottom_up = step == STEP_BOTTOMUP;
    } else if (kind == CHAIN_KIND_TOPDOWN || kind == CHAIN_KIND_BOTTOMUP) {
        form = bottom_up ? FORM_BITS : FORM_LIST;
        parity ^= !bottom_up;                        // a top-down level's new frontier is in the other queue
        half = graph[PLAN_HALF_AFTER];
        const i64 nf_new = ((const volatile i64*)totals)[0], mf_new = ((const volatile i64*)totals)[1];
        if (nf_new == 0) {
            done = true;
        } else {
            visited += nf_new;
            mu -= mf_new;
            bottom_up = next_step(bottom_up, nf_new, nf, mf_new, 0, mu, alpha, beta, n, -1) == STEP_BOTTOMUP;
            nf = nf_new;
            mf = mf_new;
        }
    }
    i32 next = -1;
    const i32 resolve = CHAIN_START_CODE + 1 + (chain[CHAIN_ANY_BOTTOMUP] != 0);
    if (done && kind != CHAIN_KIND_RESOLVE && plan[(i64)resolve * CHAIN_PLAN_WORDS + PLAN_EXEC] != 0) {
        next = resolve;                              // the parents' resolution ends the search
    } else if (!done) {
        if (peer_ctl != nullptr && !bottom_up && nf <= capacity && mf <= edge_limit) {
            next = code_of(CHAIN_KIND_STRETCH, form, parity, half);
            peer_ctl[CTL_LEVEL] = lvl + 1;
            peer_ctl[CTL_FRONTIER] = nf;
            peer_ctl[CTL_FRONTIER_EDGES] = mf;
            peer_ctl[CTL_UNVISITED_EDGES] = mu;
            peer_ctl[CTL_VISITED] = visited;
            peer_ctl[CTL_LOGGED] = 0;
            form = FORM_LIST;                        // a stretch leaves the own frontier as a list
        } else {
            ++lvl;
            chain[CHAIN_ANY_BOTTOMUP] |= bottom_up;
            next = code_of(bottom_up ? CHAIN_KIND_BOTTOMUP : CHAIN_KIND_TOPDOWN, form, parity, half);
            control[CTL_LEVEL] = lvl;
            control[CTL_STEP] = bottom_up ? STEP_BOTTOMUP : STEP_TOPDOWN;
        }
    }
    chain[CHAIN_CODE] = next;
    chain[CHAIN_LEVEL] = lvl;
    chain[CHAIN_BOTTOMUP] = bottom_up;
    chain[CHAIN_FORM] = form;
    chain[CHAIN_PARITY] = parity;
    chain[CHAIN_HALF] = half;
    chain[CHAIN_FRONTIER] = done ? 0 : nf;
    chain[CHAIN_FRONTIER_EDGES] = mf;
    chain[CHAIN_UNVISITED_EDGES] = mu;
    chain[CHAIN_VISITED] = visited;
    chain[CHAIN_GRAPHS] += 1;
    if (next >= 0) {
        if (!launch) return;
        const cudaGraphExec_t exec = (cudaGraphExec_t)plan[(i64)next * CHAIN_PLAN_WORDS + PLAN_EXEC];
        const cudaError_t error = exec ? cudaGraphLaunch(exec, cudaStreamGraphTailLaunch) : cudaErrorInvalidValue;
        if (error == cudaSuccess) return;
        chain[CHAIN_ERROR] = error;
    }
    for (i64 k = 0; k < CHAIN_WORDS + 2 * CHAIN_TRAFFIC_PHASES + clock_phases; ++k)
        ((volatile i64*)chain_host)[k] = chain[k];
    __threadfence_system();
    *(volatile i64*)flag = 1;
}
