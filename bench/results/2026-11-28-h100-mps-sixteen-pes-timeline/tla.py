"""Summarise tl_*.json (the timeline probe): medians over searches 1.. of each interval, rank 0 and all ranks."""
import glob, json, statistics as st, sys
d = sys.argv[1] if len(sys.argv) > 1 else "."
ranks = {int(f.split("_")[-1].split(".")[0]): json.load(open(f)) for f in glob.glob(f"{d}/tl_*.json")}
P = len(ranks)
def segs(data, s):
    ev, ends = data["searches"][s]["events"], data["searches"][s]["ends"]
    off = data["offset"][1]
    t0 = ev[0][1]
    out = []   # (kind, dict of intervals us)
    i = 0
    while i < len(ev):
        e = ev[i]
        if e[0] == "stretch_call":
            j = i; rec = {}
            launched = next(x[1] for x in ev[i:] if x[0] == "launched")
            wout = next(x[1] for x in ev[i:] if x[0] == "wait_out")
            back = next(x[1] for x in ev[i:] if x[0] == "stretch_back")
            ks = next(x for x in ev[i:] if x[0] == "kstart")
            kstart = ks[1] - off
            kend = ends[ks[3] - 1] - off if ends and ks[3] > ks[2] else None
            rec = {"at": (e[1] - t0) / 1e3, "launch": (launched - e[1]) / 1e3, "to_kstart": (kstart - launched) / 1e3,
                   "kernel": ((kend - kstart) / 1e3) if kend else None, "kend_to_wait": ((wout - kend) / 1e3) if kend else None,
                   "after_wait": (back - wout) / 1e3, "kstart_abs": kstart, "call_abs": e[1], "total": (back - e[1]) / 1e3}
            out.append(("stretch", rec))
        elif e[0] in ("bu_call", "level_call"):
            launched = next(x[1] for x in ev[i:] if x[0] == "launched")
            wout = next(x[1] for x in ev[i:] if x[0] == "wait_out")
            back = next(x[1] for x in ev[i:] if x[0] == "level_back")
            out.append((e[0][:-5], {"at": (e[1] - t0) / 1e3, "launch": (launched - e[1]) / 1e3, "wait": (wout - launched) / 1e3,
                                    "after_wait": (back - wout) / 1e3, "call_abs": e[1], "total": (back - e[1]) / 1e3}))
        i += 1
    done = next(x[1] for x in ev if x[0] == "done")
    return out, (done - t0) / 1e3, t0
n = len(ranks[0]["searches"])
print(f"{P} ranks, {n} searches, calibration window {ranks[0]['offset'][0]/1e3:.1f} us")
for s in range(1, n):
    per = {r: segs(ranks[r], s) for r in ranks}
    starts = [per[r][2] for r in ranks]
    segs0, total0, t00 = per[0]
    print(f"search {s}: rank0 {total0:.0f} us (dbfs {ranks[0]['searches'][s]['time']*1e6:.0f}); start skew {(max(starts)-min(starts))/1e3:.1f} us (rank0 at +{(t00-min(starts))/1e3:.1f})")
    for k, (kind, rec) in enumerate(segs0):
        others = [per[r][0][k][1] for r in ranks if k < len(per[r][0]) and per[r][0][k][0] == kind]
        line = f"   {kind:8s} at {rec['at']:7.1f} total {rec['total']:6.1f} launch {rec['launch']:5.1f}"
        if kind == "stretch":
            ks = [o["kstart_abs"] for o in others]; calls = [o["call_abs"] for o in others]
            kern = rec['kernel'] if rec['kernel'] is not None else float('nan')
            kw = rec['kend_to_wait'] if rec['kend_to_wait'] is not None else float('nan')
            line += (f" ->kstart {rec['to_kstart']:6.1f} kernel {kern:6.1f} kend->wait {kw:6.1f} after {rec['after_wait']:5.1f}"
                     f" | call skew {(max(calls)-min(calls))/1e3:6.1f} kstart skew {(max(ks)-min(ks))/1e3:6.1f} latest-kstart rank {max(range(len(ks)), key=lambda q: ks[q])}")
        else:
            calls = [o["call_abs"] for o in others]
            line += f" wait {rec['wait']:6.1f} after {rec['after_wait']:5.1f} | call skew {(max(calls)-min(calls))/1e3:6.1f} launch max {max(o['launch'] for o in others):5.1f}"
        print(line)
