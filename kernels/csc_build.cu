// CSC assembly for the graph builder (kernel 1): scatter (column, row) entries into their column's
// segment. cursor[c] starts at col_ptr[c]; the order inside a column is whatever the atomics give,
// which the BFS does not depend on.
#include "common.cuh"

extern "C" __global__ void csc_scatter(const i32* __restrict__ cols, const i32* __restrict__ rows,
                                       i64 n, u64* __restrict__ cursor, i32* __restrict__ row_idx)
{
    for (i64 e = blockIdx.x * (i64)blockDim.x + threadIdx.x; e < n; e += (i64)gridDim.x * blockDim.x) {
        u64 pos = atomicAdd(&cursor[cols[e]], 1ULL);
        row_idx[pos] = rows[e];
    }
}
