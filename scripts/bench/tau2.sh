#!/usr/bin/env bash
# Times the τ² audit's performance target: an airline card with the gold, do-nothing and
# corrupted-write forgeries over all 50 tasks (targets/tau2/perf.toml), against the same audit
# without the target (the ComtradeBench half every `benchaudit audit` runs), in one run.
# Needs targets/tau2/setup.sh first. Usage: scripts/bench/tau2.sh [JOBS]   (default 2)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
jobs="${1:-2}"
# The debug build: the time is the hook's (Python), not the binary's.
cargo build -p benchaudit --quiet
bin=target/debug/benchaudit
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
t0=$(date +%s.%N)
"$bin" audit --seeds 0 --jobs "$jobs" --out "$out/base" >/dev/null
t1=$(date +%s.%N)
"$bin" audit --seeds 0 --jobs "$jobs" --target targets/tau2/perf.toml --out "$out/tau2" >"$out/tau2.log"
t2=$(date +%s.%N)
grep "τ²" "$out/tau2.log" | head -1
python3 - "$out/tau2/audit.json" "$t0" "$t1" "$t2" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
(t,) = a["trajectories"]
runs = [r for r in t["runs"] if r["built"]]
t0, t1, t2 = map(float, sys.argv[2:])
base, whole = t1 - t0, t2 - t1
print(f"airline: {t['groups'][0]['units_probed']} tasks, {len(runs)} forged runs played "
      f"(+{t['replay']['runs']} replayed, 8 ownership variations)")
print(f"audit without the target {base:.1f} s; with it {whole:.1f} s; the τ² part {whole - base:.1f} s")
PY
