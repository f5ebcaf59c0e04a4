"""NVSHMEM for the level's exchanges (--comm nvshmem): the runtime's start and end, symmetric memory,
and the two stream-ordered operations the exchanges need -- a put of a message with a signal into the
receiver's symmetric buffer, and a wait for a signal -- both queued on the search's stream by the host
(nvshmem4py's bindings of nvshmemx_putmem_signal_on_stream and nvshmemx_signal_wait_until_on_stream),
so no round waits on the device: the data moves GPU to GPU (on one node through NVLink or, for ranks
sharing a GPU under CUDA MPS, within the GPU), never through host memory.

Processing elements (PEs) are the MPI ranks: the runtime starts with MPI's COMM_WORLD as its bootstrap,
so PE p is world rank p. Symmetric allocations are collective: every rank makes the same ones in the
same order (the exchanges are made in the same order on every rank). The heap's size is NVSHMEM's
(NVSHMEM_SYMMETRIC_SIZE, 1 GiB unless set); NVLink multicast stays off (NVSHMEM_DISABLE_NVLS=1 unless
set). The packages come with `pip install 'dbfs[nvshmem]'` (nvshmem4py and the NVSHMEM library).
"""

from __future__ import annotations

import atexit
import contextlib
import io
import os

import numpy as np

from dbfs import runtime

_started = False


def available() -> bool:
    """Whether nvshmem4py and its runtime can be imported here (nothing is started)."""
    try:
        import nvshmem.bindings  # noqa: F401
        import nvshmem.core  # noqa: F401
        return True
    except Exception:  # a missing package, a missing library or driver: all mean "not here"
        return False


def start(backend) -> str | None:
    """Collective over the world: start the NVSHMEM runtime on this rank's GPU; None when it started on
    every rank, else why it did not (the same answer everywhere; nothing stays started then)."""
    global _started
    if _started:
        return None
    os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")
    problem = None
    try:
        import nvshmem.core
        from cuda.core import Device
        with contextlib.redirect_stderr(io.StringIO()):     # nvshmem4py prints its MPI import steps
            nvshmem.core.init(device=Device(backend.device), mpi_comm=runtime.WORLD, initializer_method="mpi")
    except Exception as error:  # the library's errors have no common base: report any
        problem = f"NVSHMEM did not start ({type(error).__name__}: {error})"
    failed = runtime.WORLD.allreduce(int(problem is not None))
    if failed:
        if problem is None:
            _finalize()
        return problem or f"NVSHMEM did not start on {failed} of the ranks"
    _started = True
    atexit.register(_finalize)      # registered after mpi4py's: runs before MPI is finalised
    return None


def _finalize() -> None:
    import nvshmem.core
    nvshmem.core.finalize()


def symmetric(backend, n: int, dtype):
    """Collective: a zeroed device array of n items on the symmetric heap (the same address range on
    every PE)."""
    from nvshmem import bindings
    dtype = np.dtype(dtype)
    nbytes = max(1, n * dtype.itemsize)
    address = bindings.malloc(nbytes)
    if not address:
        raise MemoryError(f"the NVSHMEM symmetric heap has no {nbytes} bytes left (NVSHMEM_SYMMETRIC_SIZE="
                          f"{os.environ.get('NVSHMEM_SYMMETRIC_SIZE', 'its default')})")
    cupy = backend.xp
    memory = cupy.cuda.UnownedMemory(address, nbytes, None)
    array = cupy.ndarray((n,), dtype, cupy.cuda.MemoryPointer(memory, 0))
    array.fill(0)
    return array


def free(array) -> None:
    """Collective: give a symmetric array back."""
    from nvshmem import bindings
    bindings.free(array.data.ptr)


def put_signal(dest, src, nbytes: int, signal, value: int, pe: int, stream) -> None:
    """Queue on `stream`: src's first nbytes into `dest` (a symmetric array, as named on this PE) on PE
    `pe`, then signal (a symmetric uint64 word there) set to value; both are delivered in that order."""
    from nvshmem import bindings
    bindings.putmem_signal_on_stream(dest.data.ptr, src.data.ptr, nbytes, signal.data.ptr, value,
                                     int(bindings.Signal_op.SIGNAL_SET), pe, stream.ptr)


def wait_signal(signal, value: int, stream) -> None:
    """Queue on `stream` a wait until the symmetric uint64 word `signal` (here) is at least value."""
    from nvshmem import bindings
    bindings.signal_wait_until_on_stream(signal.data.ptr, int(bindings.Cmp_type.CMP_GE), value, stream.ptr)
