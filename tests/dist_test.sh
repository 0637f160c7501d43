#!/usr/bin/env bash
# The `make dist` tarball, tested as a cluster node would use it (ctest: dist):
# packs BUILD_DIR with scripts/dist.sh, unpacks it into a fresh folder, checks
# that every library the shipped binaries and libraries load resolves inside it
# or to the C/C++ runtime, then, from another folder and with an empty
# environment, lists the tasks and evaluates silu's baseline (built with g++
# and run). Where bubblewrap can, the source and build trees are hidden from
# those commands, so that a path into them cannot make the test pass.
#
#   tests/dist_test.sh BUILD_DIR
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: tests/dist_test.sh BUILD_DIR" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
command -v patchelf >/dev/null || { echo "dist_test: skipped: no patchelf (scripts/setup.sh installs it)"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

fail() { echo "dist_test: FAIL: $*" >&2; exit 1; }
under() { case "$1/" in "$2"/*) return 0 ;; esac; return 1; }

XZ_OPT=-0 "$SRC/scripts/dist.sh" "$BUILD" "$T/accelopt-dist-test.tar.xz"
# The working folder holds an empty suite/: a dist reads its own.
mkdir -p "$T/unpacked" "$T/work/suite" "$T/home"
tar -xJf "$T/accelopt-dist-test.tar.xz" -C "$T/unpacked"
D=$T/unpacked/accelopt-dist-test
[ -x "$D/bin/accelopt" ] && [ -x "$D/bin/accelopt-harness" ] && [ -f "$D/.accelopt-dist" ] || fail "layout: $(ls -A "$D")"
for d in suite prompts kernels demo evaluators examples prices docs README.md; do
  [ -e "$D/$d" ] || fail "$d is not in the tarball"
done

# Every library resolves inside the tarball or to glibc, libstdc++, libgcc_s.
bad=0
for f in "$D"/bin/* "$D"/lib/*; do
  while read -r soname arrow path _; do
    [ "$arrow" = "=>" ] || continue
    if [ "$path" = "not" ]; then echo "  $f: $soname not found" >&2; bad=1; continue; fi
    under "$path" "$D" && continue
    case "$soname" in
      ld-linux*.so.* | libc.so.* | libm.so.* | libmvec.so.* | libpthread.so.* | libdl.so.* | librt.so.* | \
        libresolv.so.* | libutil.so.* | libstdc++.so.* | libgcc_s.so.*) ;;
      *) echo "  $f: $soname from $path, outside the tarball" >&2; bad=1 ;;
    esac
  done < <(env -i PATH=/usr/bin:/bin ldd "$f")
done
[ $bad -eq 0 ] || fail "libraries the tarball does not hold"
for f in "$D"/bin/*; do
  [ "$(patchelf --print-rpath "$f")" = '$ORIGIN/../lib' ] || fail "$f has RUNPATH $(patchelf --print-rpath "$f")"
done

# The commands: an empty environment, another working folder, and, where
# bubblewrap runs, the source and build trees replaced by empty folders.
hide=()
if command -v bwrap >/dev/null && ! under "$T" "$SRC" && ! under "$T" "$BUILD" &&
  bwrap --dev-bind / / --tmpfs "$SRC" -- /bin/true 2>/dev/null; then
  hide=(bwrap --dev-bind / / --tmpfs "$SRC")
  under "$BUILD" "$SRC" || hide+=(--tmpfs "$BUILD")
  hide+=(--)
else
  echo "dist_test: bubblewrap cannot hide the source and build trees here: they stay visible (nothing in the environment names them)"
fi
run() { (cd "$T/work" && "${hide[@]}" env -i PATH=/usr/bin:/bin HOME="$T/home" "$D/bin/accelopt" "$@"); }

run tasks >"$T/tasks.txt" 2>&1 || { cat "$T/tasks.txt"; fail "accelopt tasks"; }
grep -q '^ *silu\b\|silu ' "$T/tasks.txt" || { cat "$T/tasks.txt"; fail "accelopt tasks does not list silu"; }
run eval silu --shape test --seeds 1 --json >"$T/eval.json" 2>"$T/eval.err" || {
  cat "$T/eval.json" "$T/eval.err"
  fail "accelopt eval silu --shape test"
}
grep -q '"status": *"ok"' "$T/eval.json" || { cat "$T/eval.json" "$T/eval.err"; fail "silu's status is not ok"; }
echo "dist_test: ok ($(du -h "$T/accelopt-dist-test.tar.xz" | cut -f1), $(ls "$D/lib" | wc -l) libraries)"
