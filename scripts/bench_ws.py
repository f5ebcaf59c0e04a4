#!/usr/bin/env python3
"""Summary of the ws-mode benchmarks (scripts/gpu_check.sh stages ws1 and ws2) against the issue's targets.

Reads the --json documents of `python -m dbfs ws` runs (and optionally one main-mode document) and
prints, with the medians over sources and repeats that the runs hold:
  - WS against every VWC size per program, and the mean over programs of WS's speedup over the best
    VWC size (target: > 1, the paper reports 1.29-2.80x);
  - VR against Medusa (the paper's ALL), MS and peer per program, and the mean speedup of VR over
    Medusa (target: >= 1.3);
  - WS-mode BFS against the main mode on the same roots: harmonic-mean TEPS of each.
Nothing is measured here; every figure comes from the documents.

    python scripts/bench_ws.py RESULTS/ws_*.json [--main RESULTS/main.json] [--out summary.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from dbfs import outputs  # noqa: E402
from dbfs.json_output import write_json_atomically  # noqa: E402
from dbfs.ws.main import comparisons, median_times  # noqa: E402

WS_TARGET = 1.0
VR_TARGET = 1.3


def harmonic_teps(runs: list[dict]) -> float:
    teps = [r["teps"] for r in runs if r.get("teps")]
    return len(teps) / sum(1 / t for t in teps) if teps else 0.0


def verdict(value: float, target: float, strict: bool) -> str:
    met = value > target if strict else value >= target
    return f"{value:.2f}x (target {'>' if strict else '>='} {target:g}x: {'MET' if met else 'NOT MET'})"


def summarize(docs: list[dict], main_doc: dict | None) -> tuple[list[str], dict]:
    lines, summary = [], {}
    for doc in docs:
        runs = doc["runs"]
        figures = summary[os.path.basename(doc.get("path", "")) or f"document {len(summary)}"] = {}
        times = median_times(runs)
        found = comparisons(runs)
        label = f"{os.path.basename(doc.get('path', ''))}: {doc['gpus']} GPU(s), {doc['devices'][0]}, " \
                f"{doc['graph']['n_vertices']} vertices, {doc['graph']['csr_entries']} CSR entries"
        lines += ["", label]
        methods = sorted({m for _, m, _ in times}, key=lambda m: (m != "ws", len(m), m))
        exchanges = sorted({e or "-" for _, _, e in times})
        for exchange in exchanges:
            lines.append(f"  median time per run, ms (exchange {exchange})")
            lines.append("    " + f"{'algo':<8}" + "".join(f"{m:>10}" for m in methods))
            for algo in dict.fromkeys(a for a, _, _ in times):
                cells = [times.get((algo, m, None if exchange == "-" else exchange)) for m in methods]
                lines.append("    " + f"{algo:<8}" + "".join(f"{1e3 * c:>10.2f}" if c else f"{'-':>10}" for c in cells))
        ws = [c for c in found if c["compare"] == "ws_over_best_vwc"]
        if ws:
            for c in ws:
                lines.append(f"  {c['algo']:<6} ws over best VWC ({c['other']}): {c['speedup']:.2f}x")
            mean = float(np.mean([c["speedup"] for c in ws]))
            lines.append(f"  WS over the best VWC size, mean over programs: {verdict(mean, WS_TARGET, True)}")
            figures["ws_over_best_vwc"] = {"mean": mean, "per_program": {c["algo"]: c["speedup"] for c in ws}}
        for other in ("medusa", "ms", "peer"):
            key = "vr_over_all" if other == "medusa" else f"vr_over_{other}"      # the paper's ALL
            vr = [c for c in found if c["compare"] == key]
            if not vr:
                continue
            for c in vr:
                lines.append(f"  {c['algo']:<6} vr over {other}: {c['speedup']:.2f}x")
            mean = float(np.mean([c["speedup"] for c in vr]))
            lines.append(f"  VR over {other}, mean over programs: "
                         + (verdict(mean, VR_TARGET, False) if other == "medusa" else f"{mean:.2f}x"))
            figures[key] = {"mean": mean, "per_program": {c["algo"]: c["speedup"] for c in vr}}
        bfs = [r for r in runs if r["algo"] == "bfs" and r["method"] == "ws"]
        if main_doc is not None and bfs:
            ws_teps, main_teps = harmonic_teps(bfs), main_doc["bfs_harmonic_mean_TEPS"]
            same = sorted({r["source"] for r in bfs}) == sorted(main_doc["roots"])
            main_nedge = {s["root"]: s["nedge"] for s in main_doc["searches"]}
            nedge_agree = all(main_nedge.get(r["source"]) == r["nedge"] for r in bfs)
            lines.append(f"  BFS harmonic-mean TEPS: ws mode {ws_teps / 1e9:.3f} G, main mode {main_teps / 1e9:.3f} G "
                         f"(ws/main {ws_teps / main_teps:.2f}; {'same' if same else 'DIFFERENT'} roots; traversed "
                         f"edges {'agree' if nedge_agree else 'DIFFER'} per root)")
            figures["bfs_ws_vs_main"] = {"ws_teps": ws_teps, "main_teps": main_teps, "same_roots": same,
                                         "nedge_agree": nedge_agree}
    return lines, summary


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("documents", nargs="+", help="--json files of python -m dbfs ws")
    p.add_argument("--main", help="--json file of the main mode (python -m dbfs) for the BFS comparison")
    p.add_argument("--out", help="write the summary figures as JSON, per document")
    args = p.parse_args(argv)
    outputs.check_or_exit("bench_ws.py", [outputs.Target("--out", args.out)],
                          [("DOCUMENT", path) for path in args.documents] + [("--main", args.main)])
    docs = []
    for path in args.documents:
        with open(path) as f:
            docs.append({**json.load(f), "path": path})
    main_doc = None
    if args.main:
        with open(args.main) as f:
            main_doc = json.load(f)
    lines, summary = summarize(docs, main_doc)
    print("\n".join(lines).lstrip("\n"))
    if args.out:
        write_json_atomically(args.out, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
