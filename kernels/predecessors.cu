// Delayed-predecessor resolution after a search (paper 004, section 3.5), one thread per owned vertex:
// the owner recorded the grid column c of the rank that discovered offset o; that rank's pred_row for
// the vertex (a local column of grid column c) becomes the global parent id. A vertex found bottom-up
// (c == BOTTOM_UP) was found by exactly one rank of the grid row, the only column whose entry is set.
// resolve_parents_* reads the entries gathered (gathered[c*b + o]); resolve_rows_mapped_* reads each in
// place at its discoverer (peers[c]: grid column c's pred_row, mapped here by NVSHMEM; the entry at local
// row line*b + o, `line` this rank's grid column).
//
// resolve_columns_*: where the bottom-up levels searched the CSC's columns, a vertex marked BOTTOM_UP
// was found by exactly one rank of its grid column, the only row p whose entry (a local row r of grid
// row p) is set; its global id is dbfs.grid.Grid.to_global_row(p, r). Each grid row's entries are a
// block held by position: the finder's record itself, read in place where NVSHMEM maps it, or its
// packed message; they are read from grid row `first` on until one is set.
#include "positions.cuh"

// Member c of the grid line's entry for owned offset o (grid column c's discoverer, or grid row c's column
// find): gathered, or read where that rank keeps it.
struct GatheredEntries {
    const i32* __restrict__ gathered;
    i32 b;
    __device__ __forceinline__ i32 at(i32 c, i64 o) const { return gathered[(i64)c * b + o]; }
};

struct MappedEntries {
    const u64* __restrict__ peers;
    i32 b, line;
    __device__ __forceinline__ i32 at(i32 c, i64 o) const { return ((const i32*)peers[c])[(i64)line * b + o]; }
};

// Parents are int64, or int32 when every global id fits (dbfs.search_state parent_dtype). A vertex no
// rank discovered keeps its parent (-1 from the state reset, the root itself from its visit).
template <typename Parent, typename Entries>
__device__ __forceinline__ void resolve(const i32* __restrict__ pred_col, Entries entries, i32 b, i32 C,
                                        i64 cols_per_rank, Parent* __restrict__ parent)
{
    for (i64 o = blockIdx.x * (i64)blockDim.x + threadIdx.x; o < b; o += (i64)gridDim.x * blockDim.x) {
        i32 c = pred_col[o];
        if (c == -1) continue;
        if (c == BOTTOM_UP)
            for (c = 0; c < C - 1 && entries.at(c, o) < 0; ++c) {}
        parent[o] = (Parent)(c * cols_per_rank + entries.at(c, o));
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
resolve_parents_i64(const i32* __restrict__ pred_col, const i32* __restrict__ gathered, i32 b, i32 C,
                    i64 cols_per_rank, i64* __restrict__ parent)
{
    resolve(pred_col, GatheredEntries{gathered, b}, b, C, cols_per_rank, parent);
}

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
resolve_parents_i32(const i32* __restrict__ pred_col, const i32* __restrict__ gathered, i32 b, i32 C,
                    i64 cols_per_rank, i32* __restrict__ parent)
{
    resolve(pred_col, GatheredEntries{gathered, b}, b, C, cols_per_rank, parent);
}

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
resolve_rows_mapped_i64(const i32* __restrict__ pred_col, const u64* __restrict__ peers, i32 b, i32 C,
                        i32 line, i64 cols_per_rank, i64* __restrict__ parent)
{
    resolve(pred_col, MappedEntries{peers, b, line}, b, C, cols_per_rank, parent);
}

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
resolve_rows_mapped_i32(const i32* __restrict__ pred_col, const u64* __restrict__ peers, i32 b, i32 C,
                        i32 line, i64 cols_per_rank, i32* __restrict__ parent)
{
    resolve(pred_col, MappedEntries{peers, b, line}, b, C, cols_per_rank, parent);
}

// Global id of local row r of grid row p (dbfs.grid.Grid.to_global_row).
__device__ __forceinline__ i64 global_row(i64 r, i32 p, i32 b, i32 R)
{
    return ((r / b) * R + p) * (i64)b + r % b;
}

// Grid row p's column finds for this rank's block, a block held by position (positions.cuh): values[p]
// (int32) and, where words[p] is not 0, the Positions (words[p], starts[p]) of its members; where it is 0
// every member, offset o at values[p][o]. The finder's own record, a packed message from it, or its record
// read in place (NVSHMEM maps it here) alike.
struct HeldEntries {
    const u64* __restrict__ values;
    const u64* __restrict__ words;
    const u64* __restrict__ starts;
    __device__ __forceinline__ i32 at(i32 p, i64 o) const
    {
        const Positions held{(const u32*)words[p], (const i32*)starts[p]};
        return held.has(o) ? ((const i32*)values[p])[held.of(o)] : -1;
    }
};

// Each marked offset's entries are read grid row `first` onwards, cyclically, until one is set.
template <typename Parent>
__device__ __forceinline__ void resolve_columns(const i32* marker, HeldEntries entries, i32 b, i32 R, i32 first,
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

// marker may be parent itself (int32 parents on a grid of one column): each thread reads its entry first.
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
resolve_columns_i64(const i32* marker, const u64* __restrict__ values, i32 b, const u64* __restrict__ words,
                    const u64* __restrict__ starts, i32 R, i32 first, i64* parent)
{
    resolve_columns(marker, HeldEntries{values, words, starts}, b, R, first, parent);
}

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
resolve_columns_i32(const i32* marker, const u64* __restrict__ values, i32 b, const u64* __restrict__ words,
                    const u64* __restrict__ starts, i32 R, i32 first, i32* parent)
{
    resolve_columns(marker, HeldEntries{values, words, starts}, b, R, first, parent);
}
