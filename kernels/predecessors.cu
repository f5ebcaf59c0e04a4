// Delayed-predecessor resolution after a search (paper 004, section 3.5), one thread per owned vertex.
// Each rank of a grid line keeps its records of this rank's vertices (its discoverers' columns, or its
// column finds' rows); the line's k-th is read as a block held by position (positions.cuh): values[k]
// (int32) and, where words[k] is not 0, the Positions (words[k], starts[k]) of its members, else every
// member, offset o at values[k][o]. The rank's own record, a packed message from the other rank, or that
// rank's record read in place (NVSHMEM maps it here) alike; an entry < 0, or a member not held, is none.
//
// resolve_parents_*: the owner recorded the grid column c of the rank that discovered offset o; that
// rank's pred_row for the vertex (a local column of grid column c) becomes the global parent id. A
// vertex found bottom-up (c == BOTTOM_UP) was found by the ranks of the grid row whose entries are set
// (one with the rotation; where the segments are searched in place, two may find it at once, each a
// parent of the same level) and the first is taken, where the bottom-up levels record their finds in
// pred_row (rows_found; else they are the column finds', left to resolve_columns_*).
//
// resolve_columns_*: where the bottom-up levels searched the CSC's columns, a vertex marked BOTTOM_UP
// was found by the ranks of its grid column whose entries (a local row r of grid row p) are set (one, or
// more where the segments are searched in place, as above); the first found from grid row `first` on,
// PROBE_LINES rows side by side, gives the global id dbfs.grid.Grid.to_global_row(p, r).
//
// A kernel's suffix names its marks' type and its parents' (_i16_i64: int16 marks, int64 parents).
#include "positions.cuh"

// Lines probed side by side for a vertex's one set entry: their Positions' words and starts, then their
// values, each loaded together (one line after another would wait two trips to memory a line).
#define PROBE_LINES 4

struct HeldEntries {
    const u64* __restrict__ values;
    const u64* __restrict__ words;
    const u64* __restrict__ starts;

    __device__ __forceinline__ Positions positions(i32 k) const
    {
        return Positions{(const u32*)words[k], (const i32*)starts[k]};
    }

    __device__ __forceinline__ i32 at(i32 k, i64 o) const
    {
        const i64 p = positions(k).find(o);
        return p < 0 ? -1 : ((const i32*)values[k])[p];
    }

    // The entry for o of the first line from `first` on, cyclically over `lines`, whose entry is set (-1:
    // none); *line receives that line.
    __device__ __forceinline__ i32 first_set(i32 first, i32 lines, i64 o, i32* line) const
    {
        for (i32 done = 0; done < lines; done += PROBE_LINES) {
            i32 k[PROBE_LINES];
            Positions::Fetched fetched[PROBE_LINES];
#pragma unroll
            for (int g = 0; g < PROBE_LINES; ++g) {
                k[g] = (first + done + g) % lines;
                fetched[g] = done + g < lines ? positions(k[g]).fetch(o) : Positions::Fetched{0u, 0};
            }
            i32 entry[PROBE_LINES];
#pragma unroll
            for (int g = 0; g < PROBE_LINES; ++g) {
                const i64 p = done + g < lines ? positions(k[g]).find(o, fetched[g]) : -1;
                entry[g] = p < 0 ? -1 : ((const i32*)values[k[g]])[p];
            }
#pragma unroll
            for (int g = 0; g < PROBE_LINES; ++g)
                if (entry[g] >= 0) {
                    *line = k[g];
                    return entry[g];
                }
        }
        return -1;
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
        const i32 entry = c == BOTTOM_UP ? entries.first_set(0, C, o, &c) : entries.at(c, o);
        parent[o] = (Parent)(c * cols_per_rank + entry);
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, FULL_SM_BLOCKS)
resolve_parents_i16_i64(const i16* __restrict__ pred_col, const u64* __restrict__ values, i32 b,
                        const u64* __restrict__ words, const u64* __restrict__ starts, i32 C, i64 cols_per_rank,
                        i32 rows_found, i64* __restrict__ parent)
{
    resolve(pred_col, HeldEntries{values, words, starts}, b, C, cols_per_rank, rows_found, parent);
}

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, FULL_SM_BLOCKS)
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
        i32 p = first;
        const i32 r = entries.first_set(first, R, o, &p);
        parent[o] = r >= 0 ? (Parent)global_row(r, p, b, R) : (Parent)-1;
    }
}

// The marker is pred_col (int16), or on a grid of one column the int32 parent array itself (marker ==
// parent: each thread reads its entry first).
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, FULL_SM_BLOCKS)
resolve_columns_i16_i64(const i16* marker, const u64* __restrict__ values, i32 b, const u64* __restrict__ words,
                        const u64* __restrict__ starts, i32 R, i32 first, i64* parent)
{
    resolve_columns(marker, HeldEntries{values, words, starts}, b, R, first, parent);
}

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, FULL_SM_BLOCKS)
resolve_columns_i16_i32(const i16* marker, const u64* __restrict__ values, i32 b, const u64* __restrict__ words,
                        const u64* __restrict__ starts, i32 R, i32 first, i32* parent)
{
    resolve_columns(marker, HeldEntries{values, words, starts}, b, R, first, parent);
}

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, FULL_SM_BLOCKS)
resolve_columns_i32_i32(const i32* marker, const u64* __restrict__ values, i32 b, const u64* __restrict__ words,
                        const u64* __restrict__ starts, i32 R, i32 first, i32* parent)
{
    resolve_columns(marker, HeldEntries{values, words, starts}, b, R, first, parent);
}
