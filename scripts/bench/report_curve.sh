#!/usr/bin/env bash
# The cost of `benchaudit report` against the size of a run: 11 tasks, 4 rule players
# (oracle, no-dedup, fabricator, empty), L0 and L2, over a growing number of seeds (88 episodes
# a seed), each report timed as the CPU seconds (user + system) and the peak memory of the
# process. The run grows in place (a wider resume adds the new seeds), with no transcripts.
#
#   scripts/bench/report_curve.sh                               # 10 30 100 300 1000 seeds
#   SEEDS="10 100" REPEAT=3 scripts/bench/report_curve.sh
#   OLD_BENCHAUDIT=path/to/old/benchaudit OLD_MAX_SEEDS=300 scripts/bench/report_curve.sh
#
# With OLD_BENCHAUDIT, the same run directories are also reported by that binary (up to
# OLD_MAX_SEEDS seeds: its cost grows with their square), in alternation with this one, and
# the ratio old/new is printed, with whether the two reports' files (stats.json, report.md,
# report.html, figures) are byte-identical. Each figure is the fastest of REPEAT reports. WORK
# (default: a temporary directory, removed at the end) holds the run; set it to keep the run.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SEEDS=${SEEDS:-"10 30 100 300 1000"}
REPEAT=${REPEAT:-3}
OLD=${OLD_BENCHAUDIT:-}
OLD_MAX_SEEDS=${OLD_MAX_SEEDS:-300}
BIN=${BENCHAUDIT:-}
[[ -x /usr/bin/time ]] || { echo "/usr/bin/time not found (apt-get install time)" >&2; exit 2; }
if [[ -z "$BIN" ]]; then
  (cd "$ROOT" && cargo build --release -p benchaudit --quiet)
  BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/benchaudit"
fi
KEEP=${WORK:+1}
WORK=${WORK:-$(mktemp -d)}
[[ -n "$KEEP" ]] || trap 'rm -rf "$WORK"' EXIT
RUN="$WORK/run"

# report BINARY OUT -> "cpu_seconds peak_MiB" (the fastest of REPEAT runs, with its peak)
report() {
  local best="" mem="" i out
  for i in $(seq 1 "$REPEAT"); do
    rm -rf "$2"
    out=$(/usr/bin/time -f '%U %S %M' "$1" report "$RUN" --out "$2" 2>&1 >/dev/null | tail -1)
    read -r u s m <<<"$out"
    local cpu
    cpu=$(python3 -c "print(f'{$u + $s:.2f}')")
    if [[ -z "$best" ]] || python3 -c "import sys; sys.exit(0 if $cpu < $best else 1)"; then
      best=$cpu
      mem=$(python3 -c "print(f'{$m / 1024:.1f}')")
    fi
  done
  echo "$best $mem"
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%6s %9s %10s %12s %9s %10s %9s %9s %9s\n' seeds episodes "cpu s" "us/episode" "peak MiB" "old cpu s" "old MiB" "old/new" "outputs"
for n in $SEEDS; do
  "$BIN" run --policy oracle,no-dedup,fabricator,empty --level L0,L2 --seeds "0..$((n - 1))" \
    --transcripts none --jobs "$(nproc)" --out "$RUN" >/dev/null 2>&1
  episodes=$(wc -l <"$RUN/episodes.jsonl")
  read -r cpu mem < <(report "$BIN" "$WORK/report")
  old_cpu="-" old_mem="-" ratio="-" same="-"
  if [[ -n "$OLD" && "$n" -le "$OLD_MAX_SEEDS" ]]; then
    read -r old_cpu old_mem < <(report "$OLD" "$WORK/report-old")
    ratio=$(python3 -c "print(f'{$old_cpu / $cpu:.1f}x' if $cpu > 0 else 'n/a')")
    if diff -r "$WORK/report-old" "$WORK/report" >"$WORK/diff.txt"; then same=identical; else
      same=DIFFER
      sed 's/^/  /' "$WORK/diff.txt" | head -20 >&2
    fi
  fi
  printf '%6s %9s %10s %12s %9s %10s %9s %9s %9s\n' "$n" "$episodes" "$cpu" \
    "$(python3 -c "print(f'{$cpu * 1e6 / $episodes:.0f}')")" "$mem" "$old_cpu" "$old_mem" "$ratio" "$same"
done
