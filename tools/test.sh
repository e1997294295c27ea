#!/usr/bin/env bash
# Sets up, builds and runs every test: the README's test command, and what CI runs.
#   tools/test.sh [ctest args...]      (build directory: $CORRAL_BUILD_DIR or ./build)
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/setup.sh
build="${CORRAL_BUILD_DIR:-build}"
# CORRAL_BUILD_BENCH=OFF (as .ci/run sets) leaves out bench/, which no test needs.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  ${CORRAL_BUILD_BENCH:+-DCORRAL_BUILD_BENCH="$CORRAL_BUILD_BENCH"}
ninja -C "$build"
./tools/check_layering.sh
(cd "$build" && ctest --output-on-failure -j2 --timeout 600 "$@")
# The parsers of the Slurm front end under libFuzzer with ASan/UBSan, briefly (fuzz/).
CORRAL_FUZZ_SECONDS="${CORRAL_FUZZ_SECONDS:-10}" ./tools/fuzz_smoke.sh
