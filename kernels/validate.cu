// BFS result validation: the checks of one search's parent and level arrays against one rank's CSC
// block (Graph500 spec v3 "Validation"; graph500/validate.py holds the method, the rule order and the
// proof that these checks are complete; dbfs/ops/validate.py the launch contract and the NumPy twin).
//
// check_vertices_<P>: per owned vertex, the rules that need only the vertex itself (parent range,
// root, self-parent, level/visited agreement), the count of vertices with a parent and a level and the
// deepest level. compact_levels_<L>_<P>: the level array in the narrowest type L that holds the
// deepest level, all ones for a vertex without a parent or a level, so that the random reads of the
// entry pass hit a small array. check_entries_<L>_<P>_e4_<form>: one pass over the CSC entries u -> v
// (of a range of columns, those whose rows lie in a range of rows: the validation's pieces) in equal
// chunks of consecutive entries (hubs and runs of empty columns cost no more than other entries),
// each entry's column from a table of the column of every COLUMN_CHUNK-th entry (entry_column_table)
// and the starts of the warp's columns (columns.cuh), read through positions.cuh ColumnStarts: the
// block's col_ptr dense, or held by the positions of its non-empty columns. Per entry: the span and
// edge-level rules (form full or directed; half: per edge, at one of its two entries), the TEPS
// counts, and the parent-edge test: the entry that joins a vertex to its parent marks the vertex and
// checks the two levels (parent-level, parent-unreached, cycle).
// check_parent_edges_<P>: per owned vertex, its mark (parent-not-neighbour).
//
// Every rule keeps its lowest offender (a global vertex id) in one u64 slot by atomicMin, after a
// warp-level minimum and a read of the slot (a violation is rare, so the valid case issues no atomic);
// counts go up by one atomic per block.
#include "columns.cuh"
#include "positions.cuh"

#define NO_VERTEX 0xffffffffffffffffULL
#define FULL_MASK 0xffffffffu

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
    if (nblocks == 1) return p < b ? block_rows[0] + (i32)p : -1;   // a 1x1 grid: no division
    const i64 k = p / b;
    if (k >= nblocks || block_rows[k] < 0) return -1;
    return block_rows[k] + (i32)(p - k * b);
}

// Global id of local row r: row_starts[m] is the global id of the first row of local block m, the
// first held in a register by the caller (on one grid column every local row is in block 0).
__device__ __forceinline__ i64 global_row(i32 r, i32 b, i64 first_row, const i64* __restrict__ row_starts)
{
    return r < b ? first_row + r : row_starts[r / b] + r % b;
}

// entry_column_table: table[q] := the column of entry q * COLUMN_CHUNK (columns.cuh), a lane per column
// of the starts (col_ptr, col_words, col_starts) as check_entries takes them.
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
entry_column_table(const offset_t* __restrict__ col_ptr, const u32* col_words, const i32* col_starts, i32 ncols,
                   i64 nchunks, i32* __restrict__ table)
{
    write_column_table(ColumnStarts{col_ptr, Positions{col_words, col_starts}}, ncols, nchunks, table);
}

// The entries of the ncols columns of `starts` (the block's or a piece's: starts, col_level,
// col_parent, marks (undirected) and col_base start at its first column; its entries are
// row_idx[starts[0] .. starts[ncols]]) whose rows lie in [row_lo, row_hi) (row_level and row_parent
// start at row_lo; the directed form's marks are the block's), in chunks of BLOCK_THREADS * EPT taken
// by the blocks in stride; a thread holds EPT consecutive entries, loads their rows first (they
// depend on nothing) and finds their columns from the column table of the piece's columns
// (columns.cuh warp_columns, columns_of). Each column's level and (undirected) its parent's local
// row are read once per warp lane and handed to the entries by shuffles.
//
// Which entries carry the span and edge-level rules (the one random read per entry, the row's level,
// is what the pass waits on). Directed, and the undirected full form: every entry of a visited
// column (its row names the offender). The half form (undirected): every edge once, at its entry whose
// row has the larger global id (the symmetric CSC holds the mirror entry as well), columns visited or
// not; span names the unvisited end and edge-level the lower end, as the mirror pair of the other
// form would. The tree entry (undirected: row == the column's parent) reads its row's level either way.
// The form is a template parameter: each kernel carries the code of one form only (measured: fewer
// instructions and registers than one kernel testing runtime flags, bench/NOTES.md, 2026-11-24, rounds replayed as CUDA graphs).
template <int EPT, bool DIRECTED, bool HALF, typename L, typename P>
__device__ __forceinline__ void entry_rules(
    ColumnStarts starts, const i32* __restrict__ row_idx, i32 ncols,
    const L* __restrict__ col_level, const L* __restrict__ row_level, const P* __restrict__ col_parent,
    const P* __restrict__ row_parent, i64 col_base, const i64* __restrict__ row_starts,
    const i32* __restrict__ block_rows, i32 nblocks, i32 b, i32 row_lo, i32 row_hi, u32* __restrict__ marks,
    u64* __restrict__ stats, i32 detail_slot, u64 detail_vertex, const i32* __restrict__ column_table)
{
    constexpr bool directed = DIRECTED, half = HALF;
    __shared__ u32 column_slots[BLOCK_THREADS / 32][EPT * 8];   // columns_of's, 32 * EPT bytes per warp
    u64 counted = 0, leaving = 0;
    const i64 first_row = row_starts[0];
    const i64 e0 = starts[0], e1 = starts[ncols];   // the columns' entries
    const bool rows_aligned = ((u64)(row_idx + e0) & 15) == 0;
    const i64 chunk = (i64)BLOCK_THREADS * EPT;
    const i64 nchunks = (e1 - e0 + chunk - 1) / chunk;
    for (i64 q = blockIdx.x; q < nchunks; q += gridDim.x) {
        const i64 first = e0 + q * chunk + (i64)threadIdx.x * EPT;
        const i32 held = (i32)max((i64)0, min((i64)EPT, e1 - first));   // this thread's entries below e1
        bool real[EPT];
        i32 r[EPT];
        bool loaded = false;
        if constexpr (EPT == 4) {
            if (held == 4 && rows_aligned) {   // one 16-byte load
                const int4 rows = *reinterpret_cast<const int4*>(row_idx + first);
                r[0] = rows.x, r[1] = rows.y, r[2] = rows.z, r[3] = rows.w;
                loaded = true;
            }
        }
        if (!loaded) {
#pragma unroll
            for (int t = 0; t < EPT; ++t) r[t] = t < held ? row_idx[first + t] : -1;
        }
#pragma unroll
        for (int t = 0; t < EPT; ++t) {
            real[t] = t < held && r[t] >= row_lo && r[t] < row_hi;   // the row filter
            if (!real[t]) r[t] = -1;
        }
        i32 k_lo, k_hi, col[EPT], lc[EPT], expect[EPT];
        i64 col_start[EPT];
        const i64 warp_first = first - (i64)(threadIdx.x & 31) * EPT;
        warp_columns<EPT>(column_table, e1, ncols, warp_first, &k_lo, &k_hi);
        if (warp_first / COLUMN_CHUNK * COLUMN_CHUNK < e0) k_lo = 0;   // a chunk begun before the columns: no table entry
        columns_of<EPT>(starts, k_lo, k_hi, e1, first, (unsigned char*)column_slots[threadIdx.x >> 5], col,
                        col_start);
        if (columns_in_lanes(k_lo, k_hi)) {
            // the warp's columns' levels and parents' rows, one column per lane (a 64-bit division per
            // column, not per entry), then each entry's by a shuffle
            const i32 mine = min(k_lo + (i32)(threadIdx.x & 31), k_hi);
            const i32 lc_mine = level_of(col_level[mine]);
            const i32 expect_mine = !directed && lc_mine >= 0 ? local_row_of((i64)col_parent[mine], b, nblocks, block_rows) : -1;
#pragma unroll
            for (int t = 0; t < EPT; ++t) {
                lc[t] = __shfl_sync(FULL_MASK, lc_mine, col[t] - k_lo);
                expect[t] = __shfl_sync(FULL_MASK, expect_mine, col[t] - k_lo);
                if (!real[t]) lc[t] = expect[t] = -1;
            }
        } else {
#pragma unroll
            for (int t = 0; t < EPT; ++t) {
                lc[t] = real[t] ? level_of(col_level[col[t]]) : -1;
                expect[t] = !directed && lc[t] >= 0 ? local_row_of((i64)col_parent[col[t]], b, nblocks, block_rows) : -1;
            }
        }

        // an entry carries a rule or is a tree entry only where its row is needed; then its row's level
        bool pair[EPT], tree[EPT];
        i32 lr[EPT];
#pragma unroll
        for (int t = 0; t < EPT; ++t) {
            if (!(directed || half || lc[t] >= 0)) r[t] = -1;
        }
#pragma unroll
        for (int t = 0; t < EPT; ++t) {
            pair[t] = half ? r[t] >= 0 && global_row(r[t], b, first_row, row_starts) > col_base + col[t] : r[t] >= 0 && lc[t] >= 0;
            tree[t] = !directed && r[t] >= 0 && r[t] == expect[t];
        }
#pragma unroll
        for (int t = 0; t < EPT; ++t) lr[t] = r[t] >= 0 && (pair[t] || tree[t] || directed) ? level_of(row_level[r[t] - row_lo]) : -1;
        if (directed) {
#pragma unroll
            for (int t = 0; t < EPT; ++t)
                tree[t] = r[t] >= 0 && lr[t] >= 0 && (i64)row_parent[r[t] - row_lo] == col_base + col[t];
        }

        // the rules' verdicts, five bits per entry: a valid search breaks none, so the warp takes the
        // reporting path once per chunk at most
        enum { SPAN = 1, STEEP = 2, UNREACHED = 4, DEEP = 8, CLIMBS = 16 };
        u32 verdicts = 0, counted_here = 0, leaving_here = 0;
#pragma unroll
        for (int t = 0; t < EPT; ++t) {
            u32 bad = 0;
            counted_here += real[t] && lc[t] >= 0;
            if (pair[t]) {
                const i64 rise = (i64)lr[t] - lc[t];
                const bool span = half ? (lc[t] >= 0) != (lr[t] >= 0) : lr[t] < 0;
                const bool steep = half ? lc[t] >= 0 && lr[t] >= 0 && (rise > 1 || rise < -1)
                                        : lr[t] >= 0 && (rise > 1 || (!directed && rise < -1));
                leaving_here += span;
                bad |= (span ? SPAN : 0) | (steep ? STEEP : 0);
            }
            if (tree[t]) {
                // the entry joins a vertex (the child) to its parent
                const i32 marked = directed ? r[t] : col[t];
                atomicOr(&marks[marked >> 5], 1u << (marked & 31));
                const i32 child = directed ? lr[t] : lc[t], up = directed ? lc[t] : lr[t];
                bad |= (up < 0 ? UNREACHED : 0) | (up >= 0 && up < child - 1 ? DEEP : 0) | (up >= child ? CLIMBS : 0);
            }
            verdicts |= bad << (5 * t);
        }
        counted += counted_here;
        leaving += leaving_here;
        if (!__any_sync(FULL_MASK, verdicts != 0)) continue;
#pragma unroll
        for (int t = 0; t < EPT; ++t) {
            const u32 bad = verdicts >> (5 * t);
            const bool span = bad & SPAN, steep = bad & STEEP, unreached = bad & UNREACHED, deep = bad & DEEP,
                       climbs = bad & CLIMBS;
            const u64 col_id = (u64)(col_base + col[t]);
            const u64 row = r[t] >= 0 ? (u64)global_row(r[t], b, first_row, row_starts) : 0;
            // offenders: tree entries name their child; span its unvisited end (a column only in the
            // half form); edge-level its row (the half form: the lower end, the column)
            const u64 child_id = directed ? row : col_id;
            const u64 span_id = half && lc[t] < 0 ? col_id : row;
            const u64 steep_id = half ? col_id : row;
            report(deep, child_id, &stats[SLOT_LEVEL]);
            report(unreached, child_id, &stats[SLOT_PARENT_UNREACHED]);
            report(climbs, child_id, &stats[SLOT_CYCLE]);
            report(span, span_id, &stats[SLOT_SPAN]);
            report(steep, steep_id, &stats[SLOT_EDGE_LEVEL]);
            if (detail_slot >= 0) {
                // the lowest other end of the detail vertex's offending entries (an edge-level edge of the
                // half form offends at both ends, as its two entries do in the other form)
                u64 witness = NO_VERTEX;
                const u64 v = detail_vertex;
                if (detail_slot == SLOT_SPAN && span && span_id == v) witness = span_id == row ? col_id : row;
                if (detail_slot == SLOT_EDGE_LEVEL && steep && steep_id == v) witness = steep_id == row ? col_id : row;
                if (detail_slot == SLOT_EDGE_LEVEL && steep && half && row == v) witness = col_id;
                const bool tree_hit = (detail_slot == SLOT_LEVEL && deep) ||
                                      (detail_slot == SLOT_PARENT_UNREACHED && unreached) ||
                                      (detail_slot == SLOT_CYCLE && climbs);
                if (tree_hit && child_id == v) witness = directed ? col_id : row;
                if (witness != NO_VERTEX) atomicMin(&stats[SLOT_WITNESS], witness);
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

#define ENTRY_KERNEL(LN, LT, PN, PT, EPT, FORM, DIRECTED, HALF)                                          \
    extern "C" __global__ void __launch_bounds__(BLOCK_THREADS) check_entries_##LN##_##PN##_e##EPT##_##FORM( \
        const offset_t* __restrict__ col_ptr, const u32* col_words, const i32* col_starts,               \
        const i32* __restrict__ row_idx, i32 ncols, const LT* __restrict__ col_level,                    \
        const LT* __restrict__ row_level, const PT* __restrict__ col_parent,                             \
        const PT* __restrict__ row_parent, i64 col_base, const i64* __restrict__ row_starts,             \
        const i32* __restrict__ block_rows, i32 nblocks, i32 b, i32 row_lo, i32 row_hi,                  \
        u32* __restrict__ marks, u64* __restrict__ stats, i32 detail_slot, u64 detail_vertex,            \
        const i32* __restrict__ column_table)                                                            \
    {                                                                                                    \
        entry_rules<EPT, DIRECTED, HALF, LT, PT>(ColumnStarts{col_ptr, Positions{col_words, col_starts}}, \
                                                 row_idx, ncols, col_level, row_level, col_parent,       \
                                                 row_parent, col_base, row_starts, block_rows, nblocks,  \
                                                 b, row_lo, row_hi, marks, stats, detail_slot,           \
                                                 detail_vertex, column_table);                           \
    }

#define LEVEL_KERNELS(LN, LT, PN, PT)                                                                    \
    extern "C" __global__ void __launch_bounds__(BLOCK_THREADS) compact_levels_##LN##_##PN(           \
        const PT* __restrict__ parent, const i32* __restrict__ level, i32 b, LT* __restrict__ out)       \
    {                                                                                                    \
        compact<LT, PT>(parent, level, b, out);                                                          \
    }                                                                                                    \
    ENTRY_KERNEL(LN, LT, PN, PT, 4, full, false, false)                                                  \
    ENTRY_KERNEL(LN, LT, PN, PT, 4, half, false, true)                                                   \
    ENTRY_KERNEL(LN, LT, PN, PT, 4, directed, true, false)

VERTEX_KERNELS(i32, i32)
VERTEX_KERNELS(i64, i64)
LEVEL_KERNELS(u8, unsigned char, i32, i32)
LEVEL_KERNELS(u8, unsigned char, i64, i64)
LEVEL_KERNELS(u16, unsigned short, i32, i32)
LEVEL_KERNELS(u16, unsigned short, i64, i64)
LEVEL_KERNELS(i32, i32, i32, i32)
LEVEL_KERNELS(i32, i32, i64, i64)
