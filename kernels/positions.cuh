// A local index range's members that hold something (dbfs.ops.sparse.Positions): bit k of words[k / 32]
// is set for such a member k, and starts[w] counts the set bits of the words before w. An array held
// by position keeps member k at position starts[k / 32] plus the set bits below k in its word: only the
// members that can hold a value take room (the non-empty columns of a hypersparse block, the present
// entries of a packed message). below(k), the held members under k, is defined for every k in [0, n]:
// a CSC's column offsets held by position (ColumnStarts) give any column's start as ptr[below(c)].
#pragma once
#include "common.cuh"

struct Positions {
    const u32* words;       // nullptr: every member is held, member k at position k
    const i32* starts;

    __device__ __forceinline__ bool has(i64 k) const { return words == nullptr || ((words[k >> 5] >> (k & 31)) & 1u); }

    // The word and start that k's position is counted from, loaded ahead of the count (of(k, fetched),
    // find(k, fetched)): the bottom-up search sends them out beside a state word, the resolutions several
    // lines' side by side, rather than one trip after another
    struct Fetched {
        u32 word;
        i32 start;
    };
    __device__ __forceinline__ Fetched fetch(i64 k) const
    {
        return words == nullptr ? Fetched{0u, 0} : Fetched{words[k >> 5], starts[k >> 5]};
    }

    // k's position from its fetched word and start; k must be held (has(k))
    __device__ __forceinline__ i64 of(i64 k, Fetched fetched) const
    {
        if (words == nullptr) return k;
        return fetched.start + __popc(fetched.word & ((1u << (k & 31)) - 1u));
    }

    __device__ __forceinline__ i64 of(i64 k) const
    {
        if (words == nullptr) return k;
        return starts[k >> 5] + __popc(words[k >> 5] & ((1u << (k & 31)) - 1u));
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

    // the held members below k, for any k in [0, n] (k = n reads no word past the last)
    __device__ __forceinline__ i64 below(i64 k) const
    {
        if (words == nullptr) return k;
        return starts[k >> 5] + ((k & 31) ? __popc(words[k >> 5] & ((1u << (k & 31)) - 1u)) : 0);
    }

    // the member at position p < count (of's inverse), the range having nwords words: the last word whose
    // start is at most p holds it (a binary search of the starts), then its (p - start)-th set bit
    __device__ __forceinline__ i64 member(i64 p, i64 nwords) const
    {
        if (words == nullptr) return p;
        i64 lo = 0, hi = nwords - 1;
        while (lo < hi) {
            const i64 mid = lo + ((hi - lo + 1) >> 1);
            if (starts[mid] <= p) lo = mid;
            else hi = mid - 1;
        }
        u32 word = words[lo];
        for (i64 k = p - starts[lo]; k > 0; --k) word &= word - 1u;
        return 32 * lo + __ffs(word) - 1;
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
