"""Array backend: CuPy on a GPU or NumPy on the CPU, chosen once at start-up.

`select()` decides collectively (every rank agrees), binds each rank to GPU `local_rank % ngpus`, and
returns a Backend holding the array namespace `xp`, the device, pinned host allocation for staging MPI
messages, and compiled CUDA modules from kernels/*.cu. `compile_source` is the one place that compiles
CUDA C (NVRTC through CuPy, once per source and options in a process): the kernels/*.cu modules and the
ws engine's vertex programs alike.
"""

from __future__ import annotations

import os
from functools import lru_cache

import numpy as np

from dbfs import runtime
from dbfs.errors import DbfsError
from dbfs.ops import host_words
from dbfs.ops.arrays import OFFSET_DTYPES


# How often a wait on a flag (Backend.wait_flag) also asks whether the stream has ended or failed.
FLAG_QUERY_POLLS = 256


def gpu_count() -> int:
    """Visible CUDA devices (0 when CuPy or a driver is missing)."""
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount()
    except Exception:  # no CuPy, no driver, no device: all mean "no GPU" here
        return 0


class Backend:
    """The array namespace and device of one rank."""

    def __init__(self, name: str, device: int | None = None, sharing: int = 1, yielding: bool = False):
        self.name = name
        self.device = device
        self.sharing = max(1, sharing)  # ranks of this node on the same GPU (under MPS, side by side)
        self.yielding = yielding      # host waits give the core away between polls (waits_yield)
        self.host_syncs = 0           # host waits on the device so far (counted per level by the loops)
        self.launches = 0             # kernels, memsets and copies enqueued through kernel(), zero(), copy()
        if name == "gpu":
            import cupy
            cupy.cuda.Device(device).use()
            self.xp = cupy
        else:
            self.xp = np

    @property
    def is_gpu(self) -> bool:
        return self.name == "gpu"

    def sync(self, waitable=None) -> None:
        """Wait for the current stream (or the given stream or event); counted in host_syncs (on the
        CPU backend too, where nothing waits: the count is where a GPU run waits)."""
        if self.is_gpu:
            waitable = waitable or self.xp.cuda.get_current_stream()
            if self.yielding:
                while not waitable.done:
                    os.sched_yield()
            else:
                waitable.synchronize()
        self.host_syncs += 1

    def wait_flag(self, flag, waitable=None) -> None:
        """Wait for the device to set flag[0] (pinned; host_words.copy_words given the flag, the last work
        of the stream): the host word polled as `sync` polls the stream, which (queried every
        FLAG_QUERY_POLLS polls) raises the device's errors; a stream that ends without setting the flag is
        an error too. Counted in host_syncs."""
        if self.is_gpu:
            waitable = waitable or self.xp.cuda.get_current_stream()
            polls = 0
            while not flag[0]:
                polls += 1
                if polls % FLAG_QUERY_POLLS == 0 and waitable.done and not flag[0]:
                    raise RuntimeError("the device's work ended without setting the flag it was waited on by")
                if self.yielding:
                    os.sched_yield()
        self.host_syncs += 1

    def asnumpy(self, a) -> np.ndarray:
        return self.xp.asnumpy(a) if self.is_gpu else np.asarray(a)

    def asarray(self, a, dtype=None):
        return self.xp.asarray(a, dtype=dtype)

    def pinned_empty(self, n: int, dtype) -> np.ndarray:
        """Host buffer for MPI staging: page-locked on a GPU rank so copies run at full speed."""
        dtype = np.dtype(dtype)
        if not self.is_gpu:
            return np.empty(n, dtype)
        mem = self.xp.cuda.alloc_pinned_memory(max(1, n * dtype.itemsize))
        return np.frombuffer(mem, dtype, n)

    def module(self, name: str, offsets=np.int64):
        """Compiled RawModule of kernels/<name>.cu, for a graph whose offsets have dtype `offsets`."""
        return _compile(name, offset_bits(offsets))

    def kernel(self, module: str, function: str, offsets=None):
        """The compiled `function` of kernels/<module>.cu (looked up once per process), counting its
        launches in `launches`; `offsets`: the dtype of the graph offsets it reads (col_ptr, row_ptr;
        its launch contract names them: dbfs.ops.arrays.OFFSETS), None for a kernel that reads none."""
        return _CountedKernel(self, _function(module, function, offset_bits(np.int64 if offsets is None else offsets)))

    def urgent_stream(self):
        """A new non-blocking stream of the device's greatest priority, whose pending blocks the GPU
        dispatches before those of other streams' grids (GPU backend). CUDA clamps a priority beyond
        the device's range to its greatest."""
        return self.xp.cuda.Stream(non_blocking=True, priority=-(1 << 30))

    def zero(self, device_array) -> None:
        """device_array[:] = 0 (one memset on the current stream; counted in `launches`)."""
        if self.is_gpu:
            device_array.data.memset_async(0, device_array.nbytes)
            self.launches += 1
        else:
            device_array.fill(0)

    def copy(self, dst, src, stream=None) -> None:
        """dst[:] = src between device and pinned host arrays, either way or device to device, queued on
        `stream` (default: the current one) without a wait (allowed under graph capture, where CuPy's own
        device-to-host copy is refused); counted in `launches`. Where ranks share the GPU, a small copy
        to or from pinned host memory is a kernel's (dbfs.ops.host_words), not the shared copy engines'.
        (Pageable host memory, which no kernel can reach, is the copy engines' anyway.)"""
        if not self.is_gpu:
            dst[:src.shape[0]] = src
            return
        runtime_api = self.xp.cuda.runtime
        on_host = (isinstance(dst, np.ndarray), isinstance(src, np.ndarray))
        stream = stream or self.xp.cuda.get_current_stream()
        if (self.sharing > 1 and on_host[0] != on_host[1] and host_words.fits(src)
                and self.is_pinned(dst if on_host[0] else src)):
            with stream:
                host_words.copy_words(self, dst, src)
            return
        kind = {(True, False): runtime_api.memcpyDeviceToHost, (False, True): runtime_api.memcpyHostToDevice,
                (False, False): runtime_api.memcpyDeviceToDevice}[on_host]
        address = [a.ctypes.data if isinstance(a, np.ndarray) else a.data.ptr for a in (dst, src)]
        runtime_api.memcpyAsync(address[0], address[1], src.nbytes, kind, stream.ptr)
        self.launches += 1

    def is_pinned(self, host: np.ndarray) -> bool:
        """Whether a host array is a view of a pinned_empty buffer (page-locked: a kernel can reach it
        through its mapped address); asked of the arrays alone, so also while a graph is captured."""
        while isinstance(host.base, np.ndarray):
            host = host.base
        return (isinstance(host.base, memoryview)
                and isinstance(host.base.obj, self.xp.cuda.pinned_memory.PinnedMemoryPointer))

    @property
    def multiprocessors(self) -> int:
        """Streaming multiprocessors of the GPU (1 on the CPU backend)."""
        if not self.is_gpu:
            return 1
        return _device_property(self.device, "multiProcessorCount")

    @property
    def l2_share(self) -> int:
        """Bytes of the GPU's L2 cache this rank may count on: its 1/sharing (0 on the CPU backend)."""
        if not self.is_gpu:
            return 0
        return _device_property(self.device, "l2CacheSize") // self.sharing

    def resident_blocks(self, kernel, threads: int) -> int:
        """Blocks of `threads` threads of `kernel` (a compiled RawKernel) that this rank's share of the
        GPU holds at once: the grid of a grid-stride launch. More blocks would run in a second wave
        after the first, each with a full share of the work, and stretch the kernel by up to half. Ranks
        sharing a GPU (CUDA MPS) each take 1/sharing of it: their kernels then run side by side, and a
        tiny level's launch does not occupy every multiprocessor that the other ranks' kernels need."""
        return max(1, self._gpu_holds(kernel, threads) // self.sharing)

    def whole_gpu_blocks(self, kernel, threads: int, work_blocks: int) -> int:
        """The grid of a launch that always has work for `work_blocks` blocks (a pass over a whole
        segment): at most what the whole GPU holds at once, even where ranks share it. Sixteen MPS
        clients searching a bottom-up segment each with a grid of their sixteenth took 3-5x the time of
        one process with the whole GPU's grid on the same rows, and 0.9x with grids of half the GPU each
        (bench/NOTES.md, 2026-11-26, the bottom-up step's grid on ranks sharing a GPU)."""
        return max(1, min(work_blocks, self._gpu_holds(kernel, threads)))

    def _gpu_holds(self, kernel, threads: int) -> int:
        """Blocks of `threads` threads of `kernel` that the whole GPU holds at once."""
        return self.multiprocessors * _blocks_per_multiprocessor(kernel, threads)

    def memory_limit(self) -> int:
        """Bytes this rank may allocate: its share of the free device memory (ranks sharing a GPU hold
        their blocks side by side), or of the host memory shared by this node."""
        if self.is_gpu:
            free, _total = self.xp.cuda.Device(self.device).mem_info
            return int(free) // self.sharing
        return host_memory_limit() // max(1, runtime.local_rank()[1])

    def describe(self) -> str:
        return describe_device(self.device if self.is_gpu else None)


def abandon_capture(stream) -> None:
    """After a failed CUDA graph capture on `stream`: end the capture (an invalidated one ends with an
    error of its own) and let the stream drain, so that the work can be enqueued call by call."""
    if stream.is_capturing():
        try:
            stream.end_capture()
        except RuntimeError:
            pass
    stream.synchronize()


def describe_device(device: int | None) -> str:
    """'gpu D (model)' for CUDA device D, 'cpu (numpy)' for None."""
    if device is None:
        return "cpu (numpy)"
    import cupy
    name = cupy.cuda.runtime.getDeviceProperties(device)["name"]
    return f"gpu {device} ({name.decode() if isinstance(name, bytes) else name})"


def host_memory_limit() -> int:
    """The cgroup limit when there is one, else MemTotal (MemTotal can under-report on lazily grown VMs)."""
    limits = []
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = open(path).read().strip()
            if text.isdigit() and int(text) < 2**60:
                limits.append(int(text))
        except OSError:
            pass
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal:"):
                limits.append(int(line.split()[1]) * 1024)
    except OSError:
        pass
    return max(limits) if limits else 2**40


class _CountedKernel:
    """A compiled kernel whose launches are counted on its backend (the per-level log's launches)."""

    __slots__ = ("backend", "function")

    def __init__(self, backend, function):
        self.backend, self.function = backend, function

    def __call__(self, *args, **kwargs):
        self.backend.launches += 1
        return self.function(*args, **kwargs)

    @property
    def num_regs(self) -> int:
        return self.function.num_regs

    def __hash__(self):
        return hash(self.function)

    def __eq__(self, other):
        return isinstance(other, _CountedKernel) and other.function is self.function


@lru_cache(maxsize=None)
def _blocks_per_multiprocessor(kernel, threads: int) -> int:
    per_block = -(-kernel.num_regs // 8) * 8 * threads      # registers are allocated by 8 per thread
    return max(1, min(2048 // threads, 65536 // per_block, 32))


@lru_cache(maxsize=None)
def _device_property(device: int, name: str) -> int:
    import cupy
    return cupy.cuda.runtime.getDeviceProperties(device)[name]


def compile_source(code: str, cooperative: bool = False, offset_bits: int = 64, options: tuple = ()):
    """The RawModule of CUDA C `code`, compiled as C++17 with kernels/ on the include path and the
    constants shared with Python (dbfs.kernels.compile_options) and `options`; `cooperative` for kernels
    launched cooperatively (all blocks resident, grid-wide barriers); offset_bits: the width of a graph's
    offsets (common.cuh offset_t)."""
    import cupy

    from dbfs import kernels
    return cupy.RawModule(code=code, options=kernels.compile_options(offset_bits) + options,
                          enable_cooperative_groups=cooperative)


def offset_bits(dtype) -> int:
    """The width of graph offsets of `dtype` (int32 or int64), as the kernels are compiled for it."""
    dtype = np.dtype(dtype)
    if dtype not in OFFSET_DTYPES:
        raise ValueError(f"a graph's offsets are int32 or int64, not {dtype}")
    return 8 * dtype.itemsize


@lru_cache(maxsize=None)
def _compile(name: str, bits: int = 64):
    """The RawModule of kernels/<name>.cu for offsets of `bits` (the file is read once per process)."""
    from dbfs import kernels
    return compile_source(kernels.source(name), name in kernels.COOPERATIVE, bits, kernels.module_options(name))


@lru_cache(maxsize=None)
def _function(module: str, function: str, bits: int = 64):
    return _compile(module, bits).get_function(function)


def select(choice: str = "auto", share_multiprocessors: bool = False) -> Backend:
    """Collective: pick the backend for all ranks and bind this rank's GPU by its node-local rank;
    share_multiprocessors: ranks sharing a GPU set CUDA_MPS_ACTIVE_THREAD_PERCENTAGE to their share when
    it is not set (NVSHMEM runs several PEs on a GPU only so)."""
    if choice not in ("auto", "gpu", "cpu"):
        raise DbfsError(f"unknown backend {choice!r} (auto, gpu or cpu)", collective=True)
    forced = os.environ.get("DBFS_BACKEND")
    runtime.agree(None if forced in (None, "", "auto", "gpu", "cpu") else
                  f"DBFS_BACKEND={forced!r} is not a backend: set it to cpu, gpu or auto, or unset it")
    asked = "--backend gpu"
    if choice == "auto" and forced in ("gpu", "cpu"):
        choice, asked = forced, f"DBFS_BACKEND={forced}"
    ngpus = gpu_count() if choice != "cpu" else 0
    everyone_has_gpu = runtime.WORLD.allreduce(1 if ngpus > 0 else 0, op=_min_op()) == 1
    if choice == "gpu" and not everyone_has_gpu:
        runtime.agree(f"{asked} but " + ("this rank sees no GPU" if ngpus == 0 else
                      "another rank sees no GPU") + " (is CuPy installed: pip install dbfs[gpu]?)")
    if choice == "cpu" or not everyone_has_gpu:
        return Backend("cpu")
    local, on_node = runtime.local_rank()
    device = local % ngpus
    sharing = len(range(device, on_node, ngpus))
    # NVSHMEM's condition for several PEs on a GPU; CUDA read the environment when it started (gpu_count
    # above), so this share limits no context (bench/NOTES.md, 2026-11-26, the bottom-up step's grid on
    # ranks sharing a GPU)
    if share_multiprocessors and sharing > 1 and "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE" not in os.environ:
        os.environ["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = str(max(1, 100 // sharing))
    return Backend("gpu", device, sharing=sharing, yielding=waits_yield(on_node, runtime.node_cpus()))


def waits_yield(on_node: int, cpus: int) -> bool:
    """Whether a rank's host waits should yield its core between polls: where several ranks of this node
    are as many as the CPUs they may run on (runtime.node_cpus). Each wait otherwise spins on its core
    (CUDA's choice for a process with one context), so the MPS server's and the libraries' threads can
    only run by preempting a rank, and a preempted rank stalls every other at its next exchange for a
    scheduler slice of milliseconds (bench/NOTES.md, 2026-11-26, sixteen ranks' waits on sixteen
    cores). A rank alone stalls no other and spins."""
    return on_node > 1 and on_node >= cpus


def _min_op():
    from mpi4py import MPI
    return MPI.MIN
