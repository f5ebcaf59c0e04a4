"""Every CUDA source in kernels/ compiles for sm_90 with nvcc (the GPU machines compile them with NVRTC;
this catches syntax and type errors on machines without a GPU), for each width of a graph's offsets
where it reads them."""

import pytest

from dbfs import kernels
from nvcc_checks import NVCC, compile_all

pytestmark = pytest.mark.one_rank


VARIANTS = [(name, bits) for name in kernels.names()
            for bits in (kernels.OFFSET_BITS if kernels.reads_offsets(name) else (64,))]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    return compile_all({f"{name}_{bits}": kernels.DIRECTORY / f"{name}.cu" for name, bits in VARIANTS},
                       tmp_path_factory.mktemp("cubins"), {f"{name}_{bits}": bits for name, bits in VARIANTS})


@pytest.mark.skipif(NVCC is None, reason="nvcc not found on PATH: CUDA sources not compile-checked")
@pytest.mark.parametrize("name,bits", VARIANTS)
def test_kernel_compiles(name, bits, compiled):
    returncode, stderr, cubin = compiled[f"{name}_{bits}"]
    assert returncode == 0, f"nvcc failed on kernels/{name}.cu with {bits}-bit offsets:\n{stderr}"
    assert cubin.stat().st_size > 0


def test_the_offset_readers_are_the_graph_kernels():
    """The modules compiled twice are those whose kernels take a CSC's or a row copy's offsets."""
    assert {name for name in kernels.names() if kernels.reads_offsets(name)} == {
        "bitmap", "bottom_up", "certificate", "csc_build", "expand", "message", "peer_levels", "row_order",
        "small_levels", "validate"}
