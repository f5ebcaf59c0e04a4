// BFS result validation: the checks of one search's parent and level arrays against one rank's CSC
// block (Graph500 spec v3 "Validation"; graph500/validate.py holds the method, the rule order and the
// proof that these checks are complete; dbfs/ops/validate.py the launch contract and the NumPy twin).
//
// check_vertices_<P>: per owned vertex, the rules that need only the vertex itself (parent range,
// root, self-parent, level/visited agreement), the count of vertices with a parent and a level and the
// deepest level. compact_levels_<L>_<P>: the level array in the narrowest type L that holds the
// deepest level, all ones for a vertex without a parent or a level, so that the random reads of the
// entry pass hit a small array. check_entries_<L>_<P>: one pass over the CSC entries u -> v in equal
// chunks of consecutive entries (hubs and runs of empty columns cost no more than other entries), each
// chunk's first column from a table made in one pass over the columns (chunk_columns), each entry's
// column by the warp's search between two such columns (columns.cuh). Per entry: the span and
// edge-level rules, the TEPS counts, and the parent-edge test: the entry that joins a vertex to its
// parent marks the vertex and checks the two levels (parent-level, parent-unreached, cycle).
// check_parent_edges_<P>: per owned vertex, its mark (parent-not-neighbour).
//
// Every rule keeps its lowest offender (a global vertex id) in one u64 slot by atomicMin, after a
// warp-level minimum and a read of the slot (a violation is rare, so the valid case issues no atomic);
// counts go up by one atomic per block.
#include "columns.cuh"

#define NO_VERTEX 0xffffffffffffffffULL
#define FULL_MASK 0xffffffffu

__device__ __forceinline__ u64 warp_min(u64 x)
{
#pragma unroll
    for (int d = 16; d; d >>= 1) x = min(x, (u64)__shfl_xor_sync(FULL_MASK, x, d));
    return x;
}

__device__ __forceinline__ u64 warp_max(u64 x)
{
#pragma unroll
    for (int d = 16; d; d >>= 1) x = max(x, (u64)__shfl_xor_sync(FULL_MASK, x, d));
    return x;
}

__device__ __forceinline__ u64 warp_sum(u64 x)
{
#pragma unroll
    for (int d = 16; d; d >>= 1) x += __shfl_xor_sync(FULL_MASK, x, d);
    return x;
}

// Lowest offender: lanes with `bad` set offer `key`; one lane lowers the slot. Warp-collective.
__device__ __forceinline__ void report(bool bad, u64 key, u64* slot)
{
    if (!__any_sync(FULL_MASK, bad)) return;
    const u64 lowest = warp_min(bad ? key : NO_VERTEX);
    if ((threadIdx.x & 31) == 0 && lowest < __ldcg(slot)) atomicMin(slot, lowest);
}

// Adds the block's `value`s to stats[slot]: one atomic per block. Block-collective, BLOCK_THREADS.
__device__ __forceinline__ void block_add(u64 value, u64* slot)
{
    __shared__ u64 partial[BLOCK_THREADS / 32];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    value = warp_sum(value);
    if (lane == 0) partial[warp] = value;
    __syncthreads();
    if (warp == 0) {
        value = lane < BLOCK_THREADS / 32 ? partial[lane] : 0;
        value = warp_sum(value);
        if (lane == 0 && value) atomicAdd(slot, value);
    }
    __syncthreads();
}

// ---------------------------------------------------------------------------------------------------
// Per owned vertex. Offset o of the block is global vertex first_id + o; offsets >= n_real are padding.

template <typename P>
__device__ __forceinline__ void vertex_rules(const P* __restrict__ parent, const i32* __restrict__ level,
                                             i32 b, i32 n_real, i64 first_id, i64 n_vertices, i64 root,
                                             u64* __restrict__ stats)
{
    u64 visited = 0, deepest = 0;
    // block-uniform trip count: the warp-collective reports see every lane
    for (i64 start = (i64)blockIdx.x * blockDim.x; start < b; start += (i64)gridDim.x * blockDim.x) {
        const i64 o = start + threadIdx.x;
        const bool in = o < b;
        const i64 p = in ? (i64)parent[o] : -1;
        const i32 lv = in ? level[o] : -1;
        const i64 v = first_id + o;
        const bool real = in && o < n_real;
        const bool has_parent = p != -1;
        report(in && has_parent && (!real || p < 0 || p >= n_vertices), v, &stats[SLOT_PARENT_RANGE]);
        report(real && v == root && (p != root || lv != 0), v, &stats[SLOT_ROOT]);
        report(real && v != root && p == v, v, &stats[SLOT_SELF_PARENT]);
        report(in && (has_parent ? lv < 0 : lv != -1), v, &stats[SLOT_LEVEL]);
        if (has_parent && lv >= 0) {
            visited += real;
            deepest = max(deepest, (u64)lv + 1);
        }
    }
    block_add(visited, &stats[SLOT_VISITED]);
    deepest = warp_max(deepest);
    if ((threadIdx.x & 31) == 0 && deepest > __ldcg(&stats[SLOT_DEEPEST])) atomicMax(&stats[SLOT_DEEPEST], deepest);
}

template <typename P>
__device__ __forceinline__ void parent_edge_rule(const P* __restrict__ parent, const u32* __restrict__ marks,
                                                 i32 b, i32 n_real, i64 first_id, i64 root,
                                                 u64* __restrict__ stats)
{
    for (i64 start = (i64)blockIdx.x * blockDim.x; start < b; start += (i64)gridDim.x * blockDim.x) {
        const i64 o = start + threadIdx.x;
        const bool real = o < n_real;
        const i64 v = first_id + o;
        const bool unmarked = real && !((marks[o >> 5] >> (o & 31)) & 1u);
        report(unmarked && (i64)parent[o] != -1 && v != root, v, &stats[SLOT_PARENT_NOT_NEIGHBOUR]);
    }
}

// The compact level: all ones (the type's -1) for a vertex without a parent or without a level.
template <typename L, typename P>
__device__ __forceinline__ void compact(const P* __restrict__ parent, const i32* __restrict__ level, i32 b,
                                        L* __restrict__ out)
{
    for (i64 o = (i64)blockIdx.x * blockDim.x + threadIdx.x; o < b; o += (i64)gridDim.x * blockDim.x) {
        const i32 lv = level[o];
        out[o] = (i64)parent[o] != -1 && lv >= 0 ? (L)lv : (L)(-1);
    }
}

template <typename L>
__device__ __forceinline__ i32 level_of(L x)
{
    return x == (L)(-1) ? -1 : (i32)x;
}

// ---------------------------------------------------------------------------------------------------
// The entry pass.

// Local row of global vertex p on this grid row, or -1. Global block k holds the ids [k*b, (k+1)*b)
// (dbfs.grid); block_rows[k] is the local row of its first id here, -1 when another grid row owns it.
__device__ __forceinline__ i32 local_row_of(i64 p, i32 b, i32 nblocks, const i32* __restrict__ block_rows)
{
    if (p < 0) return -1;
    const i64 k = p / b;
    if (k >= nblocks || block_rows[k] < 0) return -1;
    return block_rows[k] + (i32)(p - k * b);
}

// Global id of local row r: row_starts[m] is the global id of the first row of local block m.
__device__ __forceinline__ i64 global_row(i32 r, i32 b, const i64* __restrict__ row_starts)
{
    const i32 m = r / b;
    return row_starts[m] + (r - m * b);
}

// chunk_columns: chunk_column[q] := the column of entry q * chunk_entries, for every chunk q < nchunks
// of the entry pass (a thread per column writes the chunks that start inside it; a chunk starts in
// exactly one non-empty column). With it a chunk's columns are known without searching all of col_ptr:
// that search, ~log2(ncols) dependent loads per chunk, was what the entry pass waited on.
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
chunk_columns(const i64* __restrict__ col_ptr, i32 ncols, i64 chunk_entries, i64 nchunks, i32* __restrict__ chunk_column)
{
    for (i64 c = blockIdx.x * (i64)blockDim.x + threadIdx.x; c < ncols; c += (i64)gridDim.x * blockDim.x) {
        const i64 end = col_ptr[c + 1];
        for (i64 q = (col_ptr[c] + chunk_entries - 1) / chunk_entries; q < nchunks && q * chunk_entries < end; ++q)
            chunk_column[q] = (i32)c;
    }
}

// Entries in chunks of BLOCK_THREADS * EPT taken by the blocks in stride; a thread holds EPT consecutive
// entries and finds the column of its first one with the warp's search (columns.cuh first_column)
// between the chunk's first column and the next chunk's (chunk_columns; empty columns are skipped),
// then walks forward. Each column's level and (undirected) its parent's local row are read per entry:
// consecutive entries mostly share a column, so those reads hit the same lines.
template <int EPT, typename L, typename P>
__device__ __forceinline__ void entry_rules(
    const i64* __restrict__ col_ptr, const i32* __restrict__ row_idx, i32 ncols, i64 nnz,
    const L* __restrict__ col_level, const L* __restrict__ row_level, const P* __restrict__ col_parent,
    const P* __restrict__ row_parent, i32 directed, i64 col_base, const i64* __restrict__ row_starts,
    const i32* __restrict__ block_rows, i32 nblocks, i32 b, u32* __restrict__ marks,
    u64* __restrict__ stats, i32 detail_slot, u64 detail_vertex, const i32* __restrict__ chunk_column)
{
    u64 counted = 0, leaving = 0;
    const i64 chunk = (i64)BLOCK_THREADS * EPT;
    const i64 nchunks = (nnz + chunk - 1) / chunk;
    for (i64 q = blockIdx.x; q < nchunks; q += gridDim.x) {
        const i64 first = q * chunk + (i64)threadIdx.x * EPT;
        // the chunk's last entry lies at or before the next chunk's first column
        const i32 last_column = q + 1 < nchunks ? chunk_column[q + 1] : ncols - 1;
        i32 k = first_column<EPT>(col_ptr, chunk_column[q], last_column, nnz, first);
        i64 column_end = first < nnz ? col_ptr[k + 1] : 0;
        i64 e[EPT];
        i32 col[EPT], lc[EPT], expect[EPT];
#pragma unroll
        for (int t = 0; t < EPT; ++t) {
            e[t] = first + t;
            if (e[t] < nnz)
                while (column_end <= e[t]) column_end = col_ptr[++k + 1];   // col_ptr[ncols] == nnz bounds it
            col[t] = k;
            lc[t] = e[t] < nnz ? level_of(col_level[k]) : -1;
            expect[t] = !directed && lc[t] >= 0 ? local_row_of((i64)col_parent[k], b, nblocks, block_rows) : -1;
        }
        const i64 e_end = nnz;

        // a lane reads an entry when it is a real one and, undirected, its column has a level
        bool read[EPT];
        i32 r[EPT], lr[EPT];
#pragma unroll
        for (int t = 0; t < EPT; ++t) {
            read[t] = e[t] < e_end && (directed || lc[t] >= 0);
            r[t] = read[t] ? row_idx[e[t]] : 0;
        }
#pragma unroll
        for (int t = 0; t < EPT; ++t) lr[t] = read[t] ? level_of(row_level[r[t]]) : -1;
        bool tree[EPT];
#pragma unroll
        for (int t = 0; t < EPT; ++t) {
            if (directed) tree[t] = read[t] && lr[t] >= 0 && (i64)row_parent[r[t]] == col_base + col[t];
            else tree[t] = read[t] && r[t] == expect[t];
        }

#pragma unroll
        for (int t = 0; t < EPT; ++t) {
            bool span = false, steep = false, unreached = false, deep = false, climbs = false;
            if (read[t] && lc[t] >= 0) {
                ++counted;
                span = lr[t] < 0;
                leaving += span;
                const i64 rise = (i64)lr[t] - lc[t];
                steep = lr[t] >= 0 && (rise > 1 || (!directed && rise < -1));
            }
            if (tree[t]) {
                // the entry joins a vertex (the child) to its parent
                const i32 marked = directed ? r[t] : col[t];
                atomicOr(&marks[marked >> 5], 1u << (marked & 31));
                const i32 child = directed ? lr[t] : lc[t], up = directed ? lc[t] : lr[t];
                unreached = up < 0;
                deep = up >= 0 && up < child - 1;
                climbs = up >= child;
            }
            if (!__any_sync(FULL_MASK, span || steep || unreached || deep || climbs)) continue;
            // offenders: span and steep entries name their row vertex, tree entries their child
            const u64 col_id = (u64)(col_base + col[t]);
            const u64 row_id = read[t] ? (u64)global_row(r[t], b, row_starts) : 0;
            const u64 child_id = directed ? row_id : col_id;
            report(deep, child_id, &stats[SLOT_LEVEL]);
            report(unreached, child_id, &stats[SLOT_PARENT_UNREACHED]);
            report(climbs, child_id, &stats[SLOT_CYCLE]);
            report(span, row_id, &stats[SLOT_SPAN]);
            report(steep, row_id, &stats[SLOT_EDGE_LEVEL]);
            if (detail_slot >= 0) {
                // the lowest other end of the detail vertex's offending entries
                const bool by_row = directed || detail_slot == SLOT_SPAN || detail_slot == SLOT_EDGE_LEVEL;
                const bool hit = (detail_slot == SLOT_LEVEL && deep) ||
                                 (detail_slot == SLOT_PARENT_UNREACHED && unreached) ||
                                 (detail_slot == SLOT_CYCLE && climbs) ||
                                 (detail_slot == SLOT_SPAN && span) || (detail_slot == SLOT_EDGE_LEVEL && steep);
                if (hit && (by_row ? row_id : col_id) == detail_vertex)
                    atomicMin(&stats[SLOT_WITNESS], by_row ? col_id : row_id);
            }
        }
    }
    block_add(counted, &stats[SLOT_VISITED_ENTRIES]);
    block_add(leaving, &stats[SLOT_SPAN_ENTRIES]);
}

// ---------------------------------------------------------------------------------------------------
// Instantiations: parent P int32 or int64 (global ids), compact level L uint8, uint16 or int32.

#define VERTEX_KERNELS(PN, PT)                                                                           \
    extern "C" __global__ void __launch_bounds__(BLOCK_THREADS) check_vertices_##PN(                  \
        const PT* __restrict__ parent, const i32* __restrict__ level, i32 b, i32 n_real, i64 first_id,    \
        i64 n_vertices, i64 root, u64* __restrict__ stats)                                               \
    {                                                                                                    \
        vertex_rules<PT>(parent, level, b, n_real, first_id, n_vertices, root, stats);                   \
    }                                                                                                    \
    extern "C" __global__ void __launch_bounds__(BLOCK_THREADS) check_parent_edges_##PN(              \
        const PT* __restrict__ parent, const u32* __restrict__ marks, i32 b, i32 n_real, i64 first_id,    \
        i64 root, u64* __restrict__ stats)                                                               \
    {                                                                                                    \
        parent_edge_rule<PT>(parent, marks, b, n_real, first_id, root, stats);                           \
    }

#define ENTRY_KERNEL(LN, LT, PN, PT, EPT)                                                                \
    extern "C" __global__ void __launch_bounds__(BLOCK_THREADS) check_entries_##LN##_##PN##_e##EPT(   \
        const i64* __restrict__ col_ptr, const i32* __restrict__ row_idx, i32 ncols, i64 nnz,             \
        const LT* __restrict__ col_level, const LT* __restrict__ row_level,                              \
        const PT* __restrict__ col_parent, const PT* __restrict__ row_parent, i32 directed, i64 col_base,  \
        const i64* __restrict__ row_starts, const i32* __restrict__ block_rows, i32 nblocks, i32 b,       \
        u32* __restrict__ marks, u64* __restrict__ stats, i32 detail_slot, u64 detail_vertex,             \
        const i32* __restrict__ chunk_column)                                                            \
    {                                                                                                    \
        entry_rules<EPT, LT, PT>(col_ptr, row_idx, ncols, nnz, col_level, row_level, col_parent,          \
                                 row_parent, directed, col_base, row_starts, block_rows, nblocks, b,      \
                                 marks, stats, detail_slot, detail_vertex, chunk_column);                \
    }

#define LEVEL_KERNELS(LN, LT, PN, PT)                                                                    \
    extern "C" __global__ void __launch_bounds__(BLOCK_THREADS) compact_levels_##LN##_##PN(           \
        const PT* __restrict__ parent, const i32* __restrict__ level, i32 b, LT* __restrict__ out)       \
    {                                                                                                    \
        compact<LT, PT>(parent, level, b, out);                                                          \
    }                                                                                                    \
    ENTRY_KERNEL(LN, LT, PN, PT, 4)

VERTEX_KERNELS(i32, i32)
VERTEX_KERNELS(i64, i64)
LEVEL_KERNELS(u8, unsigned char, i32, i32)
LEVEL_KERNELS(u8, unsigned char, i64, i64)
LEVEL_KERNELS(u16, unsigned short, i32, i32)
LEVEL_KERNELS(u16, unsigned short, i64, i64)
LEVEL_KERNELS(i32, i32, i32, i32)
LEVEL_KERNELS(i32, i32, i64, i64)
