#!/usr/bin/env bash
# The Inspect audit as a CI test: installs Inspect and its catalogue (package registry only, no
# key), runs the Rust tests against Inspect's real runtime, then audits a sample of families
# twice and checks the cards: written, guarded, identical across runs, refusals named, and one
# family's pass rates equal to a direct call of its scorer.
# Usage (from anywhere): bash targets/inspect/ci.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

echo "== Inspect: setup"
targets/inspect/setup.sh
py=targets/inspect/.venv/bin/python

echo "== Inspect: Rust tests against Inspect's runtime"
BENCHAUDIT_REQUIRE_INSPECT=1 cargo test --workspace --test inspect

echo "== Inspect: benchaudit audit --target inspect:… (twice)"
cargo build --quiet
bin=target/debug/benchaudit
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
families="inspect:inspect_evals/gsm8k,inspect:inspect_evals/arc_easy,inspect:inspect_evals/humaneval"
# --seeds 0 keeps the ComtradeBench half short; the Inspect half does not depend on it.
"$bin" audit --seeds 0 --target "$families" --out "$out/a" >"$out/a.log"
"$bin" audit --seeds 0 --target "$families" --out "$out/b" >"$out/b.log"
tail -n 3 "$out/a.log"
cmp "$out/a/card.json" "$out/b/card.json"
echo "card.json identical across two runs"

"$py" - "$out/a" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
audit = json.loads((out / "audit.json").read_text())
by = {a["task"]["spec"] if a["task"] else a["target"]: a for a in audit["answers"]}
gsm = by["inspect_evals/gsm8k"]
assert gsm["card"]["criterion_sensitivity"]["status"] == "fail", gsm["card"]
hedge = [r for r in gsm["scorers"][0]["rates"] if r["forgery"] == "every_candidate"][0]
assert hedge["passed"] > 0, hedge
arc = by["inspect_evals/arc_easy"]
assert arc["format"]["chosen"] == "answer_line", arc["format"]
assert arc["card"]["licensed_claim"] == "model_capability", arc["card"]
he = by["inspect_evals/humaneval"]
assert he["card"]["criterion_sensitivity"]["status"] == "not_probed"
assert "sandbox" in he["card"]["criterion_sensitivity"]["evidence"]
md = (out / "card.md").read_text()
assert "## Inspect: inspect_evals/gsm8k" in md
print("Inspect cards:", ", ".join(f'{k} -> {a["card"]["licensed_claim"]}' for k, a in by.items()))
PY

echo "== Inspect: pass rates recomputed by calling the scorer directly"
"$py" targets/inspect/recompute.py "$out/a/audit.json" inspect_evals/gsm8k \
    "$PWD/targets/inspect/samples/gsm8k.jsonl" >"$out/recompute.log"
grep -c " ok$" "$out/recompute.log" | sed 's/^/rates recomputed and equal: /'
echo "Inspect audit: 1 passed, 0 failed"
