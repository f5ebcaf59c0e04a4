"""Probe (never committed): python -m dbfs with every rank's host clock (CLOCK_MONOTONIC, shared by the
ranks of a node) and every replay's GPU timer marks (shared by the PEs of one GPU) recorded per search,
dumped to $PROBE_DIR/rank<r>.json at exit. PROBE_FLAG_WAKE=1: the waits return on the graph's last stamp;
PROBE_NEW_WAIT=1: the tree waits on its own flag, the probe only records."""
import atexit
import json
import os
import runpy
import sys
import time

from mpi4py import MPI

import dbfs.grid_loop as gl
import dbfs.peer_levels as pl
import dbfs.timing as tm

events = []
FLAG_WAKE = os.environ.get("PROBE_FLAG_WAKE") == "1"
NEW_WAIT = os.environ.get("PROBE_NEW_WAIT") == "1"
pending = []


def note(kind, **kw):
    kw.update(kind=kind, t=time.perf_counter())
    events.append(kw)


orig_run, orig_marked, orig_wait, orig_gl_run = gl.Replays.run, gl.Replays.run_marked, gl.GridLoop._wait, gl.GridLoop._run
orig_charge, orig_result = tm.PhaseClock.charge_marked, pl.PeerLevels.result
orig_totals, orig_settle = gl.GridLoop._level_totals, gl.GridLoop._settle


def run(self, key, enqueue):
    note("launch0", key=str(key))
    orig_run(self, key, enqueue)
    note("launch1", key=str(key))


def run_marked(self, key, enqueue, capacity, capture_only=False):
    if not capture_only:
        note("mlaunch0", key=str(key))
        marks = self.marks.get(key)
        if not NEW_WAIT and marks is not None and key in self.graphs and marks._phases:
            marks.stamps[len(marks._phases) - 1] = 0
            pending.append((marks, len(marks._phases) - 1))
    marks = orig_marked(self, key, enqueue, capacity, capture_only)
    if not capture_only:
        note("mlaunch1", key=str(key))
    return marks


def wait(self, *args):
    note("wait0")
    if pending:
        marks, k = pending.pop()
        pending.clear()
        while marks.stamps[k] == 0:
            pass
        note("flag")
        if FLAG_WAKE:
            for x in self._exchanges():
                x.after_wait()
            note("wait1")
            return
    orig_wait(self, *args)
    note("wait1")


def level_totals(self):
    out = orig_totals(self)
    note("totals")
    return out


def settle(self):
    orig_settle(self)
    note("settled")


def grid_run(self, root, clock, traffic, log_levels):
    note("search0", root=int(root))
    out = orig_gl_run(self, root, clock, traffic, log_levels)
    note("search1", root=int(root), time=out["time"])
    return out


def charge(self, times):
    events.append({"kind": "marks", "t": time.perf_counter(), "phases": [str(p) for p in times.phases],
                   "stamps": times.stamps.tolist()})
    orig_charge(self, times)


def result(self):
    end, records = orig_result(self)
    events.append({"kind": "stretch", "start_ns": end["START_NS"], "level": end["LEVEL"]})
    return end, records


def entered(cls, name):
    orig = getattr(cls, name)

    def wrapped(*a, **kw):
        note("in" + name)
        out = orig(*a, **kw)
        note("out" + name)
        return out
    setattr(cls, name, wrapped)


gl.Replays.run, gl.Replays.run_marked, gl.GridLoop._wait, gl.GridLoop._run = run, run_marked, wait, grid_run
gl.GridLoop._level_totals, gl.GridLoop._settle = level_totals, settle
tm.PhaseClock.charge_marked, pl.PeerLevels.result = charge, result
for name in ("_whole_level", "_peer_stretch", "_bottom_up_enqueue", "_stretch_next", "_frontier_exchange"):
    entered(gl.GridLoop, name)
entered(pl.PeerLevels, "result")


def dump():
    r = MPI.COMM_WORLD.Get_rank()
    with open(os.path.join(os.environ["PROBE_DIR"], f"rank{r}.json"), "w") as f:
        json.dump(events, f)


atexit.register(dump)
sys.argv = ["dbfs"] + sys.argv[1:]
runpy.run_module("dbfs", run_name="__main__", alter_sys=True)
