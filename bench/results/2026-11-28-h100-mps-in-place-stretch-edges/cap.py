"""Run the main command with dbfs.peer_levels.PEER_IN_PLACE_EDGES from the environment (probe only)."""
import os, runpy, sys
import dbfs.peer_levels as p
if os.environ.get("PEER_IN_PLACE_EDGES"):
    p.PEER_IN_PLACE_EDGES = int(os.environ["PEER_IN_PLACE_EDGES"])
sys.argv = ["dbfs"] + sys.argv[1:]
runpy.run_module("dbfs", run_name="__main__", alter_sys=True)
