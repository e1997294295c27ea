#!/usr/bin/env bash
# Failover under load (issue 11 item 4): two controllers on a throwaway PostgreSQL, three
# clients submitting with sbatch, and the leader SIGKILLed N times, alternating between the two
# (HaTest.PostgresFailoverUnderLoad with CORRAL_HA_KILLS=N; the ctest entry failure_test_postgres
# runs it with 4). Prints the acknowledged, lost, run-twice and not-completed counts and the
# takeover time p50/max. The takeover time is bounded below by the lease (2 s in the test).
#   bench/ha_failover.sh [N]     (default 20; build dir: $CORRAL_BUILD_DIR or ./build)
set -euo pipefail
cd "$(dirname "$0")/.."
kills="${1:-20}"
build="${CORRAL_BUILD_DIR:-build}"
binary="$build/tests/integration/failure_test"
[ -x "$binary" ] || { echo "ha_failover: $binary not built (ninja -C $build failure_test)" >&2; exit 1; }
CORRAL_HA_KILLS="$kills" tools/with_postgres.sh "$binary" \
  --gtest_filter=HaTest.PostgresFailoverUnderLoad | grep -E "failover under load|FAILED|Failure" 
