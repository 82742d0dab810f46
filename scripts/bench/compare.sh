#!/usr/bin/env bash
# fetch_page throughput of `benchaudit serve` against the released ComtradeBench mock service,
# side by side on this machine (issue 17, SPEC §11), plus MCP tools/call on benchaudit.
#
#   RELEASED_MOCK=/path/to/released-mock scripts/bench/compare.sh
#   RELEASED_MOCK=… DURATION=8 ROUNDS=2 TASKS="T2_multi_page T3_duplicates T7_totals_trap" scripts/bench/compare.sh
#
# TASKS defaults to the ten tasks the released service knows (T1 … T10; T9_clean_ab is
# benchaudit's own control task and has no released counterpart).
#
# RELEASED_MOCK is a directory holding the released service's app.py and a run.sh that serves
# it (`run.sh PORT`: uvicorn, one worker, on 127.0.0.1:PORT). Nothing of it is part of this
# repository; the script only starts it.
#
# Method: both servers run pinned to one core (SERVER_CPU), wrk to the other (WRK_CPU), so
# they never compete for a core with their load generator. For every task, the same bounded
# load — `wrk -t1 -c16 -dDURATION --latency` on page 1 — runs against the released service
# (A) and benchaudit (B) in alternation, A B A B … for ROUNDS rounds, so both see the same
# background load; the ratio B/A is printed per round with both p99 latencies and the load
# average at the time. benchaudit serves each page from an episode opened with a budget that
# never runs out (so every request is a 200 page, as on the released service, which has no
# budget); the released service gets the task's query values, as its environment sends them.
# Besides throughput, the script reads each server's CPU time (utime + stime of the process,
# /proc/PID/stat) before and after every run and prints CPU microseconds per request: on a
# machine shared with other work, throughput is capped by whatever share of a core wrk and
# the server get, but the CPU a request costs the server is not, so the CPU ratio A/B is the
# figure to trust when the load average is high (both are printed with it).
# On a virtual machine the hypervisor can also take the vCPUs away: the "stolen" column is the
# share of the machine's CPU time it took during each run (the steal field of /proc/stat), A's
# run / B's run. Throughput falls with it, and on the machines measured so far the CPU charged
# to the faster server rose with it too (docs/performance.md): only runs where it is low
# measure the servers.
# Then MCP beside REST: `tools/call fetch_page {"page": 1}` as JSON-RPC over streamable HTTP on
# the episode's mcp_url, and REST's `GET …/pages/1` of the same task, in alternation (REST MCP
# REST MCP …, ROUNDS rounds), the same wrk settings; the MCP/REST CPU ratio is the cost of the
# protocol over the same page (benchaudit only: the released service has no MCP endpoint).
# MCP_ONLY=1 runs only this part (RELEASED_MOCK is then not needed).
# With FLOOR=nginx, each round also measures the transport floor: the bytes of benchaudit's own
# page 1 answer served from a file by nginx (one worker, pinned to SERVER_CPU like the others),
# once copied from nginx's buffer into the socket (`sendfile off`: what any server that builds
# the page in its own memory must at least do, plus nginx's read of the file) and once handed to
# the kernel without a copy (`sendfile on`). A/copy is the CPU ratio a server that spent nothing
# on making the page would reach against the released service on this machine.
# Needs wrk, curl, python3, taskset (util-linux), and nginx for FLOOR=nginx; every wrk run is
# bounded by -d and timeout.
set -euo pipefail

MCP_ONLY=${MCP_ONLY:-}
[[ -n "$MCP_ONLY" ]] || : "${RELEASED_MOCK:?set RELEASED_MOCK to the directory of the released mock service (app.py, run.sh), or MCP_ONLY=1}"
DURATION=${DURATION:-8}
ROUNDS=${ROUNDS:-2}
CONNECTIONS=${CONNECTIONS:-16}
TASKS=${TASKS:-"T1_single_page T2_multi_page T3_duplicates T4_rate_limit_429 T5_server_error_500 T6_page_drift T7_totals_trap T8_mixed_faults T9_adaptive_adversary T10_constrained_budget"}
WRK_CPU=${WRK_CPU:-0}
SERVER_CPU=${SERVER_CPU:-1}
PORT_A=${PORT_A:-19001}
PORT_B=${PORT_B:-19002}
PORT_F=${PORT_F:-19003}
FLOOR=${FLOOR:-}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${BENCHAUDIT:-}

for tool in wrk curl python3 taskset; do
  command -v "$tool" >/dev/null || { echo "$tool not found" >&2; exit 2; }
done
case "$FLOOR" in
  "") ;;
  nginx) command -v nginx >/dev/null || { echo "FLOOR=nginx: nginx not found" >&2; exit 2; } ;;
  *) echo "FLOOR must be empty or nginx, not $FLOOR" >&2; exit 2 ;;
esac
[[ -n "$MCP_ONLY" || -x "$RELEASED_MOCK/run.sh" ]] || { echo "no executable run.sh in RELEASED_MOCK=$RELEASED_MOCK" >&2; exit 2; }
if [[ -z "$BIN" ]]; then
  (cd "$ROOT" && cargo build --release -p benchaudit --quiet)
  BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/benchaudit"
fi

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

wait_up() { # url
  for _ in $(seq 1 600); do
    curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "server at $1 did not come up" >&2
  exit 1
}

# taskset and run.sh exec their command, so these are the servers' own PIDs.
if [[ -z "$MCP_ONLY" ]]; then
  taskset -c "$SERVER_CPU" "$RELEASED_MOCK/run.sh" "$PORT_A" >"$WORK/released.log" 2>&1 &
  PID_A=$!
  PIDS+=("$PID_A")
fi
taskset -c "$SERVER_CPU" "$BIN" serve --addr "127.0.0.1:$PORT_B" --idle-timeout 0 >"$WORK/benchaudit.log" 2>&1 &
PID_B=$!
PIDS+=("$PID_B")
wait_up "http://127.0.0.1:$PORT_B/healthz"
[[ -n "$MCP_ONLY" ]] || wait_up "http://127.0.0.1:$PORT_A/api/data?task_id=T3_duplicates&page=1"

curl -fsS "http://127.0.0.1:$PORT_B/v1/tasks" >"$WORK/tasks.json"
query_of() { # task -> the released endpoint's query string for page 1
  python3 - "$WORK/tasks.json" "$1" <<'PY'
import json, sys
tasks = {t["task_id"]: t for t in json.load(open(sys.argv[1]))["tasks"]}
q = tasks[sys.argv[2]]["query"]
print(f"task_id={sys.argv[2]}&page=1&reporter={q['reporter']}&partner={q['partner']}&flow={q['flow']}&hs={q['hs']}&year={q['year']}")
PY
}
open_episode() { # task -> episode id (budget u32::MAX: never runs out during the test)
  curl -fsS -X POST "http://127.0.0.1:$PORT_B/v1/episodes" -H 'Content-Type: application/json' \
    -d "{\"task_id\":\"$1\",\"seed\":0,\"max_requests\":4294967295}" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["episode_id"])'
}
cat >"$WORK/mcp.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fetch_page","arguments":{"page":1}}}'
LUA

TICK=$(getconf CLK_TCK)
cpu_ticks() { # pid -> utime + stime of the whole process, in clock ticks
  sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'
}
host_ticks() { # -> "stolen total": the machine's CPU ticks stolen by the hypervisor, and all of them
  awk '$1 == "cpu" {print $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9; exit}' /proc/stat
}
# run_wrk SERVER_PID URL [extra wrk args] -> "rps p99 non2xx cpu_us_per_request stolen_percent"
run_wrk() {
  local pid=$1 url=$2
  shift 2
  local out before after st0 all0 st1 all1
  read -r st0 all0 < <(host_ticks)
  before=$(cpu_ticks "$pid")
  out=$(timeout $((DURATION + 30)) taskset -c "$WRK_CPU" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency "$@" "$url")
  after=$(cpu_ticks "$pid")
  read -r st1 all1 < <(host_ticks)
  awk -v ticks=$((after - before)) -v hz="$TICK" -v stolen=$((st1 - st0)) -v all=$((all1 - all0)) '
       / requests in / {n = $1} /^Requests\/sec:/ {rps = $2} $1 == "99%" {p99 = $2} /Non-2xx/ {bad = $NF}
       END {printf "%s %s %s %.1f %.0f\n", rps, p99, (bad == "" ? 0 : bad), (n > 0 ? ticks * 1e6 / hz / n : 0),
            (all > 0 ? 100 * stolen / all : 0)}' <<<"$out"
}
load() { cut -d' ' -f1-3 /proc/loadavg; }
plus() { python3 -c "print($1 + $2)"; }
ratio_x() { # NUM DEN -> "NUM/DEN" as "12.3x", or n/a when DEN is 0
  python3 -c "print(f'{$1 / $2:.1f}x' if $2 > 0 else 'n/a')"
}

echo "machine: $(nproc) cores, $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
if [[ -z "$MCP_ONLY" ]]; then
echo "wrk -t1 -c$CONNECTIONS -d${DURATION}s --latency, wrk on CPU $WRK_CPU, servers on CPU $SERVER_CPU; $ROUNDS rounds A B A B"
echo "A = released mock ($RELEASED_MOCK/run.sh), B = $BIN serve"
[[ -z "$FLOOR" ]] || echo "each round also runs the transport floor after A and B: nginx ($(nginx -v 2>&1 | cut -d/ -f2)) serving B's page 1 bytes from a file, copy then zero"
echo
printf '%-22s %5s %10s %9s %9s %10s %9s %9s %7s %7s %7s  %s\n' task round "A req/s" "A p99" "A cpu-us" "B req/s" "B p99" "B cpu-us" "B/A" "cpu A/B" "stolen" "load (1 5 15)"
declare -A SUM_A SUM_B SUM_CA SUM_CB SUM_FC SUM_FZ URL_A URL_B
FLOOR_ROWS=()
for task in $TASKS; do
  id=$(open_episode "$task")
  URL_B[$task]="http://127.0.0.1:$PORT_B/v1/episodes/$id/pages/1"
  URL_A[$task]="http://127.0.0.1:$PORT_A/api/data?$(query_of "$task")"
  # Warm both up (and spend any planned transient fault on benchaudit's side).
  for _ in 1 2 3 4 5; do
    curl -sS -o /dev/null "${URL_A[$task]}"
    curl -sS -o /dev/null "${URL_B[$task]}"
  done
  SUM_A[$task]=0
  SUM_B[$task]=0
  SUM_CA[$task]=0
  SUM_CB[$task]=0
  if [[ -n "$FLOOR" ]]; then
    mkdir -p "$WORK/floor"
    # A 200 page (T9's adversary may answer a burst with an error first).
    for _ in $(seq 1 20); do
      code=$(curl -sS -o "$WORK/floor/$task.json" -w '%{http_code}' "${URL_B[$task]}")
      [[ "$code" == 200 ]] && break
      sleep 0.5
    done
    [[ "$code" == 200 ]] || { echo "FLOOR: $task's page 1 answered $code, not 200" >&2; exit 1; }
    SUM_FC[$task]=0
    SUM_FZ[$task]=0
  fi
done
if [[ -n "$FLOOR" ]]; then
  mkdir -p "$WORK/nginx"
  cat >"$WORK/nginx.conf" <<NGINX
daemon off;
master_process off;
worker_processes 1;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  keepalive_requests 1000000000;
  types { }
  default_type application/json;
  open_file_cache max=64;
  output_buffers 1 1m;
  client_body_temp_path $WORK/nginx/body;
  proxy_temp_path $WORK/nginx/proxy;
  fastcgi_temp_path $WORK/nginx/fastcgi;
  uwsgi_temp_path $WORK/nginx/uwsgi;
  scgi_temp_path $WORK/nginx/scgi;
  server {
    listen 127.0.0.1:$PORT_F;
    location /copy/ { alias $WORK/floor/; sendfile off; }
    location /zero/ { alias $WORK/floor/; sendfile on; tcp_nopush on; }
  }
}
NGINX
  taskset -c "$SERVER_CPU" nginx -e "$WORK/nginx/error.log" -c "$WORK/nginx.conf" >"$WORK/nginx.log" 2>&1 &
  PID_F=$!
  PIDS+=("$PID_F")
  for task in $TASKS; do
    wait_up "http://127.0.0.1:$PORT_F/copy/$task.json"
    cmp -s <(curl -fsS "http://127.0.0.1:$PORT_F/zero/$task.json") "$WORK/floor/$task.json" ||
      { echo "nginx does not serve $task's page as saved" >&2; exit 1; }
  done
fi
for round in $(seq 1 "$ROUNDS"); do
  for task in $TASKS; do
    read -r a_rps a_p99 a_bad a_cpu a_st < <(run_wrk "$PID_A" "${URL_A[$task]}")
    read -r b_rps b_p99 b_bad b_cpu b_st < <(run_wrk "$PID_B" "${URL_B[$task]}")
    ratio=$(ratio_x "$b_rps" "$a_rps")
    cpu_ratio=$(ratio_x "$a_cpu" "$b_cpu")
    note=""
    [[ "$a_bad$b_bad" == "00" ]] || note="  non-2xx: A $a_bad, B $b_bad"
    printf '%-22s %5s %10s %9s %9s %10s %9s %9s %7s %7s %7s  %s%s\n' "$task" "$round" "$a_rps" "$a_p99" "$a_cpu" "$b_rps" "$b_p99" "$b_cpu" "$ratio" "$cpu_ratio" "$a_st%/$b_st%" "$(load)" "$note"
    SUM_CA[$task]=$(plus "${SUM_CA[$task]}" "$a_cpu")
    SUM_CB[$task]=$(plus "${SUM_CB[$task]}" "$b_cpu")
    SUM_A[$task]=$(plus "${SUM_A[$task]}" "$a_rps")
    SUM_B[$task]=$(plus "${SUM_B[$task]}" "$b_rps")
    if [[ -n "$FLOOR" ]]; then
      read -r c_rps c_p99 c_bad c_cpu c_st < <(run_wrk "$PID_F" "http://127.0.0.1:$PORT_F/copy/$task.json")
      read -r z_rps z_p99 z_bad z_cpu z_st < <(run_wrk "$PID_F" "http://127.0.0.1:$PORT_F/zero/$task.json")
      FLOOR_ROWS+=("$(printf '%-22s %5s %10s %9s %10s %9s %8s %8s %8s %9s' "$task" "$round" "$c_rps" "$c_cpu" "$z_rps" "$z_cpu" \
        "$cpu_ratio" "$(ratio_x "$a_cpu" "$c_cpu")" "$(ratio_x "$a_cpu" "$z_cpu")" "$c_st%/$z_st%")")
      SUM_FC[$task]=$(plus "${SUM_FC[$task]}" "$c_cpu")
      SUM_FZ[$task]=$(plus "${SUM_FZ[$task]}" "$z_cpu")
    fi
  done
done
if [[ -n "$FLOOR" ]]; then
  echo
  echo "Transport floor: benchaudit's page 1 bytes served from a file by nginx on CPU $SERVER_CPU, run after A and B in each round"
  echo "(copy = sendfile off, the bytes copied into the socket; zero = sendfile on; A/B, A/copy, A/zero: the released service's CPU per request over each)"
  printf '%-22s %5s %10s %9s %10s %9s %8s %8s %8s %9s\n' task round "copy req/s" "cpu-us" "zero req/s" "cpu-us" "A/B" "A/copy" "A/zero" "stolen"
  printf '%s\n' "${FLOOR_ROWS[@]}"
fi
echo
for task in $TASKS; do
  bytes_a=$(curl -sS "${URL_A[$task]}" | wc -c)
  bytes_b=$(curl -sS "${URL_B[$task]}" | wc -c)
  printf '%-22s over all rounds: throughput B/A = %s, CPU per request A/B = %s   (page 1 body: A %s bytes, B %s bytes)\n' \
    "$task" "$(ratio_x "${SUM_B[$task]}" "${SUM_A[$task]}")" "$(ratio_x "${SUM_CA[$task]}" "${SUM_CB[$task]}")" "$bytes_a" "$bytes_b"
  if [[ -n "$FLOOR" ]]; then
    printf '%-22s transport floor: CPU per request A/copy = %s, A/zero = %s\n' \
      "" "$(ratio_x "${SUM_CA[$task]}" "${SUM_FC[$task]}")" "$(ratio_x "${SUM_CA[$task]}" "${SUM_FZ[$task]}")"
  fi
done

fi
echo
echo "MCP tools/call fetch_page {page: 1} (POST /v1/episodes/{id}/mcp, JSON response) beside REST GET /v1/episodes/{id}/pages/1 on benchaudit, alternating REST MCP, $ROUNDS rounds"
printf '%-22s %5s %10s %9s %10s %9s %9s %9s %7s  %s\n' task round "REST req/s" "cpu-us" "MCP req/s" "MCP p99" "cpu-us" "MCP/REST" "stolen" "load (1 5 15)"
declare -A SUM_R SUM_M SUM_CR SUM_CM MCP_URL REST_URL
for task in $TASKS; do
  id=$(open_episode "$task")
  MCP_URL[$task]="http://127.0.0.1:$PORT_B/v1/episodes/$id/mcp"
  REST_URL[$task]="http://127.0.0.1:$PORT_B/v1/episodes/$id/pages/1"
  for _ in 1 2 3 4 5; do curl -sS -o /dev/null "${REST_URL[$task]}"; done
  SUM_R[$task]=0
  SUM_M[$task]=0
  SUM_CR[$task]=0
  SUM_CM[$task]=0
done
for round in $(seq 1 "$ROUNDS"); do
  for task in $TASKS; do
    read -r r_rps r_p99 r_bad r_cpu r_st < <(run_wrk "$PID_B" "${REST_URL[$task]}")
    read -r m_rps m_p99 m_bad m_cpu m_st < <(run_wrk "$PID_B" "${MCP_URL[$task]}" -s "$WORK/mcp.lua")
    note=""
    [[ "$r_bad$m_bad" == "00" ]] || note="  non-2xx: REST $r_bad, MCP $m_bad"
    printf '%-22s %5s %10s %9s %10s %9s %9s %9s %7s  %s%s\n' "$task" "$round" "$r_rps" "$r_cpu" "$m_rps" "$m_p99" "$m_cpu" \
      "$(ratio_x "$m_cpu" "$r_cpu")" "$r_st%/$m_st%" "$(load)" "$note"
    SUM_R[$task]=$(plus "${SUM_R[$task]}" "$r_rps")
    SUM_M[$task]=$(plus "${SUM_M[$task]}" "$m_rps")
    SUM_CR[$task]=$(plus "${SUM_CR[$task]}" "$r_cpu")
    SUM_CM[$task]=$(plus "${SUM_CM[$task]}" "$m_cpu")
  done
done
echo
for task in $TASKS; do
  printf '%-22s over all rounds: MCP CPU per request = %s REST'"'"'s, REST/MCP throughput = %s\n' \
    "$task" "$(ratio_x "${SUM_CM[$task]}" "${SUM_CR[$task]}")" "$(ratio_x "${SUM_R[$task]}" "${SUM_M[$task]}")"
done
