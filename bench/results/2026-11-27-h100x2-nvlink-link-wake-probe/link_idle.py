"""Probe (not part of dbfs): does a GPU's first access to its NVLink peer's memory after an idle gap
cost ~100 us? Rank 0 times single remote loads (one thread, dependent) from rank 1's symmetric memory
after idle gaps, spaced inside one kernel (no host in between) and across launches; then whether a
parallel sweep of loads over many addresses first wakes every link at once."""
import sys, time, numpy as np
from mpi4py import MPI
import cupy as cp

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
cp.cuda.Device(rank).use()
import nvshmem.core
from nvshmem import bindings
from cuda.core import Device
nvshmem.core.init(device=Device(rank), mpi_comm=comm, initializer_method="mpi")
WORDS = 8 << 20                                      # 64 MiB of u64
addr = bindings.malloc(WORDS * 8)
mine = cp.ndarray((WORDS,), cp.uint64, cp.cuda.MemoryPointer(cp.cuda.UnownedMemory(addr, WORDS * 8, None), 0))
mine.fill(1)
cp.cuda.Device().synchronize()
peer = bindings.ptr(addr, 1 - rank)
comm.Barrier()

src = r'''
typedef unsigned long long u64;
__device__ __forceinline__ u64 now(){ u64 t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__device__ __forceinline__ u64 ld(const u64* p){ u64 v; asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
// n dependent single loads from base + i*stride words, each after an in-kernel idle gap of gap_ns
extern "C" __global__ void spaced(const u64* base, long long stride, int n, long long gap_ns, u64* out) {
  u64 acc = 0, last = now();
  for (int i = 0; i < n; ++i) {
    while (now() - last < (u64)gap_ns) {}
    const u64 t = now();
    acc += ld(base + (i * stride + (acc & 1)) % (8ll << 20));
    last = now();
    out[i] = last - t;
  }
  out[n] = acc;
}
// every thread one load, spread over `span` words (a wake sweep); thread 0 times the block
extern "C" __global__ void sweep(const u64* base, long long span, u64* out) {
  const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long n = (long long)gridDim.x * blockDim.x;
  const u64 t = now();
  u64 v = ld(base + (k * (span / n)) % (8ll << 20));
  __syncthreads();
  if (threadIdx.x == 0) { out[blockIdx.x] = now() - t + (v == 12345 ? 1 : 0); }
}
'''
mod = cp.RawModule(code=src)
spaced, sweep = mod.get_function("spaced"), mod.get_function("sweep")
out = cp.zeros(4096, cp.uint64)
s = cp.cuda.Stream(non_blocking=True)


def lat(base, stride, n, gap_ns):
    spaced((1,), (1,), (np.uint64(base), np.int64(stride), np.int32(n), np.int64(gap_ns), out), stream=s)
    s.synchronize()
    return (out[:n].get() / 1e3).round(1)


def show(label, v):
    print(f"{label}: first {v[:6].tolist()} median {np.median(v):.1f} max {v.max():.1f}", flush=True)


if rank == 0:
    base_remote, base_local = peer, addr
    show("warm remote, no gap, stride 1", lat(base_remote, 1, 64, 0))
    show("warm local, no gap, stride 512", lat(base_local, 512, 64, 0))
    for gap_us in (1, 5, 10, 20, 30, 50, 70, 100, 150, 200, 300, 500, 1000, 3000):
        for stride in (1, 512):
            show(f"remote in-kernel gap {gap_us} us stride {stride}", lat(base_remote, stride, 16, gap_us * 1000))
    show("local in-kernel gap 500 us stride 512", lat(base_local, 512, 16, 500_000))
    for host_gap_ms in (0.1, 1, 10, 100):
        for rep in range(2):
            time.sleep(host_gap_ms / 1e3)
            show(f"remote after host gap {host_gap_ms} ms, stride 512 (rep {rep})", lat(base_remote, 512, 32, 0))
    for blocks in (1, 4, 32, 132):
        for span in (1 << 12, 1 << 20, 8 << 20):
            time.sleep(0.02)
            e0, e1 = cp.cuda.Event(), cp.cuda.Event()
            e0.record(s)
            sweep((blocks,), (256,), (np.uint64(base_remote), np.int64(span), out), stream=s)
            e1.record(s)
            s.synchronize()
            t_sweep = cp.cuda.get_elapsed_time(e0, e1) * 1e3
            v = lat(base_remote, 512, 32, 0)
            print(f"20 ms idle, sweep {blocks} blocks x 256 over {span * 8 >> 10} KiB: sweep {t_sweep:.1f} us; "
                  f"then first {v[:6].tolist()} median {np.median(v):.1f} max {v.max():.1f}", flush=True)
comm.Barrier()
bindings.free(addr)
nvshmem.core.finalize()
