"""Probe (kept with its results, never part of dbfs): can a rank's search run its levels as CUDA graphs that the
device launches one after another (device graph launch, tail launches), and what does a level switch cost then,
against the host launching each level's graph and waiting on its flag? Run alone or under mpirun (ranks under CUDA
MPS share the GPU). Prints one line per variant: levels, us a level."""
import ctypes, os, subprocess, time
import numpy as np
import cupy as cp

HERE = os.path.dirname(os.path.abspath(__file__))
rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", "0"))
LEVELS, N = int(os.environ.get("LEVELS", "2000")), int(os.environ.get("WORK", "4096"))


def build():
    out = os.path.join("/tmp", f"chain_{os.getpid()}")
    obj, cubin = out + ".o", out + ".cubin"
    run = lambda *a: subprocess.run(a, check=True, capture_output=True, text=True)
    run("nvcc", "-arch=sm_90", "-rdc=true", "-c", os.path.join(HERE, "chain.cu"), "-o", obj)
    run("nvcc", "-arch=sm_90", "-dlink", "-cubin", obj, "-lcudadevrt", "-o", cubin)
    return cp.RawModule(path=cubin), cp.RawModule(path=cubin, enable_cooperative_groups=True)


cuda = ctypes.CDLL("libcuda.so.1")
DEVICE_LAUNCH = 4


def check(result, what):
    if result != 0:
        raise RuntimeError(f"{what}: CUresult {result}")


def capture(stream, enqueue):
    """A graph captured from enqueue() on stream, instantiated for device launch and uploaded: its exec handle."""
    cp.cuda.runtime.streamBeginCapture(stream.ptr)
    with stream:
        enqueue()
    graph = cp.cuda.runtime.streamEndCapture(stream.ptr)
    exec_ = ctypes.c_void_p()
    check(cuda.cuGraphInstantiateWithFlags(ctypes.byref(exec_), ctypes.c_void_p(graph),
                                           ctypes.c_ulonglong(DEVICE_LAUNCH)),
          "cuGraphInstantiateWithFlags(DEVICE_LAUNCH)")
    check(cuda.cuGraphUpload(exec_, ctypes.c_void_p(stream.ptr)), "cuGraphUpload")
    return exec_.value


def launch(exec_, stream):
    check(cuda.cuGraphLaunch(ctypes.c_void_p(exec_), ctypes.c_void_p(stream.ptr)), "cuGraphLaunch")


def wait(flag):
    while not flag[0]:
        os.sched_yield()
    flag[0] = 0


def main():
    mod, coop_mod = build()
    work, nxt, raise_flag = (mod.get_function(f) for f in ("work", "next_level", "raise_flag"))
    coop = coop_mod.get_function("coop_work")
    stream = cp.cuda.Stream(non_blocking=True)
    a = cp.zeros(N, cp.float32)
    count = cp.zeros(1, cp.uint64)
    ran = cp.zeros(1, cp.uint32)
    error = cp.zeros(1, cp.int32)
    table = cp.zeros(2, cp.uint64)
    flag_mem = cp.cuda.alloc_pinned_memory(4)
    flag = np.frombuffer(flag_mem, np.int32, 1)
    flag[0] = 0
    flag_dev = flag_mem.ptr
    blocks = (N + 255) // 256
    results = []

    for name, level in (("plain", lambda: work((blocks,), (256,), (a, np.int32(N), ran))),
                        ("cooperative", lambda: coop((min(blocks, 8),), (256,), (a, np.int32(N), ran)))):
        # device-driven: two graphs (the parities), each the level then the scheduler
        try:
            schedule = (count, np.uint64(LEVELS), table, np.uint64(flag_dev), error)
            execs = [capture(stream, lambda: (level(), nxt((1,), (1,), schedule)))
                     for _ in range(2)]
        except Exception as e:                              # noqa: BLE001 (a probe: report and go on)
            results.append(f"{name} device-driven: capture failed: {e}")
            continue
        table.set(np.array(execs, np.uint64))
        for repeat in range(3):
            count.fill(0); ran.fill(0); stream.synchronize()
            t0 = time.perf_counter()
            launch(execs[0], stream)
            wait(flag)
            t = time.perf_counter() - t0
            stream.synchronize()
            results.append(f"{name} device-driven: {int(count.get()[0])} levels, error {int(error.get()[0])}, "
                           f"level kernels ran {int(ran.get()[0])}, "
                           f"{t / LEVELS * 1e6:.2f} us a level")
        # host-driven: the host launches each level's graph and waits on its flag
        host = capture(stream, lambda: (level(), raise_flag((1,), (1,), (np.uint64(flag_dev),))))
        for repeat in range(3):
            stream.synchronize()
            t0 = time.perf_counter()
            for _ in range(LEVELS):
                launch(host, stream)
                wait(flag)
            t = time.perf_counter() - t0
            results.append(f"{name} host-driven: {LEVELS} levels, {t / LEVELS * 1e6:.2f} us a level")
    for line in results:
        print(f"rank {rank}: {line}", flush=True)


main()
