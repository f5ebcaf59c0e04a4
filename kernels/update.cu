// Frontier update of one BFS level (paper 004, section 3.5): the owned vertices received in the fold.
//
// One thread per received offset o (row j*b + o of the owner's local rows). The thread whose atomicOr
// flips the row's visited bit marks the vertex: level, delayed predecessor = the sender's grid column
// m (found by a binary search of the segment bounds, only by that thread), and appends o to group j of
// dst, which is the next frontier (one global atomic per block: common.cuh block_reserve).
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
update_frontier(const i32* __restrict__ recv, i32 n, const i32* __restrict__ seg, i32 C,
                u32* __restrict__ bitmap, i32* __restrict__ level, i32* __restrict__ pred_col, i32 lvl,
                i32 j, i32 b, i32* __restrict__ dst, i32* __restrict__ dst_cnt)
{
    const i32 t = blockIdx.x * blockDim.x + threadIdx.x;
    // No early return before the slot reservation: it is block-collective.
    bool claimed[1] = {false};
    i32 o = 0;
    if (t < n) {
        o = recv[t];
        const i32 row = j * b + o;
        const u32 bit = 1u << (row & 31);
        claimed[0] = !(bitmap[row >> 5] & bit) && !(atomicOr(&bitmap[row >> 5], bit) & bit);
    }
    __shared__ i32 group_scratch[2];
    const i32 own_group[1] = {0};
    i32 slot[1];
    block_reserve<1>(claimed, own_group, 1, &dst_cnt[j], group_scratch, slot);
    if (!claimed[0]) return;
    dst[(i64)j * b + slot[0]] = o;

    // Largest m with seg[m] <= t; seg[C] == n > t keeps it below C and skips empty segments.
    i32 lo = 0, hi = C - 1;
    while (lo < hi) {
        const i32 mid = lo + ((hi - lo + 1) >> 1);
        if (seg[mid] <= t) lo = mid;
        else hi = mid - 1;
    }
    level[o] = lvl;
    pred_col[o] = lo;
}
