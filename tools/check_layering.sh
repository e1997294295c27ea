#!/usr/bin/env bash
# Fails when a component reaches across a boundary DESIGN.md forbids (STYLE.md 2.1, 2.3).
set -uo pipefail
cd "$(dirname "$0")/.."
fail=0
report() { echo "layering: $*"; fail=1; }

# sched is pure: no other component, no threads, files, databases, HTTP, clocks or randomness.
hits=$(grep -rnE '#include "(store|api|controller|agent|sim|cli)/|#include <(thread|mutex|fstream|sqlite3\.h|libpq-fe\.h|httplib\.h|condition_variable|future)>|system_clock::now|steady_clock::now|std::random_device|[^a-z_]rand\(' src/sched || true)
[ -n "$hits" ] && report "src/sched must stay pure:"$'\n'"$hits"

# Only core/clock.cc reads a clock.
hits=$(grep -rnE '(system_clock|steady_clock|high_resolution_clock)::now' src --include='*.cc' --include='*.h' | grep -v '^src/core/clock.cc:' | grep -v '_test.cc:' || true)
[ -n "$hits" ] && report "only core/clock.cc may read a clock:"$'\n'"$hits"

# core depends on nothing of ours.
hits=$(grep -rnE '#include "(sched|store|api|controller|agent|sim|cli)/' src/core || true)
[ -n "$hits" ] && report "src/core must not include other components:"$'\n'"$hits"

# cli and agent never link controller internals; sim never the daemons.
hits=$(grep -rnE '#include "(controller|store)/' src/cli src/agent || true)
[ -n "$hits" ] && report "cli/agent must not include controller or store:"$'\n'"$hits"
hits=$(grep -rnE '#include "(controller|agent|api|cli)/' src/sim 2>/dev/null || true)
[ -n "$hits" ] && report "sim must not include the daemons:"$'\n'"$hits"

# Inside the agent: gpu/ (backends) stands alone; exec/ (running jobs) may use gpu/ but not
# the daemon around them; each folder's internal/ (gpu's NVML ABI, exec's spawning) is its own.
hits=$(grep -rnE '#include "agent/' src/agent/gpu | grep -vE '#include "agent/gpu/' || true)
[ -n "$hits" ] && report "src/agent/gpu must include only agent/gpu/ of the agent:"$'\n'"$hits"
hits=$(grep -rnE '#include "agent/' src/agent/exec | grep -vE '#include "agent/(exec|gpu)/' || true)
[ -n "$hits" ] && report "src/agent/exec must include only agent/exec/ and agent/gpu/ of the agent:"$'\n'"$hits"
for sub in gpu exec; do
  hits=$(grep -rnE "#include \"agent/$sub/internal/" src bench tests --include='*.h' --include='*.cc' --include='*.c' | grep -v "^src/agent/$sub/" || true)
  [ -n "$hits" ] && report "agent/$sub/internal/ is private to src/agent/$sub:"$'\n'"$hits"
done
# The agent's core (agent_core.h) does no I/O: no threads, files, sockets, processes or HTTP;
# the service (agent.cc) carries out what it returns.
hits=$(grep -nE '#include <(thread|mutex|shared_mutex|condition_variable|future|fstream|filesystem|unistd\.h|fcntl\.h|dirent\.h|spawn\.h|sys/)|#include "api/(http|auth)|#include "agent/(agent|node_monitor|exec/(process_supervisor|cgroup|container|step_output|step_support))\.h"' src/agent/agent_core.h src/agent/agent_core.cc || true)
[ -n "$hits" ] && report "the agent's core must stay pure:"$'\n'"$hits"

# The HTTP/1 wire parser is pure (fuzzed on its own): no sockets, TLS, threads or files.
hits=$(grep -nE '#include <(sys/|netinet/|arpa/|unistd\.h|fcntl\.h|poll\.h|thread|mutex|fstream|openssl/)|#include "api/(http\.h|internal/(socket_io|http_conn|tls)\.h)"' src/api/internal/http_wire.h src/api/internal/http_wire.cc || true)
[ -n "$hits" ] && report "api/internal/http_wire must stay a pure parser:"$'\n'"$hits"

# Test helpers (src/*/testing/) are for tests, benchmarks and fuzz targets, never product code.
hits=$(grep -rnE '#include "[a-z_]+/([a-z_]+/)?testing/' src --include='*.h' --include='*.cc' | grep -vE '_test\.cc:|^src/[a-z_]+/([a-z_]+/)?testing/' || true)
[ -n "$hits" ] && report "src/*/testing/ is for tests only:"$'\n'"$hits"

# Heavy headers stay out of headers (compile time on 2 cores).
hits=$(grep -rnE '#include <(nlohmann/json\.hpp|spdlog/|toml\+\+/|CLI/)' src --include='*.h' || true)
[ -n "$hits" ] && report "heavy third-party headers belong in .cc files:"$'\n'"$hits"

# Internal headers are private to their component.
for dir in src/*/; do
  c=$(basename "$dir")
  hits=$(grep -rnE "#include \"[a-z_]+/internal/" src --include='*.h' --include='*.cc' | grep -vE "^src/$c/.*#include \"$c/internal/" | grep -E "^src/$c/" || true)
  [ -n "$hits" ] && report "src/$c includes another component's internal/ headers:"$'\n'"$hits"
done

[ $fail -eq 0 ] && echo "layering: ok"
exit $fail
