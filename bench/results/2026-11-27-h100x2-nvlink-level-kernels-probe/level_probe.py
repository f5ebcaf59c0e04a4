"""Probe: fine phase marks inside the grid loop's whole levels, and the host's gap before each launch.
Run as: python level_probe.py <dbfs args>; rank 0 prints a table on stderr at exit."""
import atexit, sys, time, collections
import numpy as np
from dbfs import grid_loop, timing
from dbfs.ops import message, bitmap, bottom_up

CUR = {"marks": None, "phase": None, "lvl": None, "wait_end": None}
FINE = collections.defaultdict(lambda: collections.defaultdict(float))
COUNT = collections.Counter()
GAPS = collections.defaultdict(list)
HEADS = []

orig_switch = timing.GraphMarks.switch
def switch(self, phase):
    CUR["marks"] = self
    if phase is None or ":" not in phase:
        CUR["phase"] = phase
    return orig_switch(self, phase)
timing.GraphMarks.switch = switch

orig_seconds = timing.MarkedTimes.seconds
def seconds(self):
    phases = [p.split(":")[0] if p else p for p in self.phases]
    return orig_seconds(timing.MarkedTimes(phases, self.stamps))
timing.MarkedTimes.seconds = seconds

ORIG = {}
def fine(mod, name):
    f = getattr(mod, name)
    ORIG[name] = f
    def wrapped(*a, **k):
        m = CUR["marks"]
        if m is not None and CUR["phase"] is not None:
            orig_switch(m, f"{CUR['phase']}:{name}")
        return f(*a, **k)
    setattr(mod, name, wrapped)
COPIES = {}
def touch_then(f):
    def wrapped(backend, sources, bases, block, col_ptr, out, count):
        import cupy as cp
        m = CUR["marks"]
        if m is not None and CUR["phase"] is not None:
            orig_switch(m, f"{CUR['phase']}:copy")
        key = id(sources)
        if key not in COPIES:
            bufs = [None if x is None else cp.empty(min(x.shape[0], (4 << 20) + 64), cp.uint32) for x in sources.messages]
            COPIES[key] = (bufs, message.SourceTable(backend, bufs))
        bufs, table = COPIES[key]
        for x, buf in zip(sources.messages, bufs):
            if x is not None:
                backend.copy(buf, x[:buf.shape[0]])
        return f(backend, table, bases, block, col_ptr, out, count)
    return wrapped
for mod, names in ((grid_loop, ["expand", "frontier_figures", "update"]),
                   (message, ["to_list", "encode_lists", "encode_bits", "to_bitmaps", "put", "post"]),
                   (bitmap, ["unpack", "pack"]), (bottom_up, ["search_segment", "commit"])):
    for n in names:
        if hasattr(mod, n):
            fine(mod, n)


grid_loop.GridLoop._replay_level = lambda self, key, enqueue, capture_only=False: \
    self.replays.run_marked(key, enqueue, 96, capture_only)

orig_whole = grid_loop.GridLoop._whole_level
def whole(self, clock, traffic, lvl, bu, first, *a):
    CUR["lvl"] = (lvl, "bu" if bu else "td", first)
    if CUR["lvl"][1] == "td" and first and COUNT[CUR["lvl"]] in (3, 4, 5, 6):
        synthetic(self, "before", COUNT[CUR["lvl"]] >= 5)
    t = orig_whole(self, clock, traffic, lvl, bu, first, *a)
    key = CUR["lvl"]
    COUNT[key] += 1
    if key[1] == "td" and key[2] and COUNT[key] in (4, 5):
        synthetic(self, "after", False)
    x = self.expand_x
    if x is not None and not bu and COUNT[key] <= 2:
        heads = [None if m is None else (m[:3].get().tolist() if hasattr(m, "get") else list(m[:3])) for m in x.sources.messages]
        HEADS.append((key, heads))
    st = t.stamps.tolist()
    for (p, b), (_, e) in zip(zip(t.phases, st), list(zip(t.phases, st))[1:]):
        if p is not None:
            FINE[key][p] += (e - b) / 1e3
    return t
grid_loop.GridLoop._whole_level = whole

SYN = {}
def synthetic(loop, when, sleep):
    import cupy as cp
    from mpi4py import MPI
    g = loop.graph
    b = g.grid.block
    if "src" not in SYN:
        rng = np.random.default_rng(MPI.COMM_WORLD.Get_rank())
        msgs = []
        for y in range(2):
            v = np.sort(rng.choice(b, 352_000, replace=False).astype(np.uint32)) if False else np.unique(rng.integers(0, b, 352_000).astype(np.uint32))
            m = np.zeros(3 + len(v), np.uint32); m[0] = 0; m[1] = m[2] = len(v); m[3:] = v
            msgs.append(cp.asarray(m))
        SYN["src"] = message.SourceTable(loop.backend, msgs)
        SYN["front"], SYN["count"] = cp.empty(1 << 21, cp.int32), cp.zeros(1, cp.int32)
        SYN["bases"] = cp.asarray(np.array([0, b], np.int32))
    if sleep:
        time.sleep(0.005)
    e0, e1, out = cp.cuda.Event(), cp.cuda.Event(), []
    with loop.stream:
        for _ in range(3):
            e0.record(); ORIG["to_list"](loop.backend, SYN["src"], SYN["bases"], b, g.col_ptr, SYN["front"], SYN["count"]); e1.record(); e1.synchronize()
            out.append(round(cp.cuda.get_elapsed_time(e0, e1) * 1e3, 1))
    print(f"probe synthetic rank {MPI.COMM_WORLD.Get_rank()} {when} level {CUR['lvl']}{' after 5 ms idle' if sleep else ''}: to_list {out} us", file=sys.stderr, flush=True)

def experiment(loop):
    import cupy as cp
    from mpi4py import MPI
    x, g, s = loop.expand_x, loop.graph, loop.state
    b = g.grid.block
    def t(src):
        e0, e1, out = cp.cuda.Event(), cp.cuda.Event(), []
        for _ in range(4):
            e0.record(); ORIG["to_list"](loop.backend, src, loop.col_bases, b, g.col_ptr, s.front, s.count); e1.record(); e1.synchronize()
            out.append(cp.cuda.get_elapsed_time(e0, e1) * 1e3)
        return out
    with loop.stream:
        heads = [None if m is None else m[:3].get().tolist() for m in x.sources.messages]
        heap = t(x.sources)
        copies = message.SourceTable(loop.backend, [None if m is None else cp.array(m) for m in x.sources.messages])
        plain = t(copies)
        fresh_front = cp.empty_like(s.front)
        e0, e1, fr = cp.cuda.Event(), cp.cuda.Event(), []
        for _ in range(3):
            e0.record(); ORIG["to_list"](loop.backend, copies, loop.col_bases, b, g.col_ptr, fresh_front, s.count); e1.record(); e1.synchronize()
            fr.append(cp.cuda.get_elapsed_time(e0, e1) * 1e3)
        cb = loop.col_bases
        print(f"probe experiment rank {MPI.COMM_WORLD.Get_rank()}: heads {heads}; to_list on heap messages {[round(v,1) for v in heap]} us; "
              f"on plain copies {[round(v,1) for v in plain]}; fresh front {[round(v,1) for v in fr]}; col_bases {type(cb).__name__} {getattr(cb, 'dtype', None)}; "
              f"col_ptr {type(g.col_ptr).__name__} {g.col_ptr.dtype} {g.col_ptr.shape}; front {s.front.shape} ptr {s.front.data.ptr:#x}", file=sys.stderr, flush=True)

orig_stretch = grid_loop.GridLoop._peer_stretch
def stretch(self, clock, traffic, switch_, queue, counts, spare, lvl, *a):
    CUR["lvl"] = (lvl, "stretch", switch_)
    t0 = time.perf_counter()
    r = orig_stretch(self, clock, traffic, switch_, queue, counts, spare, lvl, *a)
    COUNT[CUR["lvl"]] += 1
    FINE[CUR["lvl"]]["wall"] += (time.perf_counter() - t0) * 1e6
    return r
grid_loop.GridLoop._peer_stretch = stretch

orig_run = grid_loop.Replays.run
def run(self, key, enqueue):
    now = time.perf_counter()
    if CUR["wait_end"] is not None and key in self.graphs:
        GAPS[(CUR["lvl"], str(key[:2]))].append((now - CUR["wait_end"]) * 1e6)
    return orig_run(self, key, enqueue)
grid_loop.Replays.run = run

orig_wait = grid_loop.GridLoop._wait
def wait(self):
    r = orig_wait(self)
    CUR["wait_end"] = time.perf_counter()
    return r
grid_loop.GridLoop._wait = wait

def report():
    from mpi4py import MPI
    rank = MPI.COMM_WORLD.Get_rank()
    out = sys.stderr
    if rank == 1:
        time.sleep(2)
    if rank > 1:
        return
    print(f"probe: rank {rank}; expand message heads (form, count, size) at top-down levels", file=out)
    for key, heads in HEADS:
        print(f"  {key}: {heads}", file=out)
    print("probe: fine phases per whole level (us, mean over occurrences)", file=out)
    for key in sorted(COUNT, key=str):
        n = COUNT[key]
        print(f"  {key} x{n}: " + ", ".join(f"{p} {v / n:.1f}" for p, v in FINE[key].items()), file=out)
    print("probe: host gap from a wait's end to the next graph launch (us)", file=out)
    for key in sorted(GAPS, key=str):
        g = np.array(GAPS[key])
        print(f"  {key}: n {len(g)} mean {g.mean():.1f} median {np.median(g):.1f}", file=out)
atexit.register(report)

sys.argv = ["dbfs"] + sys.argv[1:]
from dbfs.cli import main
main()
