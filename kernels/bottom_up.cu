// Bottom-up BFS step on one segment of a rank's rows (direction-optimizing BFS, Beamer et al.; the 2D
// form with a rotation along the grid row as in Ueno et al. and Checconi and Petrini).
//
// bottom_up_step: every row of the segment whose bit in the incoming state is clear looks for a
// neighbour in the frontier bitmap through the row-major copy of the block, stopping at the first one
// found. A warp owns one 32-row word of the state: each lane first tests the first THREAD_EDGES entries
// of its own row (all loads issued before the first test, so a lane waits for two memory round trips,
// not two per entry); rows with more entries left are then searched by the whole warp, 32 entries per
// step, with a ballot for early exit. The warp writes its word of the outgoing state (the incoming bits
// plus the rows found; no atomics: the word is its alone, but where shared) and the found rows' pred_row
// (the frontier column found), at the row's position where pred_row is held by position (positions.cuh:
// a hypersparse block's column finds keep only its non-empty columns). The incoming and outgoing state
// may be the same array. shared: the state is its owner's, which the other ranks of its grid line search
// at the same time (mapped here: dbfs.nvshmem): the word is read past the L1 and the rows found are set
// with an atomic OR; the owner's visited bits are then read beside it (also mapped), so the state need
// hold only the rows found bottom-up and no rank writes it before the others read it. Searching the
// CSC's columns, the "rows" are its local columns and row_ptr its column offsets, which may be held by
// the positions of the non-empty columns (row_words, row_starts; positions.cuh ColumnStarts).
// bottom_up_step_large, where the bitmap outgrows the L2, filters a sparse
// frontier through its summary (below) and, on a denser one, tests a row's first entry alone before the
// next THREAD_EDGES: the rows' hub entries come first (dbfs.ops.row_order), so most rows stop there, and
// each test not made spares a random trip to memory.
//
// bottom_up_steps (and _held): the search over several segments in turn, one kernel for a level's
// sub-steps where the segments are searched in their owners' memory (below).
//
// bottom_up_commit_* (owner, after the rotation): the bits set in the final state but not in the owned
// visited bitmap are the vertices of this level: level, marker = BOTTOM_UP, visited bit, next
// frontier bitmap, and their count, degree sum and largest degree for the direction rule. The marker is
// pred_col (int16, bottom_up_commit_i16), or on a grid of one column whose bottom-up levels search the
// CSC's columns the int32 parent array itself (bottom_up_commit_i32; dbfs.grid_loop BottomUpSide). A
// warp takes 32 words at once (a lane per word: one coalesced load each), then walks them, a lane per
// vertex. With peer_fronts (addresses of other ranks' memory, mapped here: dbfs.nvshmem) the next
// frontier's words are also stored there, into each grid-column peer's copy of this rank's segment of
// the frontier bitmap, so the next level's frontier needs no message, no encoding and no decoding.
//
// frontier_summary (before a level's search): a bit per 32-column word of the frontier bitmap, set where
// the word is not zero, and whether at most one word in SUMMARY_SPARSE is (the tally's FILTER word,
// decided by the last block to finish). Where it is, the search tests a neighbour's summary bit first
// and loads its frontier word only where that bit is set: a sparse frontier's rows find almost no
// parent and test every entry, and a bitmap over more columns than the L2 holds (64 MiB over the 2^29
// columns of a 4x1 grid at scale 29) would miss at random where the summary (2 MiB) does not. The
// callers make and pass a summary only where the bitmap outgrows the L2 (dbfs.ops.bottom_up.summary_for;
// bench/NOTES.md, 2026-11-27, a sparse frontier's bottom-up probes through a word summary).
//
// Launched with a control block, all of them run only when the next step is a bulk bottom-up level (and
// the commit takes the level number from it).
#include "positions.cuh"

#define BOTTOM_UP_GATE (1 << STEP_BOTTOMUP)

// summary: nullptr, or the frontier's summary where the search filters through it.
__device__ __forceinline__ bool in_frontier(const u32* __restrict__ frontier, const u32* __restrict__ summary, i32 u)
{
    if (summary != nullptr && !((__ldg(&summary[u >> 10]) >> ((u >> 5) & 31)) & 1u)) return false;
    return (__ldg(&frontier[u >> 5]) >> (u & 31)) & 1u;
}

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
frontier_summary(const u32* __restrict__ frontier, i32 nwords, u32* __restrict__ summary, const i64* __restrict__ ctl)
{
    if (!gate_open(ctl, BOTTOM_UP_GATE, -1)) return;
    __shared__ u32 block_nonzero;
    if (threadIdx.x == 0) block_nonzero = 0;
    __syncthreads();
    const i32 lane = threadIdx.x & 31;
    const i32 swords = (nwords + 31) >> 5;
    u32* tally = summary + swords;
    u32 nonzero = 0;
    for (i32 s = (blockIdx.x * blockDim.x + threadIdx.x) >> 5; s < swords; s += (gridDim.x * blockDim.x) >> 5) {
        const i32 w = s * 32 + lane;
        const bool set = w < nwords && frontier[w] != 0u;
        const u32 bits = __ballot_sync(0xffffffffu, set);
        if (lane == 0) {
            summary[s] = bits;
            nonzero += __popc(bits);
        }
    }
    if (lane == 0 && nonzero) atomicAdd(&block_nonzero, nonzero);
    __syncthreads();
    if (threadIdx.x != 0) return;
    if (block_nonzero) atomicAdd(&tally[SUMMARY_NONZERO], block_nonzero);
    __threadfence();
    if (atomicAdd(&tally[SUMMARY_DONE], 1u) != gridDim.x - 1) return;
    const u32 total = atomicAdd(&tally[SUMMARY_NONZERO], 0u);      // every block's, after its fence
    tally[SUMMARY_FILTER] = (u64)total * SUMMARY_SPARSE <= (u64)nwords;
    tally[SUMMARY_NONZERO] = 0;
    tally[SUMMARY_DONE] = 0;
}

// STEPS: the words of `steps` segments in turn, segment s's state states[s] (shared) and its owner's
// visited bits visited_of[s], its rows from row_bases[s]; else one segment's, from row_base, state_in to
// state_out, beside the owner's visited bits `visited` (nullptr: none). A row is searched where its bit
// is clear in both, so a shared state need not hold the owner's visited bits, only rows found since.
template <bool LARGE, bool HELD, bool STEPS>
__device__ __forceinline__ void search_rows(ColumnStarts row_ptr, const i32* __restrict__ col_idx,
                                            i32 row_base, i32 nwords, const u32* __restrict__ frontier,
                                            const u32* __restrict__ summary, i32 frontier_words,
                                            const u32* state_in, u32* state_out, const u32* visited, i32 shared,
                                            const i32* __restrict__ row_bases, const u64* __restrict__ states,
                                            const u64* __restrict__ visited_of, i32 steps,
                                            i32* __restrict__ pred_row, Positions found_at,
                                            i64* __restrict__ stats)
{
    bool first_alone = false;
    if (LARGE && !summary[((frontier_words + 31) >> 5) + SUMMARY_FILTER]) {
        summary = nullptr;
        first_alone = true;
    }
    const i32 lane = threadIdx.x & 31;
    const i32 warps = (gridDim.x * blockDim.x) >> 5;
    i64 checked = 0;
    // The line's rows are local rows: steps x nwords words stay below 2^31 / 32 (dbfs.grid.LOCAL_LIMIT).
    const i32 words = STEPS ? steps * nwords : nwords;
    for (i32 t = (blockIdx.x * blockDim.x + threadIdx.x) >> 5; t < words; t += warps) {
        const i32 s = STEPS ? t / nwords : 0;
        const i32 w = t - s * nwords;
        if (STEPS) state_in = state_out = (u32*)states[s];
        const u32 word = shared ? __ldcg(&state_in[w]) : state_in[w];
        const u32* owner_visited = STEPS ? (const u32*)visited_of[s] : visited;
        const u32 seen = owner_visited != nullptr ? word | __ldcg(&owner_visited[w]) : word;
        const i32 row = (STEPS ? row_bases[s] : row_base) + w * 32 + lane;
        // HELD: the rows' Positions word and start (one address for the warp) go out beside the state's
        // word rather than after it, so a block held by position waits no longer than a dense one. Where
        // the pointers and the finds are both held by position, they are held by the same Positions.
        Positions::Fetched held{0u, 0};
        if (HELD) held = row_ptr.held.words != nullptr ? row_ptr.held.fetch(row) : found_at.fetch(row);
        const bool todo = !((seen >> lane) & 1u);
        i64 next = 0, end = 0;
        i32 parent = -1;
        if (todo) {
            i64 row_begin, length;
            if (HELD)
                row_ptr.extent(row, held, &row_begin, &length);
            else
                row_ptr.extent(row, &row_begin, &length);
            i64 begin = row_begin;
            end = row_begin + length;
            if (LARGE && first_alone && begin < end) {
                const i32 u0 = col_idx[begin++];
                if (in_frontier(frontier, nullptr, u0)) parent = u0;
            }
            if (parent >= 0) {
                next = begin;
            } else {
                const i64 stop = min(end, begin + THREAD_EDGES);
                i32 u[THREAD_EDGES];
#pragma unroll
                for (int e = 0; e < THREAD_EDGES; ++e) u[e] = begin + e < stop ? col_idx[begin + e] : -1;
                unsigned hits = 0;
#pragma unroll
                for (int e = 0; e < THREAD_EDGES; ++e)
                    if (u[e] >= 0 && in_frontier(frontier, summary, u[e])) hits |= 1u << e;
                if (hits) {
                    const int first = __ffs(hits) - 1;
#pragma unroll
                    for (int e = 0; e < THREAD_EDGES; ++e)
                        if (e == first) parent = u[e];
                    next = begin + first + 1;
                } else {
                    next = stop;
                }
            }
            checked += next - row_begin;
        }
        unsigned heavy = __ballot_sync(0xffffffffu, todo && parent < 0 && next < end);
        while (heavy) {
            const i32 src = __ffs(heavy) - 1;
            heavy &= heavy - 1;
            const i64 from = __shfl_sync(0xffffffffu, next, src);
            const i64 to = __shfl_sync(0xffffffffu, end, src);
            for (i64 base = from; base < to; base += 32) {
                const i64 e = base + lane;
                const i32 u = e < to ? col_idx[e] : 0;
                const unsigned hits = __ballot_sync(0xffffffffu, e < to && in_frontier(frontier, summary, u));
                const i64 step = hits ? __ffs(hits) : min((i64)32, to - base);
                if (lane == 0) checked += step;
                if (hits) {
                    const i32 found = __shfl_sync(0xffffffffu, u, __ffs(hits) - 1);
                    if (lane == src) parent = found;
                    break;
                }
            }
        }
        const unsigned found = __ballot_sync(0xffffffffu, parent >= 0);
        if (lane == 0 && !shared) state_out[w] = word | found;
        if (lane == 0 && shared && found) atomicOr(&state_out[w], found);
        if (parent >= 0) pred_row[HELD ? found_at.of(row, held) : found_at.of(row)] = parent;
    }
    checked = warp_sum(checked);
    if (lane == 0 && checked) atomicAdd((u64*)&stats[STAT_CHECKED], (u64)checked);
}

// A search kernel for dense pointers and finds, and one (_held) for pointers or finds held by position,
// which fetches their Positions ahead and is bounded to full occupancy (the loads ahead would take more
// registers than it leaves); the dense one is the search as it was before the fetch.
#define SEARCH_VARIANT(NAME, HELD, ...)                                                                 \
    extern "C" __global__ void __launch_bounds__(__VA_ARGS__) NAME(                                      \
        const offset_t* __restrict__ row_ptr, const u32* row_words, const i32* row_starts,              \
        const i32* __restrict__ col_idx, i32 row_base, i32 nwords, const u32* __restrict__ frontier,    \
        const u32* state_in, u32* state_out, const u32* visited, i32 shared, i32* __restrict__ pred_row, \
        const u32* found_words, const i32* found_starts, i64* __restrict__ stats,                       \
        const i64* __restrict__ ctl)                                                                    \
    {                                                                                                    \
        if (!gate_open(ctl, BOTTOM_UP_GATE, -1)) return;                                                 \
        search_rows<false, HELD, false>(ColumnStarts{row_ptr, Positions{row_words, row_starts}}, col_idx, \
                                        row_base, nwords, frontier, nullptr, 0, state_in, state_out,     \
                                        visited, shared, nullptr, nullptr, nullptr, 1, pred_row,         \
                                        Positions{found_words, found_starts}, stats);                    \
    }

#define SEARCH_LARGE_VARIANT(NAME, HELD, ...)                                                           \
    extern "C" __global__ void __launch_bounds__(__VA_ARGS__) NAME(                                      \
        const offset_t* __restrict__ row_ptr, const u32* row_words, const i32* row_starts,              \
        const i32* __restrict__ col_idx, i32 row_base, i32 nwords, const u32* __restrict__ frontier,    \
        const u32* __restrict__ summary, i32 frontier_words, const u32* state_in, u32* state_out,      \
        const u32* visited, i32 shared, i32* __restrict__ pred_row, const u32* found_words,            \
        const i32* found_starts, i64* __restrict__ stats, const i64* __restrict__ ctl)                  \
    {                                                                                                    \
        if (!gate_open(ctl, BOTTOM_UP_GATE, -1)) return;                                                 \
        search_rows<true, HELD, false>(ColumnStarts{row_ptr, Positions{row_words, row_starts}}, col_idx,  \
                                       row_base, nwords, frontier, summary, frontier_words, state_in,     \
                                       state_out, visited, shared, nullptr, nullptr, nullptr, 1, pred_row, \
                                       Positions{found_words, found_starts}, stats);                      \
    }

// The sub-steps of a level whose segments are searched where their owners keep them, in one kernel: the
// warps take the segments' words in the sub-steps' order, so a warp goes on to the next segment as soon as
// this one's words are all taken, and the level pays one launch and one tail for them all. states[s]:
// segment s's state (shared, mapped here), visited_of[s] its owner's visited bits (mapped here), its rows
// from row_bases[s]. Not for the large search, whose
// summary takes the registers the loop over segments needs (it would spill under the _held bound).
#define SEARCH_STEPS_VARIANT(NAME, HELD, ...)                                                           \
    extern "C" __global__ void __launch_bounds__(__VA_ARGS__) NAME(                                      \
        const offset_t* __restrict__ row_ptr, const u32* row_words, const i32* row_starts,              \
        const i32* __restrict__ col_idx, const i32* __restrict__ row_bases, const u64* __restrict__ states, \
        const u64* __restrict__ visited_of, i32 steps, i32 nwords, const u32* __restrict__ frontier,    \
        i32* __restrict__ pred_row, const u32* found_words, const i32* found_starts,                    \
        i64* __restrict__ stats, const i64* __restrict__ ctl)                                           \
    {                                                                                                    \
        if (!gate_open(ctl, BOTTOM_UP_GATE, -1)) return;                                                 \
        search_rows<false, HELD, true>(ColumnStarts{row_ptr, Positions{row_words, row_starts}}, col_idx, \
                                       0, nwords, frontier, nullptr, 0, nullptr, nullptr, nullptr, 1,     \
                                       row_bases, states, visited_of, steps, pred_row,                    \
                                       Positions{found_words, found_starts}, stats);                      \
    }

SEARCH_VARIANT(bottom_up_step, false, BLOCK_THREADS)
SEARCH_VARIANT(bottom_up_step_held, true, BLOCK_THREADS, FULL_SM_BLOCKS)
SEARCH_LARGE_VARIANT(bottom_up_step_large, false, BLOCK_THREADS)
SEARCH_LARGE_VARIANT(bottom_up_step_large_held, true, BLOCK_THREADS, FULL_SM_BLOCKS)
SEARCH_STEPS_VARIANT(bottom_up_steps, false, BLOCK_THREADS)
SEARCH_STEPS_VARIANT(bottom_up_steps_held, true, BLOCK_THREADS, FULL_SM_BLOCKS)

template <typename Marker>
__device__ __forceinline__ void commit(const u32* __restrict__ state, u32* __restrict__ visited,
                                       u32* __restrict__ next_frontier, const u64* __restrict__ peer_fronts,
                                       i32 n_peers, i32 nwords, i32* __restrict__ level, Marker* __restrict__ marker,
                                       const i32* __restrict__ degree, i32 lvl, i64* __restrict__ stats,
                                       const i64* __restrict__ ctl)
{
    if (!gate_open(ctl, BOTTOM_UP_GATE, -1)) return;
    if (ctl != nullptr) lvl = (i32)ctl[CTL_LEVEL];
    const i32 lane = threadIdx.x & 31;
    const i32 warps = (gridDim.x * blockDim.x) >> 5;
    i64 count = 0, degrees = 0, largest = 0;
    for (i32 base = ((blockIdx.x * blockDim.x + threadIdx.x) >> 5) * 32; base < nwords; base += warps * 32) {
        const i32 w = base + lane;
        u32 fresh = 0;
        if (w < nwords) {
            const u32 old = visited[w];
            fresh = state[w] & ~old;
            next_frontier[w] = fresh;
            for (i32 p = 0; p < n_peers; ++p)
                if (peer_fronts[p]) ((u32*)peer_fronts[p])[w] = fresh;
            if (fresh) visited[w] = old | fresh;
        }
        // Then a lane per vertex of each word: the level, marker and degree accesses stay coalesced.
        for (i32 k = 0; k < 32; ++k) {
            const u32 bits = __shfl_sync(0xffffffffu, fresh, k);
            if (!((bits >> lane) & 1u)) continue;
            const i32 o = (base + k) * 32 + lane;
            level[o] = lvl;
            if (marker != nullptr) marker[o] = BOTTOM_UP;
            const i64 d = degree[o];
            degrees += d;
            largest = max(largest, d);
            ++count;
        }
    }
    add_discoveries(count, degrees, largest, stats);
}

#define COMMIT_VARIANT(MARKER)                                                                           \
    extern "C" __global__ void __launch_bounds__(BLOCK_THREADS) bottom_up_commit_##MARKER(               \
        const u32* __restrict__ state, u32* __restrict__ visited, u32* __restrict__ next_frontier,      \
        const u64* __restrict__ peer_fronts, i32 n_peers, i32 nwords, i32* __restrict__ level,          \
        MARKER* __restrict__ marker, const i32* __restrict__ degree, i32 lvl, i64* __restrict__ stats,  \
        const i64* __restrict__ ctl)                                                                    \
    {                                                                                                    \
        commit(state, visited, next_frontier, peer_fronts, n_peers, nwords, level, marker, degree, lvl,  \
               stats, ctl);                                                                              \
    }

COMMIT_VARIANT(i16)
COMMIT_VARIANT(i32)
