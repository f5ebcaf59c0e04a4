#!/usr/bin/env bash
# The device check: on a GPU machine, install dbfs, run the GPU tests (1 rank and one rank per GPU),
# and the benchmarks; logs and JSON results go to $RESULTS.
#
#   scripts/gpu_check.sh tests            GPU tests only
#   scripts/gpu_check.sh bench SCALES     main-mode benchmark (64 roots) per scale, e.g. "22 24 26"
#   scripts/gpu_check.sh profile SCALE    host overhead / kernel bandwidth / edges-per-thread sweep
#   scripts/gpu_check.sh generator SCALES generator identity and speed
#   scripts/gpu_check.sh multi            correctness with one rank per GPU (2 and 4 when present)
#   scripts/gpu_check.sh multibench SCALE main-mode run (16 roots, validated) on 2 and 4 GPUs
#   scripts/gpu_check.sh ws1              ws mode, 1 GPU: its GPU tests, WS vs every VWC size for the five
#                                         programs at scale 24, ws-mode BFS vs the main mode (16 roots)
#   scripts/gpu_check.sh ws2              ws mode, 2 GPUs: 2-GPU tests, VR vs ALL vs MS vs peer at scale 24
# Several stages may be given in one call: scripts/gpu_check.sh tests generator "16 26" bench "22 24 26"
# Results go to $RESULTS (default bench/results/run-<date>); when the device tool's $OUT is set they
# are also packed into $RESULTS/results.tgz (that tool returns only a few files).
set -uo pipefail
cd "$(dirname "$0")/.."
RESULTS=${RESULTS:-bench/results/run-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$RESULTS"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0
PY=${PY:-python3}
status=0

install() {
    local wheels=()
    [ -d .whl ] && wheels=(.whl/*.whl)
    $PY -m pip install -q --no-index --no-deps --no-build-isolation "${wheels[@]}" . >"$RESULTS/install.log" 2>&1 \
        || { cat "$RESULTS/install.log"; exit 1; }
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >"$RESULTS/machine.txt"
    $PY -m dbfs info >>"$RESULTS/machine.txt" 2>&1
    cat "$RESULTS/machine.txt"
}

ngpus() { nvidia-smi -L | wc -l; }

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
        run "$RESULTS/gpu_tests.log" $PY -m pytest -q -m gpu -p no:cacheprovider tests ;;
    multi)
        n=$(ngpus)
        for p in 2 4; do
            [ "$p" -le "$n" ] || continue
            run "$RESULTS/gpu_tests_${p}ranks.log" mpirun -n "$p" $PY -m pytest --with-mpi -q -m gpu \
                -p no:cacheprovider tests/test_bfs.py
        done ;;
    multibench)
        n=$(ngpus)
        for p in 2 4; do
            [ "$p" -le "$n" ] || continue
            run "$RESULTS/main_scale$1_${p}gpu.log" mpirun -n "$p" $PY -m dbfs --scale "$1" --roots 16 \
                --backend gpu --json "$RESULTS/main_scale$1_${p}gpu.json"
        done
        shift ;;
    bench)
        for s in $1; do
            run "$RESULTS/main_scale${s}_1gpu.log" $PY -m dbfs --scale "$s" --backend gpu \
                --json "$RESULTS/main_scale${s}_1gpu.json"
        done
        shift ;;
    profile)
        run "$RESULTS/profile_scale$1.log" $PY scripts/profile_levels.py --scale "$1" --out "$RESULTS/profile_scale$1.json"
        shift ;;
    generator)
        run "$RESULTS/generator.log" $PY scripts/bench_generator.py $1 --out "$RESULTS/generator.json"
        shift ;;
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
    *) echo "unknown stage $stage"; exit 2 ;;
    esac
done
if [ -n "${OUT:-}" ]; then
    tar czf "$OUT/results.tgz" -C "$RESULTS" .
fi
exit $status
