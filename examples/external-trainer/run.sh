#!/usr/bin/env bash
# The external-trainer loop end to end on CPU:
#   trace-rl serve (llama.cpp)  <-- token ids --  trace-rl rollout (TRACE)  -- batches -->  trainer.py (PyTorch)
#          ^------------------------ /reload <-- POST /weights {step, model} ------------------'
# Usage: bash examples/external-trainer/run.sh [--steps N] [--format jsonl|trl-jsonl] [--keep DIR]
#   (jsonl: verl rows; trl-jsonl: TRL rows; both as JSON Lines, as Debian has no pyarrow)
# Prints as its last line: {"steps": N, "rows": R, "max_logprob_gap": G, "weights_reloaded": N}
set -euo pipefail
STEPS=3
FORMAT=jsonl
WORK=""
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) STEPS="$2"; shift 2 ;;
    --keep) WORK="$2"; shift 2 ;;
    --format) FORMAT="$2"; shift 2 ;;
    *) echo "run.sh: unknown option $1 (use --steps N, --format jsonl|trl-jsonl, --keep DIR)" >&2; exit 2 ;;
  esac
done
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
TRACE=(node "$ROOT/bin/trace-rl.js")

# 1. What it needs: Debian's PyTorch and numpy (apt; Debian's own python, not a pyenv/venv one unless
#    PYTHON names it), the project's npm packages.
PY="${PYTHON:-/usr/bin/python3}"
[ -x "$PY" ] || PY=python3
if ! "$PY" -c 'import torch, numpy' 2>/dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "run.sh: installing python3-torch and python3-numpy with apt (a few minutes, once)" >&2
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-torch python3-numpy >/dev/null
fi
[ -d "$ROOT/node_modules" ] || (cd "$ROOT" && npm ci --no-audit --no-fund >/dev/null)

[ -n "$WORK" ] || WORK="$(mktemp -d)"
mkdir -p "$WORK"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

# 2. The tiny llama (the repository's warm-start checkpoint: d64, 2 layers, the world's vocabulary,
#    trained on demonstrations so some rollouts succeed) and llama.cpp serving it, reloadable.
cp "$ROOT/bench/tinylm/warm-start.gguf" "$WORK/model-0.gguf"
# The control routes (serve's /reload, the service's /weights) need a token; one file serves both here.
(umask 077 && head -c 24 /dev/urandom | base64 | tr -d '/+=\n' >"$WORK/control-token")
"${TRACE[@]}" serve --model "$WORK/model-0.gguf" --port 0 --allow-reload --control-token-file "$WORK/control-token" 2>"$WORK/serve.log" &
PIDS+=($!)
URL=""
for _ in $(seq 1 300); do
  URL="$(grep -o 'http://[^ ]*/v1' "$WORK/serve.log" | head -1 || true)"
  [ -n "$URL" ] && break
  sleep 0.1
done
[ -n "$URL" ] || { echo "run.sh: trace-rl serve did not start: $(cat "$WORK/serve.log")" >&2; exit 1; }
ROOT_URL="${URL%/v1}"

# 3. The rollout service: token ids in and out (the server's own tokenizer), one batch per step,
#    then it waits for POST /weights and has the server reload the new GGUF. steps + 1 batches:
#    the last one checks that the server samples from the trainer's final weights. The paper's trace
#    (adaptive roots, N = 2) on 4 prompts: its trees branch, so a 3-step run finds some contrast.
"${TRACE[@]}" rollout --policy openai --base-url "$URL" --mode tokens --tokenizer server \
  --format "$FORMAT" --out "$WORK/run" --listen 0 --reload-url "$ROOT_URL" \
  --control-token-file "$WORK/control-token" --reload-token-file "$WORK/control-token" \
  --steps $((STEPS + 1)) --pool 4 --budget 16 --seed 1 --set engine.maxTokensPerTurn=48 --set engine.maxTurns=6 --set env.prompt=question --strategy trace --set strategy.preset=paper >"$WORK/rollout.jsonl" 2>"$WORK/rollout.log" &
PIDS+=($!)

# 4. The trainer (PyTorch): rows -> verl tensors -> clipped PG step -> GGUF -> POST /weights.
"$PY" "$HERE/trainer.py" --rollout-pid "${PIDS[1]}" --events "$WORK/rollout.jsonl" --model "$WORK/model-0.gguf" --steps "$STEPS" --out "$WORK" --token-file "$WORK/control-token"
