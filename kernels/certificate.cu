// Construction certificate (design.md "Validation"): a keyed multiset hash of graph entries u -> v,
// computed from the input tuples and from the CSC blocks, which must agree.
//
// An entry (u, v) (global ids) hashes to two independent keyed 64-bit mixes
//   mix(u, v, ka, kb) = fmix64(fmix64(u ^ ka) ^ (v + kb))      (MurmurHash3's 64-bit finaliser)
// with keys (k0, k1) and (k2, k3); a multiset hashes to its entry count and the sums of both mixes
// modulo 2^64, so the result does not depend on the order or on how the entries are spread over the
// ranks. acc[0] += entries, acc[1] += sum of the first mix, acc[2] += sum of the second.
// hash_tuples: tuple (a, b) with a != b gives the entry a -> b, and b -> a as well when both_ways.
// hash_entries: the CSC entries of one block; thread t takes the entries_per_thread consecutive
// entries from t * entries_per_thread (one binary search of col_ptr, then a walk), global ids by the
// local-to-global maps of the block's columns and rows (dbfs.grid.Grid.global_col_segments,
// global_row_segments: segments of `length` local indices at `stride` from `base`), so no table as long
// as the block's ranges is made. Where the block holds its offsets by the positions of its non-empty columns
// (words: dbfs.graph.LocalGraph.columns), the search finds an entry's position, whose column is
// Positions::member of it. Per-thread sums are combined by warp shuffles and one atomicAdd per
// warp and word. Must be launched with whole warps.
#include "positions.cuh"

__device__ __forceinline__ u64 fmix64(u64 x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

__device__ __forceinline__ u64 entry_mix(u64 u, u64 v, u64 ka, u64 kb)
{
    return fmix64(fmix64(u ^ ka) ^ (v + kb));
}

struct EntrySums {
    u64 count = 0, first = 0, second = 0;

    __device__ __forceinline__ void add(u64 u, u64 v, u64 k0, u64 k1, u64 k2, u64 k3)
    {
        count += 1;
        first += entry_mix(u, v, k0, k1);
        second += entry_mix(u, v, k2, k3);
    }

    // Every lane of the warp must call it.
    __device__ __forceinline__ void flush(u64* __restrict__ acc)
    {
        for (int d = 16; d > 0; d >>= 1) {
            count += __shfl_down_sync(0xffffffffu, count, d);
            first += __shfl_down_sync(0xffffffffu, first, d);
            second += __shfl_down_sync(0xffffffffu, second, d);
        }
        if ((threadIdx.x & 31) == 0 && count) {
            atomicAdd(&acc[0], count);
            atomicAdd(&acc[1], first);
            atomicAdd(&acc[2], second);
        }
    }
};

extern "C" __global__ void hash_tuples(const i64* __restrict__ src, const i64* __restrict__ dst, i64 n,
                                       i32 both_ways, u64 k0, u64 k1, u64 k2, u64 k3,
                                       u64* __restrict__ acc)
{
    EntrySums sums;
    for (i64 e = blockIdx.x * (i64)blockDim.x + threadIdx.x; e < n; e += (i64)gridDim.x * blockDim.x) {
        const u64 a = (u64)src[e], b = (u64)dst[e];
        if (a == b) continue;
        sums.add(a, b, k0, k1, k2, k3);
        if (both_ways) sums.add(b, a, k0, k1, k2, k3);
    }
    sums.flush(acc);
}

// Local indices and segment lengths are below 2^31 (dbfs.grid): a 32-bit division, not the emulated 64-bit one.
__device__ __forceinline__ u64 global_id(i32 local, i64 base, i64 length, i64 stride)
{
    const u32 segment = (u32)local / (u32)length;
    return (u64)(base + (i64)segment * stride + (i64)((u32)local - segment * (u32)length));
}

extern "C" __global__ void hash_entries(const offset_t* __restrict__ col_ptr, i64 ncols,
                                        const u32* __restrict__ words, const i32* __restrict__ starts, i64 nwords,
                                        const i32* __restrict__ row_idx, i64 nnz,
                                        i64 col_base, i64 col_length, i64 col_stride,
                                        i64 row_base, i64 row_length, i64 row_stride,
                                        i32 entries_per_thread, u64 k0, u64 k1, u64 k2, u64 k3,
                                        u64* __restrict__ acc)
{
    EntrySums sums;
    const Positions held{words, starts};
    const i64 stride = (i64)gridDim.x * blockDim.x * entries_per_thread;
    for (i64 first = (blockIdx.x * (i64)blockDim.x + threadIdx.x) * entries_per_thread; first < nnz;
         first += stride) {
        i64 lo = 0, hi = ncols - 1;          // largest c with col_ptr[c] <= first: first's column (position)
        while (lo < hi) {
            const i64 mid = lo + ((hi - lo + 1) >> 1);
            if (col_ptr[mid] <= first) lo = mid;
            else hi = mid - 1;
        }
        i64 column = held.member(lo, nwords);
        const i64 last = min(first + entries_per_thread, nnz);
        for (i64 e = first; e < last; ++e) {
            if (col_ptr[lo + 1] <= e) {
                while (col_ptr[lo + 1] <= e) ++lo;
                column = held.member(lo, nwords);
            }
            sums.add(global_id(column, col_base, col_length, col_stride),
                     global_id(row_idx[e], row_base, row_length, row_stride), k0, k1, k2, k3);
        }
    }
    sums.flush(acc);
}
