#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang in their own build directory and runs each for
# a short while: a smoke test of the Slurm front end's parsers, the token verifier, the API's HTTP
# wire parser, its JSON request decoders, the TOML configs and the container grammar under ASan
# and UBSan, for CI.
# Exits non-zero when a target fails to build or finds a crash (its input is kept under
# $build/artifacts/).
#
#   tools/fuzz_smoke.sh            (CORRAL_FUZZ_SECONDS=20 per target, build dir build-fuzz)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${CORRAL_FUZZ_BUILD_DIR:-build-fuzz}"
seconds="${CORRAL_FUZZ_SECONDS:-20}"
jobs="${CORRAL_FUZZ_JOBS:-2}"  # build jobs, and targets run at a time

command -v clang++ >/dev/null || { echo "fuzz_smoke: clang++ not found (tools/setup.sh installs it)" >&2; exit 1; }
cmake -S fuzz -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER=clang++ -DCORRAL_FUZZ=ON >/dev/null
ninja -C "$build" -j"$jobs"

mkdir -p "$build/artifacts"
# One target's run; its verdict is printed when it ends. Targets run $jobs at a time (one per core).
fuzz_one() {
  local target=$1
  local corpus="$build/corpus/$target"
  mkdir -p "$corpus"
  local dict=()
  [ "$target" = directives_fuzz ] && dict=(-dict=fuzz/directives.dict)
  if ! "$build/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$build/artifacts/$target-" "${dict[@]}" \
      "$corpus" "fuzz/corpus/$target" >"$build/$target.log" 2>&1; then
    echo "fuzz_smoke: $target FAILED (log: $build/$target.log, inputs: $build/artifacts/)" >&2
    tail -n 40 "$build/$target.log" >&2
    return 1
  fi
  grep -E "stat::number_of_executed_units" "$build/$target.log" | sed "s/^/fuzz_smoke: $target /" || true
}

status=0
pids=()
for target in directives_fuzz hostlist_fuzz slurm_values_fuzz token_fuzz http_parser_fuzz json_codec_fuzz \
    config_fuzz container_spec_fuzz; do
  echo "fuzz_smoke: $target for ${seconds}s"
  fuzz_one "$target" &
  pids+=($!)
  if [ "${#pids[@]}" -ge "$jobs" ]; then
    wait "${pids[0]}" || status=1
    pids=("${pids[@]:1}")
  fi
done
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
exit "$status"
