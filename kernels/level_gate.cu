// The device's decision whether a grid's next whole level runs in the launch that ran the level before
// it (dbfs.grid_loop, followers): a CUDA graph's IF node holds the next bottom-up level, and this
// kernel, run just before the node, opens it where Beamer's rule keeps the search bottom-up
// (level_control.cuh next_step, the rule the host applies between launches), so a run of bottom-up
// levels costs the host one turn instead of one a level.
#include "common.cuh"
#include "level_control.cuh"

// Declared here because NVRTC compiles without the device runtime's headers (the function is a builtin).
extern "C" __device__ __cudart_builtin__ void CUDARTAPI cudaGraphSetConditional(cudaGraphConditionalHandle handle,
                                                                                  unsigned int value);

// One thread. sums: the global size and degree sum of the frontier the level before found (pinned host
// memory, written by level_totals); ctl: STEP (BOTTOMUP while followers may run), LEVEL, FRONTIER (the
// level's input frontier) and UNVISITED_EDGES (before it). Opening advances them to the follower's
// level; closing sets STEP to TOPDOWN, so the later gates of the launch stay shut. *opened (pinned)
// says which it did.
extern "C" __global__ void follow_bottom_up(u64 handle, i64* __restrict__ ctl, const i64* __restrict__ sums,
                                            double beta, i64 n, i64* __restrict__ opened)
{
    const i64 nf_new = sums[0], mf_new = sums[1];
    const i64 mu_new = ctl[CTL_UNVISITED_EDGES] - mf_new;
    const bool open = ctl[CTL_STEP] == STEP_BOTTOMUP &&
                      next_step(true, nf_new, ctl[CTL_FRONTIER], mf_new, 0, mu_new, 0.0, beta, n, 0) == STEP_BOTTOMUP;
    if (open) {
        ctl[CTL_LEVEL] += 1;
        ctl[CTL_FRONTIER] = nf_new;
        ctl[CTL_UNVISITED_EDGES] = mu_new;
    } else {
        ctl[CTL_STEP] = STEP_TOPDOWN;
    }
    *opened = open;
    cudaGraphSetConditional((cudaGraphConditionalHandle)handle, open ? 1u : 0u);
}
