// Level bookkeeping of the device-driven searches, shared by the one-GPU loop's persistent small-level
// kernel and bulk levels' finish kernel and by the grid's device-driven small levels
// (kernels/peer_levels.cu): the direction rule, the loop's state and its control block, and the
// per-level log. The host mirrors none of this during a search; it reads the control block's
// STEP word every few rounds (dbfs/device_loop.py).
#pragma once
#include "common.cuh"

// The step after a level that produced a frontier of nf_new vertices (nf_old before it), of degree
// sum mf_new and largest degree max_degree, leaving mu_new unvisited edges. Beamer's rule, as
// dbfs.direction.next_direction (its host twin, used by the multi-rank loop): top-down -> bottom-up
// when the frontier's edges exceed the unvisited edges / alpha while the frontier grows; bottom-up ->
// top-down once the frontier shrinks below n / beta. A top-down level runs in the persistent kernel
// (STEP_SMALL) while its frontier has at most small_edges edges and no vertex of more than
// SMALL_MAX_DEGREE, else as a bulk level.
__device__ __forceinline__ i64 next_step(bool bottom_up, i64 nf_new, i64 nf_old, i64 mf_new, i64 max_degree,
                                         i64 mu_new, double alpha, double beta, i64 n, i64 small_edges)
{
    if (nf_new == 0) return STEP_DONE;
    const bool stay_bottom_up = !(nf_new < nf_old && (double)nf_new * beta < (double)n);
    const bool go_bottom_up = (double)mf_new * alpha > (double)mu_new && nf_new > nf_old;
    if (bottom_up ? stay_bottom_up : go_bottom_up) return STEP_BOTTOMUP;
    return mf_new <= small_edges && max_degree <= SMALL_MAX_DEGREE ? STEP_SMALL : STEP_TOPDOWN;
}

// Appends one record to the per-level log when there is room (log_capacity 0: no log).
__device__ __forceinline__ void log_level(i64* log, i64 log_capacity, i64 logged, i64 level, bool bottom_up,
                                          i64 frontier, i64 edges)
{
    if (logged >= log_capacity) return;
    i64* record = log + logged * LOG_WORDS;
    record[LOG_LEVEL] = level;
    record[LOG_DIRECTION] = bottom_up;
    record[LOG_FRONTIER] = frontier;
    record[LOG_EDGES] = edges;
    record[LOG_END_NS] = global_ns();
}

// The loop's state between levels, as in the control block (CTL_*).
struct Levels {
    i64 lvl, nf, mf, mu, visited, logged, step;

    __device__ void load(const i64* c)
    {
        lvl = __ldcg(&c[CTL_LEVEL]);
        nf = __ldcg(&c[CTL_FRONTIER]);
        mf = __ldcg(&c[CTL_FRONTIER_EDGES]);
        mu = __ldcg(&c[CTL_UNVISITED_EDGES]);
        visited = __ldcg(&c[CTL_VISITED]);
        logged = __ldcg(&c[CTL_LOGGED]);
        step = __ldcg(&c[CTL_STEP]);
    }

    __device__ void store(i64* c) const
    {
        c[CTL_STEP] = step;
        c[CTL_LEVEL] = lvl;
        c[CTL_FRONTIER] = nf;
        c[CTL_FRONTIER_EDGES] = mf;
        c[CTL_UNVISITED_EDGES] = mu;
        c[CTL_VISITED] = visited;
        c[CTL_LOGGED] = logged;
    }

    // After a level that found nf_new vertices of degree sum mf_new and largest degree max_new: log it
    // (leader), then the next step by Beamer's rule.
    __device__ void advance(i64 nf_new, i64 mf_new, i64 max_new, bool leader, i64* log, i64 log_capacity,
                            double alpha, double beta, i64 n, i64 small_edges)
    {
        mu -= mf_new;
        visited += nf_new;
        if (leader) log_level(log, log_capacity, logged, lvl - 1, false, nf, mf);
        ++logged;
        step = next_step(false, nf_new, nf, mf_new, max_new, mu, alpha, beta, n, small_edges);
        nf = nf_new;
        mf = mf_new;
        ++lvl;
    }

    // A level small enough for block 0 alone (the same answer in every block).
    __device__ bool tiny(i64 solo_work) const { return nf * SMALL_GROUP + mf <= solo_work; }
};
