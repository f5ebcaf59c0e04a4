#!/usr/bin/env bash
# device call: all GPU tests with the final code, then the ws A/B (trees new, old and zc alternated, twice)
# and its summary. As run, .ab/ held ab_ws.py and summary.py (here ab_ws.py and ab_summary.py), old = a
# `git archive` of the previous commit, zc = the new tree with the vr inbox applied from the hub.
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
