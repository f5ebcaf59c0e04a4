"""Per-rank GPU timer marks of every whole level (not part of dbfs): where a distributed level's device
time goes, rank by rank, on one clock (%globaltimer of the one GPU). Run as:
python -P marks_probe.py <dbfs args>; prints on rank 0 at the end. PROBE_BU_GRID=k multiplies the
bottom-up step's grid."""
import sys
from dbfs import runtime
from dbfs.grid_loop import GridLoop

levels = []          # per search: list of (lvl, kind, phases, stamps)
current = []
_orig_whole = GridLoop._whole_level
def whole(self, clock, traffic, lvl, bottom_up_level, first, *a, **k):
    r = _orig_whole(self, clock, traffic, lvl, bottom_up_level, first, *a, **k)
    current.append((lvl, ("BU" if bottom_up_level else "TD") + ("*" if first else ""), list(r.phases), r.stamps.copy()))
    return r
GridLoop._whole_level = whole
_orig_stretch = GridLoop._peer_stretch
def stretch(self, *a, **k):
    end, rec = _orig_stretch(self, *a, **k)
    current.append(("S", "stretch", ["stretch"], None))
    return end, rec
GridLoop._peer_stretch = stretch
_orig_run = GridLoop._run
def run(self, *a, **k):
    current.clear()
    r = _orig_run(self, *a, **k)
    levels.append(list(current))
    return r
GridLoop._run = run

import os
from dbfs.backend import Backend
_factor = int(os.environ.get("PROBE_BU_GRID", "1"))
if _factor != 1:
    _orig_rb = Backend.resident_blocks
    def resident_blocks(self, kernel, threads):
        n = _orig_rb(self, kernel, threads)
        if kernel is self.kernel("bottom_up", "bottom_up_step"):
            n *= _factor
        return n
    Backend.resident_blocks = resident_blocks

def report():
    comm = runtime.WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    every = comm.gather(levels, root=0)
    if rank != 0 or not levels:
        return
    out = []
    for search in (2, 3):
        if search >= len(levels):
            continue
        out.append(f"== search {search} ==")
        nlev = len(every[0][search])
        for li in range(nlev):
            lvl, kind, phases, _ = every[0][search][li]
            if phases == ["stretch"]:
                out.append("-- stretch")
                continue
            starts = [every[r][search][li][3][0] for r in range(size)]
            ends = [every[r][search][li][3][len(phases) - 1] for r in range(size)]
            t0 = min(starts)
            out.append(f"-- level {lvl} {kind}: ranks start +{(max(starts)-t0)/1e3:.1f} us spread, end {(min(ends)-t0)/1e3:.1f}..{(max(ends)-t0)/1e3:.1f} us")
            for r in range(size):
                st = every[r][search][li][3]
                ph = every[r][search][li][2]
                cells = [f"{(p or '-')[:6]}:{(st[m+1]-st[m])/1e3:.1f}" for m, p in enumerate(ph[:-1])]
                out.append(f"   r{r:2d} @{(st[0]-t0)/1e3:7.1f} " + " ".join(cells))
    sys.stderr.write("\n".join("[marks] " + l for l in out) + "\n")
from dbfs.cli import main
try:
    main(sys.argv[1:])
finally:
    report()
