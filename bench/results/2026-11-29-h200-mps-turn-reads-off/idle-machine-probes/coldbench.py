"""Probe: a Python turn's time right after a wait that polls (sched_yield syscalls, a pure Python spin, a C pause
spin) against back to back."""
import ctypes, os, sys, time
import numpy as np

ns = time.perf_counter_ns
lib = ctypes.CDLL(os.path.join(os.path.dirname(os.path.abspath(__file__)), "libspinwait.so"))
lib.wait_word.argtypes = [ctypes.c_void_p, ctypes.c_long, ctypes.c_long]
CTL = {n: k for k, n in enumerate("STEP LEVEL FRONTIER FRONTIER_EDGES UNVISITED_EDGES VISITED FORM LOGGED START_NS "
                                   "EXPAND_BYTES FOLD_BYTES".split())}


class Obj:
    def __init__(self):
        self.h = np.arange(11, dtype=np.int64)
        self.d = {}

    def step(self, k):
        return self.d.get(k, k)

    def turn(self):
        end = {name: int(self.h[w]) for name, w in CTL.items()}
        s = 0
        for k in range(20):
            s += self.step(k)
        return end, s


flag = np.zeros(1, np.int64)


def wait(style, us):
    end = ns() + us * 1000
    if style == "yield":
        while ns() < end and not flag[0]:
            os.sched_yield()
    elif style == "pyspin":
        while ns() < end and not flag[0]:
            pass
    elif style == "cpause":
        lib.wait_word(flag.ctypes.data, 0, us * 30)   # ~us microseconds of pauses
    elif style == "sleep0":
        while ns() < end and not flag[0]:
            time.sleep(0)


o = Obj()
for us in (20, 200, 1000):
    for style in ("none", "yield", "pyspin", "cpause", "sleep0"):
        out = []
        for _ in range(2000 if us < 1000 else 500):
            wait(style, us)
            t = ns(); o.turn(); out.append(ns() - t)
        print(f"wait {us:5d} us {style:>7}: turn p50 {np.median(out)/1e3:6.2f} us p90 {np.percentile(out, 90)/1e3:6.2f}", flush=True)
