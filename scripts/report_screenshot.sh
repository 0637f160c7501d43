#!/usr/bin/env bash
# Regenerates docs/report.png, the README's picture of a report: the report
# of a run in the store (by default the newest run of accelopt.db, which
# `make demo` writes), made by `accelopt report` and photographed in headless
# Chromium. Usage: scripts/report_screenshot.sh [STORE [RUN]]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD:-$root/build}"
store="${1:-accelopt.db}"
run="${2:-}"
if [ -z "$run" ]; then
  run="$("$build/accelopt" runs --json --db "$store" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=JSON.parse(s);if(!r.length){console.error("no run in the store");process.exit(1)}console.log(r[0].id)})')"
fi
html="$build/report-$run.html"
"$build/accelopt" report "$run" --store "$store" -o "$html"
(cd "$root/web" && node test/screenshot.mjs "$html" "$root/docs/report.png")
