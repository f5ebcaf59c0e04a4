// Small top-down levels of a grid of ranks, driven by the GPUs (paper 004, Algorithm 2, sections 3.2-3.5,
// with the messages put by the kernels: the GPU-initiated exchanges of dbfs.nvshmem), and the same
// decision records summing a bulk level's totals (level_totals, at the end of this file).
//
// A lattice or road network has thousands of levels of a few thousand vertices; driven by the host, a
// distributed level costs hundreds of microseconds of waits, launches and MPI calls for microseconds of
// work. Here a persistent cooperative grid per rank runs such levels back to back, and the ranks'
// kernels talk to each other directly through memory NVSHMEM mapped into every process (peer addresses):
//
//   send    every new own vertex is stored, as it is found, into this rank's slot of each grid-column
//           peer's expand landing (double-buffered by round parity), or, where the peers read the lists
//           in place, into the own list alone; the decision's record says how many (a signal word per
//           peer before a stretch's first level);
//   expand  the column frontier (the own list and the peers' lists, as local column ids) is cut
//           into one contiguous share per block; a block reads its share's degrees in chunks of a column
//           a thread: where no column of a chunk has more than PEER_GROUP entries (a lattice's levels),
//           PEER_GROUP lanes take a column, an entry a lane; else the block scans the chunk's degrees and
//           takes the entries load-balanced (a binary search per entry); an entry claims its row when
//           its atomicOr flips the visited bit; an owned row is a new own vertex, another owner's row is
//           stored straight into this rank's slot of that owner's fold landing (or into this rank's
//           own list for that owner, which the owner reads in place);
//   fold    after a grid barrier, a signal word per grid-row peer (two, by the round's parity); every
//           block waits for the row peers' signals;
//   update  the fold lists' unvisited owned vertices become new own vertices (delayed
//           predecessor: the sender's grid column): at most PEER_THREADS of them (a lattice level's) by
//           the leader block alone, an entry a thread, so no grid barrier follows; more over the whole grid;
//   decide  after the update's barrier (the grid's, or the leader block's), every rank puts its new
//           frontier's size and degree sum into a record on every rank; every block waits for all of
//           them (the other blocks for their own rank's first, one thread each), and all compute the
//           same next step (level_control.cuh next_step) and stay while it is another small level.
// Two grid barriers a level (one where the leader block updates alone); the level's counters rotate
// over three slots, so block 0 clears the next level's slot during this one (its last reader, two
// levels back, had passed the last level's expansion barrier). The decision's records are the
// expand signals of the next level: a record's count is its sender's new own frontier, which it stored
// into the column peers' landings before the record's release, so the next level reads its column
// peers' list lengths from records it already waited for. On a grid of one column (R x 1) every rank is
// a column peer and no row peer: there is no fold and no update, so a level has one grid barrier and
// waits on the other ranks once.
//
// A signal word holds the round in its upper 32 bits and the message's entry count in the lower; a
// reduction record ends with its round. Rounds count the kernel's levels over the whole run, so a word
// left from an earlier level or search never matches. Why one landing per peer suffices for the fold
// and two for the expand: a rank writes round r's fold into a peer only after the round r - 1
// decision, which needed that peer's round r - 1 record, written after it read its fold landing; the
// expand of round r + 1 is written during round r's update, when a column peer may still read round
// r's, but not round r - 1's (the round r - 1 decision again). The fold's signal words are two per peer
// too, by the round's parity: where the leader block updates alone, a rank's record (and so the peer's
// next fold signal) may leave before its other blocks have read the round's signal, but not before they
// reached the next round's expansion barrier. Landed words are read through L2 (__ldcg): a line cached
// in L1 two rounds earlier would be stale.
//
// Where the lists are read in place (dbfs.peer_levels.lists_in_place: the search state's two frontier
// queues on the symmetric heap, where they take no more room than the landings), a rank's round r list
// is its own list of that level, one of its two queues' group j by the level's parity within the stretch
// (the same on every rank), and its fold list for grid column m is group m of its first queue, unused
// during a stretch. The same rounds keep them safe: a rank rewrites its round r list (as round r + 2's)
// and its fold lists (as round r + 1's) only after the round r decision, which needed every reader's
// round r record, written after its reads. The kernel sees either way as four address tables: where it
// reads each column peer's list and writes its own for each (by parity), where it writes each fold list
// and reads each row peer's.
//
// A level of the kernel examines at most `edge_limit` entries and its frontier holds at most `capacity`
// vertices (the host enters and the kernel stays only while the frontier's edges and size are within
// them). With landings the two limits are one, so no message or list holds more than a landing's
// `capacity` words; where the lists are read in place, the queues hold any level's lists and the edges'
// limit may be higher.
// Ranks sharing a GPU under CUDA MPS wait for each other's signals, so all their grids must be resident
// at once: each rank's grid is its share of the multiprocessors (dbfs.ops.peer_levels).
#include <cooperative_groups.h>
#include "level_control.cuh"
#include "positions.cuh"

namespace cg = cooperative_groups;

__device__ __forceinline__ u64 signal_word(u64 round, i64 count)
{
    return (round << 32) | (u64)(u32)count;
}

// A word another rank reads: stored with release semantics at system scope, after a block or grid
// barrier, so every store made before the barrier is visible first (one fence for the messages).
__device__ __forceinline__ void store_release(u64* word, u64 value)
{
    asm volatile("st.release.sys.global.u64 [%0], %1;" :: "l"(word), "l"(value) : "memory");
}

__device__ __forceinline__ u64 load_acquire(const u64* word)
{
    u64 value;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(value) : "l"(word) : "memory");
    return value;
}

// Waits until *word carries `round` and returns its count (the word is written by another rank; a block
// barrier after the wait orders the block's reads of the message behind it).
__device__ __forceinline__ i64 wait_signal(const u64* word, u64 round)
{
    u64 seen;
    while (((seen = load_acquire(word)) >> 32) != (u32)round) __nanosleep(32);
    return (i64)(u32)seen;
}

// The level's counters (int64) in device memory, one slot per level rotating over PEER_COUNTER_SLOTS
// (three): the new own frontier's size and degree sum, the entries examined, then the fold entries per
// grid column (dbfs.kernels.PEER_COUNTERS).
constexpr int NEXT_COUNT = PEER_COUNTER_NEXT_COUNT, NEXT_DEGREES = PEER_COUNTER_NEXT_DEGREES,
              CHECKED = PEER_COUNTER_CHECKED, FOLD_COUNTS = PEER_FOLD_COUNTS;

// A slot of the group counted by *counter for each calling lane: one atomicAdd for the lanes of the warp
// that call it together with the same counter (the new frontier's slots are reserved by hundreds of
// lanes a level; one atomic each serialised on the counter's address).
__device__ __forceinline__ i64 reserve_slot(u64* counter)
{
    const unsigned peers = __match_any_sync(__activemask(), (unsigned long long)counter);
    const int lane = threadIdx.x & 31, first = __ffs(peers) - 1;
    u64 base = 0;
    if (lane == first) base = atomicAdd(counter, (u64)__popc(peers));
    base = __shfl_sync(peers, base, first);
    return (i64)base + __popc(peers & ((1u << lane) - 1));
}

struct PeerRank {
    // this rank's grid rows (column peers), the level's number and round
    i32 R;
    i64 lvl;
    u64 round;
    const i32* degree;
    i32* level;
    i16* pred_col;
    i32* next;                      // the new own frontier (local list)
    const u64* expand_write;        // [2R] by parity: where this rank's list goes on each column peer (0: none)
    i64* counters;                  // this level's slot

    // A new own vertex (offset o, of degree d), discovered from grid column `from`: level, delayed
    // predecessor, the new frontier and the next round's expand messages. Returns its degree, which the
    // caller sums and adds once (add_degrees).
    __device__ i64 own(i32 o, i32 d, i32 from) const
    {
        level[o] = (i32)lvl;
        if (pred_col != nullptr) pred_col[o] = (i16)from;
        const i64 slot = reserve_slot((u64*)&counters[NEXT_COUNT]);
        next[slot] = o;
        const u64* dests = expand_write + ((round + 1) & 1) * R;
        for (i32 p = 0; p < R; ++p)
            if (dests[p]) ((u32*)dests[p])[slot] = (u32)o;
        return d;
    }

    // The block's threads' degree sums of their new own vertices, added to the level's counter: one
    // atomic per warp. Every thread of the block calls it.
    __device__ void add_degrees(i64 degrees) const
    {
        degrees = warp_sum(degrees);
        if ((threadIdx.x & 31) == 0 && degrees) atomicAdd((u64*)&counters[NEXT_DEGREES], (u64)degrees);
    }
};

// A chunk of the column frontier whose columns all have at most this many entries is expanded this many
// lanes a column, an entry a lane, without the block's scan and search that balance longer ones.
constexpr i32 PEER_GROUP = 8;

// Local column id of entry k of the level's column frontier: the grid rows' lists one after the
// other (column_start[p] is where grid row p's starts; its own list is `own`, the others' at lists[p]).
__device__ __forceinline__ i32 column_at(i64 k, const i64* column_start, i32 i, i32 b, const i32* own,
                                         const u64* lists)
{
    i32 p = 0;
    while (k >= column_start[p + 1]) ++p;
    const i64 at = k - column_start[p];
    return p * b + (p == i ? own[at] : (i32)__ldcg((const u32*)lists[p] + at));
}

extern "C" __global__ void __launch_bounds__(PEER_THREADS, 1)
peer_levels(const offset_t* __restrict__ col_ptr, const u32* col_words, const i32* col_starts,
            const i32* __restrict__ row_idx, const i32* __restrict__ degree,
            i32* own_list, i32* spare_list, i32* __restrict__ own_count, u32* __restrict__ visited,
            i32* __restrict__ level, i32* __restrict__ pred_row, const u32* found_words, const i32* found_starts,
            i16* __restrict__ pred_col, i64* __restrict__ counters, const u64* __restrict__ expand_read,
            const u64* expand_signals, const u64* __restrict__ expand_write, const u64* __restrict__ expand_signal_out, i32 lists_half,
            const u64* __restrict__ fold_read, const u64* fold_signals, const u64* __restrict__ fold_write,
            const u64* __restrict__ fold_signal_out,
            const i64* records, const u64* __restrict__ record_out, i64* ctl, u64* rounds,
            i64* __restrict__ stats, i64* __restrict__ log, i64 log_capacity, i32 i, i32 j, i32 R, i32 C,
            i32 P, i32 b, i64 capacity, i64 edge_limit, double alpha, double beta, i64 n)
{
    cg::grid_group grid = cg::this_grid();
    // [R + 1] where each grid row's list starts in the column frontier, [C] the fold entries, [R] where
    // the column peers' lists of the level are
    extern __shared__ i64 column_start[];
    i64* landed = column_start + R + 1;
    u64* lists = (u64*)(landed + C);
    __shared__ i64 first_entry[PEER_THREADS], first_of[PEER_THREADS];   // the chunk's columns: first entry, start
    __shared__ i32 first_column[PEER_THREADS];
    __shared__ i64 chunk_total, sum_count, sum_degrees, own_next, own_next_degrees;
    const int t = threadIdx.x;
    const bool leader = blockIdx.x == 0;         // the block that signals, puts the records and logs
    const i64 first_thread = (i64)blockIdx.x * PEER_THREADS + t, threads = (i64)gridDim.x * PEER_THREADS;
    const i64 words = FOLD_COUNTS + C;           // a counter slot
    const bool one_column = C == 1;
    // where the search stands (the control block the host filled: the level to discover, the global
    // frontier, the unvisited edges, the visited count, the search's log records so far) and the
    // round, read by every thread before the first grid barrier (the leader writes them back after the
    // last), so the launch is the same every time and a CUDA graph replays it
    Levels start;
    start.load(ctl);
    i64 lvl = start.lvl, nf = start.nf, mf = start.mf, mu = start.mu, visited_count = start.visited;
    const i64 first_record = start.logged;
    u64 round = __ldcg(rounds);
    if (leader && t == 0) ctl[CTL_START_NS] = global_ns();
    i32* cur = own_list;
    i32* nxt = spare_list;
    i64 nown = *own_count, step = STEP_SMALL, logged = 0, own_degrees = 0, checked_total = 0;
    i64 expand_bytes = 0, fold_bytes = 0;        // the messages' bytes over the stretch (the leader's)
    i64 waited_ns = 0, expanded_ns = 0, folded_ns = 0, updated_ns = 0;      // this level's phase ends

    // Round `round`'s expand message: the own frontier as the host left it; the first level's counters.
    for (i32 p = 0; p < R; ++p) {
        u32* dest = (u32*)expand_write[(round & 1) * R + p];
        if (dest)
            for (i64 k = first_thread; k < nown; k += threads) dest[k] = (u32)cur[k];
    }
    if (leader)
        for (i64 w = t; w < words; w += PEER_THREADS) counters[w] = 0;
    grid.sync();
    if (leader)
        for (i32 p = t; p < R; p += PEER_THREADS)
            if (p != i) store_release((u64*)expand_signal_out[p] + (round & 1) * R, signal_word(round, nown));

    for (int k = 0; step == STEP_SMALL; ++k) {
        const i64 parity = round & 1;
        i64* slot = counters + (k % PEER_COUNTER_SLOTS) * words;
        if (leader) {                            // slot k + 1 was last read during level k - 2
            i64* ahead = counters + ((k + 1) % PEER_COUNTER_SLOTS) * words;
            for (i64 w = t; w < words; w += PEER_THREADS) ahead[w] = 0;
        }
        // the column peers' list lengths: their expand signals at the first level, after it the last
        // decision's records, already waited for (column peer p is rank p * C + j: dbfs.grid.Grid.rank)
        // the column peers' lists of this level: landed by round parity, or their own by the stretch's
        const i64 half = lists_half < 0 ? parity : (lists_half + k) & 1;
        for (i32 p = t; p < R; p += PEER_THREADS) lists[p] = expand_read[half * R + p];
        for (i32 p = t; p < R; p += PEER_THREADS)
            column_start[p + 1] = p == i ? nown
                : k > 0 ? __ldcg(records + (((round - 1) & 1) * P + p * C + j) * PEER_RECORD_WORDS + PEER_RECORD_COUNT)
                : wait_signal(expand_signals + parity * R + p, round);
        __syncthreads();
        if (t == 0) {
            column_start[0] = 0;
            for (i32 p = 0; p < R; ++p) column_start[p + 1] += column_start[p];
            if (leader) waited_ns = global_ns();
        }
        __syncthreads();
        const PeerRank me{R, lvl, round, degree, level, pred_col, nxt, expand_write, slot};
        i64 found_degrees = 0, checked_here = 0;     // of this thread's new own vertices; the entries it counts
        // an entry of column `from` leading to local row `row`: claimed when its atomicOr flips the visited bit
        auto claim = [&](i32 row, i32 from) {
            const i32 m = row / b, o = row - m * b;
            const i32 d = m == j ? degree[o] : 0;              // loaded beside the claim, not after it
            const u32 bit = 1u << (row & 31);
            if (atomicOr(&visited[row >> 5], bit) & bit) return;
            pred_row[Positions{found_words, found_starts}.of(row)] = from;
            if (m == j) {
                found_degrees += me.own(o, d, j);
            } else {
                const i64 at = reserve_slot((u64*)&slot[FOLD_COUNTS + m]);
                ((u32*)fold_write[m])[at] = (u32)o;
            }
        };
        // expansion: each block a contiguous share of the column frontier, a column a thread at a time
        const i64 ncols = column_start[R], share = (ncols + gridDim.x - 1) / gridDim.x;
        const i64 lo = min(ncols, (i64)blockIdx.x * share), hi = min(ncols, lo + share);
        for (i64 base = lo; base < hi; base += PEER_THREADS) {
            const i32 items = (i32)min((i64)PEER_THREADS, hi - base);
            const i64 c = base + t;
            i64 start = 0, degree_c = 0;
            i32 column = 0;
            if (c < hi) {
                column = column_at(c, column_start, i, b, cur, lists);
                ColumnStarts{col_ptr, Positions{col_words, col_starts}}.extent(column, &start, &degree_c);
            }
            first_of[t] = start;
            first_column[t] = column;
            if (!__syncthreads_or(degree_c > PEER_GROUP)) {
                // a chunk of short columns (a lattice's): PEER_GROUP lanes a column, an entry a lane
                first_entry[t] = degree_c;
                checked_here += degree_c;
                __syncthreads();
                const i32 lane = t % PEER_GROUP;
                for (i32 k = t / PEER_GROUP; k < items; k += PEER_THREADS / PEER_GROUP)
                    if (lane < first_entry[k]) claim(row_idx[first_of[k] + lane], first_column[k]);
                __syncthreads();                     // the chunk's tables are read before the next one
                continue;
            }
            first_entry[t] = block_prefix(degree_c, &chunk_total);
            __syncthreads();
            const i64 total = chunk_total;
            for (i64 e = t; e < total; e += PEER_THREADS) {
                i32 low = 0, high = items - 1;       // the last column whose first entry is <= e
                while (low < high) {
                    const i32 mid = (low + high + 1) >> 1;
                    if (first_entry[mid] <= e) low = mid; else high = mid - 1;
                }
                claim(row_idx[first_of[low] + e - first_entry[low]], first_column[low]);
            }
            if (t == 0) checked_here += total;
            __syncthreads();                         // the chunk's tables are read before the next one
        }
        checked_here = warp_sum(checked_here);
        if ((t & 31) == 0 && checked_here) atomicAdd((u64*)&slot[CHECKED], (u64)checked_here);
        me.add_degrees(found_degrees);
        found_degrees = 0;
        grid.sync();                                 // every block's discoveries are stored
        if (leader && t == 0) expanded_ns = folded_ns = updated_ns = global_ns();
        if (!one_column) {
            if (leader)
                for (i32 m = t; m < C; m += PEER_THREADS)
                    if (m != j)
                        store_release((u64*)fold_signal_out[m] + parity * C,
                                      signal_word(round, __ldcg(&slot[FOLD_COUNTS + m])));
            i64 landed_total = 0;
            for (i32 m = t; m < C; m += PEER_THREADS)
                landed[m] = m == j ? 0 : wait_signal(fold_signals + parity * C + m, round);
            __syncthreads();
            for (i32 m = 0; m < C; ++m) landed_total += landed[m];
            if (leader && t == 0) folded_ns = global_ns();
            // update from the fold lists: at most an entry a thread of the leader block, which then
            // puts the records behind a block barrier while the other blocks go on to wait for them (a
            // lattice level's fold); more over the whole grid, a grid barrier before the records
            const bool leader_alone = landed_total <= PEER_THREADS;
            if (leader || !leader_alone) {
                const i64 first = leader_alone ? t : first_thread, stride = leader_alone ? PEER_THREADS : threads;
                for (i32 m = 0; m < C; ++m) {
                    const u32* from = (const u32*)fold_read[m];
                    for (i64 e = first; e < landed[m]; e += stride) {
                        const i32 o = (i32)__ldcg(from + e);
                        const i32 row = j * b + o;
                        const u32 bit = 1u << (row & 31);
                        if (!(atomicOr(&visited[row >> 5], bit) & bit)) found_degrees += me.own(o, degree[o], m);
                    }
                }
                me.add_degrees(found_degrees);
            }
            if (leader_alone) __syncthreads(); else grid.sync();    // the new frontier and expand messages are stored
            if (leader && t == 0) updated_ns = global_ns();
        }
        if (leader) {
            // this level's record on every rank (the next level's expand signals); the other blocks
            // take the rank's new frontier from its own record (they may not have waited for the update)
            const i64 next_count = __ldcg(&slot[NEXT_COUNT]), next_degrees = __ldcg(&slot[NEXT_DEGREES]);
            for (i32 p = t; p < P; p += PEER_THREADS) {
                i64* record = (i64*)record_out[p] + parity * P * PEER_RECORD_WORDS;
                record[PEER_RECORD_COUNT] = next_count;
                record[PEER_RECORD_DEGREES] = next_degrees;
                store_release((u64*)&record[PEER_RECORD_ROUND], round);
            }
        }
        // the other blocks first wait for their own rank's record with one thread: while the leader
        // updates, a rank's blocks polling every record at system scope slow the GPU its peers share
        auto wait_record = [&](i32 p) {
            const u64* stamp = (const u64*)(records + (parity * P + p) * PEER_RECORD_WORDS + PEER_RECORD_ROUND);
            while (load_acquire(stamp) != round) __nanosleep(32);
        };
        if (!leader && t == 0) wait_record(i * C + j);
        __syncthreads();
        for (i32 p = t; p < P; p += PEER_THREADS) wait_record(p);
        __syncthreads();
        const i64 checked = __ldcg(&slot[CHECKED]);
        i64 level_expand = 0, level_fold = 0;         // this level's messages' bytes (the leader's)
        if (leader && t == 0) {
            level_expand = 4 * nown * (R - 1);
            for (i32 m = 0; m < C; ++m)
                if (m != j) level_fold += 4 * __ldcg(&slot[FOLD_COUNTS + m]);
            expand_bytes += level_expand;
            fold_bytes += level_fold;
        }
        if (t == 0) {
            i64 count = 0, degrees = 0;
            for (i32 p = 0; p < P; ++p) {
                const i64* record = records + (parity * P + p) * PEER_RECORD_WORDS;
                count += __ldcg(&record[PEER_RECORD_COUNT]);
                degrees += __ldcg(&record[PEER_RECORD_DEGREES]);
                if (p == i * C + j) {
                    own_next = __ldcg(&record[PEER_RECORD_COUNT]);
                    own_next_degrees = __ldcg(&record[PEER_RECORD_DEGREES]);
                }
            }
            sum_count = count;
            sum_degrees = degrees;
            if (leader && first_record + logged < log_capacity) {
                i64* entry = log + (first_record + logged) * PEER_LOG_WORDS;
                entry[PEER_LOG_LEVEL] = lvl - 1;
                entry[PEER_LOG_FRONTIER] = nf;
                entry[PEER_LOG_EDGES] = mf;
                entry[PEER_LOG_CHECKED] = checked;
                entry[PEER_LOG_EXPAND_BYTES] = level_expand;
                entry[PEER_LOG_FOLD_BYTES] = level_fold;
                entry[PEER_LOG_WAITED_NS] = waited_ns;
                entry[PEER_LOG_EXPANDED_NS] = expanded_ns;
                entry[PEER_LOG_FOLDED_NS] = folded_ns;
                entry[PEER_LOG_UPDATED_NS] = updated_ns;
                entry[PEER_LOG_END_NS] = global_ns();
            }
        }
        __syncthreads();
        const i64 nf_new = sum_count, mf_new = sum_degrees;
        mu -= mf_new;
        visited_count += nf_new;
        step = next_step(false, nf_new, nf, mf_new, 0, mu, alpha, beta, n, edge_limit);
        if (nf_new > capacity) step = step == STEP_SMALL ? STEP_TOPDOWN : step;
        nf = nf_new;
        mf = mf_new;
        ++lvl;
        ++logged;
        ++round;
        nown = own_next;
        own_degrees = own_next_degrees;
        checked_total += checked;
        i32* swap = cur;
        cur = nxt;
        nxt = swap;
        __syncthreads();                             // the block's shared sums are read before the next level
    }
    // Leave the own frontier where the host loop expects it.
    if (cur != own_list)
        for (i64 k = first_thread; k < nown; k += threads) own_list[k] = cur[k];
    if (leader && t == 0) {
        *own_count = (i32)nown;
        stats[STAT_COUNT] = nown;
        stats[STAT_DEGREES] = own_degrees;
        stats[STAT_CHECKED] += checked_total;
        const Levels end{lvl, nf, mf, mu, visited_count, logged, step};
        end.store(ctl);
        ctl[CTL_EXPAND_BYTES] = expand_bytes;
        ctl[CTL_FOLD_BYTES] = fold_bytes;
        *rounds = round + 1;                     // the last level's expand message (round `round`) went unused
    }
}

// A bulk level's global totals without the host (the grid loop's whole levels over NVSHMEM): every
// rank puts its new frontier's size and degree sum (stats) into its record on every rank, waits for
// every rank's record of the round and sums them into totals[0] and totals[1], the same on every rank.
// One block, a thread per rank at a time. Rounds count these levels over the run on the device
// (`rounds`), so a CUDA graph replays the launch; the records alternate between two halves by the
// round's parity: a rank writes round r + 2 over round r only after every rank's round r + 1 record,
// which each rank wrote after summing round r. `totals` and `status` are pinned host memory written
// through its mapped address, and the level's counters are cleared for the next level here: the level's
// graph ends without a copy or memset node for them (each costs a node's launch and ~2 us of the GPU).
extern "C" __global__ void level_totals(i64* __restrict__ stats, const u64* __restrict__ record_out,
                                        const i64* records, i32 P, u64* rounds, i64* __restrict__ totals,
                                        i64* __restrict__ status)
{
    __shared__ unsigned long long sums[2];
    const i32 t = threadIdx.x;
    const u64 round = *rounds + 1;
    const i64 half = (i64)(round & 1) * P * PEER_RECORD_WORDS;
    if (t == 0) sums[0] = sums[1] = 0;
    for (i32 p = t; p < P; p += blockDim.x) {
        i64* record = (i64*)record_out[p] + half;
        record[PEER_RECORD_COUNT] = stats[STAT_COUNT];
        record[PEER_RECORD_DEGREES] = stats[STAT_DEGREES];
        store_release((u64*)&record[PEER_RECORD_ROUND], round);
    }
    i64 count = 0, degrees = 0;
    for (i32 p = t; p < P; p += blockDim.x) {
        const i64* record = records + half + (i64)p * PEER_RECORD_WORDS;
        while (load_acquire((const u64*)&record[PEER_RECORD_ROUND]) != round) __nanosleep(64);
        count += __ldcg(&record[PEER_RECORD_COUNT]);
        degrees += __ldcg(&record[PEER_RECORD_DEGREES]);
    }
    __syncthreads();
    count = warp_sum(count);
    degrees = warp_sum(degrees);
    if ((t & 31) == 0) {
        atomicAdd(&sums[0], (unsigned long long)count);
        atomicAdd(&sums[1], (unsigned long long)degrees);
    }
    if (t < STAT_WORDS) {                        // every read of stats came before the barrier above
        status[t] = stats[t];
        stats[t] = 0;
    }
    __syncthreads();
    if (t == 0) {
        totals[0] = (i64)sums[0];
        totals[1] = (i64)sums[1];
        *rounds = round;
    }
}
