"""Several processes under MPS against one: the same total work of random gathers and of streaming
reads, split over the processes (each its own arrays), all timed together. Not part of dbfs."""
import os, sys, time
import numpy as np
import cupy as cp
from mpi4py import MPI


def timed_together(comm, launch, reps: int = 10):
    """Median kernel microseconds of launch() on this process (CUDA events) and median wall microseconds
    from the first process's start to the last one's end, every repetition started after a barrier."""
    times = []
    for _ in range(reps):
        comm.Barrier()
        e0, e1 = cp.cuda.Event(), cp.cuda.Event()
        t0 = time.perf_counter()
        e0.record(); launch(); e1.record(); e1.synchronize()
        t1 = time.perf_counter()
        wall = comm.allreduce(t1, op=MPI.MAX) - comm.allreduce(t0, op=MPI.MIN)
        times.append((cp.cuda.get_elapsed_time(e0, e1) * 1e3, wall * 1e6))
    return float(np.median([t[0] for t in times])), float(np.median([t[1] for t in times]))


def main():
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    total_table = int(sys.argv[1]) if len(sys.argv) > 1 else (512 << 20)   # bytes, all processes together
    total_idx = int(sys.argv[2]) if len(sys.argv) > 2 else (16 << 20)       # gathers, all together
    blocks_mult = int(os.environ.get("BLOCKS_MULT", "1"))
    gather = cp.RawKernel(r'''
    extern "C" __global__ void gather(const int* __restrict__ table, const int* __restrict__ idx, long n, int* out) {
      int acc = 0;
      for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        acc += __ldg(&table[idx[i]]);
      if (acc == 12345) out[0] = acc;
    }
    extern "C" __global__ void stream(const int4* __restrict__ a, long n, int* out) {
      int acc = 0;
      for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        int4 v = a[i]; acc += v.x ^ v.y ^ v.z ^ v.w; }
      if (acc == 12345) out[0] = acc;
    }''', "gather")
    mod = cp.RawModule(code=gather.code)
    g, s = mod.get_function("gather"), mod.get_function("stream")
    tn = total_table // 4 // size
    n = total_idx // size
    table = cp.arange(tn, dtype=cp.int32)
    idx = cp.random.randint(0, tn, n, dtype=cp.int32)
    out = cp.zeros(1, cp.int32)
    sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    grid = max(1, sms * 8 // size) * blocks_mult
    for name, fn, args in (("gather", g, (table, idx, np.int64(n), out)), ("stream", s, (table, np.int64(tn // 4), out))):
        for _ in range(3):
            fn((grid,), (256,), args)
        cp.cuda.Device().synchronize()
        dev, wall = timed_together(comm, lambda: fn((grid,), (256,), args))
        devs = comm.gather(dev, root=0)
        if rank == 0:
            print(f"{name}: {size} procs, share {os.environ.get('CUDA_MPS_ACTIVE_THREAD_PERCENTAGE','-')}, grid {grid}, "
                  f"SMs seen {sms}: kernel us median over ranks {np.median(devs):.1f} (max {max(devs):.1f}), wall all ranks {wall:.1f} us", flush=True)


if __name__ == "__main__":
    main()
