#!/usr/bin/env bash
# End-to-end throughput of trivial jobs on `corral dev` (issue 2's benchmark; not a test).
#   bench/e2e_throughput.sh [N] [api|cli|sbatch|latency|both|tls-cost]  (default: N=1000, both = api and cli)
# api: N submissions through the HTTP API from 8 keep-alive connections (bench/submit_load);
# cli: one `corral submit --wrap true` process per job, in a loop, as users and scripts do.
# sbatch: the same through the `sbatch` link (the Slurm front end), as Slurm users do.
# latency: N submissions through the API, one every 20 ms from one connection (a cluster that
# is not saturated): the latency of one job, submit-to-start and submit-to-end.
# Prints submissions per second, the time until all N ended, and submit-to-start latency.
# tls-cost: the CLI's cost of TLS, side by side in one run: `cli` with TLS through the
# connection holder (the default; `tls`), with TLS and the holder off (`direct`,
# CORRAL_CONNECTION_HOLDER=0: each call its own TLS set-up and resumed handshake), with plain
# HTTP on loopback (`corral dev --plain-http`, CORRAL_ALLOW_PLAIN_HTTP=1) and, when
# CORRAL_BEFORE_BUILD_DIR names another build (say main's), with TLS on that build's binary;
# CORRAL_BENCH_ROUNDS rounds (default 2) of each, interleaved, then the figures and ratios.
# CORRAL_DEV_CONFIG=corral.toml gives the dev cluster those scheduling sections (e.g. a
# [scheduler] policy to compare). CORRAL_BENCH_PLAIN=1 runs the other modes over plain HTTP.
set -euo pipefail
N=${1:-1000}
MODE=${2:-both}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CORRAL_BUILD_DIR:-$root/build}
corral=$build/src/main/corral
load=$build/bench/submit_load
[ -x "$corral" ] && [ -x "$load" ] || { echo "build first: ninja -C $build corral submit_load"; exit 1; }
# The CLI's TLS session cache goes to HOME (the run's directory), not to the caller's.
export XDG_RUNTIME_DIR=
plain=${CORRAL_BENCH_PLAIN:-0}

run_one() {
  local mode=$1
  local dir; dir=$(mktemp -d /tmp/corral-bench-XXXXXX)
  local port=$(( 20000 + RANDOM % 20000 ))
  local scheme=https plain_flag=
  [ "$plain" = 1 ] && scheme=http plain_flag=--plain-http
  HOME=$dir "$corral" dev --nodes 4 --gpus-per-node 8 --state-dir "$dir/dev" --port "$port" $plain_flag ${CORRAL_DEV_CONFIG:+--config "$CORRAL_DEV_CONFIG"} > "$dir/dev.out" 2>&1 &
  local dev=$!
  trap 'kill $dev 2>/dev/null; wait $dev 2>/dev/null; rm -rf "$dir"' RETURN
  for _ in $(seq 1 300); do grep -q "Press Ctrl-C" "$dir/dev.out" 2>/dev/null && break; sleep 0.1; done
  grep -q "Press Ctrl-C" "$dir/dev.out" || { cat "$dir/dev.out"; return 1; }
  echo "== $mode ($scheme, $corral): $N trivial jobs on corral dev (4 nodes x 8 GPUs) =="
  if [ "$plain" = 1 ]; then export CORRAL_ALLOW_PLAIN_HTTP=1; else unset CORRAL_ALLOW_PLAIN_HTTP; fi
  # The connection holder (docs/operations.md) is on unless holder=0; it lives in $dir/.corral
  # and exits when the run's directory is removed.
  export CORRAL_CONNECTION_HOLDER=${holder:-1}
  if [ "$mode" = latency ]; then
    "$load" --controller "$scheme://127.0.0.1:$port" --key-file "$dir/dev/pki/keyring" --ca-file "$dir/dev/pki/ca.crt" --jobs "$N" --threads 1 --interval 20
  elif [ "$mode" = api ]; then
    "$load" --controller "$scheme://127.0.0.1:$port" --key-file "$dir/dev/pki/keyring" --ca-file "$dir/dev/pki/ca.crt" --jobs "$N" --threads 8
  else
    local t0 t1
    t0=$(date +%s.%N)
    local submit=("$corral" submit)
    [ "$mode" = sbatch ] && submit=("$build/src/main/sbatch")
    for _ in $(seq 1 "$N"); do
      HOME=$dir "${submit[@]}" --output=/dev/null --chdir=/tmp --parsable --wrap true > /dev/null
    done
    t1=$(date +%s.%N)
    awk -v n="$N" -v a="$t0" -v b="$t1" 'BEGIN { printf "submitted %d jobs with one CLI call each in %.2f s: %.0f submissions/s\n", n, b - a, n / (b - a) }'
    local last; last=$(HOME=$dir "$corral" queue --all --json | grep -o '"id":[0-9]*' | tail -1 | cut -d: -f2)
    HOME=$dir "$corral" wait "$last" > /dev/null || true
    while [ "$(HOME=$dir "$corral" queue --state PENDING,RUNNING --json | grep -c '"id"' || true)" != 0 ]; do sleep 0.05; done
    t1=$(date +%s.%N)
    awk -v n="$N" -v a="$t0" -v b="$t1" 'BEGIN { printf "all %d jobs ended %.2f s after the first submission: %.1f jobs/s end to end\n", n, b - a, n / (b - a) }'
  fi
}

# The CLI's cost of TLS (see the header): prints "label jobs/s" lines, then the ratios.
tls_cost() {
  local rounds=${CORRAL_BENCH_ROUNDS:-2} out; out=$(mktemp)
  local before=${CORRAL_BEFORE_BUILD_DIR:-}
  for r in $(seq 1 "$rounds"); do
    for variant in plain tls direct ${before:+before}; do
      local c=$build/src/main/corral p=0 h=1
      [ "$variant" = plain ] && p=1
      [ "$variant" = direct ] && h=0
      [ "$variant" = before ] && c=$before/src/main/corral
      local line
      line=$(corral=$c plain=$p holder=$h run_one cli | tee /dev/stderr | grep "jobs/s end to end")
      echo "$variant $(echo "$line" | awk '{print $(NF-4)}') $(echo "$line" | awk '{print $2}')" >> "$out"
    done
  done
  echo "== the CLI's cost of TLS: $N jobs, $rounds rounds (jobs/s end to end, each round) =="
  awk '{ s[$1] = s[$1] " " $2; t[$1] += $2; n[$1]++ }
       END {
         for (v in s) printf "%-7s %s  (mean %.1f)\n", v, s[v], t[v] / n[v]
         if (n["plain"] && n["tls"]) printf "tls / plain: %.2f\n", (t["tls"] / n["tls"]) / (t["plain"] / n["plain"])
         if (n["plain"] && n["direct"]) printf "direct / plain: %.2f\n", (t["direct"] / n["direct"]) / (t["plain"] / n["plain"])
         if (n["plain"] && n["before"]) printf "before / plain: %.2f\n", (t["before"] / n["before"]) / (t["plain"] / n["plain"])
         if (n["before"] && n["tls"]) printf "tls / before: %.2f\n", (t["tls"] / n["tls"]) / (t["before"] / n["before"])
       }' "$out"
  rm -f "$out"
}

case "$MODE" in
  tls-cost) tls_cost ;;
  api) run_one api ;;
  cli) run_one cli ;;
  sbatch) run_one sbatch ;;
  latency) run_one latency ;;
  both) run_one api; run_one cli ;;
esac
