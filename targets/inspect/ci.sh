#!/usr/bin/env bash
# The Inspect audit as a CI test: installs Inspect and its catalogue (package registry only, no
# key), runs the Rust tests against Inspect's real runtime, then audits the nine families of
# docs/audits/inspect.md (and three of them a second time) and checks the cards: written,
# guarded, identical across runs, refusals named, the page's figures in audit.json, and one
# family's pass rates equal to a direct call of its scorer (and, before that, the run hook of
# `audit --model` against a scripted model: the key, the seeds, the logs); then two tasks the answer battery
# cannot judge (an agent loop, a scorer of tool use), which must come out not probed; then a
# battery given as data (--battery) on two families.
# Usage (from anywhere): bash targets/inspect/ci.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

echo "== Inspect: setup"
targets/inspect/setup.sh
py=targets/inspect/.venv/bin/python

echo "== Inspect: Rust tests against Inspect's runtime"
BENCHAUDIT_REQUIRE_INSPECT=1 cargo test --workspace --test inspect

echo "== Inspect: the run hook (audit --model) against a scripted OpenAI-compatible server"
"$py" targets/inspect/test_run.py

echo "== Inspect: benchaudit audit --target inspect:… (the nine families of docs/audits/inspect.md, then three again)"
cargo build --quiet
bin=target/debug/benchaudit
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
nine=""
for f in gsm8k arc_easy arc_challenge boolq squad drop math humaneval simpleqa_verified; do
    nine="$nine${nine:+,}inspect:inspect_evals/$f"
done
three="inspect:inspect_evals/gsm8k,inspect:inspect_evals/arc_easy,inspect:inspect_evals/humaneval"
# --seeds 0 keeps the ComtradeBench half short; the Inspect half does not depend on it.
"$bin" audit --seeds 0 --target "$nine" --out "$out/a" >"$out/a.log"
"$bin" audit --seeds 0 --target "$three" --out "$out/b" >"$out/b.log"
tail -n 3 "$out/a.log"
"$py" - "$out/a/card.json" "$out/b/card.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
cards = lambda doc: {c["target"]: c for c in doc["cards"] if c["target"].startswith("Inspect: ")}
a, b = cards(a), cards(b)
assert len(b) == 3 and all(a[t] == b[t] for t in b), "cards differ between two runs"
print("the cards of", ", ".join(sorted(b)), "identical across two runs")
PY
"$bin" guard docs/audits/inspect.md --against "$out/a/audit.json"

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
echo "== Inspect: tasks the answer battery cannot judge are not probed (an agent loop; a scorer of tool use)"
# tau2_airline's solver is an agent loop: refused after one forged answer, not after every one.
# agent_threat_bench_data_exfil's security score reads the tool calls: no answer moves it.
"$bin" audit --seeds 0 --target inspect:inspect_evals/tau2_airline,inspect:inspect_evals/agent_threat_bench_data_exfil \
    --out "$out/c" >"$out/c.log"
"$py" - "$out/c/audit.json" <<'PY'
import json, sys
audit = json.load(open(sys.argv[1]))
by = {a["task"]["spec"]: a for a in audit["answers"]}
loop = by["inspect_evals/tau2_airline"]["card"]
assert loop["criterion_sensitivity"]["status"] == "not_probed", loop
assert "agent loop" in loop["criterion_sensitivity"]["evidence"], loop
tools = by["inspect_evals/agent_threat_bench_data_exfil"]
assert tools["card"]["criterion_sensitivity"]["status"] == "not_probed", tools["card"]
assert tools["card"]["licensed_claim"] == "none", tools["card"]
assert any("`send_message`" in f and "same score" in f for f in tools["failures"]), tools["failures"]
print("not probed, with the cause: tau2_airline (agent loop), agent_threat_bench_data_exfil (tool use)")
PY
echo "== Inspect: a battery given as data (--battery) runs its forgeries and the anchor only"
# The probes.toml format `benchaudit assist probes` writes: a hedged list and an empty answer.
cat >"$out/battery.toml" <<'TOML'
confirmed_from = "ci-battery"
probes = "answers"
[[battery]]
name = "hedge"
forgery = "every_candidate"
[[battery]]
name = "nothing"
forgery = "empty"
[[battery]]
name = "by_hand"
description = "described only"
TOML
"$bin" audit --seeds 0 --target inspect:inspect_evals/gsm8k,inspect:inspect_evals/arc_easy \
    --battery "$out/battery.toml" --out "$out/d" >"$out/d.log"
"$py" - "$out/d/audit.json" <<'PY'
import json, sys
audit = json.load(open(sys.argv[1]))
by = {a["task"]["spec"]: a for a in audit["answers"]}
for spec, a in by.items():
    built = sorted({i["forgery"] for i in a["items"]})
    assert built == ["empty", "every_candidate", "target"], (spec, built)
    assert a["battery"]["run"] == ["every_candidate", "empty"], a["battery"]
    assert a["battery"]["described"] == ["by_hand"], a["battery"]
gsm = by["inspect_evals/gsm8k"]["card"]
assert gsm["criterion_sensitivity"]["status"] == "fail", gsm
arc = by["inspect_evals/arc_easy"]["card"]
assert arc["criterion_sensitivity"]["status"] == "not_probed", arc
assert "leaves out" in arc["criterion_sensitivity"]["evidence"], arc
print("--battery: gsm8k fails on the proposed hedge; arc_easy separates both, and the partial battery licenses no pass")
PY
echo "Inspect audit: 1 passed, 0 failed"
