#!/usr/bin/env bash
# Sets up, builds, and starts a local Corral cluster (`corral dev`: a controller and 4 agents
# with 8 simulated H100 GPUs each) running a demo workload, and shows the jobs moving through
# the queue. The cluster keeps running until Ctrl-C.
#   tools/demo.sh            (build directory: $CORRAL_BUILD_DIR or ./build)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
./tools/setup.sh
build="${CORRAL_BUILD_DIR:-build}"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
ninja -C "$build" corral
corral="$root/$build/src/main/corral"
export PATH="$root/$build/src/main:$PATH"

"$corral" dev "$@" &
dev=$!
trap 'kill -TERM $dev 2>/dev/null || true; wait $dev 2>/dev/null || true' EXIT INT TERM
for _ in $(seq 1 300); do
  "$corral" nodes > /dev/null 2>&1 && [ -f "${HOME:-/tmp}/.corral/dev.json" ] && break
  sleep 0.1
done

work=$(mktemp -d /tmp/corral-demo-XXXXXX)
cd "$work"
cat > train.sh <<'SCRIPT'
#!/bin/bash
#CORRAL --job-name=train-llm
#CORRAL --nodes=2 --gpus-per-node=8 --time=5:00
#CORRAL --output=train-%j.out
echo "training on $CORRAL_NODELIST with GPUs $CUDA_VISIBLE_DEVICES of $(hostname)"
for step in 1 2 3 4 5; do echo "step $step"; sleep 4; done
SCRIPT
echo "== submitting the demo workload (job files in $work) =="
corral submit train.sh
for i in 1 2 3 4 5 6; do
  corral submit --job-name="sweep-$i" --gpus=2 --time=2:00 --output="sweep-$i-%j.out" \
    --wrap "echo lr=0.00$i on GPUs \$CUDA_VISIBLE_DEVICES; sleep $((3 + i * 2))"
done
corral submit --job-name=big-eval --gpus-per-node=8 --nodes=2 --output=eval-%j.out --wrap "sleep 6"
corral submit --job-name=broken --output=broken-%j.out --wrap "echo oops >&2; exit 3"
corral submit --job-name=too-long --time=0:03 --output=long-%j.out --wrap "sleep 60"
corral submit --job-name=cpu-prep --cpus-per-task=8 --mem=16G --output=prep-%j.out --wrap "sleep 2"
echo "== and one that can never run: a clear error, nothing stored =="
corral submit --gpus-per-node=9 --wrap true || true

for _ in $(seq 1 12); do
  echo
  echo "== $(date +%T) corral queue =="
  corral queue
  left=$(corral queue --state PENDING,RUNNING --json | grep -c '"id"' || true)
  [ "$left" = 0 ] && break
  sleep 3
done
echo
echo "== corral nodes =="
corral nodes
echo
echo "== every job, finished ones too: corral queue --all =="
corral queue --all
echo
echo "Outputs are in $work. The cluster is still running: try 'corral submit --gpus 1 --wrap hostname'"
echo "in another terminal (PATH=$root/$build/src/main:\$PATH). Press Ctrl-C to stop it."
wait $dev
