"""Probe: a periodic daemon stand-in: every PERIOD s it wakes and computes for BURST s, until killed."""
import sys, time
period, burst = float(sys.argv[1]), float(sys.argv[2])
while True:
    time.sleep(period)
    end = time.perf_counter() + burst
    while time.perf_counter() < end:
        pass
