#!/usr/bin/env bash
# Installs the Debian packages accelopt needs, only those missing.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config make
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libfmt-dev
  libopenblas-dev libseccomp-dev libcurl4-openssl-dev libcpp-httplib-dev libsqlite3-dev binutils
  libgtest-dev libbenchmark-dev
  libre2-dev   # every regex over a model's, a kernel's or a tool's text: linear time
  libssl-dev   # SHA-256 (libcrypto) for content identity
  python3  # the Python evaluator (evaluators/python), run by the tests
  bubblewrap  # confines the build, test and benchmark commands of code tasks
  patchelf  # `make dist`: the shipped binaries find their libraries beside them
  libpq-dev   # the PostgreSQL client library: the job queue on a server (service/postgres_job_queue.cc)
  postgresql  # the server the tests start for themselves (testing/postgres_server.h); skipped without it
  slurmctld slurmd slurm-client  # `optimize --slurm`: workers as Slurm jobs; the tests start a one-node cluster (testing/slurm_cluster.h)
  munge  # Slurm's authentication; the tests' cluster runs its own munged with a fresh key
  nodejs  # web/: installs the report page's chart library and runs its browser test
  chromium  # the report's browser test opens a report in it, headless (tests/report_browser_test.cc)
)
# npm comes with some builds of nodejs (NodeSource's); Debian's ships it apart.
command -v npm >/dev/null || packages+=(npm)

# `scripts/setup.sh fuzz`: also clang with libFuzzer, and its OpenMP runtime.
if [ "${1:-}" = fuzz ]; then packages+=(clang libomp-dev); fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The report page's libraries (compiled into accelopt) and the browser test's
# driver, at the versions web/package-lock.json pins: installed when missing
# or when the lock file changed since.
web="$(cd "$(dirname "$0")/.." && pwd)/web"
if [ ! -f "$web/node_modules/.package-lock.json" ] || [ "$web/package-lock.json" -nt "$web/node_modules/.package-lock.json" ]; then
  echo "setup: npm ci in web/"
  (cd "$web" && npm ci --no-audit --no-fund)
fi
