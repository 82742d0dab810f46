#!/usr/bin/env bash
# Stops the server scripts/local-llm/start.sh started on $LOCAL_LLM_PORT (default 8081).
# Only that process, by the pid start.sh recorded; nothing else is touched.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"

if [ ! -f "$PID_FILE" ]; then
  say "no server recorded on port $LOCAL_LLM_PORT"
  exit 0
fi
pid=$(cat "$PID_FILE")
if kill -0 "$pid" 2>/dev/null && grep -q llama-server "/proc/$pid/cmdline" 2>/dev/null; then
  kill "$pid"
  for _ in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
  say "stopped llama-server (pid $pid)"
else
  say "the recorded server (pid $pid) is not running"
fi
rm -f "$PID_FILE" "$STATE_DIR/llama-server-$LOCAL_LLM_PORT.model"
