"""Probe (never committed): python -m dbfs with the device-driven stretches' capacity scaled by
PROBE_CAPACITY_SCALE (0: no stretches)."""
import os
import runpy
import sys

import dbfs.bfs

default = dbfs.bfs.default_capacity
dbfs.bfs.default_capacity = lambda grid: int(default(grid) * float(os.environ["PROBE_CAPACITY_SCALE"]))
sys.argv = ["dbfs"] + sys.argv[1:]
runpy.run_module("dbfs", run_name="__main__", alter_sys=True)
