"""Two ranks pass a buffer back and forth through CUDA IPC (a kernel writes the peer's memory; an
interprocess event and a one-byte MPI message order it, so no host waits on the device) and through
pinned host memory and MPI (a copy down, a wait, MPI, a copy up), and print the time of one hop of each
for a 64-byte and a 1 MiB message, checking the values received. Run on one GPU under CUDA MPS or on
two GPUs of a node: `mpirun -n 2 python scripts/probe_ipc.py` (bench/NOTES.md, 2026-11-25)."""

import time

import cupy as cp
import numpy as np
from mpi4py import MPI

WORLD = MPI.COMM_WORLD
WORDS = 1 << 18
HOPS = 200


def main() -> None:
    me, rt = WORLD.Get_rank(), cp.cuda.runtime
    peer = 1 - me
    cp.cuda.Device(me % rt.getDeviceCount()).use()
    mine = cp.zeros(WORDS, cp.uint32)
    event = cp.cuda.Event(block=False, disable_timing=True, interprocess=True)
    handles = WORLD.sendrecv((rt.ipcGetMemHandle(mine.data.ptr), rt.ipcGetEventHandle(event.ptr)),
                             dest=peer, source=peer)
    address = rt.ipcOpenMemHandle(handles[0], 1)
    theirs = cp.ndarray((WORDS,), cp.uint32,
                        cp.cuda.MemoryPointer(cp.cuda.UnownedMemory(address, 4 * WORDS, None), 0))
    their_event = rt.ipcOpenEventHandle(handles[1])
    staging = [np.frombuffer(cp.cuda.alloc_pinned_memory(4 * WORDS), np.uint32, WORDS) for _ in range(2)]
    stream, correct, token = cp.cuda.Stream(non_blocking=True), True, np.zeros(1, np.int8)
    with stream:
        for mode in ("ipc", "staged"):
            for words in (16, WORDS):
                WORLD.Barrier()
                started = time.perf_counter()
                for hop in range(HOPS):
                    if hop % 2 == me:
                        if mode == "ipc":
                            theirs[:words] = hop
                            rt.eventRecord(event.ptr, stream.ptr)
                            WORLD.Send(token, dest=peer)
                        else:
                            mine[:words] = hop
                            rt.memcpyAsync(staging[0].ctypes.data, mine.data.ptr, 4 * words,
                                           rt.memcpyDeviceToHost, stream.ptr)
                            stream.synchronize()
                            WORLD.Send([staging[0][:words], MPI.UINT32_T], dest=peer)
                        continue
                    if mode == "ipc":
                        WORLD.Recv(token, source=peer)
                        rt.streamWaitEvent(stream.ptr, their_event, 0)
                    else:
                        WORLD.Recv([staging[1][:words], MPI.UINT32_T], source=peer)
                        rt.memcpyAsync(mine.data.ptr, staging[1].ctypes.data, 4 * words, rt.memcpyHostToDevice,
                                       stream.ptr)
                    if hop < 3 or hop >= HOPS - 2:
                        correct &= int(mine[:words].sum()) == hop * words
                stream.synchronize()
                WORLD.Barrier()
                if me == 0:
                    print(f"{mode:7s} {4 * words:8d} B: {(time.perf_counter() - started) / HOPS * 1e6:8.1f} us "
                          "per hop", flush=True)
    print(f"rank {me}: {'ok' if correct else 'WRONG values received'}", flush=True)
    rt.ipcCloseMemHandle(address)


if __name__ == "__main__":
    main()
