#!/usr/bin/env bash
# User-space instructions a page 1 request costs `benchaudit serve` over REST
# (GET /v1/episodes/{id}/pages/1) and over MCP (tools/call fetch_page on /v1/episodes/{id}/mcp),
# counted by callgrind: repeatable on a shared machine where CPU time is not.
#
#   scripts/bench/mcp_callgrind.sh                         # T1, T2, T7
#   BENCHAUDIT=path/to/benchaudit TASKS="T3_duplicates" scripts/bench/mcp_callgrind.sh
#
# For each task and each door the server runs under callgrind twice, serving LOW and then HIGH
# sequential requests (curl, one connection each); the figure is (Ir at HIGH − Ir at LOW) /
# (HIGH − LOW), so start-up and shut-down drop out. The kernel's side (the socket copies) is
# not counted: compare.sh measures whole-process CPU under load.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TASKS=${TASKS:-"T1_single_page T2_multi_page T7_totals_trap"}
LOW=${LOW:-20}
HIGH=${HIGH:-120}
PORT=${PORT:-19555}
BIN=${BENCHAUDIT:-}
for tool in valgrind curl python3; do
  command -v "$tool" >/dev/null || { echo "$tool not found" >&2; exit 2; }
done
if [[ -z "$BIN" ]]; then
  (cd "$ROOT" && cargo build --release -p benchaudit --quiet)
  BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/benchaudit"
fi
WORK=$(mktemp -d)
SERVER=""
cleanup() {
  if [[ -n "$SERVER" ]]; then kill -INT "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

BODY='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fetch_page","arguments":{"page":1}}}'
ir() { # task door requests -> Ir of the whole server process
  local url="http://127.0.0.1:$PORT"
  valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.out" "$BIN" serve --addr "127.0.0.1:$PORT" \
    --idle-timeout 0 >"$WORK/serve.log" 2>&1 &
  SERVER=$!
  for _ in $(seq 1 600); do curl -fsS -o /dev/null "$url/healthz" 2>/dev/null && break; sleep 0.1; done
  local id
  id=$(curl -fsS -X POST "$url/v1/episodes" -H 'Content-Type: application/json' \
    -d "{\"task_id\":\"$1\",\"seed\":0,\"max_requests\":4294967295}" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["episode_id"])')
  for _ in $(seq 1 "$3"); do
    if [[ "$2" == rest ]]; then
      curl -fsS -o /dev/null "$url/v1/episodes/$id/pages/1"
    else
      curl -fsS -o /dev/null -X POST "$url/v1/episodes/$id/mcp" -H 'Content-Type: application/json' \
        -H 'Accept: application/json, text/event-stream' -d "$BODY"
    fi
  done
  kill -INT "$SERVER"
  wait "$SERVER" 2>/dev/null || true
  SERVER=""
  awk '/^(summary|totals):/ {print $2; exit}' "$WORK/cg.out"
}
printf '%-22s %14s %14s %9s\n' task "REST Ir/req" "MCP Ir/req" "MCP/REST"
for task in $TASKS; do
  rest=$(( ($(ir "$task" rest "$HIGH") - $(ir "$task" rest "$LOW")) / (HIGH - LOW) ))
  mcp=$(( ($(ir "$task" mcp "$HIGH") - $(ir "$task" mcp "$LOW")) / (HIGH - LOW) ))
  printf '%-22s %14d %14d %8.2fx\n' "$task" "$rest" "$mcp" "$(python3 -c "print($mcp / $rest)")"
done
