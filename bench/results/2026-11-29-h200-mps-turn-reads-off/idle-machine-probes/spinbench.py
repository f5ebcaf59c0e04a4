"""Probe: how much a Python turn slows while the other vCPUs poll in various styles."""
import ctypes, json, os, subprocess, sys, time
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
LIB = os.path.join(HERE, "libspinwait.so")


def spinner(style):
    flag = np.zeros(1, np.int64)
    if style == "pyyield":
        while not flag[0]:
            os.sched_yield()
    elif style == "pyspin":
        while not flag[0]:
            pass
    else:
        lib = ctypes.CDLL(LIB)
        lib.wait_word.argtypes = [ctypes.c_void_p, ctypes.c_long, ctypes.c_long]
        every = {"cpause": 0, "cpause64": 64, "cpause1k": 1024, "cyield": 1}[style]
        lib.wait_word(flag.ctypes.data, every, -1)


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


def worker(reps):
    o = Obj()
    out = []
    for _ in range(reps):
        t = time.perf_counter_ns()
        o.turn()
        out.append(time.perf_counter_ns() - t)
    y = []
    for _ in range(2000):
        t = time.perf_counter_ns()
        os.sched_yield()
        y.append(time.perf_counter_ns() - t)
    return np.median(out) / 1e3, np.percentile(out, 90) / 1e3, np.median(y) / 1e3


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "spin":
        spinner(sys.argv[2])
        sys.exit()
    n = os.cpu_count()
    res = {}
    for style in ["none", "pyyield", "pyspin", "cpause", "cpause64", "cyield"]:
        procs = [] if style == "none" else [subprocess.Popen([sys.executable, __file__, "spin", style])
                                            for _ in range(n - 1)]
        time.sleep(0.5)
        runs = [worker(20000) for _ in range(3)]
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()
        res[style] = runs
        print(style, runs, flush=True)
    print(json.dumps(res))
