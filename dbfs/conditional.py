"""IF nodes of CUDA graphs (conditional nodes, CUDA 12.4 and later) inside a CuPy stream capture, for a
launch whose later part runs only where one of its kernels decides so (dbfs.followers).

CuPy has no API for conditional nodes, so cuda.bindings adds one to CuPy's capture: a conditional handle
on the capture's graph (reset to 0 at every launch), the IF node after the capture's current
dependencies, the stream's dependencies moved onto the node, and the node's body captured from a second
stream into the body graph the node owns (cudaStreamBeginCaptureToGraph). A kernel captured before the
node sets the handle's value on the device (cudaGraphSetConditional, kernels/level_gate.cu). Works with
CuPy 14.2 on CUDA 13, copies to and from pinned memory in the body included (bench/NOTES.md, 2026-11-27,
conditional graph nodes from CuPy).
"""

from __future__ import annotations

from contextlib import contextmanager


def available() -> bool:
    """Whether cuda.bindings (which the CUDA wheels bring with cuda-python) can be imported."""
    try:
        from cuda.bindings import runtime  # noqa: F401
    except ImportError:
        return False
    return True


def _checked(name: str, result):
    """The values of a cuda.bindings call after its error code; RuntimeError where it failed."""
    error, *values = result
    if int(error) != 0:
        raise RuntimeError(f"{name} failed: {error!r}")
    return values[0] if len(values) == 1 else values


def _capture_state(stream):
    """The graph `stream` is capturing into and the nodes its next node will depend on."""
    from cuda.bindings import runtime
    info = _checked("cudaStreamGetCaptureInfo", runtime.cudaStreamGetCaptureInfo(stream.ptr))
    graph, dependencies, count = info[2], info[3], info[-1]     # (status, id, graph, nodes, edges, count)
    return graph, list(dependencies or [])[:int(count)]


def conditional_handle(stream):
    """A new conditional handle of the graph `stream` is capturing, 0 at every launch until a kernel
    sets it. Returns (the handle, its value for a kernel argument)."""
    from cuda.bindings import runtime
    graph, _ = _capture_state(stream)
    handle = _checked("cudaGraphConditionalHandleCreate", runtime.cudaGraphConditionalHandleCreate(
        graph, 0, runtime.cudaGraphConditionalHandleFlags.cudaGraphCondAssignDefault))
    return handle, int(handle)


@contextmanager
def if_body(stream, handle, body_stream):
    """Within `stream`'s capture: an IF node on `handle` after what the stream captured so far, the
    stream's later work after the node; inside the block, work enqueued on the current stream (made
    `body_stream`) is the node's body, run only where the handle is non-zero when the node is reached."""
    from cuda.bindings import runtime
    graph, dependencies = _capture_state(stream)
    params = runtime.cudaGraphNodeParams()
    params.type = runtime.cudaGraphNodeType.cudaGraphNodeTypeConditional
    params.conditional.handle = handle
    params.conditional.type = runtime.cudaGraphConditionalNodeType.cudaGraphCondTypeIf
    params.conditional.size = 1
    node = _checked("cudaGraphAddNode", runtime.cudaGraphAddNode(graph, dependencies, None, len(dependencies),
                                                                 params))
    _checked("cudaStreamUpdateCaptureDependencies", runtime.cudaStreamUpdateCaptureDependencies(
        stream.ptr, [node], None, 1, runtime.cudaStreamUpdateCaptureDependenciesFlags.cudaStreamSetCaptureDependencies))
    body = params.conditional.phGraph_out[0]
    _checked("cudaStreamBeginCaptureToGraph", runtime.cudaStreamBeginCaptureToGraph(
        body_stream.ptr, body, None, None, 0, runtime.cudaStreamCaptureMode.cudaStreamCaptureModeRelaxed))
    try:
        with body_stream:
            yield
    finally:
        _checked("cudaStreamEndCapture", runtime.cudaStreamEndCapture(body_stream.ptr))
