// The column of a CSC entry or of a frontier edge: the largest k with cumul[k] <= id in a monotone
// array of column starts (a CSC's col_ptr, or the expansion's exclusive scan of frontier degrees,
// with cumul[n] = the total). Shared by the expansion (kernels/expand.cu) and the validator's entry
// pass (kernels/validate.cu), which both give each thread EPT consecutive ids.
#pragma once
#include "common.cuh"

// Largest k in [lo, hi] with cumul[k] <= edge (empty columns are skipped by "largest").
__device__ __forceinline__ i32 search_columns(const i64* __restrict__ cumul, i32 lo, i32 hi, i64 edge)
{
    while (lo < hi) {
        const i32 mid = lo + ((hi - lo + 1) >> 1);
        if (cumul[mid] <= edge) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

// The largest j <= span (span < 32) with start_j <= id, where lane j of the warp holds start_j (the
// column starts of a warp's candidate columns, ascending): a 5-step search over the registers.
// Warp-collective (every lane takes part in the shuffles, with its own id).
__device__ __forceinline__ i32 search_lanes(i64 start, i32 span, i64 id)
{
    i32 lo = 0, hi = span;
#pragma unroll
    for (int step = 0; step < 5; ++step) {
        const i32 mid = (lo + hi + 1) >> 1;
        const i64 mid_start = __shfl_sync(0xffffffffu, start, mid);
        if (mid_start <= id) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

// The column holding id `first` (paper 004 section 3.4.1's binary search), for threads that hold EPT
// consecutive ids each, lane by lane, the column known to lie in [lo_bound, hi_bound]: two lanes search
// that range for the warp's first and last id; when those lie at most 31 columns apart (the common
// case) every lane finishes with a search over the column starts held in the warp's registers
// (search_lanes). Wider spans fall back to a per-lane search bounded by the two columns.
// Warp-collective.
template <int EPT>
__device__ __forceinline__ i32 first_column(const i64* __restrict__ cumul, i32 lo_bound, i32 hi_bound, i64 total,
                                            i64 first)
{
    const int lane = threadIdx.x & 31;
    const i64 warp_first = first - (i64)lane * EPT;
    const i64 warp_last = min(warp_first + 32 * EPT, total) - 1;
    i32 bound = lo_bound;
    if (lane < 2 && warp_first < total)
        bound = search_columns(cumul, lo_bound, hi_bound, lane == 0 ? warp_first : warp_last);
    const i32 k_lo = __shfl_sync(0xffffffffu, bound, 0);
    const i32 k_hi = __shfl_sync(0xffffffffu, bound, 1);
    if (k_hi - k_lo >= 32) return first < total ? search_columns(cumul, k_lo, k_hi, first) : k_lo;
    const i64 start = k_lo + lane <= k_hi ? cumul[k_lo + lane] : 0x7fffffffffffffffLL;
    return k_lo + search_lanes(start, k_hi - k_lo, first);
}

// The columns of the EPT consecutive ids first, first + 1, ... of every lane (lane l's first id is the
// warp's first plus l * EPT), when the warp's ids are known to lie in the columns [k_lo, k_hi], k_lo
// the column of the warp's first id (warp-uniform bounds, e.g. from a table of the column of every
// 32 * EPT-th id). With at most 32 columns in range their starts are loaded once, one per lane; each
// non-empty column's lane writes its offset in the range into the slot (shared memory, one byte per
// id of the warp) where the column starts, and a running maximum over the slots -- within a lane's
// EPT slots, then across the lanes by shuffles -- gives every id its column: no search, no dependent
// load. Wider ranges fall back to a per-lane search and a walk over cumul. Ids >= total get some
// column in range. Warp-collective; slots: 32 * EPT bytes of the warp's own, 4-byte aligned.
template <int EPT>
__device__ __forceinline__ void columns_of(const i64* __restrict__ cumul, i32 k_lo, i32 k_hi, i64 total, i64 first,
                                           unsigned char* slots, i32 (&col)[EPT])
{
    static_assert(EPT == 4, "a lane's slots are one 32-bit word");
    const int lane = threadIdx.x & 31;
    const i32 span = k_hi - k_lo;
    if (span < 32) {
        const i64 warp_first = first - (i64)lane * EPT;
        const i64 start = lane <= span ? cumul[k_lo + lane] : 0x7fffffffffffffffLL;
        const i64 next = __shfl_down_sync(0xffffffffu, start, 1);
        reinterpret_cast<u32*>(slots)[lane] = 0;
        __syncwarp();
        const i64 at = start - warp_first;
        if (lane > 0 && lane <= span && at < 32 * EPT && (lane == span || next > start)) slots[at] = (unsigned char)lane;
        __syncwarp();
        const u32 word = reinterpret_cast<const u32*>(slots)[lane];
        __syncwarp();   // the slots are rewritten by the warp's next call
        i32 running = 0, within[EPT];
#pragma unroll
        for (int t = 0; t < EPT; ++t) {
            running = max(running, (i32)((word >> (8 * t)) & 0xffu));
            within[t] = running;
        }
        i32 scan = running;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const i32 earlier = __shfl_up_sync(0xffffffffu, scan, d);
            if (lane >= d) scan = max(scan, earlier);
        }
        i32 before = __shfl_up_sync(0xffffffffu, scan, 1);
        if (lane == 0) before = 0;
#pragma unroll
        for (int t = 0; t < EPT; ++t) col[t] = k_lo + max(before, within[t]);
        return;
    }
    i32 k = first < total ? search_columns(cumul, k_lo, k_hi, first) : k_lo;
    i64 column_end = first < total ? cumul[k + 1] : 0;
#pragma unroll
    for (int t = 0; t < EPT; ++t) {
        if (first + t < total)
            while (column_end <= first + t) column_end = cumul[++k + 1];   // cumul[ncols] == total bounds it
        col[t] = k;
    }
}
