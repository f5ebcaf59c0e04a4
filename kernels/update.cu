// Frontier update of one BFS level (paper 004, section 3.5): the owned vertices received in the fold.
//
// The fold's messages (kernels/message.cuh, list or bitmap; sources[m] is grid column m's, null for the
// own column) are read in place -- on a host-staged transport straight from mapped pinned memory. One
// thread per item of message m (blockIdx.y): the thread whose atomicOr flips the row's visited bit
// marks the vertex -- level, delayed predecessor = the sender's grid column m -- and appends its offset
// to the own group (own, filled to dst_cnt[j]), which is the next frontier (one global atomic per block:
// common.cuh block_reserve).
#include "message.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
update_from_messages(const u64* __restrict__ sources, i32 j, i32 b, u32* __restrict__ bitmap,
                     i32* __restrict__ level, i16* __restrict__ pred_col, i32 lvl, i32* __restrict__ own,
                     i32* __restrict__ dst_cnt, const i64* __restrict__ ctl)
{
    if (ctl != nullptr) lvl = (i32)ctl[CTL_LEVEL];     // a replayed graph: the level from the control block
    const i32 m = blockIdx.y;
    const u32* message = (const u32*)sources[m];
    if (message == nullptr) return;
    const i64 items = message_items(message, b);
    __shared__ i32 group_scratch[2];
    const i32 own_group[1] = {0};
    // Loop bounds uniform across the block: the slot reservation is block-collective.
    for (i64 first = (i64)blockIdx.x * blockDim.x; first < items; first += (i64)gridDim.x * blockDim.x) {
        const i64 t = first + threadIdx.x;
        const i32 o = t < items ? message_item(message, t) : -1;
        bool claimed[1] = {false};
        if (o >= 0) {
            const i32 row = j * b + o;
            const u32 bit = 1u << (row & 31);
            claimed[0] = !(bitmap[row >> 5] & bit) && !(atomicOr(&bitmap[row >> 5], bit) & bit);
        }
        i32 slot[1];
        block_reserve<1>(claimed, own_group, 1, &dst_cnt[j], group_scratch, slot);
        if (claimed[0]) {
            own[slot[0]] = o;
            level[o] = lvl;
            pred_col[o] = (i16)m;
        }
    }
}
