// The grid loop's rounds driven by the device (dbfs/grid_rounds.py): a round is a switch node of a CUDA
// graph whose bodies are the grid's steps (a stretch of small top-down levels, a bulk top-down level, a
// bulk bottom-up level, each from either frontier queue and either form of the frontier); round_pick
// chooses the body from the control block, round_advance closes a bulk level by Beamer's rule on the
// level's global totals (level_control.cuh next_step, as the stretches do), and round_status copies what
// the host reads of the round into its pinned slot. One thread each: the decisions are a few words.
#include "level_control.cuh"
#include "message.cuh"

#if defined(__CUDACC_RTC__)                      // nvcc declares it in cuda_device_runtime_api.h
typedef unsigned long long cudaGraphConditionalHandle;
extern "C" __device__ __cudart_builtin__ void cudaGraphSetConditional(cudaGraphConditionalHandle handle,
                                                                      unsigned int value);
#endif

// The body of the round: bodies[(step * 2 + form) * 2 + parity] for the step in ctl (STEP_SMALL,
// STEP_TOPDOWN, STEP_BOTTOMUP), the frontier's form and the queue holding the own frontier list; `none`
// (no body: the switch runs nothing) once the search is done. The control block then says what the body
// leaves: the frontier's form (bits after a bottom-up level) and the queue (the other one after a bulk
// top-down level).
extern "C" __global__ void round_pick(i64* ctl, const i32* __restrict__ bodies, i32 none, u64 handle)
{
    const i64 step = ctl[CTL_STEP], form = ctl[CTL_FORM], parity = ctl[CTL_PARITY];
    i32 body = none;
    if (step != STEP_DONE) {
        body = bodies[(step * 2 + form) * 2 + parity];
        ctl[CTL_FORM] = step == STEP_BOTTOMUP ? FORM_BITS : FORM_LIST;
        ctl[CTL_PARITY] = parity ^ (step == STEP_TOPDOWN);
    }
    ctl[CTL_BRANCH] = body;
    cudaGraphSetConditional(handle, (unsigned int)body);
}

// After a bulk level whose global new frontier has totals[0] vertices of degree sum totals[1] (pinned
// host words, kernels/peer_levels.cu level_totals): the control block advanced to the next level and its
// step, a stretch's where the frontier has at most `capacity` vertices and `edge_limit` edges.
extern "C" __global__ void round_advance(i64* ctl, const i64* totals, i32 bottom_up, double alpha, double beta,
                                         i64 n, i64 capacity, i64 edge_limit)
{
    Levels levels;
    levels.load(ctl);
    const i64 nf_new = ((volatile const i64*)totals)[0], mf_new = ((volatile const i64*)totals)[1];
    levels.mu -= mf_new;
    levels.visited += nf_new;
    levels.step = next_step(bottom_up, nf_new, levels.nf, mf_new, 0, levels.mu, alpha, beta, n, edge_limit);
    if (nf_new > capacity && levels.step == STEP_SMALL) levels.step = STEP_TOPDOWN;
    levels.nf = nf_new;
    levels.mf = mf_new;
    ++levels.lvl;
    levels.store(ctl);
}

// The round's pinned slot: the control block, the level's counters and totals as level_totals handed
// them to the host (pinned words), the head of the own frontier's message (frontier_message; nullptr:
// none) and the heads of the C fold messages, `fold_stride` words apart (fold_messages; nullptr: none).
extern "C" __global__ void round_status(const i64* ctl, const i64* status, const i64* totals,
                                        const u32* frontier_message, const u32* fold_messages, i64 fold_stride,
                                        i32 C, i64* slot)
{
    for (int w = 0; w < CTL_WORDS; ++w) slot[w] = ctl[w];
    slot += CTL_WORDS;
    for (int w = 0; w < STAT_WORDS; ++w) slot[w] = ((volatile const i64*)status)[w];
    slot += STAT_WORDS;
    for (int w = 0; w < 2; ++w) slot[w] = ((volatile const i64*)totals)[w];
    slot += 2;
    for (int w = 0; w < HEAD_WORDS; ++w) slot[w] = frontier_message ? frontier_message[w] : 0;
    slot += HEAD_WORDS;
    for (i32 p = 0; p < C; ++p)
        for (int w = 0; w < HEAD_WORDS; ++w) slot[p * HEAD_WORDS + w] = fold_messages ? fold_messages[p * fold_stride + w] : 0;
}
