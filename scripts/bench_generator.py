"""Time the Graph500 generator on the GPU (CuPy kernel) and with NumPy (one core), and check that both
produce identical edges, for the scales given on the command line. Writes one JSON file.

    python scripts/bench_generator.py 20 26 --out bench/results/generator.json [--no-weights]

GPU: all edgefactor * 2^SCALE edges in one call (after a warm-up that compiles the kernel), timed with
the device synchronized, best of --repeat. NumPy: --numpy-edges edges from the start of the range
(all of them when the graph is smaller), single-threaded BLAS. Identity: the NumPy edges against the
GPU's at the start and at the end of the range (and everywhere when the graph has at most
--numpy-edges edges).
"""

from __future__ import annotations

import os

# one core for the NumPy figure: BLAS threads would otherwise inflate it
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import socket  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from dbfs import outputs  # noqa: E402
from dbfs.backend import gpu_count  # noqa: E402
from dbfs.json_output import write_json_atomically  # noqa: E402
from graph500.generator import edge_count, generate_edges  # noqa: E402


def cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def gpu_name(cupy) -> str:
    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    name = props["name"]
    return name.decode() if isinstance(name, bytes) else name


def time_gpu(cupy, scale: int, edgefactor: int, weights: bool, repeat: int):
    n = edge_count(scale, edgefactor)
    generate_edges(scale, edgefactor, 0, min(n, 1 << 16), weights=weights, xp=cupy)   # compile, warm up
    best, out = None, None
    for _ in range(repeat):
        out = None
        cupy.get_default_memory_pool().free_all_blocks()
        cupy.cuda.Device().synchronize()
        start = time.perf_counter()
        out = generate_edges(scale, edgefactor, 0, n, weights=weights, xp=cupy)
        cupy.cuda.Device().synchronize()
        seconds = time.perf_counter() - start
        best = seconds if best is None else min(best, seconds)
    return best, out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scales", type=int, nargs="+", help="SCALE values to measure")
    parser.add_argument("--out", required=True, help="JSON file to write")
    parser.add_argument("--edgefactor", type=int, default=16)
    parser.add_argument("--no-weights", action="store_true", help="generate without SSSP weights")
    parser.add_argument("--numpy-edges", type=int, default=1 << 22, help="edges timed with NumPy per scale")
    parser.add_argument("--repeat", type=int, default=3, help="GPU timings per scale (best is kept)")
    args = parser.parse_args()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    outputs.check_or_exit("bench_generator.py", [outputs.Target("--out", args.out)])
    weights = not args.no_weights

    cupy = None
    if gpu_count() > 0:
        import cupy
    machine = {"host": socket.gethostname(), "cpu": cpu_model(), "python": platform.python_version(),
               "numpy": np.__version__, "gpu": gpu_name(cupy) if cupy is not None else None,
               "cupy": cupy.__version__ if cupy is not None else None}
    report = {"machine": machine, "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
              "command": " ".join([sys.executable, *sys.argv]), "weights": weights,
              "edgefactor": args.edgefactor, "results": []}

    for scale in args.scales:
        n = edge_count(scale, args.edgefactor)
        sample = min(n, args.numpy_edges)
        start_cpu, start_wall = time.process_time(), time.perf_counter()
        head = generate_edges(scale, args.edgefactor, 0, sample, weights=weights)
        numpy_seconds = time.perf_counter() - start_wall
        numpy_cpu = time.process_time() - start_cpu
        result = {"scale": scale, "n_edges": n,
                  "numpy": {"edges": sample, "seconds": numpy_seconds, "cpu_seconds": numpy_cpu,
                            "edges_per_s": sample / numpy_seconds}}
        if cupy is not None:
            seconds, gpu = time_gpu(cupy, scale, args.edgefactor, weights, args.repeat)
            tail = generate_edges(scale, args.edgefactor, n - sample, n, weights=weights)
            identical = all(np.array_equal(a, cupy.asnumpy(b[:sample])) for a, b in zip(head, gpu))
            identical &= all(np.array_equal(a, cupy.asnumpy(b[n - sample:])) for a, b in zip(tail, gpu))
            result["gpu"] = {"seconds": seconds, "edges_per_s": n / seconds}
            result["identical"] = bool(identical)
            result["compared_edges"] = n if sample == n else 2 * sample
            del gpu
        else:
            result["gpu"] = None
            result["identical"] = None
        report["results"].append(result)
        print(json.dumps(result), flush=True)

    write_json_atomically(args.out, report)
    failed = any(r["identical"] is False for r in report["results"])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
