#!/usr/bin/env bash
# Packs a built accelopt as a relocatable tarball for a machine without this
# project's Debian packages (a GPU node of a cluster, say, with only glibc and
# libstdc++):
#
#   scripts/dist.sh BUILD_DIR OUT.tar.xz        (`make dist` names OUT)
#
# OUT unpacks into one folder named after it (OUT without .tar.xz):
#
#   bin/accelopt, bin/accelopt-harness   stripped; RUNPATH $ORIGIN/../lib
#   lib/                                 the shared libraries they load beyond glibc,
#                                        libstdc++ and libgcc_s (RUNPATH $ORIGIN)
#   suite/ prompts/ kernels/ demo/ evaluators/ examples/ prices/ docs/ README.md
#   .accelopt-dist                       marks the folder as a dist: the engine then
#                                        reads its data here, not from ./ (core/dist.h)
#
# Unpacked anywhere, bin/accelopt runs directly. $XZ_OPT sets xz's level (-0: fast). The kernels it builds still need
# a compiler on that machine (g++ for the cpu target, nvcc for cuda): none is shipped.
set -euo pipefail

usage() { echo "usage: scripts/dist.sh BUILD_DIR OUT.tar.xz" >&2; exit 2; }
[ $# -eq 2 ] || usage
BUILD=$1
OUT=$2
SRC=$(cd "$(dirname "$0")/.." && pwd)
case "$OUT" in *.tar.xz) ;; *) echo "dist: OUT must end in .tar.xz: $OUT" >&2; exit 2 ;; esac
NAME=$(basename "$OUT" .tar.xz)

BINARIES=(accelopt accelopt-harness)
DATA=(suite prompts kernels demo evaluators examples prices docs README.md)

for b in "${BINARIES[@]}"; do
  [ -x "$BUILD/$b" ] || { echo "dist: no $BUILD/$b: build first (make build)" >&2; exit 1; }
done
for tool in patchelf strip ldd objdump xz; do
  command -v "$tool" >/dev/null || { echo "dist: $tool is missing (scripts/setup.sh installs it)" >&2; exit 1; }
done

STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
ROOT=$STAGE/$NAME
mkdir -p "$ROOT/bin" "$ROOT/lib"

# The C and C++ runtimes every node has: left to the node, never shipped.
system_library() {
  case "$1" in
    linux-vdso.so.* | ld-linux*.so.* | libc.so.* | libm.so.* | libmvec.so.* | libpthread.so.* | libdl.so.* | \
      librt.so.* | libresolv.so.* | libutil.so.* | libanl.so.* | libnsl.so.* | libstdc++.so.* | libgcc_s.so.*)
      return 0 ;;
  esac
  return 1
}

for b in "${BINARIES[@]}"; do
  strip --strip-unneeded -o "$ROOT/bin/$b" "$BUILD/$b"
done

# ldd lists every library the binaries load, directly or through another.
ldd "${BINARIES[@]/#/$BUILD/}" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
  while read -r soname path; do
    system_library "$soname" && continue
    cp -L "$path" "$ROOT/lib/$soname"
    chmod u+w "$ROOT/lib/$soname"
    strip --strip-unneeded "$ROOT/lib/$soname"
  done
if ldd "${BINARIES[@]/#/$BUILD/}" | grep -q "not found"; then
  echo "dist: a library of the build is not found:" >&2
  ldd "${BINARIES[@]/#/$BUILD/}" | grep "not found" >&2
  exit 1
fi

# RUNPATH, not LD_LIBRARY_PATH: the binaries run directly, and each shipped
# library finds the others beside it (a RUNPATH serves only its own object's needs).
for b in "${BINARIES[@]}"; do patchelf --set-rpath '$ORIGIN/../lib' "$ROOT/bin/$b"; done
for l in "$ROOT"/lib/*; do [ -f "$l" ] && patchelf --set-rpath '$ORIGIN' "$l"; done

# The data, as tracked by git where the source is a checkout (no build outputs,
# no stray files), else as it is.
if git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$SRC" && git ls-files -z -- "${DATA[@]}" | while IFS= read -r -d '' f; do
     [ -e "$f" ] && printf '%s\0' "$f"
   done | tar --null -T - -cf -) | tar -xf - -C "$ROOT"
  COMMIT=$(git -C "$SRC" describe --always --dirty 2>/dev/null || echo unknown)
else
  for d in "${DATA[@]}"; do cp -a "$SRC/$d" "$ROOT/"; done
  COMMIT=unknown
fi
for d in "${DATA[@]}"; do
  [ -e "$ROOT/$d" ] || { echo "dist: $d is missing from $SRC" >&2; exit 1; }
done

# The newest glibc and libstdc++ symbol versions the shipped files need: a node's
# own must be at least as new.
needs() { objdump -T "$ROOT"/bin/* "$ROOT"/lib/* 2>/dev/null | grep -o "$1"'_[0-9][0-9.]*' | sort -uV | tail -1; }
GLIBC_NEED=$(needs GLIBC)
GLIBCXX_NEED=$(needs GLIBCXX)
VERSION=$(sed -n 's/^project(accelopt VERSION \([^ ]*\).*/\1/p' "$SRC/CMakeLists.txt")
cat >"$ROOT/.accelopt-dist" <<EOF
accelopt $VERSION ($COMMIT), $(uname -m), packed by scripts/dist.sh
needs on the machine that runs it: ${GLIBC_NEED:-glibc} or newer, ${GLIBCXX_NEED:-libstdc++} or newer (libstdc++.so.6),
libgcc_s.so.1; a C++ compiler (g++) for cpu kernels, the CUDA toolkit (nvcc) for cuda kernels.
EOF

mkdir -p "$(dirname "$OUT")"
# xz's level is its default (-6) unless $XZ_OPT names one (the test packs with -0).
tar -C "$STAGE" --owner=0 --group=0 --numeric-owner -cf - "$NAME" | xz -T0 >"$OUT.part"
mv "$OUT.part" "$OUT"
echo "dist: $OUT ($(du -h "$OUT" | cut -f1)): bin/ ${BINARIES[*]}; lib/ $(ls "$ROOT/lib" | wc -l) libraries; needs ${GLIBC_NEED:-?}, ${GLIBCXX_NEED:-?}"
