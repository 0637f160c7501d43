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
)

# `scripts/setup.sh fuzz`: also clang with libFuzzer, and its OpenMP runtime.
if [ "${1:-}" = fuzz ]; then packages+=(clang libomp-dev); fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
