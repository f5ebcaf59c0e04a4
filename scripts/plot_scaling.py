"""Draw the scaling figures of paper 004 from dbfs --json documents, as PNG files.

    python scripts/plot_scaling.py DIR_OR_FILE... --out DIR

Runs are read with collect_results.py and grouped into configurations: device, transport (comm),
encoding, direction and edgefactor. Within a configuration,
- a weak-scaling series is the runs whose scale grows by one per doubling of the GPUs (paper Table 1;
  same scale - log2(GPUs)), and a strong-scaling series the runs of one scale on different GPU counts;
  a series needs two GPU counts or more. Runs of a weak study only join weak series and runs of a
  strong study only strong ones (runs whose study is not known may join either). When several runs
  share a study, configuration, scale and GPU count, the latest (by date) stands for them.
Figures (each written only when there is something to draw; the file names are printed):
- weak_scaling.png / strong_scaling.png: harmonic-mean TEPS against GPUs, one line per series, with
  the linear scaling of its first point dashed (paper Figures 4, 5 and 10);
- phases.png: per run, the mean time per search of each phase stacked, bottom to top expand exchange,
  frontier expansion, fold exchange, frontier update, then predecessor resolution (paper Figure 7);
- compute_transfer.png: per run, computation (expansion + update) beside transfer (expand + fold
  exchanges) (paper Figures 6 and 11);
- bytes.png: per run, the bytes sent per search beside the bytes of the same messages as plain lists,
  expand and fold stacked (the saving of the bitmap encoding, paper section 5).
The bar figures have one panel per configuration. Uses matplotlib's Agg backend (no display needed);
install it with `pip install ".[plot]"`.
"""

from __future__ import annotations

import argparse
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from collect_results import KINDS, collect, phase_names  # noqa: E402
from dbfs import outputs  # noqa: E402

FIGURES = ("weak_scaling.png", "strong_scaling.png", "phases.png", "compute_transfer.png", "bytes.png")

CONFIG = ("device", "comm", "encoding", "direction", "edgefactor")
COMPUTE = ("expansion", "update")
TRANSFER = ("expand_comm", "fold_comm")


def config_label(key) -> str:
    device, comm, encoding, direction, edgefactor = key
    return f"{comm}/{encoding}/{direction} [{device}, ef {edgefactor}]"


def latest_runs(rows) -> list[dict]:
    """One run per study, configuration, scale and GPU count: the latest."""
    best = {}
    for r in rows:
        key = tuple(r[k] for k in CONFIG) + (r.get("study", ""), r["scale"], r["gpus"])
        if key not in best or r["date"] >= best[key]["date"]:
            best[key] = r
    return sorted(best.values(), key=lambda r: (tuple(r[k] for k in CONFIG), r["gpus"], r["scale"]))


def series(rows, weak: bool) -> dict:
    """{(configuration, base or fixed scale): runs by GPU count} for series of two GPU counts or more.
    A one-GPU run exchanges nothing, so it also starts the series of every other transport and
    encoding (same device, direction and edgefactor) that has no one-GPU run of its own."""
    groups, single = {}, {}
    for r in rows:
        p = r["gpus"]
        if (weak and p & (p - 1)) or r.get("study", "") not in ("", "weak" if weak else "strong"):
            continue
        anchor = r["scale"] - int(math.log2(p)) if weak else r["scale"]
        key = tuple(r[k] for k in CONFIG)
        groups.setdefault((key, anchor), []).append(r)
        if p == 1:
            single.setdefault((_exchange_free(key), anchor), r)
    for (key, anchor), runs in groups.items():
        start = single.get((_exchange_free(key), anchor))
        if start is not None and all(r["gpus"] != 1 for r in runs):
            runs.append(start)
    return {k: sorted(v, key=lambda r: r["gpus"]) for k, v in groups.items() if len(v) >= 2}


def _exchange_free(key) -> tuple:
    """The configuration without transport and encoding (what a one-GPU run depends on)."""
    return tuple(v for name, v in zip(CONFIG, key) if name not in ("comm", "encoding"))


def plot_teps(groups, weak: bool, path: str) -> None:
    fig, ax = plt.subplots(figsize=(7, 4.8))
    for (key, anchor), runs in sorted(groups.items()):
        gpus = [r["gpus"] for r in runs]
        gteps = [r["harmonic_mean_TEPS"] / 1e9 for r in runs]
        what = f"scale {anchor} per GPU" if weak else f"scale {anchor}"
        line, = ax.plot(gpus, gteps, marker="o", label=f"{config_label(key)}, {what}")
        ax.plot(gpus, [gteps[0] * p / gpus[0] for p in gpus], ls="--", lw=0.8, color=line.get_color())
        for r, y in zip(runs, gteps):
            text = f"{r['grid']} s{r['scale']}" if weak else r["grid"]
            ax.annotate(text, (r["gpus"], y), textcoords="offset points", xytext=(4, -10), fontsize=7)
    ax.set_xscale("log", base=2)
    counts = sorted({r["gpus"] for runs in groups.values() for r in runs})
    ax.set_xticks(counts, [str(p) for p in counts])
    ax.set_yscale("log")
    ax.set_xlabel("GPUs")
    ax.set_ylabel("harmonic-mean GTEPS")
    ax.set_title(("weak" if weak else "strong") + " scaling (dashed: linear from the first point)")
    ax.grid(True, which="both", lw=0.3)
    ax.legend(fontsize=7)
    save(fig, path)


def plot_bars(runs, bars, ylabel: str, title: str, path: str) -> None:
    """One panel per configuration; per run, one stacked bar per entry of bars: (label, [(part, fn)]).
    A part has one colour wherever it appears; the second bar of each pair is hatched."""
    panels = {}
    for r in runs:
        panels.setdefault(tuple(r[k] for k in CONFIG), []).append(r)
    ncols = min(3, len(panels))
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5 * ncols, 4 * nrows), squeeze=False)
    parts = list(dict.fromkeys(part for _, stack in bars for part, _ in stack))
    colors = {part: plt.get_cmap("tab10")(i % 10) for i, part in enumerate(parts)}
    width = 0.8 / len(bars)
    for ax, (key, panel_runs) in zip(axes.flat, sorted(panels.items())):
        for b, (bar_label, stack) in enumerate(bars):
            xs = [i + (b - (len(bars) - 1) / 2) * width for i in range(len(panel_runs))]
            bottom = [0.0] * len(panel_runs)
            for part, value in stack:
                heights = [value(r) for r in panel_runs]
                ax.bar(xs, heights, width, bottom=bottom, color=colors[part],
                       label=part, edgecolor="black", lw=0.3, hatch="//" if b % 2 else None)
                bottom = [y + h for y, h in zip(bottom, heights)]
            if len(bars) > 1:
                for x, top in zip(xs, bottom):
                    ax.annotate(bar_label, (x, top), ha="center", va="bottom", fontsize=6)
        ax.set_xticks(range(len(panel_runs)))
        ax.set_xticklabels([f"{r['gpus']} GPU\n{r['grid']} s{r['scale']}" for r in panel_runs], fontsize=7)
        ax.set_ylim(bottom=0)
        ax.set_ylabel(ylabel)
        ax.set_title(config_label(key), fontsize=8)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    first = {}
    for handle, label in zip(*axes.flat[0].get_legend_handles_labels()):
        first.setdefault(label, handle)
    fig.legend(first.values(), first.keys(), loc="upper center", bbox_to_anchor=(0.5, 0.0),
               ncol=min(6, len(first)), fontsize=8)
    fig.suptitle(title, fontsize=10)
    save(fig, path)


def save(fig, path: str) -> None:
    """Write through a temporary name so that no half-written PNG is left."""
    fig.tight_layout()
    tmp = f"{path}.tmp-{os.getpid()}.png"
    try:
        fig.savefig(tmp, dpi=120, bbox_inches="tight")
        os.replace(tmp, path)
    finally:
        plt.close(fig)
        if os.path.exists(tmp):
            os.remove(tmp)
    print(path)


def _phase_ms(phase):
    return lambda r: r.get(f"phase_{phase}_ms", 0.0)


def _sum_ms(phases):
    return lambda r: sum(r.get(f"phase_{p}_ms", 0.0) for p in phases)


def _mb(prefix, kind):
    return lambda r: r[f"{prefix}_{kind}"] / 1e6


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("paths", nargs="+", metavar="DIR_OR_FILE", help="--json documents or folders of them")
    p.add_argument("--out", default=".", help="folder for the PNG files (made when missing)")
    args = p.parse_args(argv)
    runs = latest_runs(collect(args.paths))
    if not runs:
        print("plot_scaling: error: no dbfs --json documents found", file=sys.stderr)
        return 2
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as e:
        print(f"plot_scaling: error: cannot make the folder --out {args.out}: {e.strerror or e}", file=sys.stderr)
        return 2
    outputs.check_or_exit("plot_scaling", [outputs.Target("--out", os.path.join(args.out, name)) for name in FIGURES],
                          [("DIR_OR_FILE", path) for path in args.paths])
    for weak, name in ((True, "weak_scaling.png"), (False, "strong_scaling.png")):
        groups = series(runs, weak)
        if groups:
            plot_teps(groups, weak, os.path.join(args.out, name))
        else:
            print(f"plot_scaling: no {name[:-4].replace('_', ' ')} series (two GPU counts or more needed)",
                  file=sys.stderr)
    phases = phase_names(runs)
    plot_bars(runs, [("", [(ph, _phase_ms(ph)) for ph in phases])], "ms per search",
              "per-phase breakdown, mean per search (paper Figure 7)", os.path.join(args.out, "phases.png"))
    plot_bars(runs, [("compute", [("computation", _sum_ms(COMPUTE))]),
                     ("transfer", [("transfer", _sum_ms(TRANSFER))])], "ms per search",
              "computation (expansion + update) and transfer (expand + fold exchanges) (paper Figure 11)",
              os.path.join(args.out, "compute_transfer.png"))
    plot_bars(runs, [(label, [(kind, _mb(prefix, kind)) for kind in KINDS])
                     for label, prefix in (("sent", "bytes"), ("lists", "bytes_raw"))],
              "MB per search", "bytes per search: sent, and the same messages as plain lists (hatched)",
              os.path.join(args.out, "bytes.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
