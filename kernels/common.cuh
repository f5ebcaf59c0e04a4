// Shared fixed-width types and device helpers of the dbfs kernels (NVRTC has no <cstdint> by default).
// The constants shared with Python (BLOCK_THREADS, CTL_*, STEP_*, STAT_*, ...) come from the compiler
// command line: dbfs.kernels.DEFINES.
#pragma once
typedef short i16;
typedef unsigned int u32;
typedef int i32;
typedef unsigned long long u64;
typedef long long i64;

// A CSC block's column offsets and its row copy's row offsets: 32-bit where the block's entries fit
// (dbfs.graph.offset_dtype), else 64-bit. The module is compiled once for each (OFFSET_BITS, from the
// compiler command line: dbfs.kernels.compile_options) and the launch picks the one of the graph's.
#if OFFSET_BITS == 32
typedef i32 offset_t;
#else
typedef i64 offset_t;
#endif

// The blocks of BLOCK_THREADS an SM runs at once when it is full (2048 threads from sm_80 on): the
// bound of the kernels that load ahead of need, which would otherwise take more registers than full
// occupancy leaves them.
#define FULL_SM_BLOCKS (2048 / BLOCK_THREADS)

// The device-driven loop (dbfs/device_loop.py) enqueues every kernel of a round ahead of time; a kernel
// runs only when the search's control block says its step is next (bit STEP_x of step_mask) and, for
// the frontier conversions, that the frontier has the form it converts from (form < 0: any form).
// Launched without a control block (nullptr, the host-driven loop) a kernel always runs.
__device__ __forceinline__ bool gate_open(const i64* ctl, i32 step_mask, i32 form)
{
    if (ctl == nullptr) return true;
    const i64 step = ctl[CTL_STEP];
    return ((step_mask >> step) & 1) && (form < 0 || ctl[CTL_FORM] == form);
}

// Nanoseconds of the GPU's global timer (the per-level log, the phase marks of kernels/clock.cu).
__device__ __forceinline__ i64 global_ns()
{
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return (i64)t;
}

// A length known on the device (*device, when given) or on the host (host): the same kernel serves
// the device-driven loop, where no count comes back to the host, and host callers that know it.
__device__ __forceinline__ i32 length_of(const i32* device, i32 host)
{
    return device != nullptr ? *device : host;
}

// Warp reductions of a 64-bit value (i64 or u64); every lane gets the result. Warp-collective.
template <typename T>
__device__ __forceinline__ T warp_sum(T x)
{
#pragma unroll
    for (int d = 16; d; d >>= 1) x += (T)__shfl_xor_sync(0xffffffffu, x, d);
    return x;
}

template <typename T>
__device__ __forceinline__ T warp_max(T x)
{
#pragma unroll
    for (int d = 16; d; d >>= 1) x = max(x, (T)__shfl_xor_sync(0xffffffffu, x, d));
    return x;
}

template <typename T>
__device__ __forceinline__ T warp_min(T x)
{
#pragma unroll
    for (int d = 16; d; d >>= 1) x = min(x, (T)__shfl_xor_sync(0xffffffffu, x, d));
    return x;
}

// Adds a warp's per-lane counts of new owned vertices, their degree sums and largest degrees (the
// new frontier's size, m_f and largest degree, for termination and the direction rule) to
// stats[STAT_COUNT], stats[STAT_DEGREES] and stats[STAT_MAX_DEGREE]: one atomic each per warp.
__device__ __forceinline__ void add_discoveries(i64 count, i64 degrees, i64 largest, i64* stats)
{
    count = warp_sum(count);
    degrees = warp_sum(degrees);
    largest = warp_max(largest);
    if ((threadIdx.x & 31) == 0 && count) {
        atomicAdd((u64*)&stats[STAT_COUNT], (u64)count);
        atomicAdd((u64*)&stats[STAT_DEGREES], (u64)degrees);
        atomicMax(&stats[STAT_MAX_DEGREE], largest);
    }
}

// Slot in the group counted by *counter for every lane with `active` set: one atomicAdd per group of
// lanes sharing a counter (warp aggregation). Every lane of the warp must call it; inactive lanes get -1.
__device__ __forceinline__ i32 warp_reserve(bool active, i32* counter)
{
    const unsigned voters = __ballot_sync(0xffffffffu, active);
    if (!active) return -1;
    const unsigned peers = __match_any_sync(voters, (unsigned long long)counter);
    const int lane = threadIdx.x & 31;
    const int leader = __ffs(peers) - 1;
    i32 base = 0;
    if (lane == leader) base = atomicAdd(counter, __popc(peers));
    base = __shfl_sync(peers, base, leader);
    return base + __popc(peers & ((1u << lane) - 1));
}

// Block-wide slot reservation in `ngroups` global groups counted by counters[0 .. ngroups): item e of
// a thread wants a slot in group group[e] when active[e]; slot[e] receives its index in that group.
// Lanes reserve in shared memory first (warp-aggregated), then one thread per group takes the block's
// total with a single global atomicAdd: the group counters are few and hot, and an L2 atomic on one
// address serialises (one per warp still cost ~8 ms of a 17 ms level at scale 26). `shared` holds
// 2*ngroups ints (dynamic shared memory). Every thread of the block must call it (three barriers).
template <int ITEMS>
__device__ __forceinline__ void block_reserve(const bool (&active)[ITEMS], const i32 (&group)[ITEMS],
                                              i32 ngroups, i32* counters, i32* shared, i32 (&slot)[ITEMS])
{
    i32* block_fill = shared;
    i32* block_base = shared + ngroups;
    for (i32 g = threadIdx.x; g < ngroups; g += blockDim.x) block_fill[g] = 0;
    __syncthreads();
#pragma unroll
    for (int e = 0; e < ITEMS; ++e) slot[e] = warp_reserve(active[e], &block_fill[active[e] ? group[e] : 0]);
    __syncthreads();
    for (i32 g = threadIdx.x; g < ngroups; g += blockDim.x)
        if (block_fill[g]) block_base[g] = atomicAdd(&counters[g], block_fill[g]);
    __syncthreads();
#pragma unroll
    for (int e = 0; e < ITEMS; ++e)
        if (active[e]) slot[e] += block_base[group[e]];
}

// The offsets of the set bits of words[0 .. nwords) appended to out: each block takes blockDim.x
// consecutive words, a thread one word; warp prefix sums of the words' popcounts and a pass over the
// warps' totals place every thread's bits, and one atomicAdd per block on *count (zeroed by the caller)
// reserves the block's slots (an atomic a warp on the one counter cost ~100 us a 2^27-bit bitmap on an
// H100: bench/NOTES.md, 2026-11-27, where a pair's level goes, kernel by kernel). The output order is by
// block arrival, ascending inside a block. Every thread of the grid's blocks must call it. With col_ptr
// (a CSC block's column offsets) only the offsets of columns with an entry are kept; with keep (a bitmap
// over the same offsets: a block's non-empty columns where it holds its offsets by their positions)
// only those whose bits are set there too.
template <typename T>
__device__ __forceinline__ void unpack_words(const u32* __restrict__ words, i32 nwords, T* __restrict__ out,
                                             i32* __restrict__ count, const offset_t* __restrict__ col_ptr = nullptr,
                                             const u32* __restrict__ keep = nullptr)
{
    __shared__ i32 warp_start[32];
    __shared__ i32 block_start;
    const i32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    for (i32 base = blockIdx.x * blockDim.x; base < nwords; base += gridDim.x * blockDim.x) {
        const i32 w = base + threadIdx.x;
        u32 word = w < nwords ? words[w] : 0u;
        if (keep != nullptr && w < nwords) word &= keep[w];
        if (col_ptr != nullptr)
            for (u32 left = word; left; left &= left - 1) {
                const i32 o = w * 32 + __ffs(left) - 1;
                if (col_ptr[o + 1] == col_ptr[o]) word &= ~(1u << (o & 31));
            }
        const i32 bits = __popc(word);
        i32 before = bits;
        for (i32 d = 1; d < 32; d <<= 1) {
            const i32 up = __shfl_up_sync(0xffffffffu, before, d);
            if (lane >= d) before += up;
        }
        if (lane == 31) warp_start[warp] = before;
        __syncthreads();
        if (threadIdx.x == 0) {
            i32 total = 0;
            for (i32 k = 0; k < warps; ++k) {
                const i32 bits_of_warp = warp_start[k];
                warp_start[k] = total;
                total += bits_of_warp;
            }
            block_start = total ? atomicAdd(count, total) : 0;
        }
        __syncthreads();
        i32 at = block_start + warp_start[warp] + before - bits;
        while (word) {
            out[at++] = (T)(w * 32 + __ffs(word) - 1);
            word &= word - 1;
        }
        __syncthreads();                        // warp_start and block_start are the next round's
    }
}


// Exclusive prefix of x over the block (at most 1024 threads), and the block's total in *total. Ends with a barrier, so a
// block may call it again (the scan_totals loop).
__device__ __forceinline__ i64 block_prefix(i64 x, i64* total)
{
    __shared__ i64 warp_total[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    i64 running = x;
    for (int d = 1; d < 32; d <<= 1) {
        const i64 before = __shfl_up_sync(0xffffffffu, running, d);
        if (lane >= d) running += before;
    }
    if (lane == 31) warp_total[warp] = running;
    __syncthreads();
    i64 earlier = 0, sum = 0;
    for (int w = 0; w < warps; ++w) {      // at most 32 warp totals: a short serial pass per thread
        const i64 t = warp_total[w];
        if (w < warp) earlier += t;
        sum += t;
    }
    *total = sum;
    __syncthreads();
    return earlier + running - x;
}
