#!/usr/bin/env bash
# The official Tinker SDK's RL loop (scripts/tinker-sdk-rl.py) against `trace-rl serve --tinker`, with
# the wire recorded as test vectors (test/data/tinker-sdk/rl-loop.jsonl, replayed by
# test/policy/tinker/sdk-replay.test.ts against trace-rl's client and server). Not run by CI: it needs
# the SDK's source and Python packages that CI does not have. docs/tinker.md says how to set them up.
#
#   scripts/tinker-sdk-run.sh SDK_DIR PYTHONPATH_EXTRA [PYTHON]
#
# SDK_DIR: a checkout of thinking-machines-lab/tinker (its src/ goes on PYTHONPATH);
# PYTHONPATH_EXTRA: folders with the SDK's dependencies the Python lacks; PYTHON: default python3.
set -euo pipefail
sdk=$1
extra=$2
python=${3:-python3}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
out=$root/test/data/tinker-sdk
mkdir -p "$out"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# The tiny LM the replay test serves too: test/tinylm/fixtures.ts's model, written as a GGUF.
node --import tsx "$root/scripts/tinker-fixture-model.ts" "$work/tiny.gguf"
key="tml-$(openssl rand -hex 16)"
echo "$key" > "$work/key"
node "$root/bin/trace-rl.js" serve --model "$work/tiny.gguf" --port 18471 --tinker --tinker-key-file "$work/key" 2> "$work/serve.log" &
pids+=($!)
rm -f "$work/wire.jsonl"
node --import tsx "$root/scripts/tinker-record-proxy.ts" http://127.0.0.1:18471 18472 "$work/wire.jsonl" &
pids+=($!)
until curl -sf http://127.0.0.1:18471/health > /dev/null && curl -s -o /dev/null http://127.0.0.1:18472/health; do sleep 1; done

TINKER_API_KEY=$key PYTHONPATH="$extra:$sdk/src" "$python" "$root/scripts/tinker-sdk-rl.py" http://127.0.0.1:18472 "$out/rl-loop-result.json"
# The recording, less the SDK's telemetry (its own event log, not the training wire).
grep -v -e '"path":"/api/v1/telemetry"' -e '"path":"/health"' "$work/wire.jsonl" > "$out/rl-loop.jsonl"
echo "recorded $(wc -l < "$out/rl-loop.jsonl") exchanges in $out/rl-loop.jsonl"
