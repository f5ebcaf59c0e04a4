"""CUDA C sources of dbfs, one concern per file, loaded at run time by CuPy (RawModule, code=).

Installed as the package `dbfs.kernels` so that the sources travel inside the wheel.
"""

from pathlib import Path

DIRECTORY = Path(__file__).resolve().parent


def source(name: str) -> str:
    """Text of kernels/<name>.cu."""
    return (DIRECTORY / f"{name}.cu").read_text()


def names() -> list[str]:
    return sorted(p.stem for p in DIRECTORY.glob("*.cu"))
