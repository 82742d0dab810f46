#!/usr/bin/env bash
# The BFCL audit as a CI test: installs the released checker (package registry only, no key),
# runs the hook's Python tests and the Rust tests against the real checker, then runs
# `benchaudit audit --target bfcl` twice and checks the card: written, guarded, identical
# across runs, and its AST pass rates equal to a direct call of BFCL's checker.
# Usage (from anywhere): bash targets/bfcl/ci.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

echo "== BFCL: setup"
targets/bfcl/setup.sh
py=targets/bfcl/.venv/bin/python

echo "== BFCL: hook and workaround tests (Python, in the venv)"
"$py" -m unittest discover -s targets/bfcl -p 'test_*.py'

echo "== BFCL: Rust tests against the released checker"
BENCHAUDIT_REQUIRE_BFCL=1 cargo test --workspace --test bfcl

echo "== BFCL: benchaudit audit --target bfcl (twice)"
cargo test --workspace --no-run --quiet
bin=target/debug/benchaudit
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
# --seeds 1 keeps the ComtradeBench half short; the BFCL half does not depend on it.
"$bin" audit --target bfcl --seeds 0 --out "$out/a" >"$out/a.log"
"$bin" audit --target bfcl --seeds 0 --out "$out/b" >"$out/b.log"
tail -n 3 "$out/a.log"
cmp "$out/a/card.json" "$out/b/card.json"
echo "card.json identical across two runs"

"$py" - "$out/a" <<'PY'
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
audit = json.loads((out / "audit.json").read_text())
cards = json.loads((out / "card.json").read_text())["cards"]
(calls,) = audit["calls"]
names = [c["name"] for c in calls["categories"]]
want = ["simple_python", "multiple", "parallel", "parallel_multiple", "simple_java",
        "simple_javascript", "live_simple", "irrelevance", "live_relevance", "live_irrelevance"]
assert names == want, names
for c in calls["categories"]:
    assert c["entries_probed"] > 0, c["name"]
    assert c["rates"] and all("passed" in r and "applicable" in r for r in c["rates"]), c["name"]
    assert c["criterion"]["status"] in ("pass", "fail"), (c["name"], c["criterion"])
groups = [c for c in cards if c["target"].startswith("BFCL")]
assert [g["target"].split(": ")[1] for g in groups] == ["AST track", "relevance detection"], groups
assert calls["replay"]["cell"]["status"] == "pass", calls["replay"]
md = (out / "card.md").read_text()
assert "## BFCL (bfcl-eval 2026.3.23)" in md
for name in want:
    assert (out / "figures" / f"bfcl_{name}.svg").exists(), name
print("BFCL card:", ", ".join(f'{g["target"]} -> {g["licensed_claim"]}' for g in groups))
PY

echo "== BFCL: pass rates recomputed by calling the checker directly"
"$py" targets/bfcl/recompute.py "$out/a/audit.json" \
    simple_python multiple parallel parallel_multiple simple_java simple_javascript live_simple \
    >"$out/recompute.log"
grep -c " ok$" "$out/recompute.log" | sed 's/^/rates recomputed and equal: /'
echo "BFCL audit: 1 passed, 0 failed"
