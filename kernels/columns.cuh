// The column of a CSC entry or of a frontier edge: the largest k with cumul[k] <= id in monotone
// column starts (the expansion's exclusive scan of frontier degrees, a raw pointer; a CSC's col_ptr,
// read through positions.cuh ColumnStarts where the block holds its offsets by position), with
// cumul[n] = the total. The helpers take the starts by value as any type with operator[] (a pointer
// compiles as before). Shared by the expansion (kernels/expand.cu) and the validator's entry pass
// (kernels/validate.cu), which both give each thread EPT consecutive ids, a warp 32 * EPT.
//
// Method: a column table -- the column of every COLUMN_CHUNK-th id, written in one pass over the
// columns (write_chunk_columns) -- bounds the columns of a warp's ids (warp_columns); the warp loads
// the starts of those columns, one per lane, and names every id's column from them without a search
// (columns_of). Paper 004 section 3.4.1 searches cumul per thread instead: ~log2(n) dependent loads
// that the expansion and the validator waited on.
#pragma once
#include "common.cuh"

// Largest k in [lo, hi] with cumul[k] <= edge (empty columns are skipped by "largest").
template <typename Starts>
__device__ __forceinline__ i32 search_columns(Starts cumul, i32 lo, i32 hi, i64 edge)
{
    while (lo < hi) {
        const i32 mid = lo + ((hi - lo + 1) >> 1);
        if (cumul[mid] <= edge) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

// table[q] := c for every chunk start q * COLUMN_CHUNK (q < nchunks) that column c holds (ids
// cumul[c] .. cumul[c + 1] - 1); `in_range` false: no column. A lane per column writes its starts; a
// column holding more than 32 is written by the whole warp. Warp-collective (call from a loop whose
// trip count is the same for the warp's lanes).
template <typename Starts>
__device__ __forceinline__ void write_chunk_columns(Starts cumul, i32 c, bool in_range, i64 nchunks,
                                                    i32* __restrict__ table)
{
    i64 q0 = 0, q1 = 0;
    if (in_range) {
        q0 = ((i64)cumul[c] + COLUMN_CHUNK - 1) / COLUMN_CHUNK;
        q1 = min(((i64)cumul[c + 1] + COLUMN_CHUNK - 1) / COLUMN_CHUNK, nchunks);
    }
    const bool heavy = q1 - q0 > 32;
    if (!heavy)
        for (i64 q = q0; q < q1; ++q) table[q] = c;
    for (u32 many = __ballot_sync(0xffffffffu, heavy); many; many &= many - 1) {
        const int owner = __ffs(many) - 1;
        const i64 first = __shfl_sync(0xffffffffu, q0, owner), end = __shfl_sync(0xffffffffu, q1, owner);
        const i32 column = __shfl_sync(0xffffffffu, c, owner);
        for (i64 q = first + (threadIdx.x & 31); q < end; q += 32) table[q] = column;
    }
}

// The column table of the n columns of cumul (cumul[0..n]) for its nchunks chunk starts, written by the
// calling grid, a lane per column (grid-stride; a warp's lanes take the same number of turns).
template <typename Starts>
__device__ __forceinline__ void write_column_table(Starts cumul, i64 n, i64 nchunks, i32* __restrict__ table)
{
    const i64 stride = (i64)gridDim.x * blockDim.x;
    for (i64 base = (i64)blockIdx.x * blockDim.x + (threadIdx.x & ~31); base < n; base += stride) {
        const i64 c = base + (threadIdx.x & 31);
        write_chunk_columns(cumul, (i32)min(c, n - 1), c < n, nchunks, table);
    }
}

// Bounds [*k_lo, *k_hi] on the columns of the warp's ids warp_first .. warp_first + 32 * EPT - 1
// (those below `total`) from the column table of `total` ids (ncols columns); a warp past the end
// gets the last column.
template <int EPT>
__device__ __forceinline__ void warp_columns(const i32* __restrict__ table, i64 total, i32 ncols, i64 warp_first,
                                             i32* k_lo, i32* k_hi)
{
    const i64 nchunks = (total + COLUMN_CHUNK - 1) / COLUMN_CHUNK;
    if (warp_first >= total) {
        *k_lo = *k_hi = ncols - 1;
        return;
    }
    const i64 last = min(warp_first + 32 * EPT, total) - 1;
    *k_lo = table[warp_first / COLUMN_CHUNK];
    // the next chunk's first id lies in the column of `last` or after it
    *k_hi = last / COLUMN_CHUNK + 1 < nchunks ? table[last / COLUMN_CHUNK + 1] : ncols - 1;
}

// Whether the warp's candidate columns [k_lo, k_hi] fit one per lane (columns_of's fast path).
__device__ __forceinline__ bool columns_in_lanes(i32 k_lo, i32 k_hi)
{
    return k_hi - k_lo < 32;
}

// The column col[t] and its start col_start[t] of each of the EPT consecutive ids first, first + 1, ...
// of every lane (lane l's first id is the warp's first plus l * EPT), the warp's ids lying in the
// columns [k_lo, k_hi] (warp-uniform bounds, warp_columns). With at most 32 columns in range, their
// starts are loaded once, one per lane; the lane of each non-empty column starting after the warp's
// first id writes its offset in the range into the byte slot (shared memory, one per id of the warp)
// where the column starts, and a running maximum over the slots -- within a lane's EPT slots, then
// across the lanes by shuffles, from the column holding the warp's first id -- names every id's
// column: no search, no dependent load. Wider ranges fall back to a per-lane search and a walk over
// cumul. Ids >= total get some column in range. Warp-collective; slots: the warp's 32 * EPT bytes.
template <int EPT, typename Starts>
__device__ __forceinline__ void columns_of(Starts cumul, i32 k_lo, i32 k_hi, i64 total, i64 first,
                                           unsigned char* slots, i32 (&col)[EPT], i64 (&col_start)[EPT])
{
    const int lane = threadIdx.x & 31;
    const i32 span = k_hi - k_lo;
    if (columns_in_lanes(k_lo, k_hi)) {
        const i64 warp_first = first - (i64)lane * EPT;
        const i64 start = lane <= span ? cumul[k_lo + lane] : 0x7fffffffffffffffLL;
        const i64 next = __shfl_down_sync(0xffffffffu, start, 1);
        const i32 base = 31 - __clz(__ballot_sync(0xffffffffu, start <= warp_first));   // the first id's column
#pragma unroll
        for (int t = 0; t < EPT; ++t) slots[lane * EPT + t] = 0;
        __syncwarp();
        const i64 at = start - warp_first;
        if (lane > base && lane <= span && at < 32 * EPT && (lane == span || next > start))
            slots[at] = (unsigned char)lane;
        __syncwarp();
        i32 running = base, within[EPT];
#pragma unroll
        for (int t = 0; t < EPT; ++t) {
            running = max(running, (i32)slots[lane * EPT + t]);
            within[t] = running;
        }
        __syncwarp();   // the slots are rewritten by the warp's next call
        i32 scan = running;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const i32 earlier = __shfl_up_sync(0xffffffffu, scan, d);
            if (lane >= d) scan = max(scan, earlier);
        }
        i32 before = __shfl_up_sync(0xffffffffu, scan, 1);
        if (lane == 0) before = base;
#pragma unroll
        for (int t = 0; t < EPT; ++t) {
            const i32 j = max(before, within[t]);
            col[t] = k_lo + j;
            col_start[t] = __shfl_sync(0xffffffffu, start, j);
        }
        return;
    }
    i32 k = first < total ? search_columns(cumul, k_lo, k_hi, first) : k_lo;
    i64 column_start = cumul[k], column_end = first < total ? cumul[k + 1] : 0;
#pragma unroll
    for (int t = 0; t < EPT; ++t) {
        if (first + t < total) {
            while (column_end <= first + t) {   // cumul[ncols] == total bounds it
                column_start = column_end;
                column_end = cumul[++k + 1];
            }
        }
        col[t] = k;
        col_start[t] = column_start;
    }
}
