"""Which transport the exchanges of a run use (--comm). The transports themselves live in
dbfs.exchange."""

from __future__ import annotations

from mpi4py import MPI

from dbfs import exchange, runtime


def choose_transport(choice: str, backend, ranks: int) -> str:
    """--comm auto: NCCL between GPUs when CuPy has it and no two ranks share a GPU, then CUDA-aware
    MPI, else host-staged MPI."""
    if choice != "auto":
        return choice
    if backend.is_gpu and ranks > 1:
        if (runtime.WORLD.allreduce(int(exchange.nccl_available()), op=MPI.MIN)
                and not exchange.shares_a_gpu(runtime.WORLD, backend)):
            return "nccl"
        if runtime.mpi_cuda_aware():
            return "mpi-cuda"
    return "mpi"
