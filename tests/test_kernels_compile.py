"""Every CUDA source in kernels/ compiles for sm_90 with nvcc (the GPU machines compile them with NVRTC;
this catches syntax and type errors on machines without a GPU)."""

import pytest

from dbfs import kernels
from nvcc_checks import NVCC, compile_all

pytestmark = pytest.mark.one_rank


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    return compile_all({name: kernels.DIRECTORY / f"{name}.cu" for name in kernels.names()},
                       tmp_path_factory.mktemp("cubins"))


@pytest.mark.skipif(NVCC is None, reason="nvcc not found on PATH: CUDA sources not compile-checked")
@pytest.mark.parametrize("name", kernels.names())
def test_kernel_compiles(name, compiled):
    returncode, stderr, cubin = compiled[name]
    assert returncode == 0, f"nvcc failed on kernels/{name}.cu:\n{stderr}"
    assert cubin.stat().st_size > 0
