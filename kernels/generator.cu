// Graph500 Kronecker edge generator (reference 3.0.0, generator/graph_generator.c), bit-identical to
// the NumPy twin graph500.generator (see its docstring for the method and docs/graph500.md section 1).
//
// Thread g of T handles the edges g, g+T, g+2T, ... of the range (coalesced stores). Its first state is
// the range's first state jumped by g edges with the table B^(d*16^k) (B = A^(2^64), one matrix-vector
// product per nonzero hexadecimal digit of g); each further edge costs one product with B^T. All
// arithmetic is modulo the Mersenne prime 2^31 - 1, reduced by folding the high bits onto the low.
#include "common.cuh"

namespace {

constexpr u64 kModulus = 0x7FFFFFFFull;
constexpr u64 kMultZ1 = 107374182ull;
constexpr u64 kMultZ5 = 104480ull;
constexpr u32 kRejectBelow = 3647u;  // (2^31 - 1) mod 10000: lower draws would bias u mod 10000
constexpr u32 kDenominator = 10000u;
constexpr u32 kBcNumerator = 1900u;
constexpr u32 kCBelow = 3800u;
constexpr u32 kDFrom = 9500u;
constexpr u64 kScrambleMul0 = 0x4519840211493211ull;
constexpr u64 kScrambleMul1 = 0x3050852102C843A5ull;
constexpr double kFloatScale = .000000000465661287524579692;  // the reference's (2^31 - 1)^-1
constexpr int kJumpDigits = 8;
constexpr int kMatrixSize = 25;

__device__ __forceinline__ u64 fold(u64 x) { return (x & kModulus) + (x >> 31); }

// x < 2 * (2^31 - 1) -> x mod (2^31 - 1)
__device__ __forceinline__ u32 finish(u64 x) { return (u32)(x >= kModulus ? x - kModulus : x); }

// z <- mat @ z (mod m); mat is row-major 5x5 with entries < m.
__device__ __forceinline__ void apply(const u32 (&mat)[kMatrixSize], u32 (&z)[5]) {
  u32 out[5];
#pragma unroll
  for (int i = 0; i < 5; ++i) {
    const u32* row = mat + 5 * i;
    // four products < 2^62 each sum below 2^64; fold before adding the fifth
    u64 acc = (u64)row[0] * z[0] + (u64)row[1] * z[1] + (u64)row[2] * z[2] + (u64)row[3] * z[3];
    acc = fold(acc) + (u64)row[4] * z[4];
    out[i] = finish(fold(fold(acc)));
  }
#pragma unroll
  for (int i = 0; i < 5; ++i) z[i] = out[i];
}

__device__ __forceinline__ void apply_global(const u32* __restrict__ mat, u32 (&z)[5]) {
  u32 local[kMatrixSize];
#pragma unroll
  for (int k = 0; k < kMatrixSize; ++k) local[k] = __ldg(mat + k);
  apply(local, z);
}

// One step of the original recurrence; returns the new z1.
__device__ __forceinline__ u32 next_uint(u32 (&z)[5]) {
  const u32 next = finish(fold(kMultZ1 * z[0] + kMultZ5 * z[4]));
  z[4] = z[3];
  z[3] = z[2];
  z[2] = z[1];
  z[1] = z[0];
  z[0] = next;
  return next;
}

__device__ __forceinline__ u64 scramble(u64 v, int scale, u64 val0, u64 val1) {
  v += val0 + val1;
  v *= (val0 | kScrambleMul0);
  v = __brevll(v) >> (64 - scale);
  v *= (val1 | kScrambleMul1);
  return __brevll(v) >> (64 - scale);
}

}  // namespace

// Edges [0, count) of a range whose first edge has MRG state first_state[5] (before its first draw).
// jump: [8*16][25] B^(d*16^k) at entry 16k + d; step: [25] B^T with T = gridDim.x * blockDim.x.
// weight is written only when with_weight != 0.
extern "C" __global__ void kronecker_edges(const u32* __restrict__ jump, const u32* __restrict__ step,
                                           const u32* __restrict__ first_state, u64 val0, u64 val1,
                                           i32 scale, i64 count, i32 with_weight, i64* __restrict__ src,
                                           i64* __restrict__ dst, float* __restrict__ weight) {
  const u64 first = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  const u64 stride = (u64)gridDim.x * blockDim.x;
  if (first >= (u64)count) return;

  u32 state[5];
#pragma unroll
  for (int i = 0; i < 5; ++i) state[i] = __ldg(first_state + i);
  for (int k = 0; k < kJumpDigits; ++k) {
    const u32 digit = (u32)(first >> (4 * k)) & 15u;
    if (digit) apply_global(jump + (16 * k + digit) * kMatrixSize, state);
  }
  u32 advance[kMatrixSize];
#pragma unroll
  for (int k = 0; k < kMatrixSize; ++k) advance[k] = __ldg(step + k);

  for (u64 e = first; e < (u64)count; e += stride) {
    u32 z[5];
#pragma unroll
    for (int i = 0; i < 5; ++i) z[i] = state[i];
    u64 s = 0, d = 0;
    bool tied = true;  // src and dst prefixes equal so far: clip-and-flip keeps src <= dst
    for (int level = 0; level < scale; ++level) {
      u32 u = next_uint(z);
      while (u < kRejectBelow) u = next_uint(z);
      const u32 r = u % kDenominator;
      const bool is_b = r < kBcNumerator;
      const bool is_c = !is_b && r < kCBelow;
      const bool is_d = r >= kDFrom;
      const bool src_bit = is_d || (is_c && !tied);
      const bool dst_bit = is_d || is_b || (is_c && tied);
      tied = tied && !is_b && !is_c;
      s = (s << 1) | (u64)src_bit;
      d = (d << 1) | (u64)dst_bit;
    }
    src[e] = (i64)scramble(s, scale, val0, val1);
    dst[e] = (i64)scramble(d, scale, val0, val1);
    if (with_weight) {
      // float(u) promoted to double, times the double constant, rounded to float (mrg_get_float_orig)
      const double scaled = (double)__uint2float_rn(next_uint(z)) * kFloatScale;
      weight[e] = __double2float_rn(scaled);
    }
    if (e + stride < (u64)count) apply(advance, state);
  }
}
