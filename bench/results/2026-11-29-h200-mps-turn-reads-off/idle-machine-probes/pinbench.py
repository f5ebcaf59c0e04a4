"""Probe: the host's first reads of pinned memory the GPU just wrote (by a copy, by a kernel's stores)."""
import time
import numpy as np
import cupy as cp

ns = time.perf_counter_ns


def pinned(n):
    mem = cp.cuda.alloc_pinned_memory(n * 8)
    return np.frombuffer(mem, np.int64, n)


store = cp.RawKernel(r'''
extern "C" __global__ void store(long long* host, const long long* src, int n) {
    for (int k = threadIdx.x; k < n; k += blockDim.x) host[k] = src[k];
    __threadfence_system();
}''', "store")
N = 4096                       # 8 pages of 4 KiB
A, B = pinned(N), np.zeros(N, np.int64)
D = cp.arange(N, dtype=cp.int64)
s = cp.cuda.Stream(non_blocking=True)
res = {}
for how in ("copy", "kernel", "none"):
    rows = []
    for it in range(300):
        with s:
            if how == "copy":
                cp.cuda.runtime.memcpyAsync(A.ctypes.data, D.data.ptr, N * 8, cp.cuda.runtime.memcpyDeviceToHost, s.ptr)
            elif how == "kernel":
                store((1,), (256,), (np.uint64(A.ctypes.data), D, np.int32(N)))
        s.synchronize()
        t0 = ns(); a = int(A[0]); t1 = ns(); b = int(A[1]); t2 = ns(); c = int(A[600]); t3 = ns()
        d = A[:11].tolist(); t4 = ns(); e = int(B[0]); t5 = ns(); f = A[1024:1100].copy(); t6 = ns()
        rows.append((t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5))
    r = np.array(rows[20:]) / 1e3
    res[how] = r
    print(how, "p50 us: first word %.2f, same line %.2f, other page %.2f, tolist(11) %.2f, plain numpy %.2f, "
          "copy 76 words new page %.2f" % tuple(np.median(r, 0)))
    print(how, "p90 us:", " ".join("%.2f" % x for x in np.percentile(r, 90, 0)))
