// A local index range's members that hold something (dbfs.ops.sparse.Positions): bit k of words[k / 32]
// is set for such a member k, and starts[w] counts the set bits of the words before w. An array held
// by position keeps member k at position starts[k / 32] plus the set bits below k in its word: only the
// members that can hold a value take room (the non-empty columns of a hypersparse block, the present
// entries of a packed message).
#pragma once
#include "common.cuh"

struct Positions {
    const u32* words;       // nullptr: every member is held, member k at position k
    const i32* starts;

    __device__ __forceinline__ bool has(i64 k) const { return words == nullptr || ((words[k >> 5] >> (k & 31)) & 1u); }

    // k's position; k must be held (has(k))
    __device__ __forceinline__ i64 of(i64 k) const
    {
        if (words == nullptr) return k;
        return starts[k >> 5] + __popc(words[k >> 5] & ((1u << (k & 31)) - 1u));
    }
};
