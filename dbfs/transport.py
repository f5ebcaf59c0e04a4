"""Which transport the exchanges of a run use (--comm), decided once, before anything expensive.

`auto` takes NCCL between the GPUs when every rank runs on a GPU of its own and NCCL is there, then a
CUDA-aware MPI (device buffers straight to MPI), else MPI staged through pinned host memory; on one
rank, which exchanges nothing, `mpi`. An explicit choice that cannot work in this job (nccl or
mpi-cuda without the GPU backend, NCCL missing or two ranks on one GPU, mpi-cuda with an MPI that does
not report CUDA support) is refused on every rank alike, before the graph is generated or read. The
transports themselves live in dbfs.exchange.
"""

from __future__ import annotations

from mpi4py import MPI

from dbfs import exchange, runtime


def _everywhere(flag: bool, comm) -> bool:
    """Collective: whether flag holds on every rank of comm."""
    return bool(comm.allreduce(int(bool(flag)), op=MPI.MIN))


def _problem(choice: str, backend, comm) -> str | None:
    """Collective: why `choice` cannot run here (the same answer on every rank), or None."""
    if choice in ("nccl", "mpi-cuda") and not backend.is_gpu:
        return (f"--comm {choice} moves device buffers, but this run uses the CPU backend (no GPU on "
                "every rank, --backend cpu or DBFS_BACKEND=cpu); use --comm mpi or auto")
    if choice == "nccl":
        if not _everywhere(exchange.nccl_available(), comm):
            return "--comm nccl: NCCL is not available (CuPy without NCCL) on every rank; use --comm mpi or auto"
        if exchange.shares_a_gpu(comm, backend):
            return ("--comm nccl needs one GPU per rank, but ranks here share a GPU; use --comm mpi or "
                    "fewer ranks per node")
    if choice == "mpi-cuda" and not _everywhere(runtime.mpi_cuda_aware(), comm):
        return (f"--comm mpi-cuda: this MPI ({runtime.mpi_library()}) does not report CUDA support; use "
                "--comm mpi (host-staged) or nccl")
    return None


def resolve_transport(choice: str, backend, comm=runtime.WORLD) -> str:
    """Collective: the transport for --comm `choice` (auto decided here); DbfsError on every rank when
    an explicit choice cannot run."""
    if choice != "auto":
        runtime.agree(_problem(choice, backend, comm), comm)
        return choice
    if backend.is_gpu and comm.Get_size() > 1:
        if _everywhere(exchange.nccl_available(), comm) and not exchange.shares_a_gpu(comm, backend):
            return "nccl"
        if _everywhere(runtime.mpi_cuda_aware(), comm):
            return "mpi-cuda"
    return "mpi"
