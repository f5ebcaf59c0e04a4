"""`python -m dbfs info`: what this job would run on — backend, MPI library and CUDA awareness, the
GPUs each rank sees and the one it binds (node-local rank modulo visible GPUs), package versions."""

from __future__ import annotations

import importlib.metadata
import platform
import socket

from dbfs import __version__, backend as backends, runtime


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _cupy_version() -> str:
    try:
        import cupy
        return cupy.__version__
    except Exception as e:  # CuPy import fails in many ways without a driver; report which
        return f"unavailable ({type(e).__name__})"


def main(args) -> None:
    be = backends.select(args.backend)
    local, per_node = runtime.local_rank()
    mine = {"rank": runtime.rank(), "host": socket.gethostname(), "local_rank": local,
            "gpus_seen": backends.gpu_count(), "device": be.describe()}
    everyone = runtime.WORLD.gather(mine, root=0)
    aware = runtime.mpi_cuda_aware()
    lines = [
        f"dbfs {__version__}",
        f"python {platform.python_version()} on {platform.machine()}",
        f"backend: {be.name}",
        f"mpi ranks: {runtime.size()} ({per_node} on this node)",
        f"mpi library: {runtime.mpi_library()}",
        f"mpi cuda-aware: {'unknown' if aware is None else ('yes' if aware else 'no')}",
        "packages: " + ", ".join(f"{p} {_version(p)}" for p in ("numpy", "mpi4py", "h5py"))
        + f", cupy {_cupy_version()}",
        "binding:",
    ]
    if everyone:
        lines += [f"  rank {r['rank']:>4} host {r['host']} local {r['local_rank']:>3} "
                  f"gpus seen {r['gpus_seen']} -> {r['device']}" for r in everyone]
    runtime.out("\n".join(lines))
