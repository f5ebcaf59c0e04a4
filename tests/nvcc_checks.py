"""nvcc compile checks of CUDA sources, run side by side (one nvcc per core): the tests that compile
every kernel module and every ws program module share them, so a machine without a GPU checks all of
them in about the time of the slowest few."""

from __future__ import annotations

import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor

from dbfs import kernels

NVCC = shutil.which("nvcc")


def compile_all(sources: dict, folder, offset_bits: dict | None = None) -> dict:
    """{name: (returncode, stderr, cubin path)} for each {name: .cu path}, compiled for sm_90 with the
    kernels' options into `folder`, for the width of a graph's offsets that offset_bits gives the name
    (64 where it gives none), and what its module needs besides (kernels.module_options)."""
    def compile_one(item):
        name, source = item
        cubin = folder / f"{name}.cubin"
        options = kernels.compile_options((offset_bits or {}).get(name, 64)) + kernels.module_options(source.stem)
        result = subprocess.run([NVCC, "-arch=sm_90", "-cubin", *options, "-o", str(cubin), str(source)],
                                capture_output=True, text=True)
        return name, (result.returncode, result.stderr, cubin)

    with ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
        return dict(pool.map(compile_one, sources.items()))
