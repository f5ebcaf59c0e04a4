#!/usr/bin/env python3
"""The ws-mode comparison tables: Warp Segmentation against the best VWC, CuSha's G-Shards and
Concatenated Windows, over all vertices and with SIMD-X's JIT active lists (paper 000's Tables V-VI
form: each method's time against WS), and the approximate layouts of paper 003 against the exact runs.

Runs `python -m dbfs ws` once per graph (the graph is built once, every configuration runs on it),
each under what is left of --budget seconds, then writes DIR/ws_table.json (every figure, with the
commands, and which steps failed or ran out of time) and DIR/ws_table.md (the tables); the --json
documents and logs of the runs go to DIR/runs/. Nothing is invented: a step that did not finish shows
as missing.

  graphs     Kronecker --scales (default 22 and 24, Graph500 weights) and a --lattice SIDE x SIDE
             lattice (default 2048, ids scrambled; weights uniform in (0, 1], seeded, added here)
  programs   bfs, sssp, cc, pr, one Graph500-sampled source; --repeat timed runs each (default 1)
  methods    ws, the VWC sizes (all five on scale 22 and the lattice; 16 and 32 on larger graphs,
             where the smaller ones were slowest in every earlier run), gs, cw; frontier all and jit
             for ws and vwc (the best VWC size is the fastest over all vertices)
  approx     sssp and pr with ws on the coalesce, latency and divergence layouts of the smallest
             Kronecker graph and of the lattice

    python scripts/bench_ws_table.py --out DIR [--budget 330] [--scales 22,24] [--lattice 2048]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

PROGRAMS = "bfs,sssp,cc,pr"
ALL_VWC = ["vwc2", "vwc4", "vwc8", "vwc16", "vwc32"]
LARGE_VWC = ["vwc16", "vwc32"]
POSTER_SSSP = {"coalesce": (1.35, 0.21), "latency": (1.40, 0.24), "divergence": (1.06, 0.16)}


def run_step(name: str, command: list[str], runs: str, deadline: float, steps: list) -> dict | None:
    """Run one command under the time left; its --json document, or None (recorded in steps)."""
    left = deadline - time.time()
    log = os.path.join(runs, f"{name}.log")
    record = {"name": name, "command": " ".join(command)}
    steps.append(record)
    if left < 10:
        record["outcome"] = "skipped: no time left"
        return None
    print(f"+ {record['command']}  (at most {left:.0f} s)", flush=True)
    started = time.time()
    with open(log, "w") as out:
        try:
            rc = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, timeout=left).returncode
        except subprocess.TimeoutExpired:
            rc = None
    record["seconds"] = round(time.time() - started, 1)
    if rc != 0:
        record["outcome"] = "timed out" if rc is None else f"failed (exit {rc}), see runs/{name}.log"
        print(f"  {record['outcome']}", flush=True)
        return None
    record["outcome"] = "ok"
    path = os.path.join(runs, f"{name}.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def add_weights(path: str) -> None:
    """Give a generated lattice file SSSP-like weights: uniform in (0, 1], seeded (lattices have none)."""
    import h5py
    import numpy as np
    with h5py.File(path, "a") as f:
        n_edges = f["src"].shape[0]
        weights = np.random.default_rng(2).uniform(0, 1, n_edges).astype(np.float32)
        f.create_dataset("weight", data=np.maximum(weights, np.float32(1e-6)))


def ws_command(python: str, backend: str, graph: list[str], name: str, runs: str, extra: list[str]) -> list[str]:
    return [python, "-m", "dbfs", "ws", *graph, "--backend", backend, "--gpus", "1", "--roots", "1",
            "--json", os.path.join(runs, f"{name}.json"), *extra]


def median(values: list[float]) -> float:
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def filter_counts(filters: list[str]) -> dict:
    """How many iterations each filter built the list of."""
    counts: dict = {}
    for f in filters:
        counts[f] = counts.get(f, 0) + 1
    return counts


def method_rows(doc: dict) -> list[dict]:
    """Per program: ws, the best VWC, gs, cw, over all vertices and with jit (median times)."""
    groups: dict = {}
    for r in doc["runs"]:
        groups.setdefault((r["algo"], r["method"], r["frontier"]), []).append(r)
    rows = []
    for algo in dict.fromkeys(r["algo"] for r in doc["runs"]):
        def figures(method, frontier):
            found = groups.get((algo, method, frontier))
            if not found:
                return None
            rep = found[0]["representation"]
            return {"algo": algo, "method": method, "frontier": frontier, "time": median([r["time"] for r in found]),
                    "iterations": found[0]["iterations"], "device_bytes": rep["device_bytes"],
                    "host_bytes": rep["host_bytes"], "filters": filter_counts(found[0]["filters"])}
        vwc = [m for (a, m, f) in groups if a == algo and m.startswith("vwc") and f == "all"]
        best = min(vwc, key=lambda m: figures(m, "all")["time"]) if vwc else None
        base = figures("ws", "all")
        for method, frontier in (("ws", "all"), ("ws", "jit"), (best, "all"), (best, "jit"), ("gs", "all"),
                                 ("cw", "all")):
            row = figures(method, frontier) if method else None
            if row is None:
                continue
            row["vs_ws"] = row["time"] / base["time"] if base else None
            row["best_vwc"] = method == best
            rows.append(row)
    return rows


def approx_rows(doc: dict) -> list[dict]:
    exact = {}
    for r in doc["runs"]:
        if r["approx"] is None:
            exact.setdefault(r["algo"], []).append(r["time"])
    rows = []
    groups: dict = {}
    for r in doc["runs"]:
        if r["approx"] is not None:
            groups.setdefault((r["algo"], r["approx"]["kind"]), []).append(r)
    for (algo, kind), found in groups.items():
        t_exact, t_approx = median(exact[algo]), median([r["time"] for r in found])
        inaccuracy = found[0]["approx"]["inaccuracy"]
        rows.append({"algo": algo, "kind": kind, "exact_time": t_exact, "approx_time": t_approx,
                     "speedup": t_exact / t_approx, **inaccuracy,
                     "layout": {k: v for k, v in found[0]["approx"].items() if k != "inaccuracy"}})
    return rows


def markdown(tables: dict, approx: dict, steps: list, device: str) -> str:
    out = ["# ws mode: WS, VWC, G-Shards, Concatenated Windows; JIT active lists; approximate layouts",
           "", f"Device: {device}. One source (Graph500-sampled), median of the timed runs.", ""]
    for graph, rows in tables.items():
        out += [f"## {graph}", "",
                "| program | method | frontier | iterations | time ms | time / ws (all) | device MiB | host MiB | "
                "lists built by (iterations) |",
                "|---|---|---|---:|---:|---:|---:|---:|---|"]
        for r in rows:
            label = r["method"] + (" (best VWC)" if r["best_vwc"] and r["frontier"] == "all" else "")
            lists = ", ".join(f"{f} {k}" for f, k in r["filters"].items())
            sizes = f"{r['device_bytes'] / 2**20:.1f} | {r['host_bytes'] / 2**20:.1f}"
            out.append(f"| {r['algo']} | {label} | {r['frontier']} | {r['iterations']} | {1e3 * r['time']:.2f} | "
                       f"{r['vs_ws']:.2f} | {sizes} | {lists} |")
        for algo in dict.fromkeys(r["algo"] for r in rows):
            mine = [r for r in rows if r["algo"] == algo]
            fastest = min(mine, key=lambda r: r["time"])
            out.append(f"\n{algo}: fastest {fastest['method']} ({fastest['frontier']}), "
                       f"{1e3 * fastest['time']:.2f} ms.")
        out.append("")
    if approx:
        out += ["## Approximate layouts (ws, frontier all)", "",
                "| graph | program | layout | exact ms | approx ms | speedup | vertices that differ | "
                "mean relative error | poster (SSSP: speedup, inaccuracy) |",
                "|---|---|---|---:|---:|---:|---:|---:|---|"]
        for graph, rows in approx.items():
            for r in rows:
                poster = POSTER_SSSP[r["kind"]]
                out.append(f"| {graph} | {r['algo']} | {r['kind']} | {1e3 * r['exact_time']:.2f} | "
                           f"{1e3 * r['approx_time']:.2f} | {r['speedup']:.2f} | {r['differ_fraction']:.1%} | "
                           f"{r['mean_relative_error']:.3g} | {poster[0]:.2f}x, {poster[1]:.0%} |")
        out.append("")
    out += ["## Steps", ""]
    out += [f"- `{s['command']}`: {s['outcome']}" + (f" ({s['seconds']} s)" if "seconds" in s else "") for s in steps]
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--out", required=True, help="directory for ws_table.json, ws_table.md and runs/")
    p.add_argument("--budget", type=float, default=330, help="seconds for all the runs together")
    p.add_argument("--scales", default="22,24", help="Kronecker scales, comma-separated")
    p.add_argument("--lattice", type=int, default=2048, help="side of the lattice (0: none)")
    p.add_argument("--repeat", type=int, default=1, help="timed runs of every configuration")
    p.add_argument("--python", default=sys.executable, help="interpreter that runs python -m dbfs")
    p.add_argument("--backend", choices=("gpu", "cpu"), default="gpu", help="cpu: a smoke test of this script")
    args = p.parse_args(argv)
    deadline = time.time() + args.budget
    runs = os.path.join(args.out, "runs")
    os.makedirs(runs, exist_ok=True)
    scales = sorted(int(s) for s in args.scales.split(",") if s.strip())
    steps, tables, approx, docs = [], {}, {}, {}
    common = ["--algo", PROGRAMS, "--repeat", str(args.repeat)]
    graphs = []
    if scales:
        graphs.append((f"Kronecker scale {scales[0]}", ["--scale", str(scales[0])], ALL_VWC, f"kron{scales[0]}"))
    if args.lattice:
        lattice = os.path.join(runs, "lattice.h5")
        step = {"name": "lattice", "command": f"{args.python} -m dbfs generate --lattice {args.lattice}x{args.lattice} "
                f"--out {lattice} --force --backend {args.backend}"}
        started = time.time()
        rc = subprocess.run(step["command"].split(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            timeout=max(deadline - time.time(), 1)).returncode
        if rc == 0:
            add_weights(lattice)
        step.update(outcome="ok" if rc == 0 else f"failed (exit {rc})", seconds=round(time.time() - started, 1))
        steps.append(step)
        if rc == 0:
            graphs.append((f"{args.lattice}x{args.lattice} lattice", ["--graph", lattice, "--max-iterations", "100000"],
                           ALL_VWC, f"lattice{args.lattice}"))
    approx_graphs = list(graphs)                      # the smallest Kronecker graph and the lattice
    graphs += [(f"Kronecker scale {s}", ["--scale", str(s)], LARGE_VWC, f"kron{s}") for s in scales[1:]]
    for title, graph, vwc, name in graphs:
        methods = ",".join(["ws", *vwc, "gs", "cw"])
        doc = run_step(name, ws_command(args.python, args.backend, graph, name, runs, [*common, "--method", methods,
                                                                         "--frontier", "all,jit"]),
                       runs, deadline, steps)
        if doc:
            docs[name] = doc
            tables[title] = method_rows(doc)
        if (title, graph, vwc, name) in approx_graphs:
            doc = run_step(f"{name}_approx", ws_command(args.python, args.backend, graph, f"{name}_approx", runs, [
                "--algo", "sssp,pr", "--repeat", str(args.repeat), "--method", "ws",
                "--approx", "coalesce,latency,divergence"]), runs, deadline, steps)
            if doc:
                docs[f"{name}_approx"] = doc
                approx[title] = approx_rows(doc)
    if args.lattice and os.path.exists(os.path.join(runs, "lattice.h5")):
        os.remove(os.path.join(runs, "lattice.h5"))          # an input, and large: not a result
    device = next((d["devices"][0] for d in docs.values()), "unknown")
    result = {"device": device, "tables": tables, "approx": approx, "steps": steps,
              "graphs": {name: d["graph"] for name, d in docs.items()},
              "approximations": {name: d.get("approximations") for name, d in docs.items()}}
    for name, text in (("ws_table.json", json.dumps(result, indent=1)), ("ws_table.md", markdown(tables, approx, steps,
                                                                                              device))):
        tmp = os.path.join(args.out, f"{name}.tmp")
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, os.path.join(args.out, name))
    print(markdown(tables, approx, steps, device))
    return 0 if all(s["outcome"] == "ok" for s in steps) else 1


if __name__ == "__main__":
    sys.exit(main())
