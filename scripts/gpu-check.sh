#!/usr/bin/env bash
# The cuda target's checks on a GPU machine, in one pass that fits a short
# lease: calibrate, the GPU tests (the cheating kernels first), every baseline
# evaluated at the bench shape, the project's own paged attention kernels,
# the anchors beside them, the recorded demo. Run from a bundle made
# here by ../shared/tools/bundle-build.sh (the GPU machine lacks this
# project's Debian libraries):
#
#   scripts/gpu-check.sh BUNDLE.tar.xz OUTDIR [SECONDS]
#
# Each step starts only while the time budget (default 400 s) lasts; its
# output goes to OUTDIR (8 files): gpu.txt, calibrate.txt, gpu_tests.txt,
# evals.jsonl (one `accelopt eval --json` per line, with the task and kernel
# added), anchors.txt and anchors.json (bench/gpu_anchors.py), demo.txt,
# summary.txt.
set -uo pipefail
BUNDLE=$1 OUTDIR=$2 BUDGET=${3:-400}
START=$(date +%s)
left() { echo $((BUDGET - ($(date +%s) - START))); }
mkdir -p "$OUTDIR" /tmp/accelopt-bundle
tar -xJf "$BUNDLE" -C /tmp/accelopt-bundle
R=/tmp/accelopt-bundle/run.sh
SRC=/tmp/accelopt-bundle/src
export ACCELOPT_SOURCE_DIR=$SRC
summary="$OUTDIR/summary.txt"
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv > "$OUTDIR/gpu.txt" 2>&1
say "gpu: $(tail -1 "$OUTDIR/gpu.txt")"

t0=$(date +%s)
timeout 120 "$R" accelopt calibrate --target cuda > "$OUTDIR/calibrate.txt" 2>&1
say "calibrate: exit $? in $(($(date +%s) - t0)) s"

# The GPU tests first: the harness's cheating kernels (CudaCheatTest) and
# the rest, each cheat's verdict and latency against the honest kernel's in
# the summary.
t0=$(date +%s)
(cd "$SRC" && timeout $(( $(left) * 2 / 5 )) /tmp/accelopt-bundle/run.sh accelopt_gpu_tests \
  --gtest_filter=-CudaGpuTest.EveryBaselineIsOk) > "$OUTDIR/gpu_tests.txt" 2>&1
say "gpu tests: exit $? in $(($(date +%s) - t0)) s; $(grep -cE '^\[       OK' "$OUTDIR/gpu_tests.txt") ok, $(grep -cE '^\[  FAILED  \] [A-Z]' "$OUTDIR/gpu_tests.txt") failed, $(grep -cE '^\[  SKIPPED \] [A-Z]' "$OUTDIR/gpu_tests.txt") skipped"
grep -E '^\[ cheat' "$OUTDIR/gpu_tests.txt" | tee -a "$summary"

# Baselines first (the README's table), prefill last: its CPU references are the slowest.
evals="$OUTDIR/evals.jsonl"
: > "$evals"
tasks=$(cd "$SRC/suite" && ls -d */ | tr -d / | grep -v prefill)
tasks="$tasks $(cd "$SRC/suite" && ls -d *prefill*/ | tr -d /)"
run_eval() {  # TASK KERNEL LABEL
  local limit=$(( $(left) - 150 ))  # leave time for the anchors and the demo
  [ "$limit" -gt 90 ] && limit=90
  if [ "$limit" -lt 15 ]; then say "eval $1 $3: skipped (time)"; return; fi
  local t=$(date +%s) out
  out=$(timeout "$limit" "$R" accelopt eval "$1" "$2" --target cuda --json 2>/tmp/eval.err)
  local rc=$?
  if [ -n "$out" ] && python3 -c 'import json,sys; json.loads(sys.argv[1])' "$out" 2>/dev/null; then
    python3 -c 'import json,sys; p=json.loads(sys.argv[1]); p["task"]=sys.argv[2]; p["kernel"]=sys.argv[3]; p["wall_s"]=float(sys.argv[4]); print(json.dumps(p))' \
      "$out" "$1" "$3" "$(($(date +%s) - t))" >> "$evals"
    say "eval $1 $3: exit $rc, $(python3 -c 'import json,sys; p=json.loads(sys.argv[1]); l=p.get("latency") or {}; print(p.get("status"), "median_ns", round(l.get("median_s",0)*1e9), "pct", p.get("percent_of_peak"))' "$out"), $(($(date +%s) - t)) s"
  else
    echo "{\"task\": \"$1\", \"kernel\": \"$3\", \"exit\": $rc, \"error\": $(tail -c 400 /tmp/eval.err | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))')}" >> "$evals"
    say "eval $1 $3: exit $rc, no profile: $(tail -c 200 /tmp/eval.err | tr '\n' ' ')"
  fi
}
for task in $tasks; do
  [ -f "$SRC/suite/$task/baseline.cu" ] && run_eval "$task" "$SRC/suite/$task/baseline.cu" baseline
  case $task in
    gqa_paged_decode*) run_eval "$task" "$SRC/kernels/cuda/gqa_paged_decode_split.cu" split ;;
    gqa_paged_prefill*) run_eval "$task" "$SRC/kernels/cuda/gqa_paged_prefill_causal.cu" own ;;
  esac
done

# The paged-attention anchors beside the project's own kernels.
if [ "$(left)" -gt 90 ]; then
  t0=$(date +%s)
  (cd "$SRC" && timeout $(( $(left) - 40 )) python3 bench/gpu_anchors.py \
    gqa_paged_decode_h32_kv4_d128_ps1 gqa_paged_decode_h32_kv8_d128_ps1 \
    gqa_paged_prefill_causal_h32_kv4_d128_ps1 gqa_paged_prefill_causal_h32_kv8_d128_ps1 \
    --kernel gqa_paged_decode_h32_kv4_d128_ps1=kernels/cuda/gqa_paged_decode_split.cu \
    --kernel gqa_paged_decode_h32_kv8_d128_ps1=kernels/cuda/gqa_paged_decode_split.cu \
    --kernel gqa_paged_prefill_causal_h32_kv4_d128_ps1=kernels/cuda/gqa_paged_prefill_causal.cu \
    --kernel gqa_paged_prefill_causal_h32_kv8_d128_ps1=kernels/cuda/gqa_paged_prefill_causal.cu \
    --json "$OUTDIR/anchors.json") > "$OUTDIR/anchors.txt" 2>&1
  say "anchors: exit $? in $(($(date +%s) - t0)) s"
fi

if [ "$(left)" -gt 20 ]; then
  t0=$(date +%s)
  timeout $(( $(left) - 5 )) "$R" accelopt optimize --demo --target cuda > "$OUTDIR/demo.txt" 2>&1
  say "demo: exit $? in $(($(date +%s) - t0)) s"
fi
say "total $(($(date +%s) - START)) s"
