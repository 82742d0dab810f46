#!/usr/bin/env bash
# Instruction counts of the SPEC §11 hot paths under callgrind: stable on a shared machine
# where wall time is not, so code versions are compared by these.
#
#   scripts/bench/callgrind.sh                 # every workload
#   scripts/bench/callgrind.sh judge_t2 f1_t2  # some
#
# Each workload (crates/agents/benches/hotpaths.rs) runs inside `measure`, the only function
# callgrind counts; the figure is (Ir at 12 repetitions − Ir at 2) / 10, so one-time costs
# (first-touch allocation, lazy tables) drop out. Valgrind hides SHA-NI and AVX-512 from the
# program, so software fallbacks are what it counts; wall-clock figures come from divan.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
command -v valgrind >/dev/null || { echo "valgrind not found (apt-get install valgrind)" >&2; exit 2; }
WORKLOADS=("$@")
[[ ${#WORKLOADS[@]} -gt 0 ]] || WORKLOADS=(page_t1 page_t2 page_t3 page_t6 page_t7 truth_t2 judge_t2 f1_t2 both_t2 episode_t2)

BIN=$(cd "$ROOT" && cargo bench -p benchaudit-agents --bench hotpaths --no-run --message-format=json 2>/dev/null |
  sed -n 's/.*"executable":"\([^"]*hotpaths[^"]*\)".*/\1/p' | tail -1)
[[ -x "$BIN" ]] || { echo "could not build the hotpaths bench" >&2; exit 1; }

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
ir() { # workload, repetitions -> instructions counted inside measure
  valgrind --tool=callgrind --toggle-collect='*hotpaths::measure*' \
    --callgrind-out-file="$OUT/cg.out" "$BIN" "$1" "$2" >/dev/null 2>&1
  awk '/^(summary|totals):/ {print $2; exit}' "$OUT/cg.out"
}
printf '%-12s %16s\n' workload "Ir/iteration"
for w in "${WORKLOADS[@]}"; do
  a=$(ir "$w" 2)
  b=$(ir "$w" 12)
  printf '%-12s %16d\n' "$w" $(((b - a) / 10))
done
