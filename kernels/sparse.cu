// Sparse int32 blocks (an entry < 0 means "none") in the form of a presence bitmap plus the present
// values in offset order. The delayed-predecessor resolution (paper 004, section 3.5) sends each grid
// column's discoverer ids of another column's block this way, instead of the whole block: after a
// search fewer than half of a block's entries are set on any one rank.
//
// presence_words: a thread per entry, a ballot per warp; bit o of words[o / 32] := values[o] >= 0.
// word_popcounts: counts[w] := popcount(words[w]); their exclusive prefix `starts` (a scan between the
// launches) places each word's present entries.
// move_present: the entry o with its bit set is packed at its position (positions.cuh); a receiver reads
// it there (dbfs.ops.predecessors).
#include "positions.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
presence_words(const i32* __restrict__ values, i64 n, u32* __restrict__ words)
{
    for (i64 o = blockIdx.x * (i64)blockDim.x + threadIdx.x; o < n; o += (i64)gridDim.x * blockDim.x) {
        const u32 word = __ballot_sync(0xffffffffu, values[o] >= 0);   // n is a multiple of 32
        if ((o & 31) == 0) words[o >> 5] = word;
    }
}

// mark_members: bit k of words set for every member k named in members[0..n) (duplicates allowed; the
// words zeroed before): the Positions of a block's rows with an entry, from its n entries' rows.
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
mark_members(const i32* __restrict__ members, i64 n, u32* __restrict__ words)
{
    for (i64 e = blockIdx.x * (i64)blockDim.x + threadIdx.x; e < n; e += (i64)gridDim.x * blockDim.x) {
        const i32 k = members[e];
        atomicOr(&words[k >> 5], 1u << (k & 31));
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
word_popcounts(const u32* __restrict__ words, i64 nwords, i32* __restrict__ counts)
{
    for (i64 w = blockIdx.x * (i64)blockDim.x + threadIdx.x; w < nwords; w += (i64)gridDim.x * blockDim.x)
        counts[w] = __popc(words[w]);
}

// packed[position of o] := values[o] for the present entries.
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
move_present(const i32* __restrict__ values, i32* __restrict__ packed, const u32* __restrict__ words,
             const i32* __restrict__ starts, i64 n)
{
    const Positions present{words, starts};
    for (i64 o = blockIdx.x * (i64)blockDim.x + threadIdx.x; o < n; o += (i64)gridDim.x * blockDim.x) {
        const i64 p = present.find(o);
        if (p >= 0) packed[p] = values[o];
    }
}
