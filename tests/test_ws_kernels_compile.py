"""Every vertex program of the ws mode, placed into the engine template (kernels/ws_engine.cuh, with
ws_refine.cuh, ws_shards.cuh and ws_frontier.cuh) exactly as the engine compiles it with NVRTC,
compiles for sm_90 with nvcc, every kernel present; so does a program with a struct vertex (the generic
shuffle paths of WS and of G-Shards and Concatenated Windows)."""

import shutil
import subprocess

import pytest

from dbfs import kernels
from dbfs.ws import programs  # noqa: F401
from dbfs.ws.program import PROGRAMS
from ws_cases import BFS_PARENT

pytestmark = pytest.mark.one_rank
NVCC = shutil.which("nvcc")
CASES = {**PROGRAMS, BFS_PARENT.name: BFS_PARENT}
KERNELS = ["ws_iterate", "ws_hub_slices", "ws_apply", "ws_gather", "gs_iterate", "cw_iterate", "gs_refresh",
           "cw_refresh", "ws_mark", "ws_mark_remote", "ws_filter_online", "ws_filter_all", "ws_ballot_count",
           "ws_ballot_write"] + [f"vwc_iterate_{w}" for w in (2, 4, 8, 16, 32)]


@pytest.mark.skipif(NVCC is None, reason="nvcc not found on PATH: CUDA sources not compile-checked")
@pytest.mark.parametrize("name", sorted(CASES))
def test_program_module_compiles(name, tmp_path):
    source = tmp_path / f"ws_{name}.cu"
    source.write_text(CASES[name].source())
    cubin = tmp_path / f"ws_{name}.cubin"
    result = subprocess.run([NVCC, "-arch=sm_90", "-cubin", *kernels.compile_options(), "-o", str(cubin),
                             str(source)], capture_output=True, text=True)
    assert result.returncode == 0, f"nvcc failed on program {name}:\n{result.stderr}"
    data = cubin.read_bytes()
    for kernel in KERNELS:
        assert kernel.encode() in data, f"{kernel} missing from the {name} module"
