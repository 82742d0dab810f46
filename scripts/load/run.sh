#!/usr/bin/env bash
# Load test of `benchaudit serve` on loopback, bounded in time.
#
#   scripts/load/run.sh            # build release, run everything (about a minute)
#   DURATION=30 scripts/load/run.sh
#
# Measures, against 127.0.0.1 only:
#   1. fetch_page throughput and latency (wrk, --latency) on a 10-row page (T4) and a
#      500-row page (T2), each episode opened with a budget large enough never to run out;
#   2. POST /v1/episodes throughput;
#   3. resident memory (VmRSS from /proc/PID/status) of a server holding 100 000 open episodes.
# Needs wrk (Debian: apt-get install wrk) and curl.
set -euo pipefail

DURATION=${DURATION:-10}          # seconds per wrk run
THREADS=${THREADS:-1}             # wrk threads (the server keeps the other core)
CONNECTIONS=${CONNECTIONS:-32}    # wrk connections
EPISODES=${EPISODES:-100000}      # open episodes for the memory figure
PORT=${PORT:-18181}
HOST=127.0.0.1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${BENCHAUDIT:-}

command -v wrk >/dev/null || { echo "wrk not found (apt-get install wrk)" >&2; exit 2; }
command -v curl >/dev/null || { echo "curl not found" >&2; exit 2; }
if [[ -z "$BIN" ]]; then
  (cd "$ROOT" && cargo build --release -p benchaudit --quiet)
  BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/benchaudit"
fi

SERVER_PID=
stop_server() {
  if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID"
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  SERVER_PID=
}
trap stop_server EXIT

start_server() {
  "$BIN" serve --addr "$HOST:$PORT" "$@" 2>/dev/null &
  SERVER_PID=$!
  for _ in $(seq 1 100); do
    curl -fsS "http://$HOST:$PORT/healthz" >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  echo "server did not start" >&2
  exit 1
}

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$SERVER_PID/status"; }

open_episode() { # task -> episode id, with a budget that never runs out during the test
  curl -fsS -X POST "http://$HOST:$PORT/v1/episodes" -H 'Content-Type: application/json' \
    -d "{\"task_id\":\"$1\",\"seed\":7,\"max_requests\":4000000000}" |
    sed -E 's/.*"episode_id":"([0-9a-f]+)".*/\1/'
}

summary() { # label, wrk output
  local rps p50 p99
  rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$2")
  p50=$(awk '$1 == "50%" {print $2}' <<<"$2")
  p99=$(awk '$1 == "99%" {print $2}' <<<"$2")
  printf '%-34s %12s req/s   p50 %-8s p99 %s\n' "$1" "$rps" "$p50" "$p99"
}

echo "machine: $(nproc) cores, $(uname -r); wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s; binary $BIN"
start_server --idle-timeout 0
for task in T4_rate_limit_429 T2_multi_page; do
  id=$(open_episode "$task")
  url="http://$HOST:$PORT/v1/episodes/$id/pages/2"
  # Spend the planned transient faults (T4: one 429 among its first valid requests) first.
  for _ in 1 2 3 4 5; do curl -sS "$url" -o /dev/null; done
  out=$(timeout $((DURATION + 30)) wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency "$url")
  non2xx=$(awk '/Non-2xx/ {print $NF}' <<<"$out")
  summary "GET fetch_page $task" "$out"
  [[ -z "$non2xx" ]] || echo "  (non-2xx responses: $non2xx)"
done
out=$(SHARE=1000000000 timeout $((DURATION + 30)) wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency \
  -s "$ROOT/scripts/load/create_episodes.lua" "http://$HOST:$PORT")
summary "POST /v1/episodes" "$out"
stop_server

start_server --idle-timeout 0 --max-episodes "$EPISODES"
base=$(rss_kib)
open_count() { curl -fsS "http://$HOST:$PORT/metrics" | awk '$1 == "benchaudit_episodes_open" {print $2}'; }
open=0
# Bursts of at most 5 s, each asked for what is still missing (wrk's per-thread stop), until the
# store holds EPISODES; a few requests in flight at a stop may overshoot, and the cap then
# evicts that handful, so exactly EPISODES stay open. Bounded: at most 20 bursts.
for _ in $(seq 1 20); do
  open=$(open_count)
  (( open >= EPISODES )) && break
  SHARE=$(( (EPISODES - open + 1) / 2 )) timeout 60 wrk -t2 -c8 -d5s \
    -s "$ROOT/scripts/load/create_episodes.lua" "http://$HOST:$PORT" >/dev/null
done
open=$(open_count)
full=$(rss_kib)
printf 'RSS: %d KiB empty, %d KiB with %d open T2 episodes (%.1f MiB; %.0f bytes per episode)\n' \
  "$base" "$full" "$open" "$(bc -l <<<"$full / 1024")" "$(bc -l <<<"($full - $base) * 1024 / $open")"
stop_server
