// Conversions between the two encodings of a set of offsets in [0, nbits): a list of int32 offsets and
// a bitmap of ceil(nbits/32) words (paper 004 section 5: messages as lists or bitmaps, whichever is
// smaller). Used to encode and decode exchange messages and to switch the BFS frontier between the
// top-down (list) and bottom-up (bitmap) forms. A list length may live on the device, so no launch
// depends on a count read back; launched with a control block, a kernel runs only when the
// steps in step_mask are next and the frontier has the given form (common.cuh gate_open).
#include "common.cuh"

// words[0 .. nwords) := 0.
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
zero_words(u32* __restrict__ words, i32 nwords, const i64* __restrict__ ctl, i32 step_mask, i32 form)
{
    if (!gate_open(ctl, step_mask, form)) return;
    for (i32 w = blockIdx.x * blockDim.x + threadIdx.x; w < nwords; w += gridDim.x * blockDim.x) words[w] = 0;
}

// Sets the bits of offsets[0 .. n) in words (n = *count, or length without a count pointer); words must be zeroed first (zero_words); duplicates
// in the list are harmless.
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
pack_offsets(const i32* __restrict__ offsets, const i32* __restrict__ count, i32 length,
             u32* __restrict__ words, const i64* __restrict__ ctl, i32 step_mask, i32 form)
{
    if (!gate_open(ctl, step_mask, form)) return;
    const i32 n = length_of(count, length);
    for (i32 t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += gridDim.x * blockDim.x) {
        const i32 o = offsets[t];
        atomicOr(&words[o >> 5], 1u << (o & 31));
    }
}

// The offsets of the set bits, in any order (common.cuh unpack_words), with col_ptr or keep (or
// neither) only those of columns with an entry; *count zeroed by the caller.
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
unpack_bitmap(const u32* __restrict__ words, i32 nwords, const offset_t* __restrict__ col_ptr,
              const u32* __restrict__ keep, i32* __restrict__ out, i32* __restrict__ count,
              const i64* __restrict__ ctl, i32 step_mask, i32 form)
{
    if (!gate_open(ctl, step_mask, form)) return;
    unpack_words(words, nwords, out, count, col_ptr, keep);
}
