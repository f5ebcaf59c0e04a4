"""Harness case: dbfs's fail-fast. Rank 1 raises while the other ranks wait in a Barrier; with
install_abort_on_exception() the whole job must end at once with rank 1's traceback on stderr."""

from dbfs import runtime

runtime.install_abort_on_exception()
if runtime.rank() == 1:
    raise RuntimeError("rank one raised on purpose")
runtime.WORLD.Barrier()
