"""Probe (not part of dbfs): the main command with PROBE_SPIN=1 restoring CUDA's spinning host waits
where dbfs would yield (dbfs.backend.waits_yield)."""
import os
import sys
import dbfs.backend
if os.environ.get("PROBE_SPIN") == "1":
    dbfs.backend.waits_yield = lambda *counts: False
from dbfs.cli import main
sys.exit(main(sys.argv[1:]))
