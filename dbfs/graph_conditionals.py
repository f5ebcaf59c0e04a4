"""A switch node (a CUDA graph's conditional node, CUDA 12.8 on: body n runs where a kernel upstream set
the condition to n, none where no body has that index) added to a graph while CuPy captures it, its
bodies captured from a second stream. CuPy has no API for it, so this calls the CUDA driver through
ctypes (libcuda), with the entry points as of CUDA 12.3 (cuGetProcAddress), whose signatures take edge
data: one ABI on every driver that has switch nodes.

How (the CUDA programming guide's conditional nodes, built during stream capture): the graph being
captured and its current dependencies come from cuStreamGetCaptureInfo; the node is added to it with
cuGraphAddNode and becomes the capture's only dependency; each body graph that the driver made is filled
by cuStreamBeginCaptureToGraph on the second stream. The condition's handle is made before the kernel
that sets it (cudaGraphSetConditional: kernels/grid_rounds.cu) is captured.
"""

from __future__ import annotations

import ctypes
import functools

DRIVER_VERSION = 12080                       # switch nodes
_API_VERSION = 12030                         # the signatures used below (edge data)
_NODE_CONDITIONAL, _COND_SWITCH, _SET_DEPENDENCIES, _CAPTURE_RELAXED = 13, 2, 1, 2
_P, _U64 = ctypes.c_void_p, ctypes.c_uint64


class _Conditional(ctypes.Structure):        # CUDA_CONDITIONAL_NODE_PARAMS
    _fields_ = [("handle", _U64), ("type", ctypes.c_int), ("size", ctypes.c_uint),
                ("graphs", ctypes.POINTER(_P)), ("ctx", _P)]


class _NodeParams(ctypes.Structure):         # CUgraphNodeParams: a union of 29 words after the type
    _fields_ = [("type", ctypes.c_int), ("reserved0", ctypes.c_int * 3), ("conditional", _Conditional),
                ("union_rest", ctypes.c_byte * (29 * 8 - ctypes.sizeof(_Conditional))),
                ("reserved2", ctypes.c_longlong)]


class _Driver:
    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")
        version = ctypes.c_int()
        self.lib.cuDriverGetVersion(ctypes.byref(version))
        self.version = version.value
        self.calls = {}
        if self.version >= DRIVER_VERSION:
            for name, args in (
                    ("cuStreamGetCaptureInfo", [_P, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(_U64),
                                                ctypes.POINTER(_P), ctypes.POINTER(_P), ctypes.POINTER(_P),
                                                ctypes.POINTER(ctypes.c_size_t)]),
                    ("cuGraphConditionalHandleCreate", [ctypes.POINTER(_U64), _P, _P, ctypes.c_uint, ctypes.c_uint]),
                    ("cuGraphAddNode", [ctypes.POINTER(_P), _P, _P, _P, ctypes.c_size_t, ctypes.POINTER(_NodeParams)]),
                    ("cuStreamUpdateCaptureDependencies", [_P, ctypes.POINTER(_P), _P, ctypes.c_size_t, ctypes.c_uint]),
                    ("cuStreamBeginCaptureToGraph", [_P, _P, _P, _P, ctypes.c_size_t, ctypes.c_int]),
                    ("cuStreamEndCapture", [_P, ctypes.POINTER(_P)]),
                    ("cuCtxGetCurrent", [ctypes.POINTER(_P)])):
                self.calls[name] = self._entry(name, args)

    def _entry(self, name: str, args):
        address, found = _P(), ctypes.c_int()
        self.check(self.lib.cuGetProcAddress_v2(name.encode(), ctypes.byref(address), _API_VERSION, 0,
                                                ctypes.byref(found)), "cuGetProcAddress " + name)
        return ctypes.CFUNCTYPE(ctypes.c_int, *args)(address.value)

    @staticmethod
    def check(result: int, what: str) -> None:
        if result != 0:
            raise RuntimeError(f"{what} failed (CUDA driver error {result})")

    def __call__(self, name: str, *args) -> None:
        self.check(self.calls[name](*args), name)


@functools.cache
def _driver() -> _Driver | None:
    try:
        return _Driver()
    except OSError:                          # no libcuda: no GPU
        return None


def available() -> bool:
    """Whether this machine's CUDA driver makes switch nodes."""
    driver = _driver()
    return driver is not None and driver.version >= DRIVER_VERSION


def _capture(stream) -> tuple:
    """The graph `stream` is being captured into, its current dependencies (nodes, edge data, count)."""
    status, ident, graph = ctypes.c_int(), _U64(), _P()
    nodes, edges, count = _P(), _P(), ctypes.c_size_t()
    _driver()("cuStreamGetCaptureInfo", stream.ptr, ctypes.byref(status), ctypes.byref(ident), ctypes.byref(graph),
              ctypes.byref(nodes), ctypes.byref(edges), ctypes.byref(count))
    return graph, nodes, edges, count


def _context() -> _P:
    context = _P()
    _driver()("cuCtxGetCurrent", ctypes.byref(context))
    return context


def switch_handle(stream) -> int:
    """While `stream` is captured: a new condition handle of its graph (0 at every launch until set)."""
    handle = _U64()
    _driver()("cuGraphConditionalHandleCreate", ctypes.byref(handle), _capture(stream)[0], _context(), 0, 0)
    return handle.value


def switch(stream, handle: int, bodies, body_stream) -> None:
    """While `stream` is captured: a switch node on `handle` after what is captured so far, body k
    captured from body_stream as bodies[k]() enqueues it (on the current stream, which is body_stream
    meanwhile); what `stream` captures next follows the node."""
    driver = _driver()
    graph, nodes, edges, count = _capture(stream)
    params = _NodeParams()
    params.type = _NODE_CONDITIONAL
    params.conditional.handle, params.conditional.type = handle, _COND_SWITCH
    params.conditional.size, params.conditional.ctx = len(bodies), _context()
    node = _P()
    driver("cuGraphAddNode", ctypes.byref(node), graph, nodes, edges, count, ctypes.byref(params))
    body_graphs = [params.conditional.graphs[k] for k in range(len(bodies))]
    driver("cuStreamUpdateCaptureDependencies", stream.ptr, ctypes.byref(node), None, 1, _SET_DEPENDENCIES)
    for enqueue, body_graph in zip(bodies, body_graphs):
        driver("cuStreamBeginCaptureToGraph", body_stream.ptr, body_graph, None, None, 0, _CAPTURE_RELAXED)
        try:
            with body_stream:
                enqueue()
        finally:
            captured = _P()
            driver("cuStreamEndCapture", body_stream.ptr, ctypes.byref(captured))
