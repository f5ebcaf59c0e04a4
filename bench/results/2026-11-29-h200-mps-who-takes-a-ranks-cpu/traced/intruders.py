"""Probe (never committed): from an ftrace text of sched_switch events, each time a rank's thread (comm
python3) was switched out while runnable (prev_state R or R+), which task took its CPU and for how long
until the rank's thread ran again on any CPU. Prints the intruders by total time, and every gap over 1 ms."""
import collections, re, sys
pat = re.compile(r"\[(\d+)\].*?\s(\d+\.\d+): sched_switch: prev_comm=(.*?) prev_pid=(\d+) prev_prio=\d+ "
                 r"prev_state=(\S+) ==> next_comm=(.*?) next_pid=(\d+)")
out_at = {}                 # rank tid -> (t, cpu) switched out runnable
running = {}                # cpu -> (comm, pid) now
took = collections.defaultdict(list)   # rank tid -> intruders seen on its cpu while it waited
total = collections.Counter(); count = collections.Counter(); long = []
for line in open(sys.argv[1], errors="replace"):
    m = pat.search(line)
    if not m:
        continue
    cpu, t, pc, pp, ps, nc, np_ = int(m[1]), float(m[2]), m[3], int(m[4]), m[5], m[6], int(m[7])
    if pc.startswith("python") and ps.startswith("R"):
        out_at[pp] = (t, cpu, nc, np_)
    if np_ in out_at:
        t0, cpu0, nc0, np0 = out_at.pop(np_)
        gap = t - t0
        key = f"{nc0}:{np0}" if not nc0.startswith("python") else "python(rank?)"
        total[nc0] += gap; count[nc0] += 1
        if gap > 1e-3:
            long.append((t0, gap * 1e3, np_, cpu0, f"{nc0}:{np0}", cpu))
print("intruder comm, times, total ms, while a rank thread was runnable:")
for c, v in total.most_common(25):
    print(f"  {c:28s} {count[c]:7d} {v * 1e3:10.2f}")
print("gaps over 1 ms (t, ms, rank tid, its cpu, who took it, cpu it came back on):")
for g in long[:80]:
    print("  %.6f %7.2f %7d cpu%-3d %-30s cpu%d" % g)
print(len(long), "gaps over 1 ms")
