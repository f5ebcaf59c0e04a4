"""Collectives of device arrays along one grid line for a run's bulk rounds (validation's gathers of
levels and parents, and the OR-reduction of its marks): NCCL between GPUs of their own, on the current
stream, where the run's bulk transport is NCCL (GridComms.bulk, dbfs.transport.bulk_transport); else
staged through host memory and MPI. Two H100 on NVLink, scale 28 on a 2x1 grid: the host-staged gathers
of the parents took a validation 1.01 s against 0.05 s for scale 27 on one GPU (bench/NOTES.md,
2026-11-25, two H100 on NVLink).
"""

from __future__ import annotations

import numpy as np
from mpi4py import MPI


def allgather(comms, comm: MPI.Comm, backend, owned):
    """The concatenation of every rank's equally long `owned` in the order of `comm` (a line of
    `comms`), on the device; `owned` itself on a line of one rank."""
    size = comm.Get_size()
    if size == 1:
        return owned
    line = comms.nccl(comm, backend)
    if line is None:
        send = np.ascontiguousarray(backend.asnumpy(owned))
        recv = np.empty(send.size * size, send.dtype)
        comm.Allgather(send, recv)
        return backend.asarray(recv)
    from cupy.cuda import nccl
    xp = backend.xp
    owned = xp.ascontiguousarray(owned)
    recv = xp.empty(owned.size * size, owned.dtype)
    line.allGather(owned.data.ptr, recv.data.ptr, owned.nbytes, nccl.NCCL_UINT8,
                   xp.cuda.get_current_stream().ptr)
    return recv


def or_to_owners(comms, comm: MPI.Comm, backend, marks):
    """Bitwise OR of the uint32 `marks` of the ranks of `comm`, each rank keeping its own block (rank k:
    words k * len / size ..); `marks` itself on a line of one rank."""
    size = comm.Get_size()
    if size == 1:
        return marks
    line = comms.nccl(comm, backend)
    if line is None:
        send = np.ascontiguousarray(backend.asnumpy(marks))
        mine = np.empty(send.size // size, np.uint32)
        comm.Reduce_scatter_block(send, mine, op=MPI.BOR)
        return backend.asarray(mine)
    from cupy.cuda import nccl
    xp, me, words = backend.xp, comm.Get_rank(), marks.size // size
    received = xp.empty((size, words), xp.uint32)
    received[me] = marks[me * words:(me + 1) * words]
    stream = xp.cuda.get_current_stream().ptr
    nccl.groupStart()
    for p in range(size):
        if p != me:
            line.send(marks[p * words:].data.ptr, words, nccl.NCCL_UINT32, p, stream)
            line.recv(received[p].data.ptr, words, nccl.NCCL_UINT32, p, stream)
    nccl.groupEnd()
    mine = received[me]
    for p in range(size):
        if p != me:
            mine |= received[p]
    return mine
