"""Per-pass timing of construction: wraps dbfs.build._Passes' passes with a device sync and barrier,
then runs the main command. Prints per rank: wall seconds, producer seconds, phase seconds (GPU events)."""
import sys, time
from dbfs import build
from mpi4py import MPI

def wrap(name):
    f = getattr(build._Passes, name)
    def g(self, *a, **k):
        self.backend.sync(); self.comms.world.Barrier()
        t0 = time.perf_counter(); m0 = self.phases.marks; p0 = self.clock.seconds
        r = f(self, *a, **k)
        self.backend.sync(); self.comms.world.Barrier()
        t = time.perf_counter() - t0; m1 = self.phases.marks
        ph = self.phases.totals(m0, m1 - 1) if m1 > m0 else {}
        prod = self.clock.seconds - p0
        print(f"[probe] rank {MPI.COMM_WORLD.Get_rank()} {name}: wall {t:.3f} producer {prod:.3f} host-gap "
              f"{t - prod - sum(ph.values()):.3f} switches {m1 - m0} chunk {self.chunk_edges} "
              + " ".join(f"{k} {v:.3f}" for k, v in ph.items()), file=sys.stderr, flush=True)
        return r
    setattr(build._Passes, name, g)

for n in ("count", "scatter", "gather_rows"):
    wrap(n)
from dbfs.cli import main
main(sys.argv[1:])
