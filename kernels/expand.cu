// Frontier expansion of one BFS level (paper 004, section 3.4, Algorithm 3 and section 3.4.1).
//
// The CSC's column offsets are read through positions.cuh ColumnStarts: dense, or held by the positions
// of the block's non-empty columns (dbfs.graph.LocalGraph.hold_columns_by_position).
// Step 1, frontier_tile_degrees (each frontier vertex's CSC degree, looked up once, and the sum per
// tile), scan_tile_sums (when the frontier spans more than one tile) and frontier_degree_scan:
// cumul[k] = sum of the CSC degrees of frontier[0..k-1], cumul[nf] = total degree, all at the offsets'
// width (offset_t: a frontier's degrees sum to at most the block's entries); then
// frontier_column_table: the frontier index of every COLUMN_CHUNK-th edge (columns.cuh).
// Step 2, expand_frontier_e<EPT>: thread t owns the EPT consecutive frontier edges starting at t*EPT;
// the warp names the frontier vertex (column) of each of its edges from the table and the columns'
// starts (columns.cuh columns_of; paper 004 section 3.4.1 searches cumul per thread, ~log2(nf)
// dependent loads that every chunk waited on), with every stage (source lookup, row load, bitmap
// test, claim) unrolled over its EPT edges so the independent loads overlap. An edge claims its
// destination row when its atomicOr flips the row's visited bit; the claimant records the discovery
// in its owner's group (the own group, the next frontier, at dst_own; the others' packed in dst, grid
// column m's at dst + (m - (m > j)) * slots), at a slot reserved for the whole block at once
// (common.cuh block_reserve; launched with 8*C bytes of dynamic shared memory).
// The new frontier's figures (size, degree sum) are taken afterwards from its list (kernels/frontier.cu):
// a degree read here, after the claim, would hold every chunk for one more memory round trip.
//
// Sizes may live on the device: the frontier length is *frontier_count (or frontier_length when no
// count pointer is given) and the edge total cumul[nf]; every launch has a fixed grid and strides
// over the work, so no count is read back to size a launch. A frontier longer than the scan holds is
// expanded in parts, the five kernels once a part: `frontier` points at the part's first entry, `first`
// is its index in the whole frontier and nf = min(length - first, part), 0 past the end
// (dbfs.ops.expand: the scan's memory is a part's, not every non-empty column's). The expansion adds
// the edge total to stats[STAT_CHECKED] (entries examined, for the per-level log).
// Launched with a control block, the kernels run only when the next step is a bulk top-down level.
#include "columns.cuh"
#include "positions.cuh"

#define TOPDOWN_GATE (1 << STEP_TOPDOWN)

// The frontier entries of the part from `first` of a frontier of length_of(count, length) entries
__device__ __forceinline__ i32 part_length(const i32* count, i32 length, i64 first, i64 part)
{
    const i64 left = (i64)length_of(count, length) - first;
    return (i32)(left < 0 ? 0 : left < part ? left : part);
}

__device__ __forceinline__ offset_t warp_inclusive_scan(offset_t x)
{
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const offset_t y = __shfl_up_sync(0xffffffffu, x, d);
        if (lane >= d) x += y;
    }
    return x;
}

// Exclusive prefix of x over a block of BLOCK_THREADS threads; *total receives the block's sum.
// Ends with a barrier so that it can be called again in a loop.
__device__ __forceinline__ offset_t block_exclusive_scan(offset_t x, offset_t* total)
{
    constexpr int warps = BLOCK_THREADS / 32;
    __shared__ offset_t warp_sums[warps];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const offset_t inclusive = warp_inclusive_scan(x);
    if (lane == 31) warp_sums[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        offset_t s = lane < warps ? warp_sums[lane] : 0;
        s = warp_inclusive_scan(s);
        if (lane < warps) warp_sums[lane] = s;
    }
    __syncthreads();
    const offset_t before = warp ? warp_sums[warp - 1] : 0;
    *total = warp_sums[warps - 1];
    __syncthreads();
    return before + inclusive - x;
}

// items[k] := offset + the sum of items[tile_first .. k - 1], in place, for the k < n of the tile of
// SCAN_TILE items from tile_first, each thread taking SCAN_ITEMS consecutive ones; returns the tile's
// total. Block-collective.
__device__ __forceinline__ offset_t scan_tile_in_place(offset_t* __restrict__ items, i64 tile_first, i64 n,
                                                       offset_t offset)
{
    const i64 first = tile_first + (i64)threadIdx.x * SCAN_ITEMS;
    offset_t item[SCAN_ITEMS];
    offset_t sum = 0;
#pragma unroll
    for (int e = 0; e < SCAN_ITEMS; ++e) {
        item[e] = first + e < n ? items[first + e] : 0;
        sum += item[e];
    }
    offset_t total;
    offset_t prefix = offset + block_exclusive_scan(sum, &total);
#pragma unroll
    for (int e = 0; e < SCAN_ITEMS; ++e) {
        if (first + e < n) items[first + e] = prefix;
        prefix += item[e];
    }
    return total;
}

// tile_sums[t] = total degree of frontier[t*SCAN_TILE .. (t+1)*SCAN_TILE), a block per tile
// (grid-stride over the tiles); cumul[k] = the degree of frontier[k], so that the scan reads the
// degrees in order instead of looking them up again at random.
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
frontier_tile_degrees(const offset_t* __restrict__ col_ptr, const u32* col_words, const i32* col_starts,
                      const i32* __restrict__ frontier,
                      const i32* __restrict__ frontier_count, i32 frontier_length, i64 first, i64 part,
                      offset_t* __restrict__ tile_sums, offset_t* __restrict__ cumul, const i64* __restrict__ ctl)
{
    if (!gate_open(ctl, TOPDOWN_GATE, -1)) return;
    const ColumnStarts columns{col_ptr, Positions{col_words, col_starts}};
    const i32 nf = part_length(frontier_count, frontier_length, first, part);
    const i32 ntiles = (nf + SCAN_TILE - 1) / SCAN_TILE;
    for (i32 tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
        const i64 base = (i64)tile * SCAN_TILE;
        offset_t sum = 0;
#pragma unroll
        for (int e = 0; e < SCAN_ITEMS; ++e) {
            const i64 k = base + e * BLOCK_THREADS + threadIdx.x;
            if (k < nf) {
                const offset_t degree = columns.length(frontier[k]);
                cumul[k] = degree;
                sum += degree;
            }
        }
        offset_t tile_total;
        block_exclusive_scan(sum, &tile_total);
        if (threadIdx.x == 0) tile_sums[tile] = tile_total;
    }
}

// In-place exclusive scan of the tile sums by one block (nothing to do for a single tile).
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
scan_tile_sums(offset_t* __restrict__ tile_sums, const i32* __restrict__ frontier_count, i32 frontier_length,
               i64 first, i64 part, const i64* __restrict__ ctl)
{
    if (!gate_open(ctl, TOPDOWN_GATE, -1)) return;
    const i32 ntiles = (part_length(frontier_count, frontier_length, first, part) + SCAN_TILE - 1) / SCAN_TILE;
    if (ntiles <= 1) return;
    offset_t carry = 0;
    for (i64 base = 0; base < ntiles; base += SCAN_TILE) carry += scan_tile_in_place(tile_sums, base, ntiles, carry);
}

// cumul[k] (k < nf): the degree of frontier[k] (frontier_tile_degrees) replaced in place by the
// exclusive prefix of the degrees; cumul[nf] = their total. A block per tile (grid-stride); the scanned
// tile sums offset every tile after the first.
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
frontier_degree_scan(const i32* __restrict__ frontier_count, i32 frontier_length, i64 first, i64 part,
                     const offset_t* __restrict__ tile_offsets, offset_t* __restrict__ cumul, u64* __restrict__ chunks,
                     const i64* __restrict__ ctl)
{
    if (!gate_open(ctl, TOPDOWN_GATE, -1)) return;
    const i32 nf = part_length(frontier_count, frontier_length, first, part);
    const i32 ntiles = (nf + SCAN_TILE - 1) / SCAN_TILE;
    if (blockIdx.x == 0 && threadIdx.x == 0) *chunks = 0;   // the expansion's chunk counter
    if (nf == 0) {
        if (blockIdx.x == 0 && threadIdx.x == 0) cumul[0] = 0;
        return;
    }
    for (i32 tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
        const offset_t offset = ntiles > 1 ? tile_offsets[tile] : 0;
        const offset_t tile_total = scan_tile_in_place(cumul, (i64)tile * SCAN_TILE, nf, offset);
        if (tile == ntiles - 1 && threadIdx.x == 0) cumul[nf] = offset + tile_total;
    }
}

// table[q] := the frontier index whose edges hold edge id q * COLUMN_CHUNK, for the cumul[nf] edges of the
// scanned frontier (columns.cuh), a lane per frontier vertex.
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
frontier_column_table(const offset_t* __restrict__ cumul, const i32* __restrict__ frontier_count, i32 frontier_length,
                      i64 first, i64 part, i32* __restrict__ table, const i64* __restrict__ ctl)
{
    if (!gate_open(ctl, TOPDOWN_GATE, -1)) return;
    const i32 nf = part_length(frontier_count, frontier_length, first, part);
    write_column_table(cumul, nf, ((i64)cumul[nf] + COLUMN_CHUNK - 1) / COLUMN_CHUNK, table);
}

template <int EPT>
__device__ __forceinline__ void expand_edges(
    ColumnStarts columns, const i32* __restrict__ row_idx, const i32* __restrict__ frontier,
    const i32* __restrict__ frontier_count, i32 frontier_length, i64 first, i64 part,
    const offset_t* __restrict__ cumul, const i32* __restrict__ column_table, u32* __restrict__ bitmap,
    i32* __restrict__ level, i32* __restrict__ pred_row, Positions found_at, i16* __restrict__ pred_col, i32 lvl,
    i32 j, i32 b, i32 C, i64 slots, i32* __restrict__ dst, i32* __restrict__ dst_own, i32* __restrict__ dst_cnt,
    u64* __restrict__ chunks, i64* __restrict__ stats, const i64* __restrict__ ctl)
{
    if (!gate_open(ctl, TOPDOWN_GATE, -1)) return;
    if (ctl != nullptr) lvl = (i32)ctl[CTL_LEVEL];
    const i32 nf = part_length(frontier_count, frontier_length, first, part);
    if (nf == 0) return;
    const i64 total = cumul[nf];
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd((u64*)&stats[STAT_CHECKED], (u64)total);
    extern __shared__ i32 group_scratch[];
    // Blocks take chunks of BLOCK_THREADS * EPT edges in order from a counter (zeroed by the scan):
    // the chunks in flight stay a compact window of the frontier, as when every chunk had its own
    // block, where a fixed stride let slow and fast blocks drift apart. Chunks are taken two turns
    // ahead, alternating between two shared slots, so the atomic's round trip overlaps a chunk.
    __shared__ i64 taken[2];
    __shared__ u32 column_slots[BLOCK_THREADS / 32][EPT * 8];   // columns_of's, 32 * EPT bytes per warp
    if (threadIdx.x == 0) {
        taken[0] = (i64)atomicAdd(chunks, 1ULL);
        taken[1] = (i64)atomicAdd(chunks, 1ULL);
    }
    __syncthreads();
    const i64 chunk_edges = (i64)BLOCK_THREADS * EPT;
    // The loop's bound is the same for every thread of a block (the chunk is block-uniform): the slot
    // reservation inside is block-collective. Threads past the end search nothing.
    for (int turn = 0; taken[turn & 1] * chunk_edges < total; ++turn) {
        const i64 chunk_base = taken[turn & 1] * chunk_edges;
        const i64 first = chunk_base + (i64)threadIdx.x * EPT;
        i32 k_lo, k_hi, column[EPT];
        i64 column_start[EPT];
        warp_columns<EPT>(column_table, total, nf, first - (i64)(threadIdx.x & 31) * EPT, &k_lo, &k_hi);
        columns_of<EPT>(cumul, k_lo, k_hi, total, first, (unsigned char*)column_slots[threadIdx.x >> 5], column,
                        column_start);

        bool valid[EPT];
        i64 within[EPT];
#pragma unroll
        for (int e = 0; e < EPT; ++e) {
            valid[e] = first + e < total;
            within[e] = first + e - column_start[e];
        }

        i32 u[EPT];
#pragma unroll
        for (int e = 0; e < EPT; ++e) u[e] = valid[e] ? frontier[column[e]] : 0;
        i64 pos[EPT];
#pragma unroll
        for (int e = 0; e < EPT; ++e) pos[e] = valid[e] ? columns[u[e]] + within[e] : 0;
        i32 v[EPT];
#pragma unroll
        for (int e = 0; e < EPT; ++e) v[e] = valid[e] ? row_idx[pos[e]] : 0;

        // A plain read first: most edges of a busy level hit visited rows and need no atomic.
        u32 word[EPT];
#pragma unroll
        for (int e = 0; e < EPT; ++e) word[e] = valid[e] ? bitmap[v[e] >> 5] : 0xffffffffu;
        bool claimed[EPT];
#pragma unroll
        for (int e = 0; e < EPT; ++e) {
            const u32 bit = 1u << (v[e] & 31);
            claimed[e] = false;
            if (!(word[e] & bit)) claimed[e] = !(atomicOr(&bitmap[v[e] >> 5], bit) & bit);
        }

        // Local row v belongs to the block of grid column v / b, at offset v mod b (dbfs.grid.Grid
        // row_group / row_offset).
        i32 group[EPT], offset[EPT], slot[EPT];
#pragma unroll
        for (int e = 0; e < EPT; ++e) {
            group[e] = v[e] / b;
            offset[e] = v[e] - group[e] * b;
        }
        block_reserve<EPT>(claimed, group, C, dst_cnt, group_scratch, slot);
        // Past the reservation's barriers every thread has read this turn's slot: refill it for the
        // turn after next (the next turn's slot was filled a turn ago, barriers ago).
        if (threadIdx.x == 0) taken[turn & 1] = (i64)atomicAdd(chunks, 1ULL);
#pragma unroll
        for (int e = 0; e < EPT; ++e) {
            if (!claimed[e]) continue;
            (group[e] == j ? dst_own : dst + (i64)(group[e] - (group[e] > j)) * slots)[slot[e]] = offset[e];
            pred_row[found_at.of(v[e])] = u[e];
            if (group[e] == j) {
                level[offset[e]] = lvl;
                if (pred_col != nullptr) pred_col[offset[e]] = (i16)j;
            }
        }
    }
}

#define EXPAND_VARIANT(EPT)                                                                              \
    extern "C" __global__ void __launch_bounds__(BLOCK_THREADS) expand_frontier_e##EPT(                  \
        const offset_t* __restrict__ col_ptr, const u32* col_words, const i32* col_starts,               \
        const i32* __restrict__ row_idx, const i32* __restrict__ frontier,                                \
        const i32* __restrict__ frontier_count, i32 frontier_length, i64 first, i64 part,                 \
        const offset_t* __restrict__ cumul, const i32* __restrict__ column_table, u32* __restrict__ bitmap, \
        i32* __restrict__ level, i32* __restrict__ pred_row, const u32* found_words,                      \
        const i32* found_starts, i16* __restrict__ pred_col, i32 lvl, i32 j, i32 b, i32 C, i64 slots,     \
        i32* __restrict__ dst, i32* __restrict__ dst_own, i32* __restrict__ dst_cnt,                      \
        u64* __restrict__ chunks, i64* __restrict__ stats, const i64* __restrict__ ctl)                   \
    {                                                                                                    \
        expand_edges<EPT>(ColumnStarts{col_ptr, Positions{col_words, col_starts}}, row_idx, frontier,    \
                          frontier_count, frontier_length, first, part, cumul, column_table, bitmap,      \
                          level, pred_row, Positions{found_words, found_starts}, pred_col, lvl, j, b, C,  \
                          slots, dst, dst_own, dst_cnt, chunks, stats, ctl);                              \
    }

EXPAND_VARIANT(1)
EXPAND_VARIANT(2)
EXPAND_VARIANT(4)
EXPAND_VARIANT(8)
