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

// The column holding id `first` (paper 004 section 3.4.1's binary search), for threads that hold EPT
// consecutive ids each, lane by lane, the column known to lie in [lo_bound, hi_bound]: two lanes search
// that range for the warp's first and last id; when those lie at most 31 columns apart (the common
// case) every lane finishes with a 5-step search over the column starts held in the warp's registers.
// Wider spans fall back to a per-lane search bounded by the two columns. Warp-collective.
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
    i32 lo = 0, hi = k_hi - k_lo;
#pragma unroll
    for (int step = 0; step < 5; ++step) {
        const i32 mid = (lo + hi + 1) >> 1;
        const i64 mid_start = __shfl_sync(0xffffffffu, start, mid);
        if (mid_start <= first) lo = mid;
        else hi = mid - 1;
    }
    return k_lo + lo;
}
