#!/usr/bin/env bash
# Installs the Debian 12 packages that Corral's build and tests need. Idempotent.
set -euo pipefail

packages=(
  # build
  cmake ninja-build g++ pkg-config git
  # libraries (DESIGN.md, "Dependencies")
  libsqlite3-dev libssl-dev libpq-dev nlohmann-json3-dev libexpected-dev libtomlplusplus-dev
  libspdlog-dev libfmt-dev libmunge-dev libhwloc-dev
  # tests and benchmarks
  googletest libgtest-dev libgmock-dev libbenchmark-dev munge postgresql curl procps python3
  # observability: prometheus and promtool (tests/integration/metrics_test.cc, docs/metrics.md)
  prometheus
  # containers (tests/integration/gpu_node_test.cc runs a job in podman from a local busybox
  # image; runc because crun refuses hosts with a hybrid cgroup layout)
  podman runc busybox-static
  # the Slurm 22.05 peer of tests/slurm_diff (../shared/peers/slurm/start.sh with accounting)
  slurm-wlm slurmdbd mariadb-server
  # the web dashboard's test (tests/integration/dashboard_test.cc) drives headless Chromium
  chromium
  # fuzzing the Slurm front end's parsers (tools/fuzz_smoke.sh): clang and its libFuzzer runtime
  clang libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup: all packages present"
fi
