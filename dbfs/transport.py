"""Which transport the exchanges of a run use (--comm), decided once, before anything expensive, and
the one place that says why a transport cannot run in a job.

`auto`, on several ranks with a GPU each: NVSHMEM when the ranks are on one node (a GPU each, or sharing
GPUs under CUDA MPS), NVSHMEM is installed, its symmetric heap holds the run's buffers and it starts
on every rank; else NCCL between the GPUs when every rank has a GPU of its own and NCCL is there; else
a CUDA-aware MPI (device buffers straight to MPI); else MPI staged through pinned host memory -- and it
says on stderr which it took and why. On one rank, which exchanges nothing, and on the CPU backend:
`mpi`. Why NVSHMEM first (bench/NOTES.md, 2026-11-25, the once-a-search rounds through NVSHMEM): on two
H100 on NVLink it matched NCCL at scale 28 (374.6 against 376.9 GTEPS) and took a 2048^2 lattice at
16 us a level against NCCL's 139-151; on ranks sharing one H100 under MPS it took scale 24 at 2.3-2.9 ms
on 2 ranks and 3.5-4.6 on 4, where host-staged MPI took 8.6 and 9.7. An explicit choice that cannot
work in this job (nccl, nvshmem or mpi-cuda without the GPU backend, NCCL missing or two ranks on one
GPU, NVSHMEM missing or not starting, mpi-cuda with an MPI that does not report CUDA support) is refused
on every rank alike, before the graph is generated or read. The transports themselves live in dbfs.exchange.

A run's bulk rounds -- construction's tuples, once a pass, and validation's gathers, once a search --
take NCCL between GPUs of their own whatever the search's transport (`bulk_transport`): staged through
the host, scale 28 on two H100 took 116.8 s to build against 8.5 s over NCCL (bench/NOTES.md,
2026-11-25, two H100 on NVLink). Where NCCL cannot run and the search's transport is NVSHMEM (ranks
sharing a GPU), construction's tuples go through NVSHMEM's mappings (dbfs.build); validation's
gathers stay host-staged.
"""

from __future__ import annotations

import os

from mpi4py import MPI

from dbfs import nvshmem, runtime

TRANSPORTS = ("mpi", "mpi-cuda", "nccl", "nvshmem")
DEVICE_TRANSPORTS = ("mpi-cuda", "nccl", "nvshmem")


def _everywhere(flag: bool, comm) -> bool:
    """Collective: whether flag holds on every rank of comm."""
    return bool(comm.allreduce(int(bool(flag)), op=MPI.MIN))


def nccl_available() -> bool:
    try:
        from cupy.cuda import nccl
        return nccl.get_version() > 0
    except Exception:  # no CuPy, no NCCL library: both mean "not available"
        return False


def shares_a_gpu(comm, backend) -> bool:
    """Collective: does some rank of `comm` use the same GPU (same node, same device) as another?"""
    place = (MPI.Get_processor_name(), backend.device) if backend.is_gpu else None
    places = [p for p in comm.allgather(place) if p is not None]
    return len(set(places)) < len(places)


def on_one_node(comm) -> bool:
    """Collective: are all the ranks of `comm` on one node?"""
    return len(set(comm.allgather(MPI.Get_processor_name()))) == 1


def gpus_on_one_node(backend, comm) -> bool:
    """Collective: are the ranks of `comm` (several) on one node, each with a GPU (its own, or one it
    shares with others under CUDA MPS)?"""
    if comm.Get_size() == 1 or not backend.is_gpu:
        return False
    return on_one_node(comm)


def problem(choice: str, backend, comm) -> str | None:
    """Collective: why `choice` cannot run here (the same answer on every rank), or None. A nvshmem
    choice that can run has started NVSHMEM."""
    if choice not in TRANSPORTS:
        return f"unknown transport {choice!r} ({', '.join(TRANSPORTS)})"
    if choice in DEVICE_TRANSPORTS and not backend.is_gpu:
        return (f"--comm {choice} moves device buffers, but this run uses the CPU backend (no GPU on "
                "every rank, --backend cpu or DBFS_BACKEND=cpu); use --comm mpi or auto")
    if choice == "nccl":
        if not _everywhere(nccl_available(), comm):
            return "--comm nccl: NCCL is not available (CuPy without NCCL) on every rank; use --comm mpi or auto"
        if shares_a_gpu(comm, backend):
            return ("--comm nccl needs one GPU per rank, but ranks here share a GPU; use --comm nvshmem, mpi "
                    "or fewer ranks per node")
    if choice == "nvshmem":
        if not _everywhere(nvshmem.available(), comm):
            return ("--comm nvshmem: NVSHMEM is not available on every rank (pip install 'dbfs[nvshmem]' "
                    "brings nvshmem4py and the library); use --comm mpi or auto")
        if shares_a_gpu(comm, backend) and not _everywhere("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE" in os.environ, comm):
            return ("--comm nvshmem: ranks share a GPU, and NVSHMEM runs several PEs on a GPU only under CUDA "
                    "MPS with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE set (the main command sets it; see "
                    "scripts/mps.sh); use --comm mpi")
        failure = nvshmem.start(backend)
        if failure:
            return f"--comm nvshmem: {failure}; use --comm mpi or auto"
    if choice == "mpi-cuda" and not _everywhere(runtime.mpi_cuda_aware(), comm):
        return (f"--comm mpi-cuda: this MPI ({runtime.mpi_library()}) does not report CUDA support; use "
                "--comm mpi (host-staged) or nccl")
    return None


def resolve_transport(choice: str, backend, comm=runtime.WORLD, heap_need: int | None = None) -> str:
    """Collective: the transport for --comm `choice` (auto decided here, and said on stderr; it takes
    NVSHMEM only where the symmetric heap holds `heap_need` bytes, when given); DbfsError on every rank
    when an explicit choice cannot run."""
    if choice != "auto":
        runtime.agree(problem(choice, backend, comm), comm)
        return choice
    chosen, why = _auto(backend, comm, heap_need)
    if comm.Get_size() > 1:
        runtime.log(f"--comm auto: {chosen} ({why})")
    return chosen


OWN_GPUS_WITH_NCCL = "every rank has a GPU of its own and NCCL is there"


def _nccl_between_own_gpus(backend, comm, shared: bool) -> bool:
    """Collective: NCCL can carry this job's rounds (the GPU backend, NCCL on every rank, and, as
    `shared` says, no GPU used by two ranks)."""
    return backend.is_gpu and not shared and _everywhere(nccl_available(), comm)


def mps_running() -> bool:
    """Whether a CUDA MPS daemon's control pipe is where this process's CUDA clients look for it."""
    return os.path.exists(os.path.join(os.environ.get("CUDA_MPS_PIPE_DIRECTORY", "/tmp/nvidia-mps"), "control"))


def _why_not_nvshmem(backend, comm, shared: bool, heap_need: int | None) -> str | None:
    """Collective: why `auto` does not take NVSHMEM in this job (the same on every rank), or None once it
    has started it."""
    if not on_one_node(comm):
        return "the ranks span several nodes, and dbfs's NVSHMEM messages reach the GPUs of one"
    if not _everywhere(nvshmem.available(), comm):
        return "NVSHMEM is not installed on every rank (pip install 'dbfs[nvshmem]')"
    if shared and not _everywhere(mps_running() and "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE" in os.environ, comm):
        return "ranks share a GPU without CUDA MPS (scripts/mps.sh start)"
    heap = None if heap_need is None else nvshmem.heap_problem(heap_need)
    if not _everywhere(heap is None, comm):
        return "the NVSHMEM symmetric heap is too small for this graph (NVSHMEM_SYMMETRIC_SIZE)"
    return nvshmem.start(backend)


def _auto(backend, comm, heap_need: int | None = None) -> tuple[str, str]:
    if comm.Get_size() == 1:
        return "mpi", "one rank exchanges nothing"
    if not backend.is_gpu:
        return "mpi", "the CPU backend"
    shared = shares_a_gpu(comm, backend)
    not_nvshmem = _why_not_nvshmem(backend, comm, shared, heap_need)
    if not_nvshmem is None:
        return "nvshmem", ("one node, " + ("ranks sharing a GPU under MPS" if shared else "a GPU per rank") +
                           ", NVSHMEM started: the GPUs put their own messages")
    if _nccl_between_own_gpus(backend, comm, shared):
        return "nccl", f"{OWN_GPUS_WITH_NCCL}; not nvshmem: {not_nvshmem}"
    if _everywhere(runtime.mpi_cuda_aware(), comm):
        return "mpi-cuda", f"this MPI reports CUDA support; not nvshmem: {not_nvshmem}"
    return "mpi", ("ranks share a GPU, where NCCL refuses, and this MPI does not report CUDA support" if shared
                   else "no NCCL on every rank and no CUDA-aware MPI") + \
        f": staged through host memory; not nvshmem: {not_nvshmem}"


def bulk_transport(search: str, backend, comm=runtime.WORLD) -> tuple[str, str]:
    """Collective: (transport, why) for the run's bulk rounds (construction's tuple exchange,
    validation's gathers): NCCL where every rank has a GPU of its own and NCCL is there, else NVSHMEM
    when the search runs over it, else MPI staged through host memory (dbfs.build takes "nccl",
    "nvshmem" or any other value, dbfs.collectives "nccl" or any other)."""
    if comm.Get_size() == 1:
        return "mpi", "one rank exchanges nothing"
    if search == "nccl":
        return "nccl", "the search's transport"
    if _nccl_between_own_gpus(backend, comm, shares_a_gpu(comm, backend)):
        return "nccl", OWN_GPUS_WITH_NCCL
    if search == "nvshmem":
        return "nvshmem", "the search's transport, NCCL cannot run: GPU to GPU through NVSHMEM's mappings"
    return "mpi", ("ranks share a GPU or NCCL is missing" if backend.is_gpu else "the CPU backend") + \
        ": staged through host memory"
