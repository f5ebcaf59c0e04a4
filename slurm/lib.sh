# shellcheck shell=bash
# Shared logic of the dbfs sbatch templates (sourced by run.sbatch, weak_scaling.sbatch and
# strong_scaling.sbatch, never run by itself): read the allocation's shape, plan one launch per run,
# then launch the runs one after another -- or, in a dry run, print the exact command lines.
#
# Common variables (default; an empty variable is an unset one):
#   DBFS_DRY_RUN=0          1 (or the argument --dry-run): print the commands, run nothing; works
#                           without Slurm, taking the allocation's shape from DBFS_NODES and
#                           DBFS_GPUS_PER_NODE
#   DBFS_NODES              nodes of the allocation (SLURM_JOB_NUM_NODES, else 1)
#   DBFS_GPUS_PER_NODE      GPUs per node (SLURM_GPUS_PER_NODE, else SLURM_GPUS_ON_NODE; with
#                           DBFS_LAUNCHER=mpirun, else nvidia-smi's count; dry run: else 4); none or
#                           0: a CPU-only allocation (below)
#   DBFS_TASKS_PER_NODE     ranks per node of a CPU-only run (SLURM_NTASKS_PER_NODE, else the first
#                           count of SLURM_TASKS_PER_NODE; with DBFS_LAUNCHER=mpirun, else nproc; dry
#                           run: else 4)
#   DBFS_OUT                output folder (dbfs-results/<study>-<SLURM_JOB_ID>; outside Slurm
#                           <study>-<start time YYYYmmdd-HHMMSS>, or <study>-dryrun for a dry run)
#   DBFS_PYTHON=python      the interpreter that has dbfs installed
#   DBFS_EDGEFACTOR=16
#   DBFS_ROOTS=64           Graph500 roots per run
#   DBFS_ROOT=              one root vertex (an id of the graph) searched instead of DBFS_ROOTS sampled
#                           ones; run.sbatch may then save its tree (DBFS_EXTRA_ARGS="--save-result F")
#   DBFS_BACKEND=gpu        --backend; cpu: the NumPy backend, one rank per task (below)
#   DBFS_PACK=rows          rows: grid rows stay within a node; columns: grid columns do (see below)
#   DBFS_LAUNCHER=srun      srun, or mpirun for one node without Slurm (e.g. a lone GPU server)
#   DBFS_SRUN_ARGS=         extra srun options; an --mpi=... here replaces the chosen launch plugin
#   DBFS_MPIRUN_ARGS=       extra mpirun options (DBFS_LAUNCHER=mpirun)
#   DBFS_CPUS_PER_TASK      srun --cpus-per-task (SLURM_CPUS_PER_TASK; empty: not passed)
#   DBFS_EXTRA_ARGS=        extra options of python -m dbfs, e.g. "--log-levels"; not --json, nor an
#                           option the template sets (--scale, --grid, --comm, ...: its DBFS_* variable)
#   DBFS_RESUME=0           1: skip runs whose JSON already exists in DBFS_OUT (a resubmitted sweep:
#                           set DBFS_OUT to the first job's folder, as a new job ID names a new one)
#
# Outputs: $DBFS_OUT/<name>.json (the --json document), <name>.txt (stdout: the Graph500 block),
# <name>.log (stderr: progress), commands.txt (every command launched), env.txt (DBFS_* and SLURM_*).
# <name> = <study>_s<scale>_g<GPUs>_<R>x<C>_<comm>_<encoding>_<direction> (<R>x<C>: "default" where
# dbfs chooses the grid), with r<ranks> for g<GPUs>
# in a CPU-only run.
#
# CPU-only allocations. With DBFS_BACKEND=cpu, or when the allocation has no GPUs (submitted without
# --gpus-per-node or --gres=gpu, or with --gpus-per-node=0: DBFS_BACKEND then defaults to cpu), every
# task is one rank on the NumPy backend: GPU counts (DBFS_GPUS, DBFS_GPU_COUNTS) count ranks, whole
# nodes hold DBFS_TASKS_PER_NODE ranks, srun gets no GPU options and the sweeps' transports default
# to mpi (nccl needs GPUs).
#
# Launch plugin. srun starts MPI through a plugin (srun --mpi=...); a site's default (MpiDefault in
# slurm.conf, Slurm's own default is none) may give the installed MPI no process-management
# interface, and every task then starts as a world of one rank. Unless DBFS_SRUN_ARGS holds --mpi=...
# or SLURM_MPI_TYPE is set (both left alone), the templates read the MPI library from mpi4py (as
# `python -m dbfs info` reports it), the default from `scontrol show config` and the plugins from
# `srun --mpi=list`, and pass the plugin the library speaks when the default is another: pmi2 for
# MPICH, MVAPICH and Intel MPI (pmix for an MPICH configured with PMIx), pmix for Open MPI,
# cray_shasta (else pmi2) for Cray MPICH. They say on stderr which and why, dry runs included. They
# choose once the first run's dbfs command line has passed its checks, so a wrong DBFS_* value is
# refused at once (scontrol waits ~9 s for a controller that does not answer).
#
# GPU binding. One task per GPU. Each step asks for --gpus-per-node=<tasks on the node> (--gres=gpu:
# <tasks on the node> in a job that got its GPUs with --gres=gpu:G) with --gpu-bind=none, so every
# task of a node sees the same GPUs and dbfs picks GPU local_rank % GPUs itself. Binding one GPU per
# task (--gpus-per-task, or CUDA_VISIBLE_DEVICES per task) would hide the node's other GPUs from each
# process, and with them CUDA peer access and NCCL's direct NVLink path.
#
# Packing. Rank (i, j) of the R x C grid is MPI rank i*C + j (dbfs/grid.py), so a grid row is C
# consecutive ranks and a grid column is R ranks C apart. The fold exchange runs within grid rows,
# the expand exchange within grid columns (paper 004, section 2.2). dbfs's default grid is the
# squarest with R >= C (dbfs/grid.py says why): each rank folds to C - 1 peers and expands to R - 1,
# and a bottom-up level's C rotation sub-steps, one exchange each, run along the grid row. Hence the
# default DBFS_PACK=rows: Slurm's block distribution fills a node with consecutive ranks, which keeps
# every grid row inside one node whenever C divides the tasks per node, so the fold and the rotation
# stay on the node's links (NVLink) and the expand, once a level, crosses nodes. DBFS_PACK=columns uses the cyclic
# distribution (rank r on node r mod nodes), which keeps every grid column inside one node whenever
# the node count divides C -- for when the expand exchange is the heavier one. Runs fill whole
# nodes: a run of P GPUs takes one node when P <= GPUs per node, else P / (GPUs per node) full
# nodes. The dry run says, per run, which grid lines stay within a node.

dbfs_fail() {
    echo "dbfs-slurm: error: $*" >&2
    exit 2
}

dbfs_note() {
    echo "# $*" >&2
}

dbfs_positive() {  # dbfs_positive NAME VALUE: fail unless VALUE is an integer >= 1
    [[ $2 =~ ^[0-9]+$ ]] && [ "$2" -ge 1 ] || dbfs_fail "$1 must be an integer >= 1, got '$2'"
}

dbfs_switch() {  # dbfs_switch NAME VALUE: fail unless VALUE is 0 or 1
    case $2 in 0 | 1) ;; *) dbfs_fail "$1 must be 0 or 1, got '$2'" ;; esac
}

# dbfs_setup STUDY "$@": the dry-run switch, the common variables and the allocation's shape.
dbfs_setup() {
    STUDY=$1
    shift
    DRY=${DBFS_DRY_RUN:-0}
    dbfs_switch DBFS_DRY_RUN "$DRY"
    local arg
    for arg in "$@"; do
        case $arg in
        --dry-run) DRY=1 ;;
        *) dbfs_fail "unknown argument '$arg' (the one argument is --dry-run; the rest are DBFS_* variables)" ;;
        esac
    done
    PY=${DBFS_PYTHON:-python}
    EDGEFACTOR=${DBFS_EDGEFACTOR:-16}
    ROOTS=${DBFS_ROOTS:-64}
    ROOT=${DBFS_ROOT:-}
    BACKEND=${DBFS_BACKEND:-gpu}
    PACK=${DBFS_PACK:-rows}
    LAUNCHER=${DBFS_LAUNCHER:-srun}
    RESUME=${DBFS_RESUME:-0}
    dbfs_switch DBFS_RESUME "$RESUME"
    CPUS=${DBFS_CPUS_PER_TASK:-${SLURM_CPUS_PER_TASK:-}}
    read -r -a SRUN_EXTRA <<<"${DBFS_SRUN_ARGS:-}"
    read -r -a MPIRUN_EXTRA <<<"${DBFS_MPIRUN_ARGS:-}"
    read -r -a DBFS_EXTRA <<<"${DBFS_EXTRA_ARGS:-}"
    # The options every run's command line sets (dbfs_add_run), and how to set each: given again in
    # DBFS_EXTRA_ARGS, the last would win (argparse) and the run's name would not say so.
    local -A instead=([--scale]="use DBFS_SCALE" [--edgefactor]="use DBFS_EDGEFACTOR" [--roots]="use DBFS_ROOTS"
        [--root]="use DBFS_ROOT"
        [--backend]="use DBFS_BACKEND" [--grid]="use DBFS_GRID" [--comm]="use DBFS_COMM"
        [--encoding]="use DBFS_ENCODING" [--direction]="use DBFS_DIRECTION")
    if [ "$STUDY" != run ]; then
        instead+=([--comm]="use DBFS_COMMS" [--encoding]="use DBFS_ENCODINGS" [--direction]="use DBFS_DIRECTIONS"
            [--grid]="the sweeps run the squarest grid of each GPU count (run.sbatch takes DBFS_GRID)")
        [ "$STUDY" != weak ] || instead[--scale]="use DBFS_BASE_SCALE"
    fi
    local word option
    for word in "${DBFS_EXTRA[@]}"; do
        case $word in --json | --json=*) dbfs_fail "DBFS_EXTRA_ARGS sets --json: each run's JSON is named by" \
            "the template (DBFS_OUT/<name>.json), which resuming and collecting read" ;; esac
        case $word in -h | --help | --version) dbfs_fail "DBFS_EXTRA_ARGS sets $word, which prints and exits:" \
            "no run would search (python -m dbfs $word shows it)" ;; esac
        option=${word%%=*}
        [ -z "${instead[$option]:-}" ] ||
            dbfs_fail "DBFS_EXTRA_ARGS sets $option, which the template sets: ${instead[$option]}"
        case $word in *\'* | *\"*) dbfs_fail "DBFS_EXTRA_ARGS splits at spaces and keeps quotes as they are:" \
            "no quoted values ($word)" ;; esac
        [ "$option" != --save-result ] || [ "$STUDY" = run ] || dbfs_fail "DBFS_EXTRA_ARGS sets --save-result:" \
            "every run of a sweep would write that one file; run.sbatch saves a run's tree"
    done
    # outside Slurm (DBFS_LAUNCHER=mpirun) a run's folder is named by its start time, so reruns keep apart
    local stamp=dryrun
    [ "$DRY" = 1 ] || stamp=$(date +%Y%m%d-%H%M%S)
    OUT_DIR=${DBFS_OUT:-dbfs-results/$STUDY-${SLURM_JOB_ID:-$stamp}}
    case $PACK in rows) DISTRIBUTION=block ;; columns) DISTRIBUTION=cyclic ;;
    *) dbfs_fail "DBFS_PACK must be rows or columns, got '$PACK'" ;; esac
    case $BACKEND in gpu | cpu | auto) ;;
    *) dbfs_fail "DBFS_BACKEND must be gpu, cpu or auto, got '$BACKEND'" ;; esac
    case $LAUNCHER in srun | mpirun) ;;
    *) dbfs_fail "DBFS_LAUNCHER must be srun or mpirun, got '$LAUNCHER'" ;; esac
    if [ "$DRY" != 1 ]; then
        if [ "$LAUNCHER" = srun ] && [ -z "${SLURM_JOB_ID:-}" ]; then
            dbfs_fail "not inside a Slurm allocation (no SLURM_JOB_ID): submit with sbatch," \
                "or print the commands with DBFS_DRY_RUN=1"
        fi
        command -v "$LAUNCHER" >/dev/null || dbfs_fail "$LAUNCHER not found"
    fi
    NODES=${DBFS_NODES:-${SLURM_JOB_NUM_NODES:-1}}
    dbfs_positive DBFS_NODES "$NODES"
    dbfs_positive DBFS_EDGEFACTOR "$EDGEFACTOR"
    dbfs_positive DBFS_ROOTS "$ROOTS"
    if [ -n "$ROOT" ]; then
        [ -z "${DBFS_ROOTS:-}" ] || dbfs_fail "DBFS_ROOT and DBFS_ROOTS are both set: one root, or that many sampled"
        [[ $ROOT =~ ^[0-9]+$ ]] || dbfs_fail "DBFS_ROOT must be a vertex id (an integer >= 0), got '$ROOT'"
    fi
    [ -z "$CPUS" ] || dbfs_positive DBFS_CPUS_PER_TASK "$CPUS"
    if [ "$LAUNCHER" = mpirun ] && [ "$NODES" -ne 1 ]; then
        dbfs_fail "DBFS_LAUNCHER=mpirun runs on one node; use srun for $NODES nodes"
    fi
    dbfs_slots
    if ! command -v "$PY" >/dev/null; then
        case $PY in *" "*) dbfs_fail "DBFS_PYTHON='$PY' is no command: it must name the interpreter alone" \
            "(no options; settings such as PYTHONUNBUFFERED=1 go in the job's environment)" ;; esac
    fi
    "$PY" -c "import dbfs.grid" 2>/dev/null ||
        dbfs_fail "'$PY' cannot import dbfs: activate the environment that has dbfs or set DBFS_PYTHON"
    PLUGIN_CHOSEN=0
    PLAN=()
    NAMES=()
    declare -gA GRID_CACHE=()
    dbfs_note "$STUDY: $NODES node(s) x $GPN $UNIT, pack $PACK, outputs in $OUT_DIR"
}

# dbfs_slots: GPN (ranks per node: its GPUs, or its tasks in a CPU-only run), UNIT (GPUs or ranks),
# TAG (g or r, of run names) and COMMS_DEFAULT (the sweeps' transports); BACKEND becomes cpu when
# the allocation has no GPUs and DBFS_BACKEND is unset or auto.
dbfs_slots() {
    GPN=
    if [ "$BACKEND" != cpu ]; then
        GPN=${DBFS_GPUS_PER_NODE:-${SLURM_GPUS_PER_NODE:-${SLURM_GPUS_ON_NODE:-}}}
        GPN=${GPN##*:}  # Slurm writes typed requests as "h100:4"
        if [ -z "$GPN" ] && [ "$LAUNCHER" = mpirun ] && command -v nvidia-smi >/dev/null; then
            GPN=$(nvidia-smi -L | grep -c '^GPU')
        fi
        [ -n "$GPN" ] || [ "$DRY" != 1 ] || GPN=4
        [ -z "$GPN" ] || [[ $GPN =~ ^[0-9]+$ ]] ||
            dbfs_fail "DBFS_GPUS_PER_NODE must be an integer >= 0, got '$GPN'"
    fi
    if [ "$BACKEND" != cpu ] && [ "${GPN:-0}" -gt 0 ]; then
        UNIT=GPUs TAG=g COMMS_DEFAULT="mpi nccl" GPU_OPTION=--gpus-per-node=
        # A job given its GPUs with --gres=gpu:G has SLURM_GPUS_ON_NODE only; its steps ask the same way.
        [ -n "${DBFS_GPUS_PER_NODE:-${SLURM_GPUS_PER_NODE:-}}" ] || [ -z "${SLURM_GPUS_ON_NODE:-}" ] ||
            GPU_OPTION=--gres=gpu:
        return
    fi
    if [ "$BACKEND" != cpu ]; then
        [ "${DBFS_BACKEND:-}" != gpu ] || dbfs_fail "DBFS_BACKEND=gpu, but the allocation has no GPUs:" \
            "submit with --gpus-per-node=G (or --gres=gpu:G), or set DBFS_BACKEND=cpu"
        BACKEND=cpu
        dbfs_note "no GPUs in the allocation: the CPU backend, one rank per task" \
            "(for GPUs, submit with --gpus-per-node=G or --gres=gpu:G)"
    fi
    UNIT=ranks TAG=r COMMS_DEFAULT=mpi
    GPN=${DBFS_TASKS_PER_NODE:-${SLURM_NTASKS_PER_NODE:-${SLURM_TASKS_PER_NODE:-}}}
    GPN=${GPN%%[(,]*}  # SLURM_TASKS_PER_NODE reads like "4(x2),3"
    if [ -z "$GPN" ] && [ "$LAUNCHER" = mpirun ]; then
        GPN=$(nproc)
    fi
    if [ -z "$GPN" ]; then
        [ "$DRY" = 1 ] ||
            dbfs_fail "cannot tell the tasks per node: submit with --ntasks-per-node=T or set DBFS_TASKS_PER_NODE"
        GPN=4
    fi
    dbfs_positive DBFS_TASKS_PER_NODE "$GPN"
}

# dbfs_mpi_plugin LIBRARY DEFAULT PLUGINS: the srun --mpi plugin that starts LIBRARY (MPI_Get_library_
# version's text) where srun's DEFAULT plugin may not, among PLUGINS (srun --mpi=list's names); prints
# "PLUGIN<tab>why", or "<tab>why" to keep the default.
dbfs_mpi_plugin() {
    local library=$1 default=$2 plugins=" $3 " name wanted want
    name=$(echo "${library%%$'\n'*}" | tr -s ' \t' ' ')
    case $library in
    "Open MPI"*) wanted="pmix" ;;
    *"CRAY MPICH"*) wanted="cray_shasta pmi2" ;;
    MPICH* | MVAPICH* | "Intel(R) MPI"*)
        case $library in *--with-pmix* | *--with-pmi=pmix*) wanted="pmix" ;; *) wanted="pmi2" ;; esac ;;
    *)
        printf '\t%s is not a library the templates know: srun keeps its default (%s)\n' "$name" "$default"
        return ;;
    esac
    for want in $wanted; do
        if [ "${default%%_v*}" = "$want" ]; then
            printf '\t%s speaks %s, the site default\n' "$name" "$default"
            return
        fi
    done
    for want in $wanted; do
        case $plugins in
        *" $want "*) ;;
        *" ${want}_v"*) want=$(echo "$plugins" | tr ' ' '\n' | grep "^${want}_v" | sort -V | tail -n 1) ;;
        *) continue ;;
        esac
        if [ "$default" = none ]; then
            printf '%s\t%s speaks %s; the site default (none) gives it no process manager, so every task' \
                "$want" "$name" "$want"
            printf ' would start as a world of one rank\n'
        else
            printf '%s\t%s speaks %s, not the site default (%s)\n' "$want" "$name" "$want" "$default"
        fi
        return
    done
    printf '\t%s needs %s, which srun --mpi=list lacks (%s): srun keeps its default (%s)\n' \
        "$name" "${wanted// / or }" "$(echo $3)" "$default"
}

# dbfs_launch_plugin: add the launch plugin the installed MPI needs to SRUN_EXTRA (see "Launch plugin").
dbfs_launch_plugin() {
    local arg library default plugins choice
    for arg in "${SRUN_EXTRA[@]}"; do
        case $arg in --mpi | --mpi=*)
            dbfs_note "launch plugin: $arg from DBFS_SRUN_ARGS"
            return ;;
        esac
    done
    if [ -n "${SLURM_MPI_TYPE:-}" ]; then
        dbfs_note "launch plugin: --mpi=$SLURM_MPI_TYPE from SLURM_MPI_TYPE"
        return
    fi
    command -v srun >/dev/null && default=$(scontrol show config 2>/dev/null | awk '$1 == "MpiDefault" { print $3 }')
    if [ -z "${default:-}" ]; then
        dbfs_note "launch plugin: not chosen: no Slurm controller answers here (a job chooses when it starts)"
        return
    fi
    # Slurm lists one plugin per indented line, then "specific pmix plugin versions available: pmix_v4,...".
    plugins=$(srun --mpi=list 2>&1 |
        awk '/^[ \t]/ { print $1 } /versions available:/ { sub(/.*: */, ""); gsub(/,/, " "); print }')
    library=$("$PY" -c 'import mpi4py; mpi4py.rc.initialize = False
from mpi4py import MPI; print(MPI.Get_library_version().split("\0")[0].strip())') ||
        dbfs_fail "'$PY' cannot read the MPI library's version (mpi4py)"
    choice=$(dbfs_mpi_plugin "$library" "$default" "$(echo $plugins)")
    if [ -n "${choice%%$'\t'*}" ]; then
        SRUN_EXTRA+=("--mpi=${choice%%$'\t'*}")
        dbfs_note "launch plugin: --mpi=${choice%%$'\t'*}: ${choice#*$'\t'}"
    else
        dbfs_note "launch plugin: the site default: ${choice#*$'\t'}"
    fi
}

# dbfs_gpu_counts [LIST]: LIST, or the powers of two (GPUs, or ranks) that fill whole nodes of the
# allocation.
dbfs_gpu_counts() {
    if [ -n "${1:-}" ]; then
        echo "$1"
        return
    fi
    local p=1 counts=()
    while [ "$p" -le $((NODES * GPN)) ]; do
        [ "$p" -le "$GPN" ] || [ $((p % GPN)) -eq 0 ] && counts+=("$p")
        p=$((p * 2))
    done
    echo "${counts[*]}"
}

# dbfs_grid P [RxC]: "R C", the grid dbfs runs P ranks on (--grid RxC, else its default), from
# dbfs/grid.py so that the scripts and dbfs cannot disagree.
dbfs_grid() {
    "$PY" - "$1" "${2:-}" "$UNIT" <<'EOF'
import sys
from dbfs.grid import default_grid, parse_grid
ranks, text, unit = int(sys.argv[1]), sys.argv[2], sys.argv[3]
try:
    r, c = parse_grid(text) if text else default_grid(ranks)
except ValueError as e:
    sys.exit(f"dbfs-slurm: error: {e}")
if r * c != ranks:
    sys.exit(f"dbfs-slurm: error: grid {r}x{c} needs {r * c} {unit}, the run has {ranks}")
print(r, c)
EOF
}

# dbfs_check_args RANKS ARGS...: fail, before anything is launched, unless the dbfs command line the
# DBFS_* variables make passes dbfs's parser and every check of the main command that needs no MPI, GPU
# or graph file, for RANKS ranks (a bad DBFS_COMM, DBFS_SCALE or DBFS_EXTRA_ARGS is caught here with
# dbfs's message, not by every step of the sweep). One Python process, started at the first run, checks
# every run of the job, a line each (the rank count and the arguments, NUL-separated): its imports cost
# half a second, a check nothing.
read -r -d '' DBFS_CHECKER <<'EOF'
import sys
import mpi4py
mpi4py.rc.initialize = False     # the checks need no MPI (and a launcher's environment may not allow one)
from dbfs.bfs_benchmark import check_command
from dbfs.cli import parse_main
from dbfs.errors import DbfsError
for line in sys.stdin:
    ranks, *argv = line.rstrip("\n").rstrip("\0").split("\0")
    try:
        check_command(parse_main(argv), int(ranks))
        print("ok", flush=True)
    except (DbfsError, SystemExit) as e:
        print(f"dbfs-slurm: error: {e} (in the dbfs command line the DBFS_* variables make)", flush=True)
EOF
dbfs_check_args() {
    [ -n "${CHECKER_PID:-}" ] || coproc CHECKER { "$PY" -c "$DBFS_CHECKER"; }
    local answer=
    { printf '%s\0' "$@"; printf '\n'; } >&"${CHECKER[1]}"
    read -r answer <&"${CHECKER[0]}"
    [ "$answer" = ok ] && return
    echo "${answer:-dbfs-slurm: error: '$PY' could not check the dbfs command lines (dbfs and mpi4py installed?)}" >&2
    return 2
}

# dbfs_placement C NODES TASKS_PER_NODE: which lines of a grid with C columns stay within a node.
dbfs_placement() {
    local c=$1 nodes=$2 tpn=$3
    if [ "$nodes" -eq 1 ]; then
        echo "one node: every exchange intra-node"
    elif [ "$PACK" = rows ]; then
        if [ $((tpn % c)) -eq 0 ]; then
            echo "grid rows (fold) within a node, columns (expand) across $nodes nodes"
        else
            echo "grid rows (fold) cross nodes: C=$c does not divide the $tpn tasks per node"
        fi
    elif [ $((c % nodes)) -eq 0 ]; then
        echo "grid columns (expand) within a node, rows (fold) across $nodes nodes"
    else
        echo "WARNING: $nodes nodes do not divide C=$c, so grid columns (expand) span nodes"
    fi
}

# dbfs_add_run P SCALE GRID COMM ENCODING DIRECTION: plan one run. GRID: RxC; empty: the squarest
# (paper 004's grids, the scaling studies'); "default": no --grid, dbfs chooses (one column on one node
# with a GPU per rank where that fits, else the squarest) and the run's name says "default".
dbfs_add_run() {
    local p=$1 scale=$2 grid=$3 comm=$4 encoding=$5 direction=$6 shape r c nodes tpn name shown
    dbfs_positive "${UNIT%s} count" "$p"
    dbfs_positive "scale" "$scale"
    local given=$grid grid_args=()
    [ "$grid" = default ] && grid=
    shape=${GRID_CACHE["$p/$grid"]:-}
    if [ -z "$shape" ]; then
        shape=$(dbfs_grid "$p" "$grid") || exit 2
        GRID_CACHE["$p/$grid"]=$shape
    fi
    read -r r c <<<"$shape"
    if [ "$given" = default ]; then
        shown=default
    else
        shown=${r}x${c} grid_args=(--grid "${r}x${c}")
    fi
    if [ "$p" -le "$GPN" ]; then
        nodes=1 tpn=$p
    elif [ $((p % GPN)) -eq 0 ]; then
        nodes=$((p / GPN)) tpn=$GPN
    else
        dbfs_fail "$p $UNIT do not fill whole nodes of $GPN $UNIT: use at most $GPN or a multiple of $GPN"
    fi
    [ "$nodes" -le "$NODES" ] || dbfs_fail "$p $UNIT need $nodes nodes of $GPN $UNIT, the allocation has $NODES"
    name=${STUDY}_s${scale}_${TAG}${p}_${shown}_${comm}_${encoding}_${direction}
    local roots=(--roots "$ROOTS")
    [ -z "$ROOT" ] || roots=(--root "$ROOT")
    local args=(--scale "$scale" --edgefactor "$EDGEFACTOR" "${grid_args[@]}" "${roots[@]}"
        --backend "$BACKEND" --comm "$comm" --encoding "$encoding" --direction "$direction"
        --json "$OUT_DIR/$name.json" "${DBFS_EXTRA[@]}")
    dbfs_check_args "$p" "${args[@]}" || exit 2
    local cmd
    if [ "$LAUNCHER" = srun ]; then
        # after the first run's checks: asking a Slurm controller that does not answer takes seconds
        [ "$PLUGIN_CHOSEN" = 1 ] || { dbfs_launch_plugin; PLUGIN_CHOSEN=1; }
        cmd=(srun --nodes="$nodes" --ntasks="$p" --ntasks-per-node="$tpn")
        [ "$UNIT" = ranks ] || cmd+=("$GPU_OPTION$tpn" --gpu-bind=none)
        cmd+=(--distribution="$DISTRIBUTION" --kill-on-bad-exit=1)
        [ -z "$CPUS" ] || cmd+=(--cpus-per-task="$CPUS")
        cmd+=("${SRUN_EXTRA[@]}")
    else
        if [ -n "${SLURM_NTASKS:-}" ] && [ "$SLURM_NTASKS" -ne "$p" ]; then
            dbfs_fail "DBFS_LAUNCHER=mpirun inside a Slurm allocation of SLURM_NTASKS=$SLURM_NTASKS tasks cannot" \
                "run $p ranks (dbfs checks the two agree): use srun, or ask the allocation for $p tasks"
        fi
        cmd=(mpirun -n "$p" "${MPIRUN_EXTRA[@]}")
    fi
    cmd+=("$PY" -m dbfs "${args[@]}")
    local line
    printf -v line '%q ' "${cmd[@]}"
    PLAN+=("${line% }")
    NAMES+=("$name")
    if [ "$given" = default ]; then
        shown="dbfs's default (one column on one node with a GPU per rank where it fits, else ${r}x${c})"
    fi
    dbfs_note "$name: $p $UNIT on $nodes node(s), grid $shown; $(dbfs_placement "$c" "$nodes" "$tpn")"
}

# dbfs_launch: print the planned commands (dry run) or run them in order; exit 1 if any run failed.
# SIGTERM (scancel) or SIGINT reaches the run in progress too, which ends with its one line; then the
# sweep stops, exit 128 + the signal, and a resubmission with DBFS_RESUME=1 skips the finished runs.
dbfs_launch() {
    local i name rc ran=0 failed=0 signal=
    if [ -n "${CHECKER_PID:-}" ]; then          # every run is checked: the checker ends, no run inherits it
        eval "exec ${CHECKER[1]}>&- ${CHECKER[0]}<&-"
        wait "$CHECKER_PID"
    fi
    if [ "$DRY" = 1 ]; then
        printf '%s\n' "${PLAN[@]}"
        return 0
    fi
    mkdir -p "$OUT_DIR" || dbfs_fail "cannot create $OUT_DIR"
    env | grep -E '^(DBFS|SLURM)_' | sort >"$OUT_DIR/env.txt"
    # Traps run after the step in progress (a foreground command) has ended.
    trap 'signal=TERM' TERM
    trap 'signal=INT' INT
    for i in "${!PLAN[@]}"; do
        name=${NAMES[i]}
        if [ "$RESUME" = 1 ] && [ -f "$OUT_DIR/$name.json" ]; then
            dbfs_note "$name: $OUT_DIR/$name.json exists, skipped (DBFS_RESUME=1)"
            continue
        fi
        echo "+ ${PLAN[i]}" | tee -a "$OUT_DIR/commands.txt" >&2
        eval "${PLAN[i]}" >"$OUT_DIR/$name.txt" 2>"$OUT_DIR/$name.log"
        rc=$?
        ran=$((ran + 1))
        if [ "$rc" -eq 0 ]; then
            # the spec's key, or the reference's line (--report reference)
            grep -hE '^bfs(_| +)harmonic_mean_TEPS' "$OUT_DIR/$name.txt" >&2
        else
            failed=$((failed + 1))
            echo "FAILED: $name (exit $rc); the end of $OUT_DIR/$name.log:" >&2
            tail -n 5 "$OUT_DIR/$name.log" >&2
        fi
        if [ -n "$signal" ]; then
            dbfs_note "$STUDY: SIG$signal during $name: stopped after $ran of ${#PLAN[@]} runs;" \
                "resubmit with DBFS_RESUME=1 DBFS_OUT=$OUT_DIR to skip the runs that wrote their JSON" \
                "(a new job's default folder is another)"
            exit $((128 + $(kill -l "$signal")))
        fi
    done
    dbfs_note "$STUDY: ran $ran of ${#PLAN[@]} runs, $failed failed; collect with: python scripts/collect_results.py $OUT_DIR"
    [ "$failed" -eq 0 ]
}
