"""Probe (never committed): for each search of a traced run (trace_marker lines from mark.py), its length
at the slowest rank; for searches over LIMIT ms, every rank main thread's runnable-but-not-running gap
inside the window over 0.1 ms and the task that took its CPU."""
import collections, re, sys
path, LIMIT = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 2.0
sw = re.compile(r"\[(\d+)\].*?\s(\d+\.\d+): sched_switch: prev_comm=(.*?) prev_pid=(\d+) prev_prio=\d+ "
                r"prev_state=(\S+) ==> next_comm=(.*?) next_pid=(\d+)")
mk = re.compile(r"\s(\d+\.\d+): tracing_mark_write: ([SE]) (\d+) (\d+) (\d+)")
ev, marks = [], collections.defaultdict(dict)
for line in open(path, errors="replace"):
    m = sw.search(line)
    if m:
        ev.append((float(m[2]), int(m[1]), m[3], int(m[4]), m[5], m[6], int(m[7])))
        continue
    m = mk.search(line)
    if m:
        marks[int(m[5])][(m[2], int(m[3]))] = (float(m[1]), int(m[4]))
mains = {tid: r for k in marks for (kind, r), (t, tid) in marks[k].items()}
gaps, out = [], {}
for t, cpu, pc, pp, ps, nc, np_ in ev:
    if pp in mains and ps.startswith("R"):
        out[pp] = (t, cpu, f"{nc}:{np_}" + (f"(rank {mains[np_]})" if np_ in mains else ""))
    if np_ in out:
        t0, c0, who = out.pop(np_)
        gaps.append((t0, t, mains[np_], c0, cpu, who))
ranks = len({r for k in marks for (kind, r) in marks[k]})
print(f"{len(marks)} searches marked, {ranks} ranks, {len(ev)} switches, {len(gaps)} rank preemptions")
for k in sorted(marks):
    w = marks[k]
    starts = [w[("S", r)][0] for r in range(ranks) if ("S", r) in w]
    ends = [w[("E", r)][0] for r in range(ranks) if ("E", r) in w]
    if not starts or not ends:
        continue
    t0, t1 = min(starts), max(ends)
    inside = [g for g in gaps if g[1] > t0 and g[0] < t1]
    lost = sum(min(g[1], t1) - max(g[0], t0) for g in inside)
    print(f"search {k}: {(t1 - t0) * 1e3:.2f} ms window, ranks' preempted time inside {lost * 1e3:.2f} ms")
    if (t1 - t0) * 1e3 > LIMIT:
        for g in sorted(inside):
            if g[1] - g[0] > 1e-4:
                print(f"   rank {g[2]:2d} cpu{g[3]} at +{(g[0] - t0) * 1e3:7.3f} ms out {(g[1] - g[0]) * 1e3:6.3f} ms "
                      f"for {g[5]}, back on cpu{g[4]}")
