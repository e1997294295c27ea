#!/usr/bin/env bash
# Checks the NVML GPU backend on a machine with NVIDIA GPUs (see README.md beside this file).
# usage: check_nvml.sh [path/to/corral]
set -uo pipefail
CORRAL=$(realpath "${1:-build/src/main/corral}")
command -v nvidia-smi >/dev/null || { echo "nvidia-smi not found: not a GPU machine"; exit 2; }
[ -x "$CORRAL" ] || { echo "corral binary not found: $CORRAL"; exit 2; }
DIR=$(mktemp -d /tmp/corral-device-XXXXXX)
PORT=$((20000 + RANDOM % 20000))
FAILED=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; FAILED=1; }
cleanup() {
  [ -n "${AGENT:-}" ] && kill "$AGENT" 2>/dev/null
  [ -n "${CTL:-}" ] && kill "$CTL" 2>/dev/null
  wait 2>/dev/null
  if [ "$FAILED" = 0 ]; then rm -rf "$DIR"; else echo "logs kept in $DIR"; fi
}
trap cleanup EXIT

cat >"$DIR/corral.toml" <<TOML
[controller]
listen = "127.0.0.1:$PORT"
state_dir = "$DIR/controller"
heartbeat_interval_s = 1
[auth]
jwt_key_file = "$DIR/jwt.key"
TOML
cat >"$DIR/agent.toml" <<TOML
[agent]
name = "gpu01"
controller = "http://127.0.0.1:$PORT"
listen = "127.0.0.1:0"
state_dir = "$DIR/agent"
[gpu]
backend = "nvml"
fallback = "fail"
sample_interval_s = 1
[health]
interval_s = 5
[auth]
jwt_key_file = "$DIR/jwt.key"
TOML
export CORRAL_CONTROLLER="http://127.0.0.1:$PORT" CORRAL_KEY_FILE="$DIR/jwt.key"
"$CORRAL" controller --config "$DIR/corral.toml" >"$DIR/controller.log" 2>&1 & CTL=$!
for _ in $(seq 1 100); do [ -s "$DIR/jwt.key" ] && break; sleep 0.1; done  # the controller creates it
"$CORRAL" agent --config "$DIR/agent.toml" >"$DIR/agent.log" 2>&1 & AGENT=$!
for _ in $(seq 1 100); do
  "$CORRAL" nodes --json >"$DIR/nodes.json" 2>/dev/null && grep -q '"responding": *true' "$DIR/nodes.json" && break
  sleep 0.2
done
grep -q '"responding": *true' "$DIR/nodes.json" || { bad "the agent did not register (see agent.log)"; tail -5 "$DIR/agent.log"; exit 1; }

# 1. Discovery matches nvidia-smi.
nvidia-smi --query-gpu=index,uuid,name,memory.total,driver_version --format=csv,noheader,nounits >"$DIR/smi.csv"
python3 - "$DIR/nodes.json" "$DIR/smi.csv" <<'PY' && ok "discovery matches nvidia-smi" || bad "discovery differs from nvidia-smi"
import json, sys
node = json.load(open(sys.argv[1]))["nodes"][0]
inv = node["inventory"]
smi = [[f.strip() for f in l.split(",")] for l in open(sys.argv[2]) if l.strip()]
gpus = inv["gpus"]
assert inv["gpu_backend"] == "nvml", inv["gpu_backend"]
if any(g["uuid"].startswith("MIG-") for g in gpus):
    print("  (MIG devices reported; comparing parents is skipped)"); sys.exit(0)
assert len(gpus) == len(smi), (len(gpus), len(smi))
for g, s in zip(gpus, smi):
    assert g["uuid"] == s[1], (g["uuid"], s[1])
    assert abs(g["memory_mb"] - int(s[3])) <= int(s[3]) // 100 + 1, (g["memory_mb"], s[3])
    assert g["model"] and g["model"].isalnum(), g["model"]
    print("  gpu %d %s %s -> %s, numa %d, nvlink peers %s" % (g["index"], s[1], s[2], g["model"], g["numa_node"], g["nvlink_peers"]))
assert inv["driver_version"] == smi[0][4], (inv["driver_version"], smi[0][4])
print("  driver %s, CUDA %s" % (inv["driver_version"], inv["cuda_version"]))
PY

# 2. Samples and usage: keep one GPU busy (nvidia-smi's own queries are enough load to
# register in the counters only lightly; use a CUDA sample when one is on the machine).
cd "$DIR" || exit 1
BUSY='end=$((SECONDS+8)); while [ $SECONDS -lt $end ]; do nvidia-smi -q >/dev/null; done'
command -v python3 >/dev/null && python3 -c "import torch" 2>/dev/null && \
  BUSY='python3 -c "import torch,time; x=torch.randn(8192,8192,device=\"cuda\"); t=time.time()
while time.time()-t<8: x=x@x; x/=x.norm()
torch.cuda.synchronize()"'
JOB=$("$CORRAL" submit --parsable --gpus 1 --wrap "$BUSY" 2>"$DIR/submit.err")
"$CORRAL" wait "$JOB" >/dev/null 2>&1
"$CORRAL" show --json "$JOB" >"$DIR/usage.json"
python3 - "$DIR/usage.json" <<'PY' && ok "usage sampled (GPU-seconds, utilisation, memory, energy)" || bad "usage not sane"
import json, sys
j = json.load(open(sys.argv[1])); u = j["usage"]
print("  state %s usage %s" % (j["state"], u))
assert j["state"] == "COMPLETED"
assert u["gpu_seconds"] >= 5, u
assert u["energy_joules"] > 0, u
assert u["gpu_mem_max_mb"] >= 0 and u["gpu_util_max"] >= 0, u
PY
"$CORRAL" show "$JOB" | grep -q "Energy:" && ok "corral show prints the usage" || bad "corral show lacks the usage"

# 3. A job sees only its GPUs.
NGPU=$(wc -l <"$DIR/smi.csv")
JOB=$("$CORRAL" submit --parsable --gpus 1 --output "$DIR/only.out" --wrap \
  'nvidia-smi -L | grep -c "^GPU"; for f in /dev/nvidia[0-9]*; do head -c0 "$f" 2>/dev/null && echo "open $f" || echo "denied $f"; done')
"$CORRAL" wait "$JOB" >/dev/null 2>&1
[ "$(head -1 "$DIR/only.out")" = 1 ] && ok "a 1-GPU job sees 1 GPU in nvidia-smi -L" || bad "a 1-GPU job sees: $(head -1 "$DIR/only.out")"
if grep -q "running jobs without cgroups" "$DIR/agent.log"; then
  echo "skip device files: the agent has no cgroups ($(grep -o 'without cgroups: .*' "$DIR/agent.log" | head -1))"
elif [ "$NGPU" -gt 1 ]; then
  [ "$(grep -c '^open' "$DIR/only.out")" = 1 ] && ok "only its own /dev/nvidiaN opens" || bad "device files: $(tr '\n' ' ' <"$DIR/only.out")"
fi

# 4. The NVML backend refuses injected faults.
"$CORRAL" node inject gpu01 --gpu 0 --xid 79 2>"$DIR/inject.err" && bad "injection accepted by NVML" || \
  { grep -q "does not take injected faults" "$DIR/inject.err" && ok "injection refused by the NVML backend" || bad "inject: $(cat "$DIR/inject.err")"; }

exit $FAILED
