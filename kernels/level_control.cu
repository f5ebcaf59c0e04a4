// The device-driven search on one GPU (1x1 grid): its start and the end of each bulk level.
//
// start_search (one thread): visits the root (visited bit, level 0, parent = itself, queue 0) and
// fills the control block: level 1 next, frontier {root} with its degree, the unvisited edges (the
// search's TEPS edge count is what they lose), one vertex visited, the first step (small or bulk
// top-down, by the root's degree) and the start time.
// finish_level (one thread): after a bulk level, the new frontier's size, degree sum and largest degree
// (from the level's counters), the unvisited edges, the log record, the next step by Beamer's rule
// (level_control.cuh next_step), and the counters cleared for the next level.
// After a bulk top-down level, kernels/frontier.cu has moved the new frontier from queue 1 back to
// queue 0 (between levels the frontier list is always queue 0, its length counts0[0]) and counted it.
// Both run on the search's stream between the level kernels; the host never reads them back
// except the STEP word.
// visit_root (one thread): the root of a search on a grid of ranks, on the rank that owns it (the
// state reset): its visited bit (local row root[ROOT_ROW]), level 0, its parent (itself, global id
// root[ROOT_ID]; int64 parents where wide), and the own frontier list of one (queue[0],
// counts[root[ROOT_GROUP]]); one launch where five array updates cost the host 0.25 ms. Where the
// root lies is read from device memory, so the launch is the same for every root (a CUDA graph holds
// it and the copy of those words before it).
#include "level_control.cuh"

extern "C" __global__ void
visit_root(u32* __restrict__ visited, i32* __restrict__ level, i32* __restrict__ queue, i32* __restrict__ counts,
           void* __restrict__ parent, i32 wide, const i64* __restrict__ root)
{
    const i64 id = root[ROOT_ID];
    const i32 row = (i32)root[ROOT_ROW], offset = (i32)root[ROOT_OFFSET];
    visited[row >> 5] |= 1u << (row & 31);
    level[offset] = 0;
    if (wide) ((i64*)parent)[offset] = id; else ((i32*)parent)[offset] = (i32)id;
    queue[0] = offset;
    counts[root[ROOT_GROUP]] = 1;
}

extern "C" __global__ void
start_search(i64* __restrict__ ctl, i32* __restrict__ q0, i32* __restrict__ counts0, u32* __restrict__ visited,
             i32* __restrict__ level, i32* __restrict__ parent, const i32* __restrict__ degree, i32 root,
             i64 total_degree, i64 small_edges)
{
    visited[root >> 5] |= 1u << (root & 31);
    level[root] = 0;
    parent[root] = root;
    q0[0] = root;
    counts0[0] = 1;
    const i64 d = degree[root];
    ctl[CTL_STEP] = d <= small_edges && d <= SMALL_MAX_DEGREE ? STEP_SMALL : STEP_TOPDOWN;
    ctl[CTL_LEVEL] = 1;
    ctl[CTL_FRONTIER] = 1;
    ctl[CTL_FRONTIER_EDGES] = d;
    ctl[CTL_UNVISITED_EDGES] = total_degree - d;
    ctl[CTL_VISITED] = 1;
    ctl[CTL_FORM] = FORM_LIST;
    ctl[CTL_LOGGED] = 0;
    ctl[CTL_START_NS] = global_ns();
}

extern "C" __global__ void
finish_level(i64* __restrict__ ctl, i64* __restrict__ stats, i32* __restrict__ counts0, i32* __restrict__ counts1,
             i64* __restrict__ log, i64 log_capacity, double alpha, double beta, i64 n, i64 small_edges)
{
    const i64 step = ctl[CTL_STEP];
    if (step != STEP_TOPDOWN && step != STEP_BOTTOMUP) return;
    const bool bottom_up = step == STEP_BOTTOMUP;
    const i64 nf_old = ctl[CTL_FRONTIER];
    const i64 nf = stats[STAT_COUNT];
    const i64 mf = stats[STAT_DEGREES];
    const i64 mu = ctl[CTL_UNVISITED_EDGES] - mf;
    const i64 lvl = ctl[CTL_LEVEL];
    log_level(log, log_capacity, ctl[CTL_LOGGED], lvl - 1, bottom_up, nf_old, stats[STAT_CHECKED]);
    ctl[CTL_LOGGED] += 1;
    ctl[CTL_STEP] = next_step(bottom_up, nf, nf_old, mf, stats[STAT_MAX_DEGREE], mu, alpha, beta, n, small_edges);
    ctl[CTL_LEVEL] = lvl + 1;
    ctl[CTL_FRONTIER] = nf;
    ctl[CTL_FRONTIER_EDGES] = mf;
    ctl[CTL_UNVISITED_EDGES] = mu;
    ctl[CTL_VISITED] += nf;
    ctl[CTL_FORM] = bottom_up ? FORM_BITS : FORM_LIST;
    // After a bottom-up level queue 0 is free: the conversion back to a list appends to a zero count.
    counts0[0] = bottom_up ? 0 : (i32)nf;
    counts1[0] = 0;
    for (int k = 0; k < STAT_WORDS; ++k) stats[k] = 0;
}
