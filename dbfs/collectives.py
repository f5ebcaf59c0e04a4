"""Collectives of device arrays along one grid line for a run's bulk rounds (validation's gathers of
levels and parents or broadcasts of one owned block of them, and the OR-reduction of its marks): NCCL
between GPUs of their own, on the current stream, where the run's bulk transport is NCCL
(GridComms.bulk, dbfs.transport.bulk_transport); else staged through host memory and MPI. Two H100 on
NVLink, scale 28 on a 2x1 grid: a validation took 1.01 s with the gathers staged through the host, 0.079 s
over NCCL (bench/NOTES.md, 2026-11-25, two H100 on NVLink).
"""

from __future__ import annotations

from functools import partial

import numpy as np
from mpi4py import MPI


def allgather(comms, comm: MPI.Comm, backend, owned, workspace):
    """The concatenation of every rank's equally long `owned` in the order of `comm` (a line of
    `comms`), on the device, in an array of `workspace` (dbfs.workspace); `owned` itself on a line of
    one rank."""
    return _on_line(comms, comm, backend, owned, partial(_allgather_host, workspace=workspace),
                    partial(_allgather_nccl, workspace=workspace))


def broadcast(comms, comm: MPI.Comm, backend, owned, root: int, out):
    """Rank `root`'s `owned` on every rank of `comm` (a line of `comms`), on the device: `owned` itself
    at the root and on a line of one rank, elsewhere `out` (as long and typed as `owned`) filled."""
    if comm.Get_rank() == root:
        out = owned
    return _on_line(comms, comm, backend, owned, partial(_broadcast_host, root=root, out=out),
                    partial(_broadcast_nccl, root=root, out=out))


def or_to_owners(comms, comm: MPI.Comm, backend, marks):
    """Bitwise OR of the uint32 `marks` of the ranks of `comm`, each rank keeping its own block (rank k:
    words k * len / size ..); `marks` itself on a line of one rank."""
    return _on_line(comms, comm, backend, marks, _or_host, _or_nccl)


def _on_line(comms, comm, backend, array, host, nccl_round):
    if comm.Get_size() == 1:
        return array
    line = comms.nccl(comm, backend)
    return host(comm, backend, array) if line is None else nccl_round(line, comm, backend, array)


def _allgather_host(comm, backend, owned, workspace):
    send = np.ascontiguousarray(backend.asnumpy(owned))
    recv = np.empty(send.size * comm.Get_size(), send.dtype)
    comm.Allgather(send, recv)
    gathered = workspace.empty(recv.size, recv.dtype)
    backend.copy(gathered, recv)
    return gathered


def _allgather_nccl(line, comm, backend, owned, workspace):
    from cupy.cuda import nccl
    xp = backend.xp
    owned = xp.ascontiguousarray(owned)
    gathered = workspace.empty(owned.size * comm.Get_size(), owned.dtype)
    line.allGather(owned.data.ptr, gathered.data.ptr, owned.nbytes, nccl.NCCL_UINT8,
                   xp.cuda.get_current_stream().ptr)
    return gathered


def _broadcast_host(comm, backend, owned, root, out):
    mine = comm.Get_rank() == root
    host = np.ascontiguousarray(backend.asnumpy(owned)) if mine else np.empty(out.size, out.dtype)
    comm.Bcast(host, root=root)
    if not mine:
        backend.copy(out, host)
    return out


def _broadcast_nccl(line, comm, backend, owned, root, out):
    from cupy.cuda import nccl
    xp = backend.xp
    line.broadcast(out.data.ptr, out.data.ptr, out.nbytes, nccl.NCCL_UINT8, root, xp.cuda.get_current_stream().ptr)
    return out


def _or_host(comm, backend, marks):
    send = np.ascontiguousarray(backend.asnumpy(marks))
    mine = np.empty(send.size // comm.Get_size(), np.uint32)
    comm.Reduce_scatter_block(send, mine, op=MPI.BOR)
    return backend.asarray(mine)


def _or_nccl(line, comm, backend, marks):
    """Each peer's block of this rank's marks to it, one grouped round; the blocks received ORed
    elementwise into this rank's own."""
    from cupy.cuda import nccl
    xp, me, size = backend.xp, comm.Get_rank(), comm.Get_size()
    words = marks.size // size
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
