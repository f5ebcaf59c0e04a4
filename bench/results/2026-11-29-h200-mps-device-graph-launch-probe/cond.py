"""Probe (kept with its results, never part of dbfs): can a rank's whole search be one CUDA graph, a WHILE
conditional node whose body picks the level's kind on the device (a SWITCH node over kind bodies, plain and
cooperative kernels), launched once by the host? Its cost an iteration against the host launching each level's
graph and waiting on its flag; run alone or under mpirun (ranks under CUDA MPS share the GPU). Prints one line per
variant."""
import ctypes, os, subprocess, time
import numpy as np
import cupy as cp

HERE = os.path.dirname(os.path.abspath(__file__))
rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", "0"))
LEVELS, N = int(os.environ.get("LEVELS", "2000")), int(os.environ.get("WORK", "4096"))
cuda = ctypes.CDLL("libcuda.so.1")
NODE_CONDITIONAL, COND_WHILE, COND_SWITCH, ASSIGN_DEFAULT = 13, 1, 2, 1
CAPTURE_RELAXED = 2


class CondParams(ctypes.Structure):
    _fields_ = [("handle", ctypes.c_uint64), ("type", ctypes.c_int), ("size", ctypes.c_uint),
                ("phGraph_out", ctypes.POINTER(ctypes.c_void_p)), ("ctx", ctypes.c_void_p)]


class NodeParams(ctypes.Structure):
    class U(ctypes.Union):
        _fields_ = [("reserved1", ctypes.c_longlong * 29), ("conditional", CondParams)]
    _anonymous_ = ("u",)
    _fields_ = [("type", ctypes.c_int), ("reserved0", ctypes.c_int * 3), ("u", U), ("reserved2", ctypes.c_longlong)]


def check(result, what):
    if result != 0:
        name = ctypes.c_char_p()
        cuda.cuGetErrorName(result, ctypes.byref(name))
        raise RuntimeError(f"{what}: CUresult {result} {name.value}")


def build():
    out = os.path.join("/tmp", f"cond_{os.getpid()}")
    obj, cubin = out + ".o", out + ".cubin"
    run = lambda *a: subprocess.run(a, check=True, capture_output=True, text=True)
    run("nvcc", "-arch=sm_90", "-rdc=true", "-c", os.path.join(HERE, "cond.cu"), "-o", obj)
    run("nvcc", "-arch=sm_90", "-dlink", "-cubin", obj, "-lcudadevrt", "-o", cubin)
    return cp.RawModule(path=cubin), cp.RawModule(path=cubin, enable_cooperative_groups=True)


def context():
    ctx = ctypes.c_void_p()
    check(cuda.cuCtxGetCurrent(ctypes.byref(ctx)), "cuCtxGetCurrent")
    return ctx


def capture_into(graph, stream, deps, enqueue):
    """Capture enqueue() on stream into graph after deps; the nodes it added (their handles)."""
    before = nodes(graph)
    dep = (ctypes.c_void_p * max(1, len(deps)))(*deps)
    check(cuda.cuStreamBeginCaptureToGraph(ctypes.c_void_p(stream.ptr), ctypes.c_void_p(graph), dep if deps else None,
                                           None, ctypes.c_size_t(len(deps)), CAPTURE_RELAXED), "BeginCaptureToGraph")
    with stream:
        enqueue()
    out = ctypes.c_void_p()
    check(cuda.cuStreamEndCapture(ctypes.c_void_p(stream.ptr), ctypes.byref(out)), "EndCapture")
    return [n for n in nodes(graph) if n not in before]


def nodes(graph):
    count = ctypes.c_size_t(0)
    check(cuda.cuGraphGetNodes(ctypes.c_void_p(graph), None, ctypes.byref(count)), "GetNodes")
    if count.value == 0:
        return []
    arr = (ctypes.c_void_p * max(1, count.value))()
    check(cuda.cuGraphGetNodes(ctypes.c_void_p(graph), arr, ctypes.byref(count)), "GetNodes")
    return list(arr[:count.value])


def conditional(graph, deps, handle, kind, size, ctx):
    """Add a conditional node; (node, its body graphs)."""
    params = NodeParams()
    params.type = NODE_CONDITIONAL
    params.conditional.handle, params.conditional.type, params.conditional.size = handle, kind, size
    params.conditional.ctx = ctx
    node = ctypes.c_void_p()
    dep = (ctypes.c_void_p * max(1, len(deps)))(*deps)
    check(cuda.cuGraphAddNode_v2(ctypes.byref(node), ctypes.c_void_p(graph), dep if deps else None, None,
                                 ctypes.c_size_t(len(deps)), ctypes.byref(params)), "cuGraphAddNode(conditional)")
    return node.value, [params.conditional.phGraph_out[i] for i in range(size)]


def handle(graph, ctx, default, flags):
    h = ctypes.c_uint64()
    check(cuda.cuGraphConditionalHandleCreate(ctypes.byref(h), ctypes.c_void_p(graph), ctx, default, flags),
          "ConditionalHandleCreate")
    return h.value


def instantiate(graph, stream):
    exec_ = ctypes.c_void_p()
    check(cuda.cuGraphInstantiateWithFlags(ctypes.byref(exec_), ctypes.c_void_p(graph), ctypes.c_ulonglong(0)),
          "Instantiate")
    check(cuda.cuGraphUpload(exec_, ctypes.c_void_p(stream.ptr)), "Upload")
    return exec_.value


def launch(exec_, stream):
    check(cuda.cuGraphLaunch(ctypes.c_void_p(exec_), ctypes.c_void_p(stream.ptr)), "cuGraphLaunch")


def wait(flag):
    while not flag[0]:
        os.sched_yield()
    flag[0] = 0


def say(line):
    print(f"rank {rank}: {line}", flush=True)


def main():
    mod, coop_mod = build()
    work, pick, go_on, raise_flag = (mod.get_function(f) for f in ("work", "pick_kind", "go_on", "raise_flag"))
    coop = coop_mod.get_function("coop_work")
    stream = cp.cuda.Stream(non_blocking=True)
    a = cp.zeros(N, cp.float32)
    count = cp.zeros(1, cp.uint64)
    seen = cp.zeros(3, cp.uint32)
    flag_mem = cp.cuda.alloc_pinned_memory(4)
    flag = np.frombuffer(flag_mem, np.int32, 1)
    flag[0] = 0
    blocks = (N + 255) // 256
    ran = cp.zeros(2, cp.uint32)
    plain = lambda: work((blocks,), (256,), (a, np.int32(N), ran))
    cooperative = lambda: coop((min(blocks, 8),), (256,), (a, np.int32(N), ran))
    cp.cuda.Device().synchronize()
    ctx = context()
    try:
        main_graph = ctypes.c_void_p()
        check(cuda.cuGraphCreate(ctypes.byref(main_graph), 0), "GraphCreate")
        main_graph = main_graph.value
        loop_h = handle(main_graph, ctx, 1, ASSIGN_DEFAULT)
        loop, (body,) = conditional(main_graph, [], loop_h, COND_WHILE, 1, ctx)
        kind_h = handle(body, ctx, 0, 0)
        picked = capture_into(body, stream, [], lambda: pick((1,), (1,), (count, np.uint64(kind_h), np.int32(3))))
        switch, kinds = conditional(body, picked, kind_h, COND_SWITCH, 3, ctx)
        for kind, enqueue in zip(kinds, (plain, cooperative, lambda: (plain(), cooperative()))):
            say(f"kind body: {len(capture_into(kind, stream, [], enqueue))} nodes captured")
        capture_into(body, stream, [switch],
                     lambda: go_on((1,), (1,), (count, np.uint64(LEVELS), np.uint64(loop_h), seen)))
        capture_into(main_graph, stream, [loop], lambda: raise_flag((1,), (1,), (np.uint64(flag_mem.ptr),)))
        search = instantiate(main_graph, stream)
        stream.synchronize()
        expected = [(LEVELS + 2) // 3 + LEVELS // 3, (LEVELS + 1) // 3 + LEVELS // 3]    # kinds 0, 2 and 1, 2
        for repeat in range(3):
            count.fill(0); seen.fill(0); ran.fill(0); stream.synchronize()
            t0 = time.perf_counter()
            launch(search, stream)
            wait(flag)
            t = time.perf_counter() - t0
            stream.synchronize()
            say(f"one graph (while/switch): {int(count.get()[0])} levels, kinds {seen.get().tolist()}, "
                           f"bodies ran {ran.get().tolist()} (expected {expected}), "
                           f"{t / LEVELS * 1e6:.2f} us a level")
    except Exception as e:                                  # noqa: BLE001 (a probe: report and go on)
        say(f"one graph (while/switch): failed: {e}")
    # host-driven: three graphs (the kinds), the host launching each level's and waiting on its flag
    graphs = []
    for enqueue in (plain, cooperative, lambda: (plain(), cooperative())):
        g = ctypes.c_void_p()
        check(cuda.cuGraphCreate(ctypes.byref(g), 0), "GraphCreate")
        capture_into(g.value, stream, [], lambda: (enqueue(), raise_flag((1,), (1,), (np.uint64(flag_mem.ptr),))))
        graphs.append(instantiate(g.value, stream))
    for repeat in range(3):
        ran.fill(0); stream.synchronize()
        t0 = time.perf_counter()
        for level in range(LEVELS):
            launch(graphs[level % 3], stream)
            wait(flag)
        t = time.perf_counter() - t0
        stream.synchronize()
        say(f"host-driven (three graphs): {LEVELS} levels, bodies ran {ran.get().tolist()}, "
            f"{t / LEVELS * 1e6:.2f} us a level")


main()
