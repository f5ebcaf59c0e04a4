// Delayed-predecessor resolution after a search (paper 004, section 3.5), one thread per owned vertex.
// Each rank of a grid line keeps its records of this rank's vertices (its discoverers' columns, or its
// column finds' rows); the line's k-th is read as a block held by position (positions.cuh): values[k]
// (int32) and, where words[k] is not 0, the Positions (words[k], starts[k]) of its members, else every
// member, offset o at values[k][o]. The rank's own record, a packed message from the other rank, or that
// rank's record read in place (NVSHMEM maps it here) alike; an entry < 0, or a member not held, is none.
//
// resolve_parents_*: the owner recorded the grid column c of the rank that discovered offset o; that
// rank's pred_row for the vertex (a local column of grid column c) becomes the global parent id. A
// vertex found bottom-up (c == BOTTOM_UP) was found by exactly one rank of the grid row, the only column
// whose entry is set, where the bottom-up levels record their finds in pred_row (rows_found; else they
// are the column finds', left to resolve_columns_*).
//
// resolve_columns_*: where the bottom-up levels searched the CSC's columns, a vertex marked BOTTOM_UP
// was found by exactly one rank of its grid column, the only row p whose entry (a local row r of grid
// row p) is set; its global id is dbfs.grid.Grid.to_global_row(p, r). The entries are read from grid row
// `first` on until one is set.
//
// A kernel's suffix names its marks' type and its parents' (_i16_i64: int16 marks, int64 parents).
#include "positions.cuh"

struct HeldEntries {
    const u64* __restrict__ values;
    const u64* __restrict__ words;
    const u64* __restrict__ starts;
    __device__ __forceinline__ i32 at(i32 k, i64 o) const
    {
        const i64 p = Positions{(const u32*)words[k], (const i32*)starts[k]}.find(o);
        return p < 0 ? -1 : ((const i32*)values[k])[p];
    }
};

// Parents are int64, or int32 when every global id fits (dbfs.search_state parent_dtype). A vertex no
// rank discovered keeps its parent (-1 from the state reset, the root itself from its visit).
template <typename Parent>
__device__ __forceinline__ void resolve(const i16* __restrict__ pred_col, HeldEntries entries, i32 b, i32 C,
                                        i64 cols_per_rank, i32 rows_found, Parent* __restrict__ parent)
{
    for (i64 o = blockIdx.x * (i64)blockDim.x + threadIdx.x; o < b; o += (i64)gridDim.x * blockDim.x) {
        i32 c = pred_col[o];
        if (c == -1 || (c == BOTTOM_UP && !rows_found)) continue;
        if (c == BOTTOM_UP)
            for (c = 0; c < C - 1 && entries.at(c, o) < 0; ++c) {}
        parent[o] = (Parent)(c * cols_per_rank + entries.at(c, o));
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
resolve_parents_i16_i64(const i16* __restrict__ pred_col, const u64* __restrict__ values, i32 b,
                        const u64* __restrict__ words, const u64* __restrict__ starts, i32 C, i64 cols_per_rank,
                        i32 rows_found, i64* __restrict__ parent)
{
    resolve(pred_col, HeldEntries{values, words, starts}, b, C, cols_per_rank, rows_found, parent);
}

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
resolve_parents_i16_i32(const i16* __restrict__ pred_col, const u64* __restrict__ values, i32 b,
                        const u64* __restrict__ words, const u64* __restrict__ starts, i32 C, i64 cols_per_rank,
                        i32 rows_found, i32* __restrict__ parent)
{
    resolve(pred_col, HeldEntries{values, words, starts}, b, C, cols_per_rank, rows_found, parent);
}

// Global id of local row r of grid row p (dbfs.grid.Grid.to_global_row).
__device__ __forceinline__ i64 global_row(i64 r, i32 p, i32 b, i32 R)
{
    return ((r / b) * R + p) * (i64)b + r % b;
}

// Each marked offset's entries are read grid row `first` onwards, cyclically, until one is set.
template <typename Marker, typename Parent>
__device__ __forceinline__ void resolve_columns(const Marker* marker, HeldEntries entries, i32 b, i32 R, i32 first,
                                                Parent* parent)
{
    for (i64 o = blockIdx.x * (i64)blockDim.x + threadIdx.x; o < b; o += (i64)gridDim.x * blockDim.x) {
        if (marker[o] != BOTTOM_UP) continue;
        i64 r = -1;
        i32 p = first;
        for (i32 k = 0; k < R; ++k, p = (p + 1 == R ? 0 : p + 1)) {
            r = entries.at(p, o);
            if (r >= 0) break;
        }
        parent[o] = r >= 0 ? (Parent)global_row(r, p, b, R) : (Parent)-1;
    }
}

// The marker is pred_col (int16), or on a grid of one column the int32 parent array itself (marker ==
// parent: each thread reads its entry first).
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
resolve_columns_i16_i64(const i16* marker, const u64* __restrict__ values, i32 b, const u64* __restrict__ words,
                        const u64* __restrict__ starts, i32 R, i32 first, i64* parent)
{
    resolve_columns(marker, HeldEntries{values, words, starts}, b, R, first, parent);
}

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
resolve_columns_i16_i32(const i16* marker, const u64* __restrict__ values, i32 b, const u64* __restrict__ words,
                        const u64* __restrict__ starts, i32 R, i32 first, i32* parent)
{
    resolve_columns(marker, HeldEntries{values, words, starts}, b, R, first, parent);
}

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
resolve_columns_i32_i32(const i32* marker, const u64* __restrict__ values, i32 b, const u64* __restrict__ words,
                        const u64* __restrict__ starts, i32 R, i32 first, i32* parent)
{
    resolve_columns(marker, HeldEntries{values, words, starts}, b, R, first, parent);
}
