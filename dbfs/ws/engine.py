"""The WS engine: run a vertex program to convergence on one or more GPUs of this process, or on N
simulated partitions with NumPy.

Paper 000, Figure 4 (the host loop around the iteration kernel, ended by a device convergence flag;
with the WS method each iteration first runs the hub pass, see dbfs.ws.launch) and section IV
(multi-GPU processing with Vertex Refinement). Every partition holds its share of the CSR and a full
copy of VertexValues; after an iteration in which anything changed, each partition sends what the
others may need, and they apply it at the start of the next iteration:
  vr    the kernel's outbox: the updated boundary vertices (index and value), through the host hub
  medusa its whole vertex range (Medusa's scheme, the paper's ALL), through the host hub
  ms    the values of its whole offline boundary list (TOTEM's maximal subset, MS), through the hub
  peer  the vr outbox copied device to device into every other partition's inbox (no host hub)
The hub is a set of pinned host buffers [2][P] (double buffering: iteration t writes parity t % 2,
the others read it at the start of iteration t + 1, so a device that runs ahead never overwrites a box
that is still being read). The iteration kernel appends the vr outbox straight into its partition's
pinned hub box (mapped into every device's address space under unified addressing), so the
device-to-host half of the vr exchange runs while the iteration computes and only the host-to-device
half is left after it. Each GPU partition issues its work on its own stream; a reader waits for the
writer's CUDA event, and the host synchronises once per iteration to read the convergence flags and
outbox counts (needed to copy only the filled part of each box).

The exchange logic lives in `_Part` and `Engine` and is shared by both backends; `_GpuPart` moves
bytes with CuPy copies and kernels, `_CpuPart` with NumPy (its "events" are no-ops), so the CPU backend
with --gpus N runs the same VR / Medusa / MS / peer protocol on N partitions.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from dbfs.ws import frontier as filters
from dbfs.ws import launch, shards
from dbfs.ws.graph import CSR, HUB_DEGREE, HUB_SLICE, PartitionData, copy_to_device, split
from dbfs.ws.program import Program, module

EXCHANGES = ("vr", "medusa", "ms", "peer")
METHODS = launch.METHODS + shards.SHARD_METHODS
SHARD_MEMORY = ("auto", "device", "host")
# room left on the GPU, per entry, for what each program adds to the shards (its copies and edge values)
PROGRAM_BYTES_PER_ENTRY = 16
DEFAULT_MAX_ITERATIONS = 10000


@dataclass
class RunResult:
    values: np.ndarray             # final VertexValues (program dtype, host)
    iterations: int
    converged: bool
    time: float                    # seconds, first launch to the last convergence check
    iteration_times: list = field(default_factory=list)
    compute_time: float = 0.0      # iteration kernels, summed per partition, slowest partition
    exchange_time: float = 0.0     # box kernels, copies and waits for them, slowest partition
    sent_vertices: int = 0         # vertex values sent by all partitions, all iterations
    sent_bytes: int = 0
    filters: list = field(default_factory=list)        # per iteration: the filter that built its list
    active_groups: list = field(default_factory=list)  # per iteration: groups of 32 vertices processed


class Layout:
    """The graph cut into partitions, each placed on its device (shared by every program that runs);
    hub_degree and hub_slice: see dbfs.ws.graph (the hubs of the WS method). shard_methods: the
    partitions also in G-Shards and/or Concatenated Windows (dbfs.ws.shards) of shard_window vertices,
    on the device or, with shard_memory "host" (or "auto" where they would leave less than
    PROGRAM_BYTES_PER_ENTRY per entry free on the GPU), in pinned host memory from pinned_empty."""

    def __init__(self, csr: CSR, parts: int, devices: list[int] | None = None, hub_degree: int = HUB_DEGREE,
                 hub_slice: int = HUB_SLICE, shard_methods=(), shard_window: int = shards.WINDOW,
                 shard_memory: str = "auto", pinned_empty=None):
        self.n, self.entries, self.n_tuples = csr.n, csr.entries, csr.n_tuples
        self.degree = csr.degree
        datas = split(csr, parts, hub_degree, hub_slice)
        if devices is not None:
            home = csr.rowptr.device.id
            datas = [d if (parts == 1 and dev == home) else d.to_device(dev) for d, dev in zip(datas, devices)]
            for d, dev in zip(datas, devices):
                d.device = dev
        self.parts = datas
        if shard_memory not in SHARD_MEMORY:
            raise ValueError(f"unknown shard memory {shard_memory!r}")
        self.shards = {m: [self._placed(shards.build_on(d, m, shard_window), shard_memory, pinned_empty)
                           for d in datas] for m in shard_methods}

    @staticmethod
    def _placed(part_shards: shards.Shards, memory: str, pinned_empty) -> shards.Shards:
        on_gpu = not isinstance(part_shards.dest, np.ndarray)
        if memory == "auto":
            memory = "device"
            if on_gpu:
                import cupy
                with part_shards.dest.device:
                    free = cupy.cuda.runtime.memGetInfo()[0] + cupy.get_default_memory_pool().free_bytes()
                if free < PROGRAM_BYTES_PER_ENTRY * part_shards.entries:
                    memory = "host"
        if memory == "device":
            return part_shards
        if not on_gpu:
            return part_shards.moved(lambda a: a, True)

        def to_pinned(array):
            out = pinned_empty(array.size, array.dtype)
            array.get(out=out)
            return out
        moved = part_shards.moved(to_pinned, True)
        del part_shards
        import cupy
        cupy.get_default_memory_pool().free_all_blocks()
        return moved

    def representation_bytes(self, method: str) -> tuple[int, int]:
        """(device, host) bytes of the graph structure `method` reads, all partitions (CSR for ws and
        vwc: row offsets, neighbours, weights and hub tables)."""
        if method in shards.SHARD_METHODS:
            held = self.shards[method]
            device, host = sum(s.nbytes for s in held if not s.on_host), sum(s.nbytes for s in held if s.on_host)
        else:
            device, host = 0, 0
            for d in self.parts:
                arrays = (d.rowptr, d.nbrs, d.weights, d.hubs.vertices, d.hubs.slice_begin, d.hubs.slice_end,
                          d.hubs.warp_slice)
                device += sum(int(a.nbytes) for a in arrays if a is not None)
        return (0, device + host) if self.parts[0].device is None else (device, host)

    def describe(self) -> list[dict]:
        out = [{"lo": d.lo, "hi": d.hi, "entries": int(d.nbrs.shape[0]), "boundary": int(d.boundary.shape[0]),
                "hubs": int(d.hubs.vertices.shape[0]), "hub_slices": d.hubs.slices,
                "hub_entries": int((d.hubs.slice_end - d.hubs.slice_begin).sum()), "device": d.device}
               for d in self.parts]
        for method, held in self.shards.items():
            for record, s, d in zip(out, held, self.parts):
                record[method] = {"window": s.window, "shards": s.shards, "bytes": s.nbytes,
                                  "memory": "host" if s.on_host or d.device is None else "device"}
        return out


class _Part:
    """One partition: its CSR share, its copy of VertexValues, its outbox and its inboxes."""

    def __init__(self, data: PartitionData, program: Program, n: int, held: dict):
        xp = self.xp = data.xp
        self.data = data
        self.program = program
        self.held = held               # shard method -> this partition's dbfs.ws.shards.Shards
        self.shard_state: dict = {}    # shard method -> the program's (copies, edge values[, twin plan])
        self.index, self.lo, self.count = data.index, data.lo, data.count
        self.n_boundary = int(data.boundary.shape[0])
        self.itemsize = program.vertex_dtype.itemsize
        self.values = xp.zeros(n * self.itemsize, np.uint8)
        room = max(self.n_boundary, 1)
        # the device boxes of the peer outbox and the MS gather (vr appends into the hub instead)
        self.out_idx = xp.zeros(room, np.uint32)
        self.out_val = xp.zeros(room * self.itemsize, np.uint8)
        self.inbox: dict = {}          # (parity, sender) -> (idx, val) device buffers
        self.boundary_of: dict = {}    # sender -> its boundary list on this partition's device
        self.marks: list = []          # (span name, time stamp): compute, exchange or idle from there on

    def attach(self, others: list["_Part"]) -> None:
        """Allocate inboxes for the other partitions and keep their boundary lists (for MS)."""
        xp = self.xp
        for q in others:
            room = max(q.n_boundary, 1)
            for parity in (0, 1):
                self.inbox[parity, q.index] = (xp.zeros(room, np.uint32), xp.zeros(room * self.itemsize, np.uint8))
            self.boundary_of[q.index] = self.import_array(q.data.boundary)

    def mark(self, span: str) -> None:
        """From this point of the partition's work on, time counts as `span` (compute, exchange, idle)."""
        self.marks.append((span, self.stamp()))

    def timings(self) -> tuple[float, float]:
        """Seconds spent computing and exchanging since the last load (synchronises)."""
        self.mark("idle")
        self.wait()
        totals = {"compute": 0.0, "exchange": 0.0, "idle": 0.0}
        for (span, start), (_, stop) in zip(self.marks, self.marks[1:]):
            totals[span] += self.elapsed(start, stop)
        return totals["compute"], totals["exchange"]

    # ---- the exchange protocol (both backends) ------------------------------------------------------
    def outbox(self, kind: str | None, parity: int, hub):
        """Where iteration kernels of parity `parity` append the refined updates: (idx, val) of this
        partition's hub box for vr, the device outbox for peer; None when refinement is off."""
        if kind == "vr":
            return hub.idx[parity][self.index], hub.val[parity][self.index]
        if kind == "peer":
            return self.out_idx, self.out_val
        return None

    def send(self, kind: str, parity: int, outbox_count: int, hub, receivers: list["_Part"]) -> int:
        """Issue this partition's part of the exchange after an iteration; returns the vertices per box."""
        isz = self.itemsize
        if kind == "medusa":
            n = self.count
            self.copy(hub.val[parity][self.index], 0, self.values, self.lo * isz, n * isz)
        elif kind == "ms":
            n = self.n_boundary
            self.gather(self.data.boundary, n, self.out_val)
            self.copy(hub.val[parity][self.index], 0, self.out_val, 0, n * isz)
        elif kind == "vr":
            n = outbox_count   # the iteration kernel has already written the box into the hub
        else:  # peer
            n = outbox_count
            for r in receivers:
                idx, val = r.inbox[parity, self.index]
                self.copy(idx, 0, self.out_idx, 0, 4 * n)
                self.copy(val, 0, self.out_val, 0, n * isz)
        self.record_sent(parity)
        return n

    def receive(self, kind: str, parity: int, sender: "_Part", n: int, hub):
        """Apply what `sender` sent at the end of the previous iteration (parity of that iteration);
        returns the vertices that came: (their ids, or None for the range first .. first + n, first, n)."""
        self.wait_sent(sender, parity)
        isz, q = self.itemsize, sender.index
        idx, val = self.inbox[parity, q]
        if kind == "medusa":
            self.copy(self.values, sender.lo * isz, hub.val[parity][q], 0, n * isz)
            return None, sender.lo, n
        if kind == "ms":
            self.copy(val, 0, hub.val[parity][q], 0, n * isz)
            idx = self.boundary_of[q]
        elif kind == "vr":
            self.copy(idx, 0, hub.idx[parity][q], 0, 4 * n)
            self.copy(val, 0, hub.val[parity][q], 0, n * isz)
        self.apply(idx, val, n)
        return idx, 0, n


def _edge_values(program: Program, data: PartitionData):
    edges = program.edge_values(data)
    if edges.dtype != program.edge_dtype or edges.shape != data.nbrs.shape:
        raise ValueError(f"program {program.name}: edge_values gave {edges.dtype} {edges.shape}, expected "
                         f"{program.edge_dtype} {data.nbrs.shape}")
    return edges


class _Hub:
    """Host buffers [parity][partition]: indices (uint32) and values (bytes) of what each one sends."""

    def __init__(self, parts: list[_Part], host_empty):
        self.idx = [[host_empty(max(p.n_boundary, 1), np.uint32) for p in parts] for _ in (0, 1)]
        self.val = [[host_empty(max(p.count, p.n_boundary, 1) * p.itemsize, np.uint8) for p in parts]
                    for _ in (0, 1)]


class _CpuPart(_Part):
    """A simulated partition: NumPy twins and synchronous copies."""

    def __init__(self, data: PartitionData, program: Program, n: int, held: dict):
        super().__init__(data, program, n, held)
        self.typed = self.values.view(program.vertex_dtype)
        rowptr = (data.rowptr & ~np.uint64(1 << 63)).astype(np.int64)
        self.marked = (data.rowptr[:-1] >> np.uint64(63)).astype(bool)
        self.plan = launch.Plan(rowptr, data.hubs)
        self.edges = _edge_values(program, data) if program.edge_values else None
        self.status = (False, 0)
        self.frontier = None

    stamp = staticmethod(time.perf_counter)

    @staticmethod
    def elapsed(start: float, stop: float) -> float:
        return stop - start

    def import_array(self, array):
        return np.asarray(array)

    def load(self, values: np.ndarray) -> None:
        self.typed[:] = values
        self.marks.clear()

    def owned(self) -> np.ndarray:
        return self.typed[self.lo:self.lo + self.count]

    def _state(self, method: str):
        if method not in self.shard_state:
            s = self.held[method]
            copies = np.zeros(s.entries, self.program.vertex_dtype)
            edges = _edge_values(self.program, shards.edge_view(s, self.data)) if self.program.edge_values else None
            self.shard_state[method] = (copies, edges, shards.Plan(s))
        return self.shard_state[method]

    def prepare(self, method: str) -> None:
        if method in shards.SHARD_METHODS:
            copies, _, plan = self._state(method)
            shards.load_twin(plan, self.typed, copies)

    def refresh(self, method: str) -> None:
        self.mark("exchange")
        copies, _, plan = self._state(method)
        shards.refresh_twin(plan, self.typed, copies)

    def start_frontier(self, mode: str, threshold: int) -> None:
        self.frontier = None if mode == "all" else filters.TwinFrontier(self.data, threshold)
        self.list_info = (False, -(-self.count // 32))

    def frontier_receive(self, mode: str, came) -> None:
        idx, first, n = came
        ids = np.arange(first, first + n) if idx is None else np.asarray(idx[:n], np.int64)
        self.frontier.mark_remote(ids, mode != "ballot")

    def build_list(self, mode: str) -> None:
        overflow = self.frontier.build(mode)
        self.list_info = (overflow, int(self.frontier.list.shape[0]))

    def compute(self, method: str, outbox, mode: str = "all") -> None:
        self.mark("compute")
        if method in shards.SHARD_METHODS:
            copies, edges, plan = self._state(method)
            changed, ids, vals = shards.iterate_twin(self.program, plan, copies, edges, self.typed, self.marked,
                                                     outbox is not None)
        else:
            active = None if self.frontier is None else self.frontier.active()
            changed, ids, vals, updated = launch.iterate_twin(self.program, self.plan, self.data.nbrs, self.edges,
                                                              self.typed, self.lo, self.count, self.marked,
                                                              outbox is not None, active)
            if self.frontier is not None:
                self.frontier.mark(updated, mode != "ballot")
        n = 0
        if outbox is not None:
            n = ids.shape[0]
            out_idx, out_val = outbox
            out_idx[:n] = ids
            out_val.view(self.program.vertex_dtype)[:n] = vals
        self.status = (changed, n)
        self.mark("idle")

    def wait(self) -> tuple[bool, int]:
        return self.status

    def copy(self, dst, dst_offset: int, src, src_offset: int, nbytes: int) -> None:
        dst.view(np.uint8)[dst_offset:dst_offset + nbytes] = src.view(np.uint8)[src_offset:src_offset + nbytes]

    def apply(self, idx, val, n: int) -> None:
        self.typed[idx[:n]] = val.view(self.program.vertex_dtype)[:n]

    def gather(self, idx, n: int, out) -> None:
        out.view(self.program.vertex_dtype)[:n] = self.typed[idx[:n]]

    def record_sent(self, parity: int) -> None:
        pass

    def wait_sent(self, sender, parity: int) -> None:
        pass


def kernel_pointer(array):
    """A kernel argument for a device array or a pinned host array (its address, valid on the device)."""
    return np.uintp(array.ctypes.data) if isinstance(array, np.ndarray) else array


class _GpuPart(_Part):
    """A partition on one GPU: its own stream, the program's kernels loaded on that device."""

    def __init__(self, data: PartitionData, program: Program, n: int, held: dict, pinned_empty):
        import cupy
        self.cupy = cupy
        self.pinned_empty = pinned_empty
        self.device = cupy.cuda.Device(data.device)
        with self.device:
            super().__init__(data, program, n, held)
            # A blocking stream: it waits for what was set up on the default stream (values, boxes,
            # edge values) before its first operation.
            self.stream = cupy.cuda.Stream()
            # changed, outbox count, and for the active list: bin overflow, list length
            self.status = cupy.zeros(4, np.uint32)
            self.status_host = pinned_empty(4, np.uint32)
            self.frontier = None
            self.edges = _edge_values(program, data) if program.edge_values else cupy.zeros(1, np.uint8)
            self.partials = cupy.zeros(max(data.hubs.slices, 1) * self.itemsize, np.uint8)
            mod = module(program)
            self.fn = {m: mod.get_function(launch.kernel_name(m)) for m in launch.METHODS}
            self.fn.update({m: mod.get_function(shards.kernel_name(m)) for m in shards.SHARD_METHODS})
            self.refresh_fn = {m: mod.get_function(f"{m}_refresh") for m in shards.SHARD_METHODS}
            self.hub_fn = mod.get_function("ws_hub_slices")
            self.frontier_fn = {name: mod.get_function(name) for name in (
                "ws_mark", "ws_mark_remote", "ws_filter_online", "ws_filter_all", "ws_ballot_count",
                "ws_ballot_write")}
            self.apply_fn, self.gather_fn = mod.get_function("ws_apply"), mod.get_function("ws_gather")
            self.sent = [cupy.cuda.Event(disable_timing=True) for _ in (0, 1)]

    def stamp(self):
        with self.device:
            event = self.cupy.cuda.Event()
            event.record(self.stream)
        return event

    def elapsed(self, start, stop) -> float:
        return self.cupy.cuda.get_elapsed_time(start, stop) / 1e3

    def attach(self, others: list[_Part]) -> None:
        with self.device:
            super().attach(others)

    def import_array(self, array):
        return copy_to_device(array, self.device.id)

    def load(self, values: np.ndarray) -> None:
        with self.device, self.stream:
            self.values[:] = self.cupy.asarray(values.view(np.uint8))
        self.stream.synchronize()
        self.marks.clear()

    def owned(self) -> np.ndarray:
        with self.device:
            typed = self.values.view(np.uint8)[self.lo * self.itemsize:(self.lo + self.count) * self.itemsize]
            return typed.get(stream=self.stream)

    def _state(self, method: str):
        """The program's copies of the sources and its edge values in shard order, where the shards are."""
        if method not in self.shard_state:
            s = self.held[method]
            with self.device:
                if s.on_host:
                    copies = self.pinned_empty(s.entries * self.itemsize, np.uint8)
                else:
                    copies = self.cupy.zeros(s.entries * self.itemsize, np.uint8)
                edges = self.cupy.zeros(1, np.uint8)
                if self.program.edge_values:
                    edges = _edge_values(self.program, shards.edge_view(s, self.data))
                    if s.on_host and edges is not s.weights:
                        pinned = self.pinned_empty(edges.size, edges.dtype)
                        pinned[:] = edges
                        edges = pinned
            self.shard_state[method] = (copies, edges)
        return self.shard_state[method]

    def prepare(self, method: str) -> None:
        if method in shards.SHARD_METHODS:
            copies, _ = self._state(method)
            with self.device, self.stream:
                shards.refresh(self.refresh_fn[method], self.held[method], kernel_pointer, self.values,
                               kernel_pointer(copies), True)
            self.stream.synchronize()

    def refresh(self, method: str) -> None:
        copies, _ = self._state(method)
        with self.device, self.stream:
            self.mark("exchange")
            shards.refresh(self.refresh_fn[method], self.held[method], kernel_pointer, self.values,
                           kernel_pointer(copies), False)

    def start_frontier(self, mode: str, threshold: int) -> None:
        self.listed = False
        with self.device, self.stream:
            self.status.fill(0)
            if mode != "all":
                if self.frontier is None or self.frontier.threshold != threshold:
                    self.frontier = None
                    self.frontier = filters.DeviceFrontier(self.data, self.frontier_fn, threshold)
                self.frontier.start()

    def frontier_receive(self, mode: str, came) -> None:
        idx, first, n = came
        with self.device, self.stream:
            self.frontier.mark_remote(idx, first, n, mode != "ballot")

    def build_list(self, mode: str) -> None:
        with self.device, self.stream:
            self.frontier.build(mode, self.status)
        self.listed = True

    @property
    def list_info(self) -> tuple[bool, int]:
        """(bin overflow, list length) of the last iteration's list (valid after wait)."""
        if not self.listed:
            return False, -(-self.count // 32)
        return bool(self.status_host[2]), int(self.status_host[3])

    def compute(self, method: str, outbox, mode: str = "all") -> None:
        out_idx, out_val = outbox or (self.out_idx, self.out_val)
        with self.device, self.stream:
            self.mark("compute")
            self.status[:2].fill(0)
            d = self.data
            f = None if mode == "all" else self.frontier
            listed = f is not None and self.listed
            if f is not None:
                f.changed.fill(0)
            if method in shards.SHARD_METHODS:
                copies, edges = self._state(method)
                shards.iterate(self.fn[method], self.held[method], kernel_pointer, kernel_pointer(copies),
                               kernel_pointer(edges), self.values, self.status, outbox is not None,
                               kernel_pointer(out_idx), kernel_pointer(out_val), self.itemsize)
            elif method == "ws":
                launch.hub_slices(self.hub_fn, d.hubs, d.nbrs, self.edges, self.values, self.partials,
                                  f.active_bits if listed else None)
            if method in launch.METHODS:
                launch.iterate(self.fn[method], method, d.rowptr, d.nbrs, self.edges, self.values, d.lo,
                               d.count, self.status, outbox is not None, kernel_pointer(out_idx),
                               kernel_pointer(out_val), d.hubs, self.partials, f.list if listed else None,
                               f.list_len if listed else None, None if f is None else f.changed)
                if f is not None:
                    f.mark(listed, mode != "ballot")
            self.status.data.copy_to_host_async(self.status_host.ctypes.data, 16, self.stream)
            self.mark("idle")

    def wait(self) -> tuple[bool, int]:
        self.stream.synchronize()
        return bool(self.status_host[0]), int(self.status_host[1])

    def copy(self, dst, dst_offset: int, src, src_offset: int, nbytes: int) -> None:
        if nbytes == 0:
            return
        with self.device:
            if not isinstance(dst, self.cupy.ndarray):
                (src.data + src_offset).copy_to_host_async(dst.ctypes.data + dst_offset, nbytes, self.stream)
            elif not isinstance(src, self.cupy.ndarray):
                (dst.data + dst_offset).copy_from_host_async(src.ctypes.data + src_offset, nbytes, self.stream)
            else:
                (dst.data + dst_offset).copy_from_device_async(src.data + src_offset, nbytes, self.stream)

    def apply(self, idx, val, n: int) -> None:
        with self.device, self.stream:
            launch.apply(self.apply_fn, idx, val, n, self.values)

    def gather(self, idx, n: int, out) -> None:
        with self.device, self.stream:
            launch.gather(self.gather_fn, idx, n, self.values, out)

    def record_sent(self, parity: int) -> None:
        with self.device:
            self.sent[parity].record(self.stream)

    def wait_sent(self, sender: "_GpuPart", parity: int) -> None:
        with self.device:
            self.stream.wait_event(sender.sent[parity])



class Engine:
    """A program bound to a layout: its vertex values and boxes on every partition. The backend's
    pinned allocator makes the host boxes (page-locked on the GPU backend, so that device copies to and
    from them run asynchronously and the kernels of every device can write them directly: CuPy's
    pinned memory is portable and mapped under unified addressing)."""

    def __init__(self, layout: Layout, program: Program, backend):
        if backend.is_gpu != (layout.parts[0].device is not None):
            raise ValueError("the layout's partitions are not on the backend's kind of device")
        self.layout, self.program = layout, program
        for method, held in layout.shards.items():
            shards.check_window(held[0].window, program.vertex_dtype.itemsize, program.name)
        helds = [{m: held[i] for m, held in layout.shards.items()} for i in range(len(layout.parts))]
        if backend.is_gpu:
            self.parts = [_GpuPart(d, program, layout.n, h, backend.pinned_empty)
                          for d, h in zip(layout.parts, helds)]
        else:
            self.parts = [_CpuPart(d, program, layout.n, h) for d, h in zip(layout.parts, helds)]
        for p in self.parts:
            p.attach([q for q in self.parts if q is not p])
        self.hub = _Hub(self.parts, backend.pinned_empty) if len(self.parts) > 1 else None

    def representation(self, method: str) -> dict:
        """What `method` reads and where: its name (csr, gs, cw), the bytes of the graph structure plus the
        program's per-entry arrays (edge values other than the weights; for gs and cw the copies of the
        sources) on the GPUs and in (pinned) host memory; on the CPU backend everything is host memory."""
        device, host = self.layout.representation_bytes(method)
        extra_device = extra_host = 0
        for p in self.parts:
            if method in shards.SHARD_METHODS:
                s = self.layout.shards[method][p.index]
                copies, edges = p._state(method)[:2]
                arrays, on_host = [copies] + ([] if edges is None or edges is s.weights else [edges]), s.on_host
            else:
                edges = p.edges
                arrays = [] if edges is None or edges is p.data.weights or edges.size == 1 else [edges]
                on_host = False
            size = sum(int(a.nbytes) for a in arrays)
            if on_host or p.data.device is None:
                extra_host += size
            else:
                extra_device += size
        name = method if method in shards.SHARD_METHODS else "csr"
        return {"name": name, "device_bytes": device + extra_device, "host_bytes": host + extra_host}

    def run(self, method: str, exchange: str | None, source: int | None = None,
            max_iterations: int = DEFAULT_MAX_ITERATIONS, frontier: str = "all",
            bin_threshold: int = filters.THRESHOLD) -> RunResult:
        """Iterate from the program's initial values until no vertex changes (or max_iterations); frontier:
        how each iteration's active list is built, bin_threshold: the online filter's bins (dbfs.ws.frontier;
        ws and vwc only)."""
        if method not in METHODS:
            raise ValueError(f"unknown method {method!r}")
        if frontier not in filters.FILTERS:
            raise ValueError(f"unknown frontier filter {frontier!r}")
        if frontier != "all" and method not in launch.METHODS:
            raise ValueError(f"--frontier {frontier} runs with the ws and vwc methods, not {method}")
        if method in shards.SHARD_METHODS and method not in self.layout.shards:
            raise ValueError(f"the layout was built without {method} shards")
        parts, hub = self.parts, self.hub
        if len(parts) > 1 and exchange not in EXCHANGES:
            raise ValueError(f"unknown exchange {exchange!r}")
        initial = self.program.initial(self.layout.n, source)
        for p in parts:
            p.load(initial)
            p.prepare(method)
            p.start_frontier(frontier, bin_threshold)
        kind = exchange if hub is not None else None   # one partition exchanges nothing
        index_bytes = 4 if kind in ("vr", "peer") else 0  # refined boxes carry each vertex's index
        sent = [0] * len(parts)
        result = RunResult(values=None, iterations=0, converged=False, time=0.0)
        started = last = time.perf_counter()
        for t in range(max_iterations):
            for p in parts:
                if t > 0 and hub is not None:
                    p.mark("exchange")
                    for q in parts:
                        if q is not p:
                            came = p.receive(kind, (t - 1) % 2, q, sent[q.index], hub)
                            if frontier != "all":
                                p.frontier_receive(frontier, came)
                    if method in shards.SHARD_METHODS:
                        p.refresh(method)
                if t > 0 and frontier != "all":
                    p.build_list(frontier)
                p.compute(method, p.outbox(kind, t % 2, hub), frontier)
            status = [p.wait() for p in parts]
            used = list(dict.fromkeys(filters.filter_used(frontier, t == 0, p.list_info[0]) for p in parts))
            result.filters.append("|".join(used))
            result.active_groups.append(sum(p.list_info[1] for p in parts))
            now = time.perf_counter()
            result.iteration_times.append(now - last)
            last = now
            result.iterations = t + 1
            if not any(changed for changed, _ in status):
                result.converged = True
                break
            if hub is not None:
                for p, (_, count) in zip(parts, status):
                    p.mark("exchange")
                    sent[p.index] = p.send(kind, t % 2, count, hub, [q for q in parts if q is not p])
                    p.mark("idle")
                    copies = len(parts) - 1 if kind == "peer" else 1
                    result.sent_vertices += copies * sent[p.index]
                    result.sent_bytes += copies * sent[p.index] * (p.itemsize + index_bytes)
        result.time = time.perf_counter() - started
        timings = [p.timings() for p in parts]
        result.compute_time = max(c for c, _ in timings)
        result.exchange_time = max(e for _, e in timings)
        result.values = np.concatenate([p.owned().view(self.program.vertex_dtype) for p in parts])
        return result
