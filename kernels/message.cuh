// An exchange message (paper 004, section 5): HEAD_WORDS words of head -- form (MSG_LIST, MSG_BITMAP,
// MSG_WORDS), count of offsets, payload words -- then the payload: a list of int32 offsets in the
// receiver's block of b vertices, or a bitmap of that block (b / 32 words), whichever is smaller. The
// kernel that encodes a message writes its head, so its size is known on the device; the helpers below
// read a message item by item, the same way for both forms.
#pragma once
#include "common.cuh"

// The form of a message of `count` offsets in a block of b: forced >= 0 wins, else the smaller one.
__device__ __forceinline__ i32 message_form(i64 count, i32 b, i32 forced)
{
    if (forced >= 0) return forced;
    return 32 * count > b ? MSG_BITMAP : MSG_LIST;
}

__device__ __forceinline__ i32 message_size(i32 form, i32 count, i32 b)
{
    return form == MSG_BITMAP ? b / 32 : count;
}

// Items of a message read by message_item: the list's entries, or every bit of the bitmap.
__device__ __forceinline__ i64 message_items(const u32* m, i32 b)
{
    return m[HEAD_FORM] == MSG_BITMAP ? (i64)b : (i64)m[HEAD_COUNT];
}

// Offset of item t of a message's payload whose form is known (a bitmap's items are its bits), or -1
// for a clear bit: a kernel over many items reads the head once. The payload is not written while a
// kernel reads it (read-only loads).
__device__ __forceinline__ i32 payload_item(const u32* __restrict__ payload, bool bitmap, i64 t)
{
    if (!bitmap) return (i32)__ldg(&payload[t]);
    return (__ldg(&payload[t >> 5]) >> (t & 31)) & 1u ? (i32)t : -1;
}

// Offset of item t (< message_items) of a message, or -1 for a clear bit of a bitmap.
__device__ __forceinline__ i32 message_item(const u32* m, i64 t)
{
    return payload_item(m + HEAD_WORDS, m[HEAD_FORM] == MSG_BITMAP, t);
}
