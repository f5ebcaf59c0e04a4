// Block storage for the graph builder (Graph500 kernel 1): a counting sort of (key, value) entries
// into the key's segment, done in place so that the count array itself becomes the segment offsets.
//
// The counts, cursors and offsets are offset_t (common.cuh): int32 where the graph's entries fit, so the
// build holds the narrow offsets from its start (dbfs.build).
//
// count_keys: counts[key] += 1 for every entry whose key is >= 0 (a negative key marks an entry to
// leave out, e.g. a self-loop). count_keys and scatter_values read entry e's key (and value) at
// e * stride: 1 for arrays of their own, 2 for the (column, row) pairs interleaved as the builder's
// exchange delivers them, read in place. tile_totals / scan_totals / scan_tiles: the in-place
// inclusive prefix sum of an offset_t array in three launches (per-tile totals, one block scanning the
// totals, each tile scanned with its offset), turning the counts into segment ends. scatter_values:
// every kept entry takes the slot --cursor[key] and writes its value there; with cursor = segment ends
// each segment is filled from its end and cursor[key] finishes at the segment's start, i.e. the
// scanned counts become the offsets and no second per-segment array exists. segment_lengths:
// ptr[k+1] - ptr[k] as int32.
// csr_from_csc: the row-major copy of a CSC block, one thread per CSC entry (its column found by a
// binary search of col_ptr) scattered like scatter_values with cursor = row ends. The order inside a
// segment is whatever the atomics give; nothing downstream depends on it.
// append_segments: whole segments at once, where scatter_values places an entry at a time: segment k
// of `values` (values[starts[k]] .. values[starts[k+1] - 1]) goes, each value plus `offset`, to the
// slots just below cursor[k], in order, and cursor[k] is lowered by its length (the row copy of a grid
// of one column, from the column segments the ranks send: dbfs.build). A block takes APPEND_SEGMENTS
// segments at a time, their starts in shared memory, a value a thread at a time (its segment found by a
// binary search there), so reads and writes run along the segments with no atomics.
//
// Where a hypersparse block's offsets are built held by the positions of its non-empty columns (dbfs.build:
// the columns are marked first, from the counting pass's keys, by mark_keys), count_keys and
// scatter_values take a column key's count and cursor at its position, segment_lengths reads the lengths
// through ColumnStarts, and csr_from_csc finds an entry's column from its held position (Positions::member);
// null Positions words: every key is its own position.
//
// Each thread of the scan kernels holds `items` consecutive elements (a tile is blockDim.x * items);
// blockDim.x is a multiple of 32, at most 1024. Slots outside [0, capacity) are never written (only
// input that changed between the counting and the scatter pass could produce them).
#include "positions.cuh"

// *at += 1 and *at -= 1 (returning the value before), atomically, at either width of offset_t.
__device__ __forceinline__ void increment(offset_t* at)
{
#if OFFSET_BITS == 32
    atomicAdd(at, 1);
#else
    atomicAdd((u64*)at, 1ULL);
#endif
}

__device__ __forceinline__ i64 decrement(offset_t* at)
{
#if OFFSET_BITS == 32
    return atomicSub(at, 1);
#else
    return (i64)atomicAdd((u64*)at, ~0ULL);     // adding 2^64 - 1 subtracts one
#endif
}

extern "C" __global__ void count_keys(const i32* __restrict__ keys, i64 n, i32 stride, offset_t* __restrict__ counts,
                                      const u32* __restrict__ words, const i32* __restrict__ starts)
{
    const Positions held{words, starts};
    for (i64 e = blockIdx.x * (i64)blockDim.x + threadIdx.x; e < n; e += (i64)gridDim.x * blockDim.x) {
        const i32 key = keys[e * stride];
        if (key >= 0) increment(&counts[held.of(key)]);
    }
}

// keep_keys: kept[e] := the key read at e * stride, and its bit in words set where the key is >= 0 (the
// words zeroed before the first call); a bit already set is not set again, so a key repeated many times
// (a hub's column) costs one atomic, not one an entry.
extern "C" __global__ void keep_keys(const i32* __restrict__ keys, i64 n, i32 stride, i32* __restrict__ kept,
                                     u32* __restrict__ words)
{
    for (i64 e = blockIdx.x * (i64)blockDim.x + threadIdx.x; e < n; e += (i64)gridDim.x * blockDim.x) {
        const i32 key = keys[e * stride];
        kept[e] = key;
        if (key < 0) continue;
        const u32 bit = 1u << (key & 31);
        if (!(words[key >> 5] & bit)) atomicOr(&words[key >> 5], bit);
    }
}

// totals[k] += counts[k]: column counts made elsewhere (owner_groups.cu owner_column_counts, each rank's
// block brought to it by the build's exchange) added to the column pointers' counts.
extern "C" __global__ void add_counts(const u32* __restrict__ counts, i64 n, offset_t* __restrict__ totals)
{
    for (i64 k = blockIdx.x * (i64)blockDim.x + threadIdx.x; k < n; k += (i64)gridDim.x * blockDim.x)
        totals[k] += counts[k];
}

// totals[t] = sum of values[t*tile .. (t+1)*tile), tile = blockDim.x * items.
extern "C" __global__ void tile_totals(const offset_t* __restrict__ values, i64 n, i32 items,
                                       i64* __restrict__ totals)
{
    const i64 first = ((i64)blockIdx.x * blockDim.x + threadIdx.x) * items;
    i64 sum = 0;
    for (i64 k = first; k < first + items && k < n; ++k) sum += values[k];
    i64 tile;
    block_prefix(sum, &tile);
    if (threadIdx.x == 0) totals[blockIdx.x] = tile;
}

// In-place exclusive scan of the ntiles totals by a single block.
extern "C" __global__ void scan_totals(i64* __restrict__ totals, i64 ntiles, i32 items)
{
    const i64 chunk = (i64)blockDim.x * items;
    i64 carry = 0;
    for (i64 base = 0; base < ntiles; base += chunk) {
        const i64 first = base + (i64)threadIdx.x * items, last = min(first + items, ntiles);
        i64 sum = 0;
        for (i64 k = first; k < last; ++k) sum += totals[k];
        i64 chunk_total;
        i64 prefix = carry + block_prefix(sum, &chunk_total);
        for (i64 k = first; k < last; ++k) {
            const i64 t = totals[k];
            totals[k] = prefix;
            prefix += t;
        }
        carry += chunk_total;
    }
}

// values[k] := offsets[tile of k] + values[tile start .. k] summed (inclusive), in place: every
// element is read and written by the one thread that holds it.
extern "C" __global__ void scan_tiles(offset_t* __restrict__ values, i64 n, i32 items,
                                      const i64* __restrict__ offsets)
{
    const i64 first = ((i64)blockIdx.x * blockDim.x + threadIdx.x) * items;
    const i64 last = min(first + items, n);
    i64 sum = 0;
    for (i64 k = first; k < last; ++k) sum += values[k];
    i64 tile;
    i64 running = offsets[blockIdx.x] + block_prefix(sum, &tile);
    for (i64 k = first; k < last; ++k) {
        running += values[k];
        values[k] = running;
    }
}

extern "C" __global__ void scatter_values(const i32* __restrict__ keys, const i32* __restrict__ values,
                                          i64 n, i32 stride, offset_t* __restrict__ cursor, i32* __restrict__ out,
                                          i64 capacity, const u32* __restrict__ words, const i32* __restrict__ starts)
{
    const Positions held{words, starts};
    for (i64 e = blockIdx.x * (i64)blockDim.x + threadIdx.x; e < n; e += (i64)gridDim.x * blockDim.x) {
        const i32 key = keys[e * stride];
        if (key < 0) continue;
        const u64 slot = (u64)(decrement(&cursor[held.of(key)]) - 1);
        if (slot < (u64)capacity) out[slot] = values[e * stride];
    }
}

// out[k] := the length of segment first + k (ColumnStarts: offsets held by position or not).
extern "C" __global__ void segment_lengths(const offset_t* __restrict__ ptr, const u32* __restrict__ words,
                                           const i32* __restrict__ starts, i64 first, i64 n, i32* __restrict__ out)
{
    const ColumnStarts columns{ptr, Positions{words, starts}};
    for (i64 k = blockIdx.x * (i64)blockDim.x + threadIdx.x; k < n; k += (i64)gridDim.x * blockDim.x)
        out[k] = (i32)columns.length(first + k);
}

// The segments of ptr[0..n] that hold an entry (ptr[k + 1] > ptr[k]), added to *count (zeroed by the
// caller): a block's non-empty columns, which size its gathered frontier (dbfs.search_state).
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
count_nonempty(const offset_t* __restrict__ ptr, i64 n, u64* __restrict__ count)
{
    u64 mine = 0;
    for (i64 k = blockIdx.x * (i64)blockDim.x + threadIdx.x; k < n; k += (i64)gridDim.x * blockDim.x)
        mine += ptr[k + 1] != ptr[k];
    mine = warp_sum(mine);
    if ((threadIdx.x & 31) == 0 && mine) atomicAdd(count, mine);
}

// col_ptr holds ncols + 1 offsets: every column's, or (words) the held columns' of a range of nwords words.
extern "C" __global__ void csr_from_csc(const offset_t* __restrict__ col_ptr, i64 ncols, const u32* __restrict__ words,
                                        const i32* __restrict__ starts, i64 nwords, const i32* __restrict__ row_idx,
                                        i64 nnz, offset_t* __restrict__ cursor, i32* __restrict__ col_idx)
{
    const Positions held{words, starts};
    for (i64 e = blockIdx.x * (i64)blockDim.x + threadIdx.x; e < nnz; e += (i64)gridDim.x * blockDim.x) {
        i64 lo = 0, hi = ncols - 1;          // largest c with col_ptr[c] <= e
        while (lo < hi) {
            const i64 mid = lo + ((hi - lo + 1) >> 1);
            if (col_ptr[mid] <= e) lo = mid;
            else hi = mid - 1;
        }
        const u64 slot = (u64)(decrement(&cursor[row_idx[e]]) - 1);
        if (slot < (u64)nnz) col_idx[slot] = (i32)held.member(lo, nwords);
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
append_segments(const offset_t* __restrict__ starts, i64 n, const i32* __restrict__ values, i32 offset,
                offset_t* __restrict__ cursor, i32* __restrict__ out, i64 capacity)
{
    __shared__ i64 first[APPEND_SEGMENTS + 1];
    for (i64 base = (i64)blockIdx.x * APPEND_SEGMENTS; base < n; base += (i64)gridDim.x * APPEND_SEGMENTS) {
        const i32 items = (i32)min((i64)APPEND_SEGMENTS, n - base);
        for (i32 k = threadIdx.x; k <= items; k += BLOCK_THREADS) first[k] = starts[base + k];
        __syncthreads();
        for (i64 at = first[0] + threadIdx.x; at < first[items]; at += BLOCK_THREADS) {
            i32 low = 0, high = items - 1;       // the last segment starting at or before `at`
            while (low < high) {
                const i32 mid = (low + high + 1) >> 1;
                if (first[mid] <= at) low = mid; else high = mid - 1;
            }
            const u64 slot = (u64)((i64)cursor[base + low] - (first[low + 1] - at));
            if (slot < (u64)capacity) out[slot] = values[at] + offset;
        }
        __syncthreads();                         // every value placed below the cursors before they move
        for (i32 k = threadIdx.x; k < items; k += BLOCK_THREADS)
            cursor[base + k] -= (offset_t)(first[k + 1] - first[k]);
        __syncthreads();                         // the starts are read before the next segments' overwrite them
    }
}
