"""NCCL send/recv bandwidth between the ranks' GPUs (both ways at once), and a peer cudaMemcpy."""
import time, sys
import numpy as np, cupy as cp
from mpi4py import MPI
from cupy.cuda import nccl
comm = MPI.COMM_WORLD; me = comm.Get_rank(); n = comm.Get_size()
cp.cuda.Device(me).use()
uid = nccl.get_unique_id() if me == 0 else None
uid = comm.bcast(uid, 0)
c = nccl.NcclCommunicator(n, uid, me)
for mib in (16, 64, 128, 256, 1024):
    words = mib * 2**18
    s = cp.ones(words, cp.int32); r = cp.empty(words, cp.int32)
    st = cp.cuda.get_current_stream().ptr
    best = 1e9
    for rep in range(5):
        comm.Barrier(); cp.cuda.Device().synchronize(); t = time.perf_counter()
        nccl.groupStart()
        for p in range(n):
            if p != me:
                c.send(s.data.ptr, words, nccl.NCCL_INT32, p, st); c.recv(r.data.ptr, words, nccl.NCCL_INT32, p, st)
        nccl.groupEnd()
        cp.cuda.Device().synchronize(); best = min(best, time.perf_counter() - t)
    if me == 0:
        print(f"nccl {mib} MiB each way to each peer: {best*1e3:.3f} ms, {mib*2**20/best/1e9:.1f} GB/s a direction", flush=True)
c.destroy()
