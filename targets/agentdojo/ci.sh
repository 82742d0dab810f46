#!/usr/bin/env bash
# The AgentDojo audit as a CI test: installs agentdojo (package registry only, no key), runs the
# hook's Python tests and the Rust tests against the real package, then runs
# `benchaudit audit --target agentdojo` on a seeded sample twice and checks the card: written,
# guarded and identical across runs, with the same forged runs of one unit per suite scored by
# inspect_evals' AgentDojo port (port fidelity).
# Usage (from anywhere): bash targets/agentdojo/ci.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

echo "== AgentDojo: setup"
targets/agentdojo/setup.sh
# The port hook runs in the Inspect target's venv (already made by .ci/run's Inspect step).
targets/inspect/setup.sh >/dev/null
py=targets/agentdojo/.venv/bin/python

echo "== AgentDojo: hook tests (Python, in the venv)"
"$py" -m unittest discover -s targets/agentdojo -p 'test_*.py'

echo "== AgentDojo: Rust tests against the released package"
# The toy-hook tests ran in the workspace test step; here the one against the released package.
BENCHAUDIT_REQUIRE_AGENTDOJO=1 cargo test --workspace --test trajectories agentdojo_banking_through_the_released_checks

echo "== AgentDojo: benchaudit audit --target agentdojo (twice)"
cargo build --quiet
bin=target/debug/benchaudit
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$bin" audit --target agentdojo --seeds 0 --tasks-sample 8 --out "$out/a" >"$out/a.log"
"$bin" audit --target agentdojo --seeds 0 --tasks-sample 8 --out "$out/b" >"$out/b.log"
grep "AgentDojo" "$out/a.log"
cmp "$out/a/card.json" "$out/b/card.json"
echo "card.json identical across two runs"

"$py" - "$out/a" "$out/b" <<'PY'
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
audit = json.loads((out / "audit.json").read_text())
b = json.loads((pathlib.Path(sys.argv[2]) / "audit.json").read_text())
(t,) = audit["trajectories"]
assert [g["name"] for g in t["groups"]] == ["workspace", "travel", "banking", "slack"], t["groups"]
assert not t["failures"], t["failures"]
for g in t["groups"]:
    assert g["units_probed"] == 8, g["name"]
    assert not g["gold_misses"], (g["name"], g["gold_misses"])
    assert [c["name"] for c in g["components"]] == ["utility", "security"]
    assert g["criterion"]["status"] in ("pass", "fail"), g["criterion"]
assert t["ownership"]["cell"]["status"] in ("pass", "fail"), t["ownership"]
# The hook pins the clock and the hash seed, so a second process replays every run byte for byte.
assert t["replay"]["runs"] > 0 and t["replay"]["mismatches"] == 0, t["replay"]
# Port fidelity: inspect_evals' AgentDojo port scored one unit per suite.
p = t["port"]
assert p.get("not_probed") is None, p.get("not_probed")
assert p["runs"] > 0 and p["agree"] + p["disagree"] + p["unscored"] == p["runs"], p
assert {r["group"] for r in p["results"]} == {"workspace", "travel", "banking", "slack"}, p["results"]
assert all(r["agree"] for r in p["results"] if r["forgery"] == "gold"), p["results"]
assert b["trajectories"][0]["port"] == p, "the port's scores differ between the two runs"
print("AgentDojo card:", t["cards"][-1]["licensed_claim"], "| floors:",
      ", ".join(f'{g["name"]} {g["floor"]["passed"]} of {g["floor"]["played"]}' for g in t["groups"]),
      f'| port: agrees on {p["agree"]} of {p["runs"]} runs, disagrees on {p["disagree"]}')
PY
echo "AgentDojo audit: 1 passed, 0 failed"
