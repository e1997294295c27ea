#!/usr/bin/env bash
# Scale (issue 11 item 5): the controller of a `corral dev` cluster, alone, and
# bench/swarm (N simulated agents in one process over real HTTPS) heartbeating it, idle and
# then under a load of trivial one-GPU jobs. Prints the controller's CPU and RSS, heartbeat
# latency p50/p99, the controller's time per heartbeat, submit-to-start and the scheduling
# passes (see bench/swarm.cc).
#   bench/swarm.sh [NODES] [HEARTBEAT_S] [SECONDS] [JOBS]   (default 10000 5 30 2000)
set -euo pipefail
NODES=${1:-10000}
HB=${2:-5}
SECS=${3:-30}
JOBS=${4:-2000}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CORRAL_BUILD_DIR:-$root/build}
corral=$build/src/main/corral
swarm=$build/bench/swarm
[ -x "$corral" ] && [ -x "$swarm" ] || { echo "build first: ninja -C $build corral swarm"; exit 1; }
export XDG_RUNTIME_DIR=
dir=$(mktemp -d /tmp/corral-swarm-XXXXXX)
port=$(( 20000 + RANDOM % 20000 ))
# `corral dev` makes the cluster's CA, keys and config; then its controller runs alone, with
# the heartbeat interval and a node timeout (6 intervals) for the swarm's heartbeats.
HOME=$dir "$corral" dev --nodes 1 --state-dir "$dir/dev" --port "$port" > "$dir/dev.out" 2>&1 &
dev=$!
ctl=
trap 'kill $dev $ctl 2>/dev/null; wait $dev $ctl 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 1 300); do grep -q "Press Ctrl-C" "$dir/dev.out" 2>/dev/null && break; sleep 0.1; done
grep -q "Press Ctrl-C" "$dir/dev.out" || { cat "$dir/dev.out"; exit 1; }
kill -TERM $dev; wait $dev || true
sed -i -e "s/^heartbeat_interval_s = .*/heartbeat_interval_s = $HB/" \
  -e "s/^node_timeout_s = .*/node_timeout_s = $(( HB * 6 ))/" "$dir/dev/corral.toml"
"$corral" controller --config "$dir/dev/corral.toml" > "$dir/controller.log" 2>&1 &
ctl=$!
pid=$ctl
for _ in $(seq 1 300); do curl -sk "https://127.0.0.1:$port/readyz" > /dev/null 2>&1 && break; sleep 0.1; done
# The dev cluster's own node (its agent stopped with `corral dev`) takes no jobs.
HOME=$dir CORRAL_CONTROLLER="https://127.0.0.1:$port" CORRAL_CA_FILE="$dir/dev/pki/ca.crt" \
  CORRAL_KEY_FILE="$dir/dev/pki/keyring" CORRAL_CLUSTER=dev "$build/src/main/scontrol" update nodename=node01 state=drain reason=swarm
HOME=$dir "$corral" ca issue-node swarm --dir "$dir/dev/pki" --ip 127.0.0.1 > /dev/null
echo "== swarm: $NODES simulated agents x 8 GPUs, one heartbeat per ${HB} s; controller pid $pid =="
"$swarm" --controller "https://127.0.0.1:$port" --key-file "$dir/dev/pki/keyring" \
  --ca-file "$dir/dev/pki/ca.crt" --cert "$dir/dev/pki/nodes/swarm.crt" \
  --key "$dir/dev/pki/nodes/swarm.key" --pid "$pid" --nodes "$NODES" --heartbeat-s "$HB" \
  --seconds "$SECS" --jobs "$JOBS"
