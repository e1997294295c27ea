#!/usr/bin/env bash
# Replays the shared traces through `corral sim` with all five policies and prints the metrics
# tables and timings (wall and CPU). Usage: bench/sim_bench.sh [BUILD_DIR] [TRACES_DIR]
#   philly_pollux       on 352 x 8 (2,816 GPUs: uncontended), 48 x 8 (contended), the 11 VCs,
#                       and 1,250 x 8 (10,000 GPUs: the design's "100,000 jobs on 10,000 GPUs")
#   alibaba_openb_2023  on its 1,213 heterogeneous nodes (6,212 GPUs) and on 4 x 8 (its mean
#                       demand is 17 GPUs, its peak 70: only a small cluster makes policies differ)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
traces=${2:-../shared/traces}
corral="$build/src/main/corral"
[ -x "$corral" ] || { echo "sim_bench: $corral not built (ninja -C $build corral)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

run() {
  local name=$1; shift
  echo "=== $name: corral sim $*"
  /usr/bin/time -f "  time: %e s wall, %U s user, %M KB max RSS" "$corral" sim --profile --csv "$out/$name.csv" "$@"
  echo
}

run philly-2816 --trace "$traces/philly_pollux.csv" --cluster nodes=352,gpus_per_node=8,model=v100
run philly-384 --trace "$traces/philly_pollux.csv" --cluster nodes=48,gpus_per_node=8,model=v100
run philly-10000 --trace "$traces/philly_pollux.csv" --cluster nodes=1250,gpus_per_node=8,model=v100
run philly-vc --trace "$traces/philly_pollux.csv" --cluster bench/sim_bench_philly_vc.toml
run alibaba-6212 --trace "$traces/alibaba_openb_2023.csv" --cluster bench/sim_bench_alibaba.toml
run alibaba-32 --trace "$traces/alibaba_openb_2023.csv" --cluster nodes=4,gpus_per_node=8,model=g2
