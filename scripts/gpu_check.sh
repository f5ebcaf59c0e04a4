#!/usr/bin/env bash
# The device check: on a GPU machine, install dbfs, run the GPU tests (1 rank and one rank per GPU),
# and the benchmarks; logs and JSON results go to $RESULTS.
#
#   scripts/gpu_check.sh tests            GPU tests only (GPU_TESTS: the test files, default all of tests/)
#   scripts/gpu_check.sh bench SCALES     main-mode benchmark (64 roots) per scale, e.g. "22 24 26"
#   scripts/gpu_check.sh profile SCALE    the level loop per variant (direction; rounds as CUDA graphs or
#                                         kernel by kernel; PROFILE_ARGS for others): per search and per
#                                         level, host syncs, small-level times
#   scripts/gpu_check.sh validate SCALE SIDE  validation time per search (scripts/bench_validate.py) on a
#                                         Kronecker graph of SCALE and a SIDE x SIDE lattice
#   scripts/gpu_check.sh lattice SIDE     a SIDE x SIDE lattice (or DIMS, e.g. 256x256x256) with scrambled
#                                         ids: the main command (16 roots, --log-levels), the level loop's
#                                         profile (its variants: LATTICE_PROFILE, default
#                                         "--small-edges default,0"), and gapbs on the same edges (needs .peers)
#   scripts/gpu_check.sh gapbs SCALE      gapbs's own Kronecker graph of SCALE, degree 16, 64 trials
#   scripts/gpu_check.sh generator SCALES generator identity and speed
#   scripts/gpu_check.sh multi RANKS      the BFS and exchange GPU tests (MULTI_TESTS: other files) at each
#                                         rank count of RANKS, e.g. "2 3 4" (ranks take the GPUs
#                                         round-robin; beyond one rank per GPU they share them, and the
#                                         NCCL cases check NCCL's refusal)
#   scripts/gpu_check.sh mps-start | mps-stop  start (stop) the CUDA MPS daemon (scripts/mps.sh): the
#                                         ranks of later stages that share a GPU then run side by side
#   scripts/gpu_check.sh lattice-file DIMS FILE  write a DIMS lattice (e.g. 2048x2048) with scrambled ids
#   scripts/gpu_check.sh multibench SCALE main-mode run (16 roots, validated) on 2 and 4 GPUs
#   scripts/gpu_check.sh main P NAME "ARGS"  `mpirun -n P python -m dbfs ARGS --backend gpu` (one rank
#                                         per GPU), log and --json as NAME.log / NAME.json
#   scripts/gpu_check.sh study BASE       weak-scaling sweep of slurm/weak_scaling.sbatch run with mpirun on
#                                         this machine's GPUs (1, 2, 4, ...; scale BASE + log2 GPUs), then
#                                         the table and the figures (scripts/collect_results.py,
#                                         plot_scaling.py) in $RESULTS/weak; DBFS_COMMS, DBFS_ENCODINGS,
#                                         DBFS_GPU_COUNTS and DBFS_ROOTS (default here 16) pass through
#   scripts/gpu_check.sh convert SCALE    real-graph path at 16 x 2^SCALE edges (23: 134 M): write a
#                                         Graph500 binary and a SNAP text file, convert both, traverse
#                                         both (g500 undirected, SNAP directed with 64-bit ids), the
#                                         partition cache built then reused, --root/--save-result
#   scripts/gpu_check.sh ws1              ws mode, 1 GPU: its GPU tests, WS vs every VWC size for the five
#                                         programs at scale 24, ws-mode BFS vs the main mode (16 roots)
#   scripts/gpu_check.sh ws2              ws mode, 2 GPUs: 2-GPU tests, VR vs ALL vs MS vs peer at scale 24
#   scripts/gpu_check.sh ws-table         ws mode, 1 GPU: its GPU tests, then scripts/bench_ws_table.py (WS, best
#                                         VWC, G-Shards, CW; frontier all and jit; Kronecker 22 and 24, a
#                                         2048x2048 lattice; the approximate layouts) within WS_TABLE_SECONDS
#                                         (default 400) of the start of this script, the tests within
#                                         WS_TESTS_SECONDS (default 210); ws_table.md and ws_table.json also
#                                         go to $OUT
# Several stages may be given in one call: scripts/gpu_check.sh tests generator "16 26" bench "22 24 26"
# Results go to $RESULTS (default bench/results/run-<date>); when the device tool's $OUT is set they
# are also packed into $RESULTS/results.tgz (that tool returns only a few files).
set -uo pipefail
cd "$(dirname "$0")/.."
RESULTS=${RESULTS:-bench/results/run-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$RESULTS"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
PY=${PY:-python3}
status=0
# a stuck GPU test fails alone (with its traceback) instead of eating the whole call
TEST_TIMEOUT=$($PY -c "import pytest_timeout" 2>/dev/null && echo "-p timeout --timeout 300")

install() {
    local wheels=()
    [ -d .whl ] && wheels=(.whl/*.whl)
    # without the build requirements (a fresh venv has no wheel) pip builds in isolation, fetching them
    local build=(--no-index --no-build-isolation)
    $PY -c "import setuptools, wheel" 2>/dev/null || build=(--find-links .whl)
    # DBFS_INSTALLED=1: installed already (by a gpu_check.sh running beside this one on another GPU)
    [ -n "${DBFS_INSTALLED:-}" ] || $PY -m pip install -q "${build[@]}" --no-deps "${wheels[@]}" . \
        >"$RESULTS/install.log" 2>&1 || { cat "$RESULTS/install.log"; exit 1; }
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >"$RESULTS/machine.txt"
    $PY -m dbfs info >>"$RESULTS/machine.txt" 2>&1
    cat "$RESULTS/machine.txt"
}

ngpus() { nvidia-smi -L | wc -l; }
mpirun_() { mpirun ${CUDA_MPS_PIPE_DIRECTORY:+-x CUDA_MPS_PIPE_DIRECTORY} ${CUDA_VISIBLE_DEVICES:+-x CUDA_VISIBLE_DEVICES} "$@"; }

run() {  # run LOG CMD...: run a command, its output to the terminal and LOG; remember a failure
    local log=$1; shift
    echo "+ $*" | tee -a "$RESULTS/commands.txt"
    "$@" 2>&1 | tee "$log"
    local rc=${PIPESTATUS[0]}
    [ "$rc" -eq 0 ] || { echo "FAILED ($rc): $*"; status=1; }
}

install
while [ $# -gt 0 ]; do
    stage=$1; shift
    case $stage in
    tests)
        # shellcheck disable=SC2086
        run "$RESULTS/gpu_tests.log" $PY -m pytest -q -m gpu -p no:cacheprovider $TEST_TIMEOUT ${GPU_TESTS:-tests} ;;
    multi)
        for p in $1; do
            # ranks sharing a GPU under MPS take their share of it (NVSHMEM runs several PEs on a GPU only so)
            share=$(( 100 * $(ngpus) / p )); [ "$share" -lt 100 ] && [ -n "${CUDA_MPS_PIPE_DIRECTORY:-}" ] \
                && export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$share
            # shellcheck disable=SC2086
            run "$RESULTS/gpu_tests_${p}ranks_$(ngpus)gpus.log" mpirun_ -n "$p" $PY -m pytest --with-mpi -q \
                -m gpu -p no:cacheprovider $TEST_TIMEOUT ${MULTI_TESTS:-tests/test_bfs.py tests/test_exchange.py \
                tests/test_grid_loop.py tests/test_transport.py tests/test_validate.py tests/test_build.py \
                tests/test_certificate.py tests/test_collectives.py}
            unset CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
        done
        shift ;;
    multibench)
        n=$(ngpus)
        for p in 2 4; do
            [ "$p" -le "$n" ] || continue
            run "$RESULTS/main_scale$1_${p}gpu.log" mpirun -n "$p" $PY -m dbfs --scale "$1" --roots 16 \
                --backend gpu --json "$RESULTS/main_scale$1_${p}gpu.json"
        done
        shift ;;
    main)
        # shellcheck disable=SC2086
        run "$RESULTS/$2.log" mpirun_ -n "$1" $PY -m dbfs $3 --backend gpu --json "$RESULTS/$2.json"
        shift 3 ;;
    mps-start)
        eval "$(scripts/mps.sh start)"
        echo "+ MPS: $CUDA_MPS_PIPE_DIRECTORY" | tee -a "$RESULTS/commands.txt" ;;
    mps-stop)
        scripts/mps.sh stop
        unset CUDA_MPS_PIPE_DIRECTORY ;;
    lattice-file)
        run "$RESULTS/generate_lattice$1.log" $PY -m dbfs generate --lattice "$1" --out "$2" --force
        shift 2 ;;
    study)
        run "$RESULTS/study_weak$1.log" env DBFS_LAUNCHER=mpirun DBFS_PYTHON="$PY" DBFS_BASE_SCALE="$1" \
            DBFS_ROOTS="${DBFS_ROOTS:-16}" DBFS_OUT="$RESULTS/weak" bash slurm/weak_scaling.sbatch
        run "$RESULTS/study_collect.log" $PY scripts/collect_results.py "$RESULTS/weak" \
            --markdown "$RESULTS/weak/results.md" --csv "$RESULTS/weak/results.csv"
        if $PY -c "import matplotlib" 2>/dev/null; then
            run "$RESULTS/study_plot.log" $PY scripts/plot_scaling.py "$RESULTS/weak" --out "$RESULTS/weak"
        else
            echo "matplotlib missing: no figures (draw them later with scripts/plot_scaling.py)"
        fi
        shift ;;
    bench)
        for s in $1; do
            run "$RESULTS/main_scale${s}_1gpu.log" $PY -m dbfs --scale "$s" --backend gpu \
                --json "$RESULTS/main_scale${s}_1gpu.json"
        done
        shift ;;
    profile)
        # shellcheck disable=SC2086
        run "$RESULTS/profile_scale$1.log" $PY scripts/profile_levels.py --scale "$1" --roots 16 \
            ${PROFILE_ARGS:---small-edges default --rounds graph,eager} --out "$RESULTS/profile_scale$1.json"
        shift ;;
    validate)
        run "$RESULTS/validate.log" $PY scripts/bench_validate.py --scale "$1" --lattice "$2" --roots 4 \
            --json "$RESULTS/validate.json"
        shift 2 ;;
    lattice)
        # SIDE (a SIDE x SIDE lattice) or DIMS (e.g. 256x256x256)
        dims=$([[ $1 == *x* ]] && echo "$1" || echo "$1x$1")
        work=${LATTICE_WORK:-/tmp/dbfs-lattice}
        rm -rf "$work"; mkdir -p "$work"
        run "$RESULTS/lattice${dims}_generate.log" $PY -m dbfs generate --lattice "$dims" --out "$work/lattice.h5"
        run "$RESULTS/lattice${dims}_1gpu.log" $PY -m dbfs --graph "$work/lattice.h5" --roots 16 --log-levels \
            --backend gpu --json "$RESULTS/lattice${dims}_1gpu.json"
        run "$RESULTS/lattice${dims}_profile.log" $PY scripts/profile_levels.py --graph "$work/lattice.h5" --roots 4 \
            --direction auto ${LATTICE_PROFILE:---small-edges default,0} --out "$RESULTS/lattice${dims}_profile.json"
        if [ -d .peers/gapbs ]; then
            make -s -C .peers/gapbs -j16 bfs >"$RESULTS/gapbs_build.log" 2>&1
            run "$RESULTS/lattice${dims}_export.log" $PY scripts/export_edges.py "$work/lattice.h5" "$work/lattice.el"
            run "$RESULTS/lattice${dims}_gapbs.log" .peers/gapbs/bfs -f "$work/lattice.el" -s -n 16
        fi
        rm -rf "$work"
        shift ;;
    gapbs)
        make -s -C .peers/gapbs -j16 bfs >"$RESULTS/gapbs_build.log" 2>&1
        run "$RESULTS/gapbs_scale$1.log" .peers/gapbs/bfs -g "$1" -k 16 -n 64
        shift ;;
    generator)
        run "$RESULTS/generator.log" $PY scripts/bench_generator.py $1 --out "$RESULTS/generator.json"
        shift ;;
    convert)
        s=$1; shift
        work=${CONVERT_WORK:-/tmp/dbfs-convert}
        rm -rf "$work"; mkdir -p "$work"
        run "$RESULTS/convert_make_scale$s.log" $PY scripts/make_edge_files.py --scale "$s" \
            --g500 "$work/g$s.g500" --snap "$work/g$s.txt" --json "$RESULTS/convert_make_scale$s.json"
        for kind in g500 snap; do
            ext=$([ $kind = g500 ] && echo g500 || echo txt)
            size=$([ $kind = g500 ] && echo "--n-vertices $((1 << s))")
            run "$RESULTS/convert_${kind}_scale$s.log" $PY -m dbfs convert "$work/g$s.$ext" $size \
                --out "$work/g$s-$kind.h5" --json "$RESULTS/convert_${kind}_scale$s.json"
            rm -f "$work/g$s.$ext"
            run "$RESULTS/graph_${kind}_scale$s.log" $PY -m dbfs --graph "$work/g$s-$kind.h5" --roots 8 \
                --backend gpu --partition-cache "$work/cache" --json "$RESULTS/graph_${kind}_scale$s.json"
        done
        root=$($PY -c "import json,sys; print(json.load(open(sys.argv[1]))['roots_original'][0])" \
            "$RESULTS/graph_snap_scale$s.json")
        run "$RESULTS/graph_snap_cached_scale$s.log" $PY -m dbfs --graph "$work/g$s-snap.h5" \
            --root "$root" --save-result "$work/tree.h5" --backend gpu --partition-cache "$work/cache" \
            --json "$RESULTS/graph_snap_cached_scale$s.json"
        run "$RESULTS/graph_tree_scale$s.log" $PY -c "import h5py, numpy as np, sys
f = h5py.File(sys.argv[1]); level = f['level'][:]
print(dict(f.attrs), 'rows', len(level), 'reached', int((level >= 0).sum()), 'depth', int(level.max()))" \
            "$work/tree.h5"
        rm -rf "$work" ;;
    ws1)
        run "$RESULTS/ws_gpu_tests.log" $PY -m pytest -q -m gpu -p no:cacheprovider tests/test_ws_gpu.py
        run "$RESULTS/ws_scale24_1gpu.log" $PY -m dbfs ws --scale 24 --backend gpu --gpus 1 --algo all \
            --method all --repeat 2 --max-iterations 500 --json "$RESULTS/ws_scale24_1gpu.json"
        run "$RESULTS/ws_bfs_scale24_16roots.log" $PY -m dbfs ws --scale 24 --backend gpu --gpus 1 --algo bfs \
            --roots 16 --json "$RESULTS/ws_bfs_scale24_16roots.json"
        run "$RESULTS/main_scale24_16roots.log" $PY -m dbfs --scale 24 --backend gpu --roots 16 \
            --json "$RESULTS/main_scale24_16roots.json"
        run "$RESULTS/ws1_summary.txt" $PY scripts/bench_ws.py "$RESULTS/ws_scale24_1gpu.json" \
            "$RESULTS/ws_bfs_scale24_16roots.json" --main "$RESULTS/main_scale24_16roots.json" \
            --out "$RESULTS/ws1_summary.json" ;;
    ws2)
        [ "$(ngpus)" -ge 2 ] || { echo "ws2 needs 2 GPUs"; exit 2; }
        run "$RESULTS/ws_gpu_tests_2gpu.log" $PY -m pytest -q -m gpu -p no:cacheprovider -k two_gpus \
            tests/test_ws_gpu.py
        run "$RESULTS/ws_scale24_2gpu.log" $PY -m dbfs ws --scale 24 --backend gpu --gpus 2 --algo all \
            --method ws --exchange all --repeat 2 --max-iterations 500 --json "$RESULTS/ws_scale24_2gpu.json"
        run "$RESULTS/ws2_summary.txt" $PY scripts/bench_ws.py "$RESULTS/ws_scale24_2gpu.json" \
            --out "$RESULTS/ws2_summary.json" ;;
    ws-table)
        # tests first, within WS_TESTS_SECONDS (a kernel that hangs ends its test after 60 s), then the table
        per_test=$($PY -c "import pytest_timeout" 2>/dev/null && echo "-p timeout --timeout 60 --timeout-method thread")
        run "$RESULTS/ws_gpu_tests.log" timeout "${WS_TESTS_SECONDS:-210}" $PY -m pytest -q -m gpu \
            -p no:cacheprovider $per_test tests/test_ws_gpu.py
        budget=$(( ${WS_TABLE_SECONDS:-400} - SECONDS ))
        [ "$budget" -ge 60 ] || budget=60
        run "$RESULTS/ws_table.log" $PY scripts/bench_ws_table.py --out "$RESULTS/ws_table" --budget "$budget"
        if [ -n "${OUT:-}" ]; then
            cp "$RESULTS/ws_table/ws_table.md" "$RESULTS/ws_table/ws_table.json" "$OUT/" 2>/dev/null
        fi ;;
    *) echo "unknown stage $stage"; exit 2 ;;
    esac
done
if [ -n "${OUT:-}" ]; then
    tar czf "$OUT/results.tgz" -C "$RESULTS" .
fi
exit $status
