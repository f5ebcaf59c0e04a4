"""The sbatch templates in slurm/ without a cluster: every file parses (`bash -n`), and the dry run
prints the srun lines each template would launch -- GPU counts, nodes, tasks per node, GPU binding,
grids and scales (paper 004, Table 1 for the weak-scaling sweep), dbfs options and output names, the
launch plugin -- or stops with one clear error for an impossible plan. Stand-ins for `srun` and
`scontrol` on PATH play the site (its MpiDefault and plugins) and run the real launch loop, to check
output files, failure accounting, CPU-only allocations, SIGTERM and DBFS_RESUME.
tests/test_slurm_jobs.py submits the templates to a real Slurm."""

from __future__ import annotations

import os
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.one_rank

SLURM = Path(__file__).resolve().parents[1] / "slurm"
TEMPLATES = ("run.sbatch", "weak_scaling.sbatch", "strong_scaling.sbatch")
# Paper 004, Table 1: GPUs -> (grid, scale) with scale 21 on one GPU; the grids transposed, as dbfs's
# default grid is the squarest with R >= C where the paper's has R <= C.
TABLE_1 = {1: ("1x1", 21), 2: ("2x1", 22), 4: ("2x2", 23), 8: ("4x2", 24), 16: ("4x4", 25),
           32: ("8x4", 26), 64: ("8x8", 27), 128: ("16x8", 28)}


# Stand-ins for the site's Slurm commands. scontrol reports MpiDefault=$SITE_MPI_DEFAULT, and fails
# when it is "unreachable"; srun --mpi=list lists $SITE_MPI_PLUGINS as Slurm 22.05 does. Any other srun
# prints its arguments and writes the --json file, except that nccl runs fail and bitmap runs behave
# like a scancel arriving mid-run (SIGTERM to the batch script, then the run ends with dbfs's line).
SCONTROL = """#!/usr/bin/env bash
[ "$SITE_MPI_DEFAULT" != unreachable ] || { echo "slurm_load_ctl_conf error" >&2; exit 1; }
echo "MpiDefault              = $SITE_MPI_DEFAULT"
"""
SRUN = """#!/usr/bin/env bash
if [ "$1" = --mpi=list ]; then
    echo "MPI plugin types are..."
    for p in $SITE_MPI_PLUGINS; do case $p in pmix_v*) ;; *) printf '\\t%s\\n' "$p" ;; esac; done
    versions=$(for p in $SITE_MPI_PLUGINS; do case $p in pmix_v*) echo "$p" ;; esac; done)
    [ -z "$versions" ] || echo "specific pmix plugin versions available: $(echo $versions | tr ' ' ,)"
    exit 0
fi
echo "args: $*"
case " $* " in *" nccl "*) echo "nccl unavailable" >&2; exit 3 ;; esac
case " $* " in *" bitmap "*) kill -TERM "$PPID"; echo "dbfs: interrupted by SIGTERM" >&2; exit 143 ;; esac
case " $* " in *" reference "*) echo "bfs  harmonic_mean_TEPS:     !  1" ;; *) echo "bfs_harmonic_mean_TEPS: 1" ;; esac
for a; do [ "$prev" = --json ] && echo "{}" >"$a"; prev=$a; done
"""


@pytest.fixture(scope="module", autouse=True)
def site(tmp_path_factory):
    """The stand-in srun and scontrol, first on every template's PATH."""
    global STAND_INS
    STAND_INS = tmp_path_factory.mktemp("bin")
    for name, text in (("srun", SRUN), ("scontrol", SCONTROL)):
        (STAND_INS / name).write_text(text)
        (STAND_INS / name).chmod((STAND_INS / name).stat().st_mode | stat.S_IEXEC)


def template(name: str, *args: str, **env: str):
    """Run slurm/NAME with a clean environment (no SLURM_*) plus env, on a site whose MpiDefault is
    pmi2 unless env says otherwise; return the CompletedProcess."""
    full = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "DBFS_"))}
    full.update({"DBFS_PYTHON": sys.executable, "SITE_MPI_DEFAULT": "pmi2",
                 "SITE_MPI_PLUGINS": "none cray_shasta pmi2 pmix pmix_v4", **env})
    full["PATH"] = f"{STAND_INS}{os.pathsep}{full['PATH']}"
    return subprocess.run(["bash", str(SLURM / name), *args], capture_output=True, text=True, env=full,
                          timeout=120)


def dry_run(name: str, *args: str, **env: str) -> list[list[str]]:
    """The commands a dry run prints, split into words."""
    result = template(name, *args, DBFS_DRY_RUN="1", **env)
    assert result.returncode == 0, result.stderr
    return [shlex.split(line) for line in result.stdout.splitlines()]


def options(words: list[str], start: int = 0) -> dict[str, str]:
    """--key=value and --key value pairs of words[start:] (flags without a value map to '')."""
    found, i = {}, start
    while i < len(words):
        if words[i].startswith("--"):
            key, eq, value = words[i].partition("=")
            if not eq and i + 1 < len(words) and not words[i + 1].startswith("--"):
                value, i = words[i + 1], i + 1
            found[key] = value
        i += 1
    return found


def split_launch(words: list[str]) -> tuple[dict, dict]:
    """(srun options, dbfs options) of one printed command."""
    assert words[0] == "srun"
    at = words.index("-m")
    assert words[at - 1] == sys.executable and words[at + 1] == "dbfs"
    return options(words[1:at - 1]), options(words, at + 2)


@pytest.mark.parametrize("name", [*TEMPLATES, "lib.sh"])
def test_template_parses(name):
    result = subprocess.run(["bash", "-n", str(SLURM / name)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_weak_scaling_follows_table_1():
    commands = dry_run("weak_scaling.sbatch", DBFS_BASE_SCALE="21", DBFS_NODES="32", DBFS_GPUS_PER_NODE="4",
                       DBFS_COMMS="nccl", DBFS_ENCODINGS="adaptive", DBFS_OUT="study")
    assert len(commands) == len(TABLE_1)
    for words, (gpus, (grid, scale)) in zip(commands, sorted(TABLE_1.items())):
        srun, dbfs = split_launch(words)
        nodes, per_node = max(1, gpus // 4), min(gpus, 4)
        assert srun == {"--nodes": str(nodes), "--ntasks": str(gpus), "--ntasks-per-node": str(per_node),
                        "--gpus-per-node": str(per_node), "--gpu-bind": "none", "--distribution": "block",
                        "--kill-on-bad-exit": "1"}
        name = f"weak_s{scale}_g{gpus}_{grid}_nccl_adaptive_auto"
        assert dbfs == {"--scale": str(scale), "--edgefactor": "16", "--grid": grid, "--roots": "64",
                        "--backend": "gpu", "--comm": "nccl", "--encoding": "adaptive", "--direction": "auto",
                        "--json": f"study/{name}.json"}
    assert not any("CUDA_VISIBLE_DEVICES" in w for words in commands for w in words)


def test_weak_scaling_defaults_cover_the_allocation_per_transport_and_encoding():
    commands = dry_run("weak_scaling.sbatch", DBFS_GPUS_PER_NODE="4")
    runs = [(int(split_launch(w)[0]["--ntasks"]), *(split_launch(w)[1][k]
             for k in ("--scale", "--comm", "--encoding", "--direction"))) for w in commands]
    assert runs == [(p, str(26 + d), comm, encoding, "auto") for d, p in enumerate((1, 2, 4))
                    for comm in ("mpi", "nccl") for encoding in ("adaptive", "list")]
    assert all(split_launch(w)[1]["--json"].startswith("dbfs-results/weak-dryrun/") for w in commands)


def test_strong_scaling_keeps_the_scale_and_packs_columns_on_request():
    result = template("strong_scaling.sbatch", "--dry-run", DBFS_SCALE="25", DBFS_NODES="2",
                      DBFS_GPUS_PER_NODE="8", DBFS_PACK="columns", DBFS_COMMS="mpi", DBFS_ENCODINGS="list",
                      DBFS_DIRECTIONS="topdown auto")
    assert result.returncode == 0, result.stderr
    plan = [split_launch(shlex.split(line)) for line in result.stdout.splitlines()]
    assert [(s["--ntasks"], s["--nodes"], d["--grid"], d["--direction"]) for s, d in plan] == [
        (str(p), str(max(1, p // 8)), grid, direction)
        for p, grid in ((1, "1x1"), (2, "2x1"), (4, "2x2"), (8, "4x2"), (16, "4x4"))
        for direction in ("topdown", "auto")]
    assert {d["--scale"] for _, d in plan} == {"25"}
    assert {s["--distribution"] for s, _ in plan} == {"cyclic"}
    assert "strong_s25_g16_4x4_mpi_list_topdown: 16 GPUs on 2 node(s), grid 4x4; grid columns (expand) " \
           "within a node" in result.stderr


def test_rows_packing_says_when_a_grid_row_leaves_the_node():
    result = template("strong_scaling.sbatch", DBFS_DRY_RUN="1", DBFS_NODES="4", DBFS_GPUS_PER_NODE="4",
                      DBFS_GPU_COUNTS="8 16", DBFS_COMMS="mpi", DBFS_ENCODINGS="list")
    assert result.returncode == 0, result.stderr
    assert "g8_4x2_mpi_list_auto: 8 GPUs on 2 node(s), grid 4x2; grid rows (fold) within a node" in result.stderr
    result = template("run.sbatch", DBFS_DRY_RUN="1", DBFS_NODES="4", DBFS_GPUS_PER_NODE="4", DBFS_GRID="2x8")
    assert result.returncode == 0, result.stderr
    assert "grid rows (fold) cross nodes: C=8 does not divide the 4 tasks per node" in result.stderr


def test_run_passes_every_option():
    [words] = dry_run("run.sbatch", DBFS_NODES="2", DBFS_GPUS_PER_NODE="4", DBFS_SCALE="27",
                      DBFS_GRID="4x2", DBFS_COMM="mpi-cuda", DBFS_ENCODING="bitmap", DBFS_DIRECTION="topdown",
                      DBFS_EDGEFACTOR="8", DBFS_ROOTS="16", DBFS_SRUN_ARGS="--mpi=pmix",
                      DBFS_EXTRA_ARGS="--log-levels", DBFS_CPUS_PER_TASK="6", DBFS_OUT="out dir")
    srun, dbfs = split_launch(words)
    assert srun["--ntasks"] == "8" and srun["--nodes"] == "2" and srun["--mpi"] == "pmix"
    assert srun["--cpus-per-task"] == "6"
    assert dbfs == {"--scale": "27", "--edgefactor": "8", "--grid": "4x2", "--roots": "16", "--backend": "gpu",
                    "--comm": "mpi-cuda", "--encoding": "bitmap", "--direction": "topdown",
                    "--json": "out dir/run_s27_g8_4x2_mpi-cuda_bitmap_topdown.json", "--log-levels": ""}


def test_one_root_replaces_the_sampled_ones_and_may_save_its_tree():
    [words] = dry_run("run.sbatch", DBFS_BACKEND="cpu", DBFS_SCALE="8", DBFS_ROOT="5",
                      DBFS_EXTRA_ARGS="--save-result tree.h5")
    dbfs = split_launch(words)[1]
    assert dbfs["--root"] == "5" and dbfs["--save-result"] == "tree.h5" and "--roots" not in dbfs


def test_cpu_backend_and_mpirun_launcher():
    [words] = dry_run("run.sbatch", DBFS_LAUNCHER="mpirun", DBFS_BACKEND="cpu", DBFS_TASKS_PER_NODE="2",
                      DBFS_MPIRUN_ARGS="--bind-to none", DBFS_SCALE="10")
    assert words[:5] == ["mpirun", "-n", "2", "--bind-to", "none"]
    assert options(words, words.index("dbfs") + 1)["--backend"] == "cpu"
    [words] = dry_run("run.sbatch", DBFS_BACKEND="cpu", DBFS_TASKS_PER_NODE="2")
    assert "--gpus-per-node" not in options(words)


@pytest.mark.parametrize("dry, folder", [("0", r"dbfs-results/run-\d{8}-\d{6}"), ("1", "dbfs-results/run-dryrun")])
def test_outside_slurm_each_run_has_its_own_folder(dry, folder):
    """DBFS_LAUNCHER=mpirun without a Slurm job: the default folder is named by the start time."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "DBFS_"))}
    env.update(DBFS_PYTHON=sys.executable, DBFS_LAUNCHER="mpirun", DBFS_BACKEND="cpu", DBFS_DRY_RUN=dry)
    result = subprocess.run(["bash", "-c", f'source "{SLURM / "lib.sh"}"; dbfs_setup run; echo "$OUT_DIR"'],
                            capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0 and re.fullmatch(folder, result.stdout.strip()), result.stderr


def test_cpu_only_plan_counts_ranks_and_uses_mpi():
    result = template("weak_scaling.sbatch", DBFS_DRY_RUN="1", DBFS_GPUS_PER_NODE="0", DBFS_TASKS_PER_NODE="2",
                      DBFS_ENCODINGS="list")
    assert result.returncode == 0, result.stderr
    plan = [split_launch(shlex.split(line)) for line in result.stdout.splitlines()]
    assert [(s["--ntasks"], d["--backend"], d["--comm"], d["--json"].split("/")[-1]) for s, d in plan] == [
        ("1", "cpu", "mpi", "weak_s26_r1_1x1_mpi_list_auto.json"),
        ("2", "cpu", "mpi", "weak_s27_r2_2x1_mpi_list_auto.json")]
    assert not any("--gpus-per-node" in s or "--gpu-bind" in s for s, _ in plan)
    assert "no GPUs in the allocation" in result.stderr and "1 node(s) x 2 ranks" in result.stderr
    assert "weak_s27_r2_2x1_mpi_list_auto: 2 ranks on 1 node(s)" in result.stderr
    result = template("run.sbatch", DBFS_DRY_RUN="1", DBFS_GPUS_PER_NODE="0", DBFS_BACKEND="gpu")
    assert result.returncode == 2 and result.stderr.strip().endswith(
        "DBFS_BACKEND=gpu, but the allocation has no GPUs: submit with --gpus-per-node=G (or --gres=gpu:G), "
        "or set DBFS_BACKEND=cpu")


def mpi_library() -> str:
    """The MPI library's version text, read as the templates read it."""
    return subprocess.run([sys.executable, "-c", "import mpi4py; mpi4py.rc.initialize = False\n"
                           "from mpi4py import MPI; print(MPI.Get_library_version())"],
                          capture_output=True, text=True, check=True).stdout


def test_dry_run_passes_the_launch_plugin_the_mpi_needs():
    library = mpi_library()
    first = library.splitlines()[0]
    wanted = "pmi2" if first.startswith("MPICH") else "pmix" if first.startswith("Open MPI") else None
    if wanted is None or "pmix" in library.partition("configure:")[2].partition("\n")[0]:
        pytest.skip(f"this test knows the plugins of the MPICH wheel and Open MPI, not {first}")
    result = template("run.sbatch", DBFS_DRY_RUN="1", SITE_MPI_DEFAULT="none")
    assert result.returncode == 0, result.stderr
    [words] = [shlex.split(line) for line in result.stdout.splitlines()]
    assert split_launch(words)[0]["--mpi"] == wanted
    assert f"# launch plugin: --mpi={wanted}: " in result.stderr
    assert ("the site default (none) gives it no process manager, so every task would start as a world of one "
            "rank") in result.stderr
    # A site default that starts the library, a site's SLURM_MPI_TYPE, an --mpi in DBFS_SRUN_ARGS, or no
    # controller to ask: no --mpi added, and the note says why.
    for env, note in (({"SITE_MPI_DEFAULT": wanted}, f"the site default: {first.split()[0]}"),
                      ({"SITE_MPI_DEFAULT": "none", "SLURM_MPI_TYPE": "pmix"}, "--mpi=pmix from SLURM_MPI_TYPE"),
                      ({"SITE_MPI_DEFAULT": "none", "DBFS_SRUN_ARGS": "--mpi=cray_shasta"},
                       "--mpi=cray_shasta from DBFS_SRUN_ARGS"),
                      ({"SITE_MPI_DEFAULT": "unreachable"}, "not chosen: no Slurm controller answers here")):
        result = template("run.sbatch", DBFS_DRY_RUN="1", **env)
        assert result.returncode == 0, result.stderr
        [words] = [shlex.split(line) for line in result.stdout.splitlines()]
        assert sum(w.startswith("--mpi") for w in words) == ("DBFS_SRUN_ARGS" in env)
        assert f"# launch plugin: {note}" in result.stderr, result.stderr


@pytest.mark.parametrize("library, default, plugins, chosen, why", [
    ("MPICH Version:      5.0.2\nMPICH configure:    --with-pm=hydra:gforker", "none",
     "none cray_shasta pmi2 pmix pmix_v4", "pmi2", "MPICH Version: 5.0.2 speaks pmi2; the site default (none) gives it no process manager"),
    ("MPICH Version:      4.2.0\nMPICH configure:    --with-pmix=/opt/pmix", "pmi2", "none pmi2 pmix_v4",
     "pmix_v4", "speaks pmix_v4, not the site default (pmi2)"),
    ("MVAPICH2 Version     :\t2.3.7", "pmi2", "none pmi2", "", "speaks pmi2, the site default"),
    ("Intel(R) MPI Library 2021.10 for Linux* OS", "pmix", "none pmi2 pmix", "pmi2", "speaks pmi2, not the site default (pmix)"),
    ("Open MPI v5.0.3, package: Open MPI", "none", "none pmi2 pmix pmix_v5", "pmix", "speaks pmix"),
    ("Open MPI v4.1.5, package: Open MPI", "none", "none pmi2 pmix_v3 pmix_v4", "pmix_v4", "speaks pmix_v4"),
    ("Open MPI v4.1.5, package: Open MPI", "pmix_v4", "none pmix_v4", "", "speaks pmix_v4, the site default"),
    ("Open MPI v5.0.3, package: Open MPI", "none", "none pmi2", "",
     "needs pmix, which srun --mpi=list lacks (none pmi2): srun keeps its default (none)"),
    ("MPI VERSION    : CRAY MPICH version 8.1.27 (ANL base 3.4a2)", "none", "none cray_shasta pmi2",
     "cray_shasta", "speaks cray_shasta"),
    ("MPI VERSION    : CRAY MPICH version 8.1.27 (ANL base 3.4a2)", "none", "none pmi2", "pmi2", "speaks pmi2"),
    ("Some MPI 1.0", "none", "none pmi2", "", "Some MPI 1.0 is not a library the templates know"),
], ids=["mpich-wheel", "mpich-pmix", "mvapich", "intel", "openmpi5", "openmpi4", "openmpi-site-pmix",
        "openmpi-no-pmix", "cray", "cray-pmi2", "unknown"])
def test_launch_plugin_table(library, default, plugins, chosen, why):
    result = subprocess.run(["bash", "-c", 'source "$1"; dbfs_mpi_plugin "$2" "$3" "$4"', "-",
                             str(SLURM / "lib.sh"), library, default, plugins], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    plugin, reason = result.stdout.rstrip("\n").split("\t")
    assert plugin == chosen and why in reason, result.stdout


@pytest.mark.parametrize("name, env, message", [
    ("weak_scaling.sbatch", {"DBFS_GPU_COUNTS": "1 3"}, "3 is not a power of two"),
    ("strong_scaling.sbatch", {"DBFS_GPU_COUNTS": "16"}, "16 GPUs need 4 nodes of 4 GPUs, the allocation has 1"),
    ("strong_scaling.sbatch", {"DBFS_GPU_COUNTS": "6", "DBFS_NODES": "2"}, "6 GPUs do not fill whole nodes"),
    ("run.sbatch", {"DBFS_GRID": "3x3"}, "grid 3x3 needs 9 GPUs, the run has 4"),
    ("run.sbatch", {"DBFS_GRID": "2by2"}, "grid must look like RxC"),
    ("run.sbatch", {"DBFS_PACK": "diagonal"}, "DBFS_PACK must be rows or columns"),
    ("run.sbatch", {"DBFS_ROOTS": "0"}, "DBFS_ROOTS must be an integer >= 1"),
    ("run.sbatch", {"DBFS_ROOT": "5", "DBFS_ROOTS": "4"}, "DBFS_ROOT and DBFS_ROOTS are both set"),
    ("run.sbatch", {"DBFS_ROOT": "-1"}, "DBFS_ROOT must be a vertex id (an integer >= 0), got '-1'"),
    ("run.sbatch", {"DBFS_EXTRA_ARGS": "--root 3"}, "DBFS_EXTRA_ARGS sets --root, which the template sets: use DBFS_ROOT"),
    ("weak_scaling.sbatch", {"DBFS_ROOT": "3", "DBFS_EXTRA_ARGS": "--save-result t.h5"},
     "DBFS_EXTRA_ARGS sets --save-result: every run of a sweep would write that one file"),
    ("run.sbatch", {"DBFS_PYTHON": "/nonexistent/python"}, "cannot import dbfs"),
    ("run.sbatch", {"DBFS_DRY_RUN": "0"}, "not inside a Slurm allocation"),
    ("run.sbatch", {"DBFS_LAUNCHER": "mpirun", "DBFS_NODES": "2"}, "DBFS_LAUNCHER=mpirun runs on one node"),
    ("run.sbatch", {"DBFS_EXTRA_ARGS": "--log-levels --json x.json"}, "DBFS_EXTRA_ARGS sets --json"),
    ("run.sbatch", {"DBFS_EXTRA_ARGS": "--help"}, "DBFS_EXTRA_ARGS sets --help, which prints and exits"),
    ("strong_scaling.sbatch", {"DBFS_EXTRA_ARGS": "--version"}, "DBFS_EXTRA_ARGS sets --version, which prints"),
    ("run.sbatch", {"DBFS_EXTRA_ARGS": "--partition-cache '/tmp/a b'"}, "no quoted values ('/tmp/a)"),
    ("run.sbatch", {"DBFS_PYTHON": "python -u"}, "it must name the interpreter alone"),
    ("run.sbatch", {"DBFS_LAUNCHER": "mpirun", "SLURM_NTASKS": "2", "DBFS_GPUS": "4"},
     "mpirun inside a Slurm allocation of SLURM_NTASKS=2 tasks cannot run 4 ranks"),
    ("run.sbatch", {"DBFS_DRY_RUN": "2"}, "DBFS_DRY_RUN must be 0 or 1, got '2'"),
    ("run.sbatch", {"DBFS_RESUME": "maybe"}, "DBFS_RESUME must be 0 or 1, got 'maybe'"),
    ("run.sbatch", {"DBFS_EXTRA_ARGS": "--log-levels --scale 5"},
     "DBFS_EXTRA_ARGS sets --scale, which the template sets: use DBFS_SCALE"),
    ("run.sbatch", {"DBFS_EXTRA_ARGS": "--grid=2x2"},
     "DBFS_EXTRA_ARGS sets --grid, which the template sets: use DBFS_GRID"),
    ("weak_scaling.sbatch", {"DBFS_EXTRA_ARGS": "--scale 20"}, "--scale, which the template sets: use DBFS_BASE_SCALE"),
    ("strong_scaling.sbatch", {"DBFS_EXTRA_ARGS": "--comm mpi"}, "--comm, which the template sets: use DBFS_COMMS"),
    ("strong_scaling.sbatch", {"DBFS_EXTRA_ARGS": "--grid 4x1"},
     "--grid, which the template sets: the sweeps run the squarest grid of each GPU count"),
])
def test_impossible_plans_stop_with_one_error(name, env, message):
    result = template(name, **{"DBFS_DRY_RUN": "1", **env})
    assert result.returncode == 2 and result.stdout == ""
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and message in errors[0], result.stderr


@pytest.mark.parametrize("name, env", [("run.sbatch", {"DBFS_GRID": "2x2"}),
                                       ("weak_scaling.sbatch", {}), ("strong_scaling.sbatch", {})])
def test_extra_args_may_not_set_an_option_the_template_sets(name, env):
    """argparse keeps an option's last value, so one given again in DBFS_EXTRA_ARGS would change a run
    whose name the template's value makes: each option of a planned command line is refused there."""
    [words, *_] = dry_run(name, **env)
    set_by_template = [option for option in split_launch(words)[1] if option != "--json"]
    assert len(set_by_template) == 8, set_by_template
    for option in set_by_template:
        result = template(name, DBFS_DRY_RUN="1", DBFS_EXTRA_ARGS=f"--log-levels {option}=1", **env)
        assert result.returncode == 2 and result.stdout == ""
        assert result.stderr.startswith(f"dbfs-slurm: error: DBFS_EXTRA_ARGS sets {option}, which the template "
                                        "sets: "), result.stderr


# Command lines dbfs refuses at once, by checks that need no MPI, GPU or graph file: --alpha and
# --row-copy without --direction auto, a device transport on the CPU backend, --save-result without
# --root, a grid whose local ids pass 32 bits (of the run's own rank count: 1, and 4 on dbfs's default 2x2).
DBFS_REFUSES = [
    ("strong_scaling.sbatch", {"DBFS_BACKEND": "cpu", "DBFS_SCALE": "8", "DBFS_GPU_COUNTS": "2",
                               "DBFS_DIRECTIONS": "topdown", "DBFS_EXTRA_ARGS": "--alpha 3"},
     "--alpha applies to --direction auto"),
    ("strong_scaling.sbatch", {"DBFS_DIRECTIONS": "topdown", "DBFS_EXTRA_ARGS": "--row-copy on"},
     "--row-copy applies to --direction auto"),
    ("run.sbatch", {"DBFS_BACKEND": "cpu", "DBFS_COMM": "nccl", "DBFS_SCALE": "8"},
     "--comm nccl moves device buffers, but this run uses the CPU backend"),
    ("run.sbatch", {"DBFS_BACKEND": "cpu", "DBFS_SCALE": "8", "DBFS_EXTRA_ARGS": "--save-result x.h5"},
     "--save-result needs a single --root V"),
    ("run.sbatch", {"DBFS_BACKEND": "cpu", "DBFS_SCALE": "35", "DBFS_GPUS": "1"},
     "34359738368 vertices on a 1x1 grid give local index ranges over 2^31"),
    ("run.sbatch", {"DBFS_SCALE": "35"}, "34359738368 vertices on a 2x2 grid give local index ranges over 2^31"),
]


@pytest.mark.parametrize("name, env, message", DBFS_REFUSES)
def test_command_lines_dbfs_refuses_stop_the_job_before_any_launch(tmp_path, name, env, message):
    result = template(name, DBFS_DRY_RUN="1", **env)
    assert result.returncode == 2 and result.stdout == ""
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and errors[0].startswith(f"dbfs-slurm: error: {message}"), result.stderr
    assert errors[0].endswith(" (in the dbfs command line the DBFS_* variables make)")
    out = tmp_path / "out"
    result = template(name, SLURM_JOB_ID="3", SLURM_JOB_NUM_NODES="1", SLURM_GPUS_ON_NODE="4",
                      SLURM_NTASKS_PER_NODE="4", DBFS_OUT=str(out), **env)
    assert result.returncode == 2 and f"dbfs-slurm: error: {message}" in result.stderr, result.stderr
    assert not out.exists()                     # the launch loop, which makes it, never started


def test_run_leaves_the_grid_to_dbfs_unless_given():
    """Without DBFS_GRID dbfs chooses (one column on one node with a GPU per rank where it fits)."""
    [words] = dry_run("run.sbatch", DBFS_NODES="1", DBFS_GPUS_PER_NODE="4")
    srun, dbfs = split_launch(words)
    assert "--grid" not in dbfs and dbfs["--json"].endswith("/run_s26_g4_default_auto_adaptive_auto.json")


def test_unknown_argument_is_refused():
    result = template("run.sbatch", "--dryrun")
    assert result.returncode == 2 and "unknown argument '--dryrun'" in result.stderr


def test_launch_loop_writes_outputs_counts_failures_and_resumes(tmp_path):
    out = tmp_path / "out"
    env = dict(SLURM_JOB_ID="7", SLURM_JOB_NUM_NODES="1", SLURM_GPUS_ON_NODE="2", DBFS_OUT=str(out),
               DBFS_ENCODINGS="list")
    result = template("weak_scaling.sbatch", **env)
    assert result.returncode == 1
    assert result.stderr.count("FAILED: ") == 2 and "nccl unavailable" in result.stderr
    assert "ran 4 of 4 runs, 2 failed" in result.stderr
    names = [f"weak_s{26 + d}_g{p}_{grid}_{comm}_list_auto" for d, (p, grid) in enumerate(((1, "1x1"), (2, "2x1")))
             for comm in ("mpi", "nccl")]
    for name in names:
        text = (out / f"{name}.txt").read_text()
        assert text.startswith("args: --nodes=1") and f"--json {out}/{name}.json" in text
        # SLURM_GPUS_ON_NODE without SLURM_GPUS_PER_NODE: a job given its GPUs with --gres=gpu:2.
        assert f"--gres=gpu:{name.split('_g')[1][0]} --gpu-bind=none" in text and "--gpus-per-node" not in text
    assert len((out / "commands.txt").read_text().splitlines()) == 4
    assert "SLURM_JOB_ID=7" in (out / "env.txt").read_text()
    assert sorted(p.name for p in out.glob("*.json")) == sorted(f"{n}.json" for n in names if "mpi" in n)
    # A resubmitted sweep with DBFS_RESUME=1 runs again only what left no JSON.
    result = template("weak_scaling.sbatch", DBFS_RESUME="1", **env)
    assert result.returncode == 1 and "ran 2 of 4 runs, 2 failed" in result.stderr
    assert result.stderr.count("exists, skipped (DBFS_RESUME=1)") == 2


def test_each_run_s_teps_line_is_shown_in_either_report(tmp_path):
    for report in ("spec", "reference"):
        result = template("run.sbatch", SLURM_JOB_ID="5", SLURM_JOB_NUM_NODES="1", SLURM_GPUS_ON_NODE="1",
                          DBFS_OUT=str(tmp_path / report), DBFS_EXTRA_ARGS=f"--report {report}")
        assert result.returncode == 0, result.stderr
        line = "bfs_harmonic_mean_TEPS: 1" if report == "spec" else "bfs  harmonic_mean_TEPS:     !  1"
        assert line in result.stderr.splitlines(), result.stderr


def test_cpu_only_allocation_runs_one_rank_per_task(tmp_path):
    """sbatch --ntasks-per-node=2 --gpus-per-node=0, with no DBFS_* variable but the output folder."""
    out = tmp_path / "out"
    result = template("strong_scaling.sbatch", SLURM_JOB_ID="8", SLURM_JOB_NUM_NODES="1", SLURM_GPUS_PER_NODE="0",
                      SLURM_NTASKS_PER_NODE="2", SLURM_TASKS_PER_NODE="2", DBFS_OUT=str(out),
                      SITE_MPI_DEFAULT="none")
    assert result.returncode == 0, result.stderr
    assert "ran 4 of 4 runs, 0 failed" in result.stderr
    runs = sorted(p.name for p in out.glob("*.json"))
    assert runs == [f"strong_s26_r{p}_{p}x1_mpi_{e}_auto.json" for p in (1, 2) for e in ("adaptive", "list")]
    text = (out / "strong_s26_r2_2x1_mpi_list_auto.txt").read_text()
    assert "--ntasks=2 --ntasks-per-node=2 --distribution=block" in text and "--backend cpu" in text
    assert "--gpus-per-node" not in text


def test_sigterm_stops_the_sweep_after_the_run_in_progress(tmp_path):
    """The stand-in sends the batch script SIGTERM during the bitmap run, as scancel does."""
    out = tmp_path / "out"
    result = template("weak_scaling.sbatch", SLURM_JOB_ID="9", SLURM_JOB_NUM_NODES="1", SLURM_GPUS_ON_NODE="1",
                      DBFS_OUT=str(out), DBFS_COMMS="mpi", DBFS_ENCODINGS="adaptive bitmap list")
    assert result.returncode == 143
    assert "FAILED: weak_s26_g1_1x1_mpi_bitmap_auto (exit 143)" in result.stderr
    assert "dbfs: interrupted by SIGTERM" in result.stderr
    assert result.stderr.rstrip().endswith("weak: SIGTERM during weak_s26_g1_1x1_mpi_bitmap_auto: stopped after "
                                           f"2 of 3 runs; resubmit with DBFS_RESUME=1 DBFS_OUT={out} to skip the "
                                           "runs that wrote their JSON (a new job's default folder is another)")
    assert [p.name for p in out.glob("*.json")] == ["weak_s26_g1_1x1_mpi_adaptive_auto.json"]
    assert not (out / "weak_s26_g1_1x1_mpi_list_auto.txt").exists()
