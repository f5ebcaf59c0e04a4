"""Probe (never committed): python -m dbfs whose host waits on a graph's flag poll and yield for SPIN_US, then
sleep SLEEP_US between polls (timer slack 1 us), so that a CPU is idle while its rank waits long."""
import ctypes, os, runpy, sys, time
import dbfs.backend as be
SPIN_NS, SLEEP_S = int(float(os.environ.get("SPIN_US", "0")) * 1e3), float(os.environ.get("SLEEP_US", "10")) * 1e-6
ctypes.CDLL(None).prctl(29, 1000, 0, 0, 0)       # PR_SET_TIMERSLACK: 1 us
ns = time.perf_counter_ns


def wait_flag(self, flag, waitable=None):
    waitable = waitable or self.xp.cuda.get_current_stream()
    polls, t0 = 0, ns()
    while not flag[0]:
        polls += 1
        if polls % be.FLAG_QUERY_POLLS == 0 and waitable.done and not flag[0]:
            raise RuntimeError("the device's work ended without setting the flag it was waited on by")
        if ns() - t0 < SPIN_NS:
            os.sched_yield()
        else:
            time.sleep(SLEEP_S)
    self.host_syncs += 1


be.Backend.wait_flag = wait_flag
sys.argv = ["dbfs"] + sys.argv[1:]
runpy.run_module("dbfs", run_name="__main__", alter_sys=True)
