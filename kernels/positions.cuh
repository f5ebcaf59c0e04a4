// A local index range's members that hold something (dbfs.ops.sparse.Positions): bit k of words[k / 32] is
// set for such a member k, and starts[g] counts the set bits of the words before word POSITION_WORDS * g
// (a start a group of four words: 1/32 of a byte a member, where a start a word took an eighth). An array
// held by position keeps member k at position starts[k / 128] plus the set bits below k in its group's
// words: only the members that can hold a value take room (the non-empty columns of a hypersparse block,
// the present entries of a packed message). below(k), the held members under k, is defined for every k in
// [0, n] (n a multiple of 128): a CSC's column offsets held by position (ColumnStarts) give any column's
// start as ptr[below(c)]. A group's words are read as one 16-byte load (words 16-byte aligned: the ranges
// and the blocks sliced from them start on a group).
#pragma once
#include "common.cuh"

static_assert(POSITION_WORDS == 4, "a Positions group is one uint4 load");

struct Positions {
    const u32* words;       // nullptr: every member is held, member k at position k
    const i32* starts;

    __device__ __forceinline__ bool has(i64 k) const { return words == nullptr || ((words[k >> 5] >> (k & 31)) & 1u); }

    // the set bits of k's group of words below member k
    __device__ __forceinline__ static i32 below_in_group(uint4 group, i64 k)
    {
        const int w = (int)(k >> 5) & 3;
        const u32 mask = (1u << (k & 31)) - 1u;
        const auto part = [w, mask](int i, u32 word) { return __popc(i < w ? word : i == w ? word & mask : 0u); };
        return part(0, group.x) + part(1, group.y) + part(2, group.z) + part(3, group.w);
    }

    __device__ __forceinline__ uint4 group_of(i64 k) const { return reinterpret_cast<const uint4*>(words)[k >> 7]; }

    // k's word and the held members before that word (its group's start plus the set bits of the group's
    // words below it), loaded ahead of the count (of(k, fetched), find(k, fetched)): the bottom-up search
    // sends them out beside a state word, the resolutions several lines' side by side, rather than one
    // trip after another. The group's four words are reduced to these two at once, so that a fetch ahead
    // holds two registers, not five (the resolutions' lines fetched side by side would spill).
    struct Fetched {
        u32 word;
        i32 start;
    };
    __device__ __forceinline__ Fetched fetch(i64 k) const
    {
        if (words == nullptr) return Fetched{0u, 0};
        const uint4 group = group_of(k);
        const int w = (int)(k >> 5) & 3;
        return Fetched{w == 0 ? group.x : w == 1 ? group.y : w == 2 ? group.z : group.w,
                       starts[k >> 7] + below_in_group(group, k & ~31LL)};
    }

    // k's position from its fetched word and start; k must be held (has(k))
    __device__ __forceinline__ i64 of(i64 k, Fetched fetched) const
    {
        if (words == nullptr) return k;
        return fetched.start + __popc(fetched.word & ((1u << (k & 31)) - 1u));
    }

    // k's position counted at once from its group (the expansion's column starts, an edge each: no word is
    // picked out of the group first)
    __device__ __forceinline__ i64 of(i64 k) const
    {
        if (words == nullptr) return k;
        return starts[k >> 7] + below_in_group(group_of(k), k);
    }

    // k's position, or -1 where k is not held: the word and its start loaded together, not one after the
    // other (two dependent trips to memory, maybe another rank's)
    __device__ __forceinline__ i64 find(i64 k) const { return find(k, fetch(k)); }

    __device__ __forceinline__ i64 find(i64 k, Fetched fetched) const
    {
        if (words == nullptr) return k;
        const u32 bit = 1u << (k & 31);
        return fetched.word & bit ? fetched.start + __popc(fetched.word & (bit - 1)) : -1;
    }

    // the held members below k, for any k in [0, n] (k = n, a group's first member, reads no word past
    // the last)
    __device__ __forceinline__ i64 below(i64 k) const
    {
        if (words == nullptr) return k;
        if ((k & 127) == 0) return starts[k >> 7];
        return of(k);
    }

    // the member at position p < count (of's inverse), the range having nwords words: the last group whose
    // start is at most p holds it (a binary search of the starts), then the word of its group that holds
    // the (p - start)-th set bit, then that bit
    __device__ __forceinline__ i64 member(i64 p, i64 nwords) const
    {
        if (words == nullptr) return p;
        i64 lo = 0, hi = nwords / POSITION_WORDS - 1;
        while (lo < hi) {
            const i64 mid = lo + ((hi - lo + 1) >> 1);
            if (starts[mid] <= p) lo = mid;
            else hi = mid - 1;
        }
        i64 w = POSITION_WORDS * lo, rank = p - starts[lo];
        for (i32 n = __popc(words[w]); rank >= n; n = __popc(words[++w])) rank -= n;
        u32 word = words[w];
        for (; rank > 0; --rank) word &= word - 1u;
        return 32 * w + __ffs(word) - 1;
    }
};

// A CSC block's column starts: ptr[c] itself, or, where the block holds its offsets by the positions of
// its non-empty columns (dbfs.graph.LocalGraph.columns), ptr[held.below(c)] -- the entries of the
// columns below c are those of the held ones -- so starts[c + 1] - starts[c] is column c's length for
// every column, 0 for an empty one.
struct ColumnStarts {
    const offset_t* ptr;
    Positions held;

    __device__ __forceinline__ offset_t operator[](i64 c) const { return ptr[held.below(c)]; }

    // whether column c holds an entry (held columns are the non-empty ones)
    __device__ __forceinline__ bool nonempty(i64 c) const
    {
        return held.words != nullptr ? held.has(c) : ptr[c + 1] != ptr[c];
    }

    // column c's entries (0 for an empty column): one position where there would be two
    __device__ __forceinline__ offset_t length(i64 c) const
    {
        i64 start, n;
        extent(c, &start, &n);
        return (offset_t)n;
    }

    // column c's first entry and its number of entries (0 and 0 for an empty column)
    __device__ __forceinline__ void extent(i64 c, i64* start, i64* n) const { extent(c, held.fetch(c), start, n); }

    // the same from c's word and start in held, fetched ahead
    __device__ __forceinline__ void extent(i64 c, Positions::Fetched fetched, i64* start, i64* n) const
    {
        const i64 p = held.find(c, fetched);
        if (p < 0) {
            *start = *n = 0;
            return;
        }
        *start = ptr[p];
        *n = ptr[p + 1] - *start;
    }
};
