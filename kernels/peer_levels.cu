// Small top-down levels of a grid of ranks, driven by the GPUs (paper 004, Algorithm 2, sections 3.2-3.5,
// with the messages put by the kernels: the GPU-initiated exchanges of dbfs.nvshmem).
//
// A lattice or road network has thousands of levels of a few thousand vertices; driven by the host, a
// distributed level costs hundreds of microseconds of waits, launches and MPI calls for microseconds of
// work. Here one persistent block per rank runs such levels back to back, and the ranks' kernels talk
// to each other directly through memory NVSHMEM mapped into every process (peer addresses):
//
//   expand  every new own vertex is stored, as it is found, into this rank's slot of each grid-column
//           peer's expand landing (double-buffered by round parity), then a signal word per peer;
//   gather  the column frontier: the own list and the peers' landed lists, as local column ids;
//   expand  the column frontier's CSC entries, load-balanced over the block (a block scan of the
//           frontier degrees, CHUNK columns at a time, and a binary search per entry); an entry
//           claims its row when its atomicOr flips the visited bit; an owned row is a new own vertex, another owner's row is stored
//           straight into this rank's slot of that owner's fold landing;
//   fold    a signal word per grid-row peer, then wait for the row peers' signals;
//   update  the landed fold lists' unvisited owned vertices become new own vertices (delayed
//           predecessor: the sender's grid column);
//   decide  every rank puts its new frontier's size and degree sum into a record on every rank and waits
//           for all of them; all compute the same next step (level_control.cuh next_step) and stay
//           while it is another small level.
//
// A signal word holds the round in its upper 32 bits and the message's entry count in the lower; a
// reduction record ends with its round. Rounds count the kernel's levels over the whole run, so a word
// left from an earlier level or search never matches. Why one landing per peer suffices for the fold
// and two for the expand: a rank writes round r's fold into a peer only after the round r - 1
// decision, which needed that peer's round r - 1 record, written after it read its fold landing; the
// expand of round r + 1 is written during round r's update, when a column peer may still read round
// r's, but not round r - 1's (the round r - 1 decision again). Landed words are read through L2
// (__ldcg): a line cached in L1 two rounds earlier would be stale.
//
// A level of the kernel examines at most `capacity` entries (the host enters and the kernel stays only
// while the frontier's edges and size are at most the capacity), so no message or list holds more.
// One block per rank: several ranks sharing a GPU under CUDA MPS must all be resident while they wait
// for each other's signals, and a block of every rank always is.
#include "level_control.cuh"

__device__ __forceinline__ u64 signal_word(u64 round, i64 count)
{
    return (round << 32) | (u64)(u32)count;
}

// A word another rank reads: stored with release semantics at system scope, after a block barrier, so
// every store the block made before the barrier is visible first (one fence for the block's messages).
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

// Frontier columns a thread scans per chunk of the expansion: fewer chunks, fewer barriers and more
// loads in flight per thread in a block whose levels are latency-bound.
constexpr int COLUMNS_PER_THREAD = 2;
constexpr int CHUNK = PEER_THREADS * COLUMNS_PER_THREAD;

struct PeerBlock {
    // this rank: grid coordinates, grid shape, block size, the level's number and round
    i32 i, j, R, C, b;
    i64 capacity, lvl;
    u64 round;
    const i32* degree;
    i32* level;
    i32* pred_col;
    u32* visited;
    i32* next;                      // the new own frontier (local list)
    const u64* expand_out;          // [R] this rank's expand slot on each column peer (parity 0; 0: self)
    i32* next_count;                // shared counters
    i64* next_degrees;

    // A new own vertex (offset o), discovered from grid column `from`: level, delayed predecessor,
    // the new frontier and the next round's expand messages.
    __device__ void own(i32 o, i32 from) const
    {
        level[o] = (i32)lvl;
        if (pred_col != nullptr) pred_col[o] = from;
        const i32 slot = atomicAdd(next_count, 1);
        next[slot] = o;
        const i64 parity = (round + 1) & 1;
        for (i32 p = 0; p < R; ++p)
            if (expand_out[p]) ((u32*)expand_out[p])[parity * R * capacity + slot] = (u32)o;
        atomicAdd((u64*)next_degrees, (u64)degree[o]);
    }
};

extern "C" __global__ void __launch_bounds__(PEER_THREADS, 1)
peer_levels(const i64* __restrict__ col_ptr, const i32* __restrict__ row_idx, const i32* __restrict__ degree,
            i32* own_list, i32* spare_list, i32* __restrict__ own_count, u32* __restrict__ visited,
            i32* __restrict__ level, i32* __restrict__ pred_row, i32* __restrict__ pred_col,
            i32* __restrict__ columns, const u32* expand_in, const u64* expand_signals,
            const u64* __restrict__ expand_out, const u64* __restrict__ expand_signal_out, const u32* fold_in,
            const u64* fold_signals, const u64* __restrict__ fold_out, const u64* __restrict__ fold_signal_out,
            const i64* records, const u64* __restrict__ record_out, i64* __restrict__ ctl,
            i64* __restrict__ stats, i64* __restrict__ log, i64 log_capacity, i32 i, i32 j, i32 R, i32 C,
            i32 P, i32 b, i64 capacity, u64 round, i64 lvl, i64 nf, i64 mf, i64 mu, i64 visited_count,
            double alpha, double beta, i64 n)
{
    // [C] this level's fold entries per grid column, [C] the landed ones, [R] the landed expand entries
    extern __shared__ i32 fold_counts[];
    i32* landed = fold_counts + C;
    i32* expand_counts = landed + C;
    __shared__ i64 first_entry[CHUNK], first_of[CHUNK];
    __shared__ i64 chunk_total, sum_count, sum_degrees, checked, next_degrees;
    __shared__ i32 next_count;
    const int t = threadIdx.x;
    if (t == 0) ctl[CTL_START_NS] = global_ns();
    i32* cur = own_list;
    i32* nxt = spare_list;
    i64 nown = *own_count, step = STEP_SMALL, logged = 0, own_degrees = 0, checked_total = 0;
    i64 waited_ns = 0, expanded_ns = 0, folded_ns = 0, updated_ns = 0;      // this level's phase ends (thread 0)

    // Round `round`'s expand message: the own frontier as the host left it.
    for (i32 p = 0; p < R; ++p) {
        if (!expand_out[p]) continue;
        u32* dest = (u32*)expand_out[p] + (round & 1) * R * capacity;
        for (i64 k = t; k < nown; k += PEER_THREADS) dest[k] = (u32)cur[k];
    }
    __syncthreads();
    for (i32 p = t; p < R; p += PEER_THREADS)
        if (expand_out[p]) store_release((u64*)expand_signal_out[p] + (round & 1) * R, signal_word(round, nown));

    while (step == STEP_SMALL) {
        const i64 parity = round & 1;
        for (i32 p = t; p < R; p += PEER_THREADS)
            if (p != i) expand_counts[p] = (i32)wait_signal(expand_signals + parity * R + p, round);
        if (t == 0) {
            next_count = 0;
            next_degrees = 0;
            checked = 0;
            expand_counts[i] = (i32)nown;
        }
        for (i32 m = t; m < C; m += PEER_THREADS) fold_counts[m] = 0;
        __syncthreads();
        if (t == 0) waited_ns = global_ns();
        // gather: the column frontier as local column ids (grid row p's owned columns start at p * b)
        i64 ncols = 0;
        for (i32 p = 0; p < R; ++p) {
            const i32 count = expand_counts[p];
            const u32* from = expand_in + (parity * R + p) * capacity;
            for (i64 k = t; k < count; k += PEER_THREADS)
                columns[ncols + k] = (i32)p * b + (p == i ? cur[k] : (i32)__ldcg(from + k));
            ncols += count;
        }
        __syncthreads();
        const PeerBlock me{i, j, R, C, b, capacity, lvl, round, degree, level, pred_col, visited, nxt, expand_out,
                           &next_count, &next_degrees};
        // expansion, PEER_THREADS frontier columns at a time
        for (i64 base = 0; base < ncols; base += CHUNK) {
            const i32 items = (i32)min((i64)CHUNK, ncols - base);
            i64 starts[COLUMNS_PER_THREAD], degrees[COLUMNS_PER_THREAD], sum = 0;
#pragma unroll
            for (int q = 0; q < COLUMNS_PER_THREAD; ++q) {
                const i64 k = base + t * COLUMNS_PER_THREAD + q;
                starts[q] = degrees[q] = 0;
                if (k < ncols) {
                    const i32 c = columns[k];
                    starts[q] = col_ptr[c];
                    degrees[q] = col_ptr[c + 1] - starts[q];
                }
                sum += degrees[q];
            }
            i64 before = block_prefix(sum, &chunk_total);
#pragma unroll
            for (int q = 0; q < COLUMNS_PER_THREAD; ++q) {
                first_entry[t * COLUMNS_PER_THREAD + q] = before;
                first_of[t * COLUMNS_PER_THREAD + q] = starts[q];
                before += degrees[q];
            }
            __syncthreads();
            const i64 total = chunk_total;
            for (i64 e = t; e < total; e += PEER_THREADS) {
                i32 lo = 0, hi = items - 1;          // the last column whose first entry is <= e
                while (lo < hi) {
                    const i32 mid = (lo + hi + 1) >> 1;
                    if (first_entry[mid] <= e) lo = mid; else hi = mid - 1;
                }
                const i32 row = row_idx[first_of[lo] + e - first_entry[lo]];
                const u32 bit = 1u << (row & 31);
                if (atomicOr(&visited[row >> 5], bit) & bit) continue;
                pred_row[row] = columns[base + lo];
                const i32 m = row / b, o = row - m * b;
                if (m == j) {
                    me.own(o, j);
                } else {
                    const i32 slot = atomicAdd(&fold_counts[m], 1);
                    ((u32*)fold_out[m])[slot] = (u32)o;
                }
            }
            if (t == 0) checked += total;
            __syncthreads();                         // the chunk's tables are read before the next one
        }
        __syncthreads();
        if (t == 0) expanded_ns = global_ns();
        for (i32 m = t; m < C; m += PEER_THREADS)
            if (fold_out[m]) store_release((u64*)fold_signal_out[m], signal_word(round, fold_counts[m]));
        for (i32 m = t; m < C; m += PEER_THREADS)
            if (m != j) landed[m] = (i32)wait_signal(fold_signals + m, round);
        __syncthreads();
        if (t == 0) folded_ns = global_ns();
        // update from the landed fold lists
        for (i32 m = 0; m < C; ++m) {
            if (m == j) continue;
            const u32* from = fold_in + m * capacity;
            for (i64 k = t; k < landed[m]; k += PEER_THREADS) {
                const i32 o = (i32)__ldcg(from + k);
                const i32 row = j * b + o;
                const u32 bit = 1u << (row & 31);
                if (!(atomicOr(&visited[row >> 5], bit) & bit)) me.own(o, m);
            }
        }
        __syncthreads();
        if (t == 0) updated_ns = global_ns();
        // the next round's expand signals, and this level's record on every rank
        for (i32 p = t; p < R; p += PEER_THREADS)
            if (expand_out[p])
                store_release((u64*)expand_signal_out[p] + ((round + 1) & 1) * R, signal_word(round + 1, next_count));
        for (i32 p = t; p < P; p += PEER_THREADS) {
            i64* record = (i64*)record_out[p] + parity * P * PEER_RECORD_WORDS;
            record[PEER_RECORD_COUNT] = next_count;
            record[PEER_RECORD_DEGREES] = next_degrees;
            store_release((u64*)&record[PEER_RECORD_ROUND], round);
        }
        for (i32 p = t; p < P; p += PEER_THREADS) {
            const u64* stamp = (const u64*)(records + (parity * P + p) * PEER_RECORD_WORDS + PEER_RECORD_ROUND);
            while (load_acquire(stamp) != round) __nanosleep(32);
        }
        __syncthreads();
        if (t == 0) {
            i64 count = 0, degrees = 0;
            for (i32 p = 0; p < P; ++p) {
                const i64* record = records + (parity * P + p) * PEER_RECORD_WORDS;
                count += __ldcg(&record[PEER_RECORD_COUNT]);
                degrees += __ldcg(&record[PEER_RECORD_DEGREES]);
            }
            sum_count = count;
            sum_degrees = degrees;
            if (logged < log_capacity) {
                i64* entry = log + logged * PEER_LOG_WORDS;
                entry[PEER_LOG_LEVEL] = lvl - 1;
                entry[PEER_LOG_FRONTIER] = nf;
                entry[PEER_LOG_EDGES] = mf;
                entry[PEER_LOG_CHECKED] = checked;
                entry[PEER_LOG_EXPAND_BYTES] = 4 * nown * (R - 1);
                entry[PEER_LOG_FOLD_BYTES] = 0;
                for (i32 m = 0; m < C; ++m)
                    if (m != j) entry[PEER_LOG_FOLD_BYTES] += 4 * (i64)fold_counts[m];
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
        step = next_step(false, nf_new, nf, mf_new, 0, mu, alpha, beta, n, capacity);
        if (nf_new > capacity) step = step == STEP_SMALL ? STEP_TOPDOWN : step;
        nf = nf_new;
        mf = mf_new;
        ++lvl;
        ++logged;
        ++round;
        nown = next_count;
        own_degrees = next_degrees;
        checked_total += checked;
        i32* swap = cur;
        cur = nxt;
        nxt = swap;
        __syncthreads();                             // the shared counters are read before the next level resets them
    }
    // Leave the own frontier where the host loop expects it.
    if (cur != own_list)
        for (i64 k = t; k < nown; k += PEER_THREADS) own_list[k] = cur[k];
    if (t == 0) {
        *own_count = (i32)nown;
        stats[STAT_COUNT] = nown;
        stats[STAT_DEGREES] = own_degrees;
        stats[STAT_CHECKED] += checked_total;
        const Levels end{lvl, nf, mf, mu, visited_count, logged, step};
        end.store(ctl);
    }
}
