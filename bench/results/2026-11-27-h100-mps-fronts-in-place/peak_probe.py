"""Probe: every device pool allocation of >= 1 MiB that raises the high-water mark, with where it came
from (rank 0, printed on stderr at exit). Run as: python peak_probe.py <dbfs args>."""
import atexit, sys, traceback
from mpi4py import MPI
from dbfs import memory

RISES = []
orig = memory.DevicePeak._malloc
def _malloc(self, size):
    before = self.used
    mem = orig(self, size)
    if before is not None and self.used - before >= (1 << 20):
        stack = [f"{f.filename.split('/')[-1]}:{f.lineno} {f.name}" for f in traceback.extract_stack()[-12:-2]]
        RISES.append((size, self.used, stack))
    return mem
memory.DevicePeak._malloc = _malloc
orig_restart = memory.DevicePeak.restart
def restart(self):
    RISES.append(("restart", self.used, []))
    return orig_restart(self)
memory.DevicePeak.restart = restart

@atexit.register
def report():
    if MPI.COMM_WORLD.Get_rank() != 0:
        return
    for size, used, stack in RISES[-60:]:
        shown = "none" if used is None else f"{used / 2**20:.1f} MiB"
        print(f"probe: {size} -> used {shown}  {' < '.join(reversed(stack))}", file=sys.stderr)

from dbfs.cli import main
main()
