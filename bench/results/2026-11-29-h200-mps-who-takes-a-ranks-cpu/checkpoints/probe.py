"""Probe (never committed): python -m dbfs with checkpoints on a search's turns (PROBE_CHECK=1), the garbage
collector's runs inside searches recorded, and (PROBE_GC=off) the collector off while a search runs.
Dumps $PROBE_DIR/rank<r>.json at exit."""
import atexit, gc, json, os, runpy, sys, time
from mpi4py import MPI
import dbfs.backend as be
import dbfs.exchange as ex
import dbfs.grid_loop as gl
import dbfs.peer_levels as pl
import dbfs.timing as tm

ns = time.perf_counter_ns
cpu_ns = time.thread_time_ns
T, GC, CPU = [], [], []
in_search = [False]
gc_start = [0]


def gc_cb(phase, info):
    if not in_search[0]:
        return
    if phase == "start":
        gc_start[0] = ns()
    else:
        GC.append((info["generation"], ns() - gc_start[0], info["collected"]))


gc.callbacks.append(gc_cb)


def switches():
    """(voluntary, involuntary) context switches of this thread so far."""
    with open(f"/proc/thread-self/status") as f:
        got = {k: int(v) for k, v in (line.split(":") for line in f if "ctxt_switches" in line)}
    return got["voluntary_ctxt_switches"], got["nonvoluntary_ctxt_switches"]
GC_OFF = os.environ.get("PROBE_GC") == "off"
orig_run = gl.GridLoop._run


def grid_run(self, *a, **kw):
    T.append(("search<", ns()))
    CPU.append((ns(), cpu_ns(), switches()))
    in_search[0] = True
    if GC_OFF:
        gc.disable()
    try:
        return orig_run(self, *a, **kw)
    finally:
        if GC_OFF:
            gc.enable()
        in_search[0] = False
        T.append(("search>", ns()))
        CPU.append((ns(), cpu_ns(), switches()))


gl.GridLoop._run = grid_run


def around(owner, name, tag, entry=True, leave=True):
    orig = getattr(owner, name)

    def wrapped(*a, **kw):
        if entry:
            T.append((tag + "<", ns()))
        out = orig(*a, **kw)
        if leave:
            T.append((tag + ">", ns()))
        return out
    setattr(owner, name, wrapped)


if os.environ.get("PROBE_CHECK") == "1":
    around(be.Backend, "wait_flag", "flag", entry=False)
    around(gl.GridLoop, "_settle", "settle", entry=False)
    around(tm.GraphMarks, "taken", "taken", entry=False)
    around(tm.PhaseClock, "charge_marked", "charged", entry=False)
    around(gl.GridLoop, "_level_totals", "totals", entry=False)
    around(gl, "next_bottom_up", "direction", entry=False)
    around(gl.GridLoop, "_stretch_next", "stretch_next", entry=False)
    around(gl.GridLoop, "_whole_level", "whole")
    around(gl.GridLoop, "_peer_stretch", "stretch")
    around(ex.LevelExchange, "sent", "sent", entry=False)
    around(gl.GridLoop, "_top_down_enqueue", "td_enq", entry=False)
    around(gl.GridLoop, "_bottom_up_enqueue", "bu_enq", entry=False)
    around(gl.GridLoop, "_stretch_enqueue", "st_enq", entry=False)
    around(tm.PhaseClock, "switch", "clock_switch", entry=False)
    around(gl.Replays, "run_marked", "run_marked", leave=False)
    around(tm.GraphMarks, "arm", "arm", entry=False)
    around(gl.Replays, "run", "run")
    around(pl.PeerLevels, "result", "result")
    around(pl.PeerLevels, "begin", "begin", entry=False)
    around(gl.GridLoop, "_wait", "wait")


def dump():
    r = MPI.COMM_WORLD.Get_rank()
    with open(os.path.join(os.environ["PROBE_DIR"], f"rank{r}.json"), "w") as f:
        json.dump({"T": T, "GC": GC, "CPU": CPU, "threads": len(os.listdir("/proc/self/task"))}, f)


atexit.register(dump)
sys.argv = ["dbfs"] + sys.argv[1:]
runpy.run_module("dbfs", run_name="__main__", alter_sys=True)
