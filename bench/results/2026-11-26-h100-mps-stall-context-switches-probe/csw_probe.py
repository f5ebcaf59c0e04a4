"""Probe (not part of dbfs): per rank and search, the process's involuntary and voluntary context
switches (getrusage, all its threads) and the search's host time; rank 0 prints every search's row of
all ranks at exit."""
import resource
import sys
import time
from dbfs import runtime
from dbfs.grid_loop import GridLoop

rows = []
original = GridLoop._run


def run(self, *args, **kwargs):
    before, started = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    result = original(self, *args, **kwargs)
    after = resource.getrusage(resource.RUSAGE_SELF)
    rows.append((time.perf_counter() - started, after.ru_nivcsw - before.ru_nivcsw, after.ru_nvcsw - before.ru_nvcsw,
                 after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime))
    return result


GridLoop._run = run


def report():
    every = runtime.WORLD.gather(rows, root=0)
    if runtime.rank() != 0:
        return
    for k in range(len(rows)):
        wall = max(r[k][0] for r in every)
        cells = " ".join(f"{r[k][1]}/{r[k][2]}" for r in every)
        sys.stderr.write(f"[csw] search {k} {wall * 1e3:.2f} ms  involuntary/voluntary per rank: {cells}\n")


from dbfs.cli import main
try:
    main(sys.argv[1:])
finally:
    report()
