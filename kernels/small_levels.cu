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
// The level's counters rotate over three slots, so one barrier per level suffices: during level k
// block 0 clears slot k+1, which every thread last read right after the barrier that ended level k-2.
#include <cooperative_groups.h>
#include "level_control.cuh"

namespace cg = cooperative_groups;

// Counter slot words: new vertices, their degree sum, their largest degree.
#define SLOT_COUNT 0
#define SLOT_DEGREES 1
#define SLOT_MAX_DEGREE 2
#define SLOT_WORDS 3

extern "C" __global__ void __launch_bounds__(SMALL_THREADS, 1)
small_levels(const i64* __restrict__ col_ptr, const i32* __restrict__ row_idx, const i32* __restrict__ degree,
             i32* q0, i32* q1, i32* __restrict__ counts0, u32* __restrict__ visited, i32* __restrict__ level,
             i32* __restrict__ parent, i64* __restrict__ ctl, i64* slots, i64* __restrict__ log,
             i64 log_capacity, double alpha, double beta, i64 n, i64 small_edges)
{
    // Every block reads the same word, so either the whole grid runs or none of it.
    if (ctl[CTL_STEP] != STEP_SMALL) return;
    cg::grid_group grid = cg::this_grid();
    i64 lvl = ctl[CTL_LEVEL], nf = ctl[CTL_FRONTIER], mf = ctl[CTL_FRONTIER_EDGES];
    i64 mu = ctl[CTL_UNVISITED_EDGES], visited_count = ctl[CTL_VISITED], logged = ctl[CTL_LOGGED];
    const bool leader = blockIdx.x == 0 && threadIdx.x == 0;
    const i64 groups = (i64)gridDim.x * (SMALL_THREADS / SMALL_GROUP);
    const i64 group = ((i64)blockIdx.x * SMALL_THREADS + threadIdx.x) / SMALL_GROUP;
    const int member = threadIdx.x % SMALL_GROUP;
    const int lane = threadIdx.x & 31;
    __shared__ i64 block_degrees, block_max;
    i32* cur = q0;
    i32* nxt = q1;
    i64 step = STEP_SMALL;
    for (int k = 0; step == STEP_SMALL; ++k) {
        i64* fill = slots + SLOT_WORDS * (k % 3);
        if (leader) {
            i64* ahead = slots + SLOT_WORDS * ((k + 1) % 3);
            for (int w = 0; w < SLOT_WORDS; ++w) ahead[w] = 0;
        }
        if (threadIdx.x == 0) block_degrees = block_max = 0;
        __syncthreads();
        i64 degrees = 0, largest = 0;
        // Trip counts are uniform over each warp (rounds over the grid, span over the warp's groups),
        // so the full-warp ballot below sees every lane.
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
            i64 span = (end - begin + SMALL_GROUP - 1) / SMALL_GROUP;
            for (int d = 16; d; d >>= 1) span = max(span, (i64)__shfl_xor_sync(0xffffffffu, span, d));
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
                    if (lane == first) at = (i64)atomicAdd((u64*)&fill[SLOT_COUNT], (u64)__popc(votes));
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
            atomicAdd((u64*)&block_degrees, (u64)degrees);
            atomicMax(&block_max, largest);
        }
        __syncthreads();
        if (threadIdx.x == 0 && block_degrees) {
            atomicAdd((u64*)&fill[SLOT_DEGREES], (u64)block_degrees);
            atomicMax(&fill[SLOT_MAX_DEGREE], block_max);
        }
        grid.sync();
        const i64 nf_new = __ldcg(&fill[SLOT_COUNT]);
        const i64 mf_new = __ldcg(&fill[SLOT_DEGREES]);
        const i64 max_new = __ldcg(&fill[SLOT_MAX_DEGREE]);
        mu -= mf_new;
        visited_count += nf_new;
        if (leader) log_level(log, log_capacity, logged, lvl - 1, false, nf, mf);
        ++logged;
        step = next_step(false, nf_new, nf, mf_new, max_new, mu, alpha, beta, n, small_edges);
        nf = nf_new;
        mf = mf_new;
        ++lvl;
        i32* t = cur;
        cur = nxt;
        nxt = t;
    }
    // Leave the frontier in queue 0 (the bulk kernels' invariant).
    if (cur != q0)
        for (i64 t = (i64)blockIdx.x * SMALL_THREADS + threadIdx.x; t < nf; t += (i64)gridDim.x * SMALL_THREADS)
            q0[t] = cur[t];
    grid.sync();   // every block is past its last read of the counter slots
    if (leader) {
        for (int w = 0; w < 3 * SLOT_WORDS; ++w) slots[w] = 0;
        counts0[0] = (i32)nf;
        ctl[CTL_STEP] = step;
        ctl[CTL_LEVEL] = lvl;
        ctl[CTL_FRONTIER] = nf;
        ctl[CTL_FRONTIER_EDGES] = mf;
        ctl[CTL_UNVISITED_EDGES] = mu;
        ctl[CTL_VISITED] = visited_count;
        ctl[CTL_FORM] = FORM_LIST;
        ctl[CTL_LOGGED] = logged;
    }
}
