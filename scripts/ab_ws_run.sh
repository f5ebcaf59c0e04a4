#!/usr/bin/env bash
# All GPU tests, then the ws exchange A/B of scripts/ab_ws.py (trees new, old and zc alternated, twice)
# and its summary (scripts/ab_ws_summary.py). .ab/ holds the two scripts and the other trees: old = a
# `git archive` of the previous commit, zc = the new tree with the vr inbox applied from the hub.
# Results go to $OUT/res.
set -uo pipefail
export RESULTS=$OUT/res PYTHONUNBUFFERED=1
bash scripts/gpu_check.sh tests
for k in 1 2; do
  for t in new old zc; do
    tree=$PWD; [ $t != new ] && tree=$PWD/.ab/$t
    echo "+ python3 .ab/ab_ws.py $tree ab_${t}_$k.json 24" >> "$OUT/res/commands.txt"
    python3 .ab/ab_ws.py "$tree" "$OUT/res/ab_${t}_$k.json" 24 > "$OUT/res/ab_${t}_$k.log" 2>&1 || echo "A/B $t $k failed"
  done
done
python3 .ab/summary.py "$OUT"/res/ab_*.json | tee "$OUT/res/ab_summary.txt"
tar czf "$OUT/results.tgz" -C "$OUT/res" .
