#!/usr/bin/env bash
# Runs every fuzz target in BUILD_DIR for SECONDS each, one after another, and
# reports what each found. Corpora grow in BUILD_DIR/corpus/<target> (seeded
# from fuzz/corpus/<target>); a crashing input is kept in BUILD_DIR/crashes/<target>.
# Exit status 1 when any target crashed.
set -uo pipefail
build=${1:?usage: scripts/fuzz.sh BUILD_DIR SECONDS}
seconds=${2:-60}
here=$(cd "$(dirname "$0")/.." && pwd)
status=0
printf '%-20s %10s %8s %8s %s\n' target runs cov corpus result
for fuzzer in "$build"/fuzz_*; do
  [ -x "$fuzzer" ] || continue
  name=$(basename "$fuzzer")
  corpus="$build/corpus/$name" crashes="$build/crashes/$name"
  mkdir -p "$corpus" "$crashes"
  seeds=()
  [ -d "$here/fuzz/corpus/$name" ] && seeds=("$here/fuzz/corpus/$name")
  log="$build/$name.log"
  "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$crashes/" "$corpus" "${seeds[@]}" >"$log" 2>&1
  rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
  size=$(find "$corpus" -type f | wc -l)
  if [ $rc -eq 0 ]; then result=ok; else result="CRASH (rc $rc): $(ls "$crashes" | head -3 | tr '\n' ' ') see $log"; status=1; fi
  printf '%-20s %10s %8s %8s %s\n' "$name" "${runs:-?}" "${cov:-?}" "$size" "$result"
done
exit $status
