// Small top-down levels of the device-driven search (one GPU, 1x1 grid) in one persistent kernel.
//
// A road network, mesh or lattice has thousands of levels of a few thousand vertices each: launched
// level by level with the host deciding in between, every level costs ~150 us of round trips for
// microseconds of work. This kernel runs such levels back to back. It is launched cooperatively with
// one block per multiprocessor (all blocks resident), and levels are separated by one grid-wide
// barrier. Per level: groups of SMALL_GROUP lanes take the frontier vertices (grid-stride), their
// lanes stride over the vertex's CSC column; an entry claims its row when its atomicOr flips the
// visited bit; a claimant sets level and parent and appends the vertex to the other queue
// (warp-aggregated slot reservation) and adds its degree and the largest degree to the level's
// counters. After the barrier every thread reads the counters and computes the same next step
// (level_control.cuh next_step); the kernel leaves when the next level is not small (its frontier has
// more than small_edges edges or a vertex of more than SMALL_MAX_DEGREE, Beamer's rule picks
// bottom-up, or the frontier is empty), with the frontier in queue 0 and the control block updated,
// for the bulk kernels that the host enqueued behind it.
//
// The level's counters rotate over COUNTER_SLOTS (three) slots, so one barrier per level suffices:
// during level k block 0 clears slot k+1, which every thread last read right after the barrier that
// ended level k-2.
//
// Tiny levels (a ladder's or a lattice tail's few vertices: frontier vertices x SMALL_GROUP plus
// frontier edges at most solo_work) run in block 0 alone, a block barrier between them instead of
// the grid barrier and the global counters, while the other blocks wait at the grid barrier that ends
// the run; block 0 hands the state on through a control-block image behind the counter slots (not the
// control block itself: a block that starts late still reads the launch's state there).
#include <cooperative_groups.h>
#include "level_control.cuh"

namespace cg = cooperative_groups;

__device__ __forceinline__ void swap_queues(i32*& a, i32*& b)
{
    i32* t = a;
    a = b;
    b = t;
}

// One top-down level from the nf vertices of cur: groups of SMALL_GROUP lanes take the frontier vertices
// (group `group` of `groups`, grid- or block-stride), the discoveries go to nxt at slots reserved from
// *count (warp-aggregated), and each warp adds its discoveries' degree sum and largest degree to
// *block_degrees and *block_max (shared). Trip counts are uniform over each warp (rounds over the
// groups, span over the warp's groups), so the full-warp ballot sees every lane.
__device__ __forceinline__ void expand_level(const offset_t* __restrict__ col_ptr, const i32* __restrict__ row_idx,
                                             const i32* __restrict__ degree, const i32* cur, i32* nxt,
                                             u32* __restrict__ visited, i32* __restrict__ level,
                                             i32* __restrict__ parent, i64 lvl, i64 nf, i64 group, i64 groups,
                                             i64* count, i64* block_degrees, i64* block_max)
{
    const int member = threadIdx.x % SMALL_GROUP;
    const int lane = threadIdx.x & 31;
    i64 degrees = 0, largest = 0;
    const i64 rounds = (nf + groups - 1) / groups;
    for (i64 r = 0; r < rounds; ++r) {
        const i64 w = group + r * groups;
        i32 u = 0;
        i64 begin = 0, end = 0;
        if (w < nf) {
            u = __ldcg(&cur[w]);
            begin = col_ptr[u];
            end = col_ptr[u + 1];
        }
        // Every lane of the warp iterates as often as the warp's heaviest group needs.
        const i64 span = warp_max((end - begin + SMALL_GROUP - 1) / SMALL_GROUP);
        for (i64 s = 0; s < span; ++s) {
            const i64 p = begin + s * SMALL_GROUP + member;
            bool claimed = false;
            i32 v = 0;
            if (p < end) {
                v = row_idx[p];
                const u32 bit = 1u << (v & 31);
                claimed = !(atomicOr(&visited[v >> 5], bit) & bit);
            }
            const unsigned votes = __ballot_sync(0xffffffffu, claimed);
            if (votes) {
                const int first = __ffs(votes) - 1;
                i64 at = 0;
                if (lane == first) at = (i64)atomicAdd((u64*)count, (u64)__popc(votes));
                at = __shfl_sync(0xffffffffu, at, first);
                if (claimed) {
                    nxt[at + __popc(votes & ((1u << lane) - 1))] = v;
                    level[v] = (i32)lvl;
                    parent[v] = u;
                    const i64 dv = degree[v];
                    degrees += dv;
                    largest = max(largest, dv);
                }
            }
        }
    }
    degrees = warp_sum(degrees);
    largest = warp_max(largest);
    if (lane == 0 && degrees) {
        atomicAdd((u64*)block_degrees, (u64)degrees);
        atomicMax(block_max, largest);
    }
}

extern "C" __global__ void __launch_bounds__(SMALL_THREADS, 1)
small_levels(const offset_t* __restrict__ col_ptr, const i32* __restrict__ row_idx, const i32* __restrict__ degree,
             i32* q0, i32* q1, i32* __restrict__ counts0, u32* __restrict__ visited, i32* __restrict__ level,
             i32* __restrict__ parent, i64* __restrict__ ctl, i64* slots, i64* __restrict__ log,
             i64 log_capacity, double alpha, double beta, i64 n, i64 small_edges, i64 solo_work)
{
    // Every block reads the same word, so either the whole grid runs or none of it.
    if (ctl[CTL_STEP] != STEP_SMALL) return;
    cg::grid_group grid = cg::this_grid();
    i64* handoff = slots + COUNTER_SLOTS * COUNTER_WORDS;
    Levels at;
    at.load(ctl);
    const bool leader = blockIdx.x == 0 && threadIdx.x == 0;
    const i64 group = ((i64)blockIdx.x * SMALL_THREADS + threadIdx.x) / SMALL_GROUP;
    __shared__ i64 block_count, block_degrees, block_max;
    i32* cur = q0;
    i32* nxt = q1;
    for (int k = 0; at.step == STEP_SMALL; ++k) {
        i64* fill = slots + COUNTER_WORDS * (k % COUNTER_SLOTS);
        if (leader) {
            i64* ahead = slots + COUNTER_WORDS * ((k + 1) % COUNTER_SLOTS);
            for (int w = 0; w < COUNTER_WORDS; ++w) ahead[w] = 0;
        }
        if (at.tiny(solo_work)) {
            const i64 lvl0 = at.lvl;
            if (blockIdx.x == 0) {
                i32* from = cur;
                i32* to = nxt;
                do {
                    if (threadIdx.x == 0) block_count = block_degrees = block_max = 0;
                    __syncthreads();
                    expand_level(col_ptr, row_idx, degree, from, to, visited, level, parent, at.lvl, at.nf,
                                 threadIdx.x / SMALL_GROUP, SMALL_THREADS / SMALL_GROUP, &block_count,
                                 &block_degrees, &block_max);
                    __syncthreads();
                    at.advance(block_count, block_degrees, block_max, leader, log, log_capacity, alpha, beta, n,
                               small_edges);
                    swap_queues(from, to);
                    __syncthreads();     // every thread has read the block's counters before they are reset
                } while (at.step == STEP_SMALL && at.tiny(solo_work));
                if (leader) at.store(handoff);
            }
            grid.sync();
            at.load(handoff);
            if ((at.lvl - lvl0) & 1) swap_queues(cur, nxt);     // the frontier is in the other queue
            continue;
        }
        if (threadIdx.x == 0) block_degrees = block_max = 0;
        __syncthreads();
        expand_level(col_ptr, row_idx, degree, cur, nxt, visited, level, parent, at.lvl, at.nf, group,
                     (i64)gridDim.x * (SMALL_THREADS / SMALL_GROUP), &fill[COUNTER_COUNT], &block_degrees,
                     &block_max);
        __syncthreads();
        if (threadIdx.x == 0 && block_degrees) {
            atomicAdd((u64*)&fill[COUNTER_DEGREES], (u64)block_degrees);
            atomicMax(&fill[COUNTER_MAX_DEGREE], block_max);
        }
        grid.sync();
        at.advance(__ldcg(&fill[COUNTER_COUNT]), __ldcg(&fill[COUNTER_DEGREES]), __ldcg(&fill[COUNTER_MAX_DEGREE]),
                   leader, log, log_capacity, alpha, beta, n, small_edges);
        swap_queues(cur, nxt);
    }
    // Leave the frontier in queue 0 (the bulk kernels' invariant).
    if (cur != q0)
        for (i64 t = (i64)blockIdx.x * SMALL_THREADS + threadIdx.x; t < at.nf; t += (i64)gridDim.x * SMALL_THREADS)
            q0[t] = cur[t];
    grid.sync();   // every block is past its last read of the counter slots
    if (leader) {
        for (int w = 0; w < COUNTER_SLOTS * COUNTER_WORDS; ++w) slots[w] = 0;
        counts0[0] = (i32)at.nf;
        at.store(ctl);
        ctl[CTL_FORM] = FORM_LIST;
    }
}
