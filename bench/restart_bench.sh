#!/usr/bin/env bash
# Controller restart time with N jobs in its store (DESIGN.md target: 100,000 jobs recovered
# in under a second). Not a test.
#   bench/restart_bench.sh [N]      (default 100000)
# Prints the time from `corral controller` starting to its API answering, over 5 starts.
set -euo pipefail
N=${1:-100000}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CORRAL_BUILD_DIR:-$root/build}
corral=$build/src/main/corral
[ -x "$corral" ] && [ -x "$build/bench/make_store" ] || { echo "build first: ninja -C $build corral make_store"; exit 1; }
dir=$(mktemp -d /tmp/corral-restart-XXXXXX)
trap 'rm -rf "$dir"' EXIT
"$build/bench/make_store" "$dir/corral.db" "$N"
port=$(( 20000 + RANDOM % 20000 ))
cat > "$dir/corral.toml" <<TOML
[controller]
listen = "127.0.0.1:$port"
state_dir = "$dir"
[tls]
allow_plain_loopback = true   # measures recovery, not TLS
TOML
for i in 1 2 3 4 5; do
  t0=$(date +%s.%N)
  "$corral" controller --config "$dir/corral.toml" > "$dir/log" 2>&1 &
  pid=$!
  until curl -sf "http://127.0.0.1:$port/api/v1/health" > /dev/null; do
    kill -0 $pid 2>/dev/null || { cat "$dir/log"; exit 1; }
    sleep 0.005
  done
  t1=$(date +%s.%N)
  kill -TERM $pid; wait $pid || true
  awk -v a="$t0" -v b="$t1" -v n="$N" -v i="$i" 'BEGIN { printf "start %d: %d jobs recovered, API answering after %.0f ms\n", i, n, (b - a) * 1000 }'
done
grep -m1 "recovered" "$dir/log" || true
