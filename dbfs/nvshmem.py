"""NVSHMEM for the level's exchanges (--comm nvshmem): the runtime's start and end, symmetric memory, and
the addresses of the other PEs' symmetric memory that NVSHMEM maps into this process. With them dbfs's
own kernels (kernels/message.cu: message_put, message_post) write a message into its receiver's
landing buffer at its exact size, or leave it where its sender encoded it for the receiver to read, set
the receiver's signal word, and wait on their own: the
GPU sends its messages, no round waits on the host, and the data moves GPU to GPU (through NVLink or,
for ranks sharing a GPU under CUDA MPS, within the GPU), never through host memory. (NVSHMEM's own
stream-ordered signal wait refuses to run with several PEs on one GPU; its mappings serve them.)

Processing elements (PEs) are the MPI ranks: the runtime starts with MPI's COMM_WORLD as its bootstrap,
so PE p is world rank p. Symmetric allocations are collective: every rank makes the same ones in the
same order (the exchanges are made in the same order on every rank). The heap's size is NVSHMEM's
(NVSHMEM_SYMMETRIC_SIZE, 1 GiB unless set); NVLink multicast stays off (NVSHMEM_DISABLE_NVLS=1 unless
set), and so does NVSHMEM's proxy thread where no network transport needs it
(NVSHMEM_DISABLE_LOCAL_ONLY_PROXY=1 unless set): dbfs uses only the mappings within a node, and the
proxy's polling competes with the rank's own thread for its core (bench/NOTES.md, 2026-11-25, the
once-a-search rounds through NVSHMEM). The packages come with `pip install 'dbfs[nvshmem]'` (nvshmem4py
and the NVSHMEM library).
"""

from __future__ import annotations

import atexit
import contextlib
import io
import os
import re

import numpy as np

from dbfs import runtime
from dbfs.errors import DbfsError

_started = False
_held = {}                                  # address -> bytes of dbfs's live symmetric arrays
DEFAULT_HEAP = 1 << 30                      # NVSHMEM's symmetric heap per PE unless NVSHMEM_SYMMETRIC_SIZE is set
HEAP_RESERVE = 64 << 20                     # a margin for NVSHMEM's own symmetric objects (not measured)
HEAP_SUFFIXES = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


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
    os.environ.setdefault("NVSHMEM_DISABLE_LOCAL_ONLY_PROXY", "1")
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


def heap_bytes() -> int:
    """The symmetric heap NVSHMEM makes per PE: NVSHMEM_SYMMETRIC_SIZE (bytes, or a number with a K, M, G
    or T suffix, binary multiples, as NVSHMEM reads it), else DEFAULT_HEAP."""
    text = os.environ.get("NVSHMEM_SYMMETRIC_SIZE", "").strip()
    if not text:
        return DEFAULT_HEAP
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmgt]?)", text.lower())
    if not match:
        raise DbfsError(f"NVSHMEM_SYMMETRIC_SIZE={text!r} is not a size: bytes, or a number with K, M, G or T "
                        "(e.g. 4G)", collective=True)
    return int(float(match.group(1)) * HEAP_SUFFIXES[match.group(2)])


def heap_problem(needed: int) -> str | None:
    """Why the symmetric heap cannot hold `needed` bytes per PE (with NVSHMEM's own share), or None."""
    heap = heap_bytes()
    if needed + HEAP_RESERVE <= heap:
        return None
    suggestion = -(-(needed + HEAP_RESERVE) // (1 << 30))
    return (f"--comm nvshmem needs {needed / (1 << 20):.1f} MiB of NVSHMEM symmetric heap per PE (its "
            f"exchanges' buffers and landings) beside NVSHMEM's own, and "
            f"NVSHMEM_SYMMETRIC_SIZE gives {heap / (1 << 20):.1f} MiB; set NVSHMEM_SYMMETRIC_SIZE={suggestion}G")


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
    _held[address] = nbytes
    array = _device_array(backend, address, nbytes, (n,), dtype)
    array.fill(0)
    return array


def _device_array(backend, address: int, nbytes: int, shape: tuple, dtype):
    """A device array over memory that NVSHMEM holds (CuPy neither owns nor frees it)."""
    cupy = backend.xp
    memory = cupy.cuda.UnownedMemory(address, nbytes, None)
    return cupy.ndarray(shape, dtype, cupy.cuda.MemoryPointer(memory, 0))


def move_to_heap(backend, holder, name: str):
    """Collective: holder's array `name` replaced by a zeroed one of its length and type on the symmetric
    heap (the old one freed once nothing else holds it); returns the new one."""
    old = getattr(holder, name)
    moved = symmetric(backend, old.shape[0], old.dtype)
    setattr(holder, name, moved)
    return moved


def free(array) -> None:
    """Collective: give a symmetric array back."""
    from nvshmem import bindings
    _held.pop(array.data.ptr, None)
    bindings.free(array.data.ptr)


def held_bytes() -> int:
    """The bytes of dbfs's symmetric arrays alive now (the heap's own reservation is NVSHMEM_SYMMETRIC_SIZE
    whatever dbfs holds)."""
    return sum(_held.values())


def peer_address(address: int, pe: int) -> int:
    """The address, in this process, of PE `pe`'s copy of the symmetric location `address` (its memory
    mapped here by NVSHMEM); DbfsError when `pe` is not reachable so (another node)."""
    from nvshmem import bindings
    mapped = bindings.ptr(address, pe)
    if not mapped:
        raise DbfsError(f"--comm nvshmem: PE {pe} is not mapped into this rank's address space (another "
                        "node): dbfs's kernels put their messages through NVSHMEM's mappings, which reach the "
                        "GPUs of one node; use --comm nccl or mpi across nodes", collective=True)
    return mapped


def peer_array(backend, array, pe: int):
    """A device array over PE `pe`'s copy of the symmetric array `array` (peer_address), of its length and
    type."""
    return _device_array(backend, peer_address(array.data.ptr, pe), array.nbytes, array.shape, array.dtype)


def peer_addresses(address: int, pes, me: int) -> np.ndarray:
    """uint64 [len(pes)]: peer_address(address, pes[p]) for every rank p of a communicator whose PEs are
    pes[p] (dbfs.exchange.world_ranks), 0 for this rank's own entry (me): the table a kernel's puts
    index by the receiver's rank."""
    return np.array([0 if p == me else peer_address(address, pes[p]) for p in range(len(pes))], np.uint64)
