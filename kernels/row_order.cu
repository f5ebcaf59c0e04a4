// The order of a row's entries in the row-major copy of a block (dbfs.ops.row_order; bench/NOTES.md,
// 2026-11-28, the rows' hub entries first).
//
// longest_columns_first: in every row, the THREAD_EDGES entries whose columns are the longest in the
// block (ties: the earlier entry) are moved to the row's front, longest first, by a selection's swaps:
// for k = 0, 1, ..., the k-th chosen entry trades places with the entry at the row's position k. The
// bottom-up step's lanes test a row's first THREAD_EDGES entries alone (kernels/bottom_up.cu): a
// Kronecker graph's frontier holds the hubs first, so a row's hub neighbours find its parent at the
// first test where an arbitrary order sends the row on to the warp's search. A warp owns 32 rows: a
// lane orders a row of at most ORDER_SHORT entries alone; a longer row is scanned by the whole warp
// (each lane keeps its own best entries, then the warp's best are drawn from the lanes' in turn). A
// column's length is read through ColumnStarts (a hypersparse block's offsets may be held by the positions
// of its non-empty columns; on a 1x1 grid of an undirected graph the CSC is the row-major copy itself: the
// degree).
#include "positions.cuh"

#define ORDER_SHORT 32

// An entry as one comparable word: its column's length above, its position in the row (reversed, so
// that the earlier entry wins a tie) below. Every entry's column holds the entry, so a real candidate
// is never 0, the value of an empty slot.
__device__ __forceinline__ u64 candidate(const ColumnStarts& columns, i32 column, i64 position)
{
    const i64 length = columns.length(column);
    return ((u64)min(length, (i64)0xffffffffLL) << 32) | (u64)(0xffffffffu - (u32)position);
}

__device__ __forceinline__ i64 position_of(u64 chosen)
{
    return (i64)(0xffffffffu - (u32)chosen);
}

// best[] is kept in descending order.
__device__ __forceinline__ void keep(u64 (&best)[THREAD_EDGES], u64 c)
{
#pragma unroll
    for (int k = THREAD_EDGES - 1; k >= 0; --k)
        if (c > best[k]) best[k] = (k > 0 && c > best[k - 1]) ? best[k - 1] : c;
}

__device__ __forceinline__ void move_to_front(i32* __restrict__ col_idx, i64 begin, const u64 (&best)[THREAD_EDGES])
{
    i64 at[THREAD_EDGES];
#pragma unroll
    for (int k = 0; k < THREAD_EDGES; ++k) at[k] = best[k] ? position_of(best[k]) : -1;
#pragma unroll
    for (int k = 0; k < THREAD_EDGES; ++k) {
        if (at[k] < 0 || at[k] == k) continue;
        const i32 moved = col_idx[begin + k];
        col_idx[begin + k] = col_idx[begin + at[k]];
        col_idx[begin + at[k]] = moved;
#pragma unroll
        for (int j = k + 1; j < THREAD_EDGES; ++j)
            if (at[j] == k) at[j] = at[k];
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
longest_columns_first(const offset_t* __restrict__ row_ptr, i32* __restrict__ col_idx, i64 nrows,
                      const offset_t* __restrict__ col_ptr, const u32* __restrict__ words,
                      const i32* __restrict__ starts)
{
    const ColumnStarts columns{col_ptr, Positions{words, starts}};
    const i32 lane = threadIdx.x & 31;
    const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    for (i64 w = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; w * 32 < nrows; w += warps) {
        const i64 row = w * 32 + lane;
        i64 begin = 0, length = 0;
        if (row < nrows) {
            begin = row_ptr[row];
            length = row_ptr[row + 1] - begin;
        }
        if (length > 1 && length <= ORDER_SHORT) {
            u64 best[THREAD_EDGES] = {};
            for (i64 e = 0; e < length; ++e) keep(best, candidate(columns, col_idx[begin + e], e));
            move_to_front(col_idx, begin, best);
        }
        unsigned long_rows = __ballot_sync(0xffffffffu, length > ORDER_SHORT);
        while (long_rows) {
            const i32 src = __ffs(long_rows) - 1;
            long_rows &= long_rows - 1;
            const i64 from = __shfl_sync(0xffffffffu, begin, src);
            const i64 count = __shfl_sync(0xffffffffu, length, src);
            u64 mine[THREAD_EDGES] = {};
            for (i64 e = lane; e < count; e += 32) keep(mine, candidate(columns, col_idx[from + e], e));
            u64 best[THREAD_EDGES];
#pragma unroll
            for (int k = 0; k < THREAD_EDGES; ++k) {
                best[k] = warp_max(mine[0]);
                if (mine[0] == best[k]) {           // positions differ: one lane holds it
#pragma unroll
                    for (int j = 0; j + 1 < THREAD_EDGES; ++j) mine[j] = mine[j + 1];
                    mine[THREAD_EDGES - 1] = 0;
                }
            }
            if (lane == 0) move_to_front(col_idx, from, best);
            __syncwarp();
        }
    }
}
