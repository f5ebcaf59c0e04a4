// Block storage for the graph builder (kernel 1).
//
// csc_scatter: scatter (column, row) entries into their column's segment; cursor[c] starts at
// col_ptr[c]. csr_from_csc: the row-major copy used by the bottom-up search, one thread per CSC entry
// (its column found by a binary search of col_ptr) scattered into its row's segment; cursor[r] starts
// at row_ptr[r]. The order inside a column or row is whatever the atomics give, which the BFS does
// not depend on.
#include "common.cuh"

extern "C" __global__ void csc_scatter(const i32* __restrict__ cols, const i32* __restrict__ rows,
                                       i64 n, u64* __restrict__ cursor, i32* __restrict__ row_idx)
{
    for (i64 e = blockIdx.x * (i64)blockDim.x + threadIdx.x; e < n; e += (i64)gridDim.x * blockDim.x) {
        u64 pos = atomicAdd(&cursor[cols[e]], 1ULL);
        row_idx[pos] = rows[e];
    }
}

extern "C" __global__ void csr_from_csc(const i64* __restrict__ col_ptr, i32 ncols,
                                        const i32* __restrict__ row_idx, i64 nnz,
                                        u64* __restrict__ cursor, i32* __restrict__ col_idx)
{
    for (i64 e = blockIdx.x * (i64)blockDim.x + threadIdx.x; e < nnz; e += (i64)gridDim.x * blockDim.x) {
        i32 lo = 0, hi = ncols - 1;          // largest c with col_ptr[c] <= e
        while (lo < hi) {
            const i32 mid = lo + ((hi - lo + 1) >> 1);
            if (col_ptr[mid] <= e) lo = mid;
            else hi = mid - 1;
        }
        u64 pos = atomicAdd(&cursor[row_idx[e]], 1ULL);
        col_idx[pos] = lo;
    }
}
