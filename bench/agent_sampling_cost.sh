#!/bin/sh
# The agent's GPU sampling cost (issue 10: goal under 1% of a core), on a dev cluster with the
# simulated backend: one node with 8 GPUs. The agent is restarted with
# `[gpu] sample_interval_s = S` (default 1: ten times the default rate, the worst case a site
# would configure), then its CPU time (utime + stime from /proc/PID/stat) is read over N
# seconds twice, side by side:
#   idle:    no job (heartbeats, health checks, nothing to sample)
#   8 jobs:  eight running one-GPU jobs, each driving its GPU (CORRAL_SIM_GPU_UTIL=50), so that
#            every GPU is sampled every S seconds and the samples go to the controller
# The difference is the cost of sampling (and of supervising eight jobs, which it includes).
#
#   bench/agent_sampling_cost.sh [--interval S] [--seconds N] [--corral PATH]
set -eu

interval=1
seconds=60
corral=build/src/main/corral
while [ $# -gt 0 ]; do
  case "$1" in
    --interval) interval=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --corral) corral=$2; shift 2 ;;
    *) echo "usage: $0 [--interval S] [--seconds N] [--corral PATH]" >&2; exit 2 ;;
  esac
done
corral=$(cd "$(dirname "$corral")" && pwd)/$(basename "$corral")
[ -x "$corral" ] || { echo "no corral binary at $corral (build it first)" >&2; exit 1; }

work=$(mktemp -d /tmp/corral-agent-cost-XXXXXX)
export HOME="$work/home"  # the dev cluster's discovery file goes here, not in the real home
mkdir -p "$HOME"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
dev_pid=""
agent_pid=""
cleanup() {
  [ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null || true
  [ -n "$dev_pid" ] && kill "$dev_pid" 2>/dev/null && wait "$dev_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

"$corral" dev --nodes 1 --gpus-per-node 8 --state-dir "$work/dev" --port "$port" \
  > "$work/dev.out" 2>&1 &
dev_pid=$!
i=0
until grep -q "Press Ctrl-C" "$work/dev.out" 2>/dev/null; do
  i=$((i + 1)); [ $i -lt 300 ] || { cat "$work/dev.out" >&2; exit 1; }
  sleep 0.2
done

# Restart the agent with the sampling interval asked for (the dev cluster keeps running).
toml="$work/dev/agents/node01/agent.toml"
old=$(pgrep -f -- "agent --config $toml" | head -1)
kill "$old"
while kill -0 "$old" 2>/dev/null; do sleep 0.1; done
sed -i "s/^backend = \"simulated\"$/backend = \"simulated\"\nsample_interval_s = $interval/" "$toml"
"$corral" agent --config "$toml" > "$work/agent.log" 2>&1 &
agent_pid=$!

responding() {
  "$corral" nodes --json 2>/dev/null | python3 -c '
import json, sys
nodes = json.load(sys.stdin)
nodes = nodes.get("nodes", nodes) if isinstance(nodes, dict) else nodes
print(sum(1 for n in nodes if n.get("responding")))' 2>/dev/null || echo 0
}
i=0
until [ "$(responding)" = 1 ]; do
  i=$((i + 1)); [ $i -lt 300 ] || { cat "$work/agent.log" >&2; exit 1; }
  sleep 0.2
done

tck=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$agent_pid/stat"; }
measure() {  # prints the agent's CPU use over $seconds, in % of one core
  t0=$(cpu_ticks); w0=$(date +%s.%N)
  sleep "$seconds"
  t1=$(cpu_ticks); w1=$(date +%s.%N)
  python3 -c "print('%.3f' % (($t1 - $t0) / $tck / ($w1 - $w0) * 100))"
}

sleep 2  # past registration
idle=$(measure)

for n in 1 2 3 4 5 6 7 8; do
  (cd "$work" && CORRAL_SIM_GPU_UTIL=50 "$corral" submit --gpus 1 --wrap "sleep $((seconds * 3))") \
    > /dev/null  # the jobs' output files go to $work
done
running() {
  "$corral" queue --state RUNNING --json 2>/dev/null | python3 -c '
import json, sys
jobs = json.load(sys.stdin)
jobs = jobs.get("jobs", jobs) if isinstance(jobs, dict) else jobs
print(len(jobs))' 2>/dev/null || echo 0
}
i=0
until [ "$(running)" = 8 ]; do
  i=$((i + 1)); [ $i -lt 300 ] || { "$corral" queue >&2; exit 1; }
  sleep 0.2
done
sleep "$((interval * 2 + 1))"  # a few samples in
busy=$(measure)

echo "agent CPU, sample_interval_s=$interval, ${seconds}s each, 8 simulated GPUs:"
echo "  idle (no job):            $idle % of a core"
echo "  8 running one-GPU jobs:   $busy % of a core"
python3 -c "print('  difference (sampling + supervising 8 jobs): %.3f %% of a core' % ($busy - $idle))"
