"""Every vertex program of the ws mode, placed into the engine template (kernels/ws_engine.cuh, with
ws_refine.cuh, ws_shards.cuh and ws_frontier.cuh) exactly as the engine compiles it with NVRTC,
compiles for sm_90 with nvcc, every kernel present; so does a program with a struct vertex (the generic
shuffle paths of WS and of G-Shards and Concatenated Windows)."""

import pytest

from dbfs.ws import programs  # noqa: F401
from dbfs.ws.program import PROGRAMS
from nvcc_checks import NVCC, compile_all
from ws_cases import BFS_PARENT

pytestmark = pytest.mark.one_rank
CASES = {**PROGRAMS, BFS_PARENT.name: BFS_PARENT}
KERNELS = ["ws_iterate", "ws_hub_slices", "ws_apply", "ws_gather", "gs_iterate", "cw_iterate", "gs_refresh",
           "cw_refresh", "ws_mark", "ws_mark_remote", "ws_filter_online", "ws_filter_all", "ws_ballot_count",
           "ws_ballot_write"] + [f"vwc_iterate_{w}" for w in (2, 4, 8, 16, 32)]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ws_cubins")
    sources = {}
    for name, program in CASES.items():
        sources[f"ws_{name}"] = folder / f"ws_{name}.cu"
        sources[f"ws_{name}"].write_text(program.source())
    return compile_all(sources, folder)


@pytest.mark.skipif(NVCC is None, reason="nvcc not found on PATH: CUDA sources not compile-checked")
@pytest.mark.parametrize("name", sorted(CASES))
def test_program_module_compiles(name, compiled):
    returncode, stderr, cubin = compiled[f"ws_{name}"]
    assert returncode == 0, f"nvcc failed on program {name}:\n{stderr}"
    data = cubin.read_bytes()
    for kernel in KERNELS:
        assert kernel.encode() in data, f"{kernel} missing from the {name} module"
