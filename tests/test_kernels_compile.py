"""Every CUDA source in kernels/ compiles for sm_90 with nvcc (the GPU machines compile them with NVRTC;
this catches syntax and type errors on machines without a GPU)."""

import shutil
import subprocess

import pytest

from dbfs import kernels

pytestmark = pytest.mark.one_rank

NVCC = shutil.which("nvcc")


@pytest.mark.skipif(NVCC is None, reason="nvcc not found on PATH: CUDA sources not compile-checked")
@pytest.mark.parametrize("name", kernels.names())
def test_kernel_compiles(name, tmp_path):
    result = subprocess.run(
        [NVCC, "-arch=sm_90", "-cubin", *kernels.compile_options(), "-o", str(tmp_path / f"{name}.cubin"),
         str(kernels.DIRECTORY / f"{name}.cu")],
        capture_output=True, text=True)
    assert result.returncode == 0, f"nvcc failed on kernels/{name}.cu:\n{result.stderr}"
    assert (tmp_path / f"{name}.cubin").stat().st_size > 0
