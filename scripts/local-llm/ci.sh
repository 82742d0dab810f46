#!/usr/bin/env bash
# Live test with a real model (issue 18): starts llama-server with SmolLM2-135M-Instruct (from
# PyPI, SHA-256 checked), runs `benchaudit run --model local:smollm2` at L0, L1 and L2 on three
# tasks x two seeds beside the oracle, and asserts what must hold whatever the model's skill:
#   - no infrastructure error, and every episode has an outcome;
#   - every model episode has token usage and a transcript with the model's own text;
#   - L0 invariance with a real model: every L0 payload's SHA-256 equals the oracle's;
#   - the manifest records the server build and the model file's SHA-256;
#   - `report` on the run and `audit --model local:smollm2 --target tau2` exit 0 (both run the
#     number guard), τ² with the model under each agent implementation it ships;
#   - the ComtradeBench Inspect task played by the same server through Inspect's OpenAI-compatible
#     provider (scripts/wheel/inspect_local_llm.py).
# Skips (exit 0, a clear message) only when g++ is missing and no llama-server is cached.
# Everything else that fails is a failure. Wall time is printed at the end.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=common.sh
source "$HERE/common.sh"
START=$(date +%s)

if [ ! -x "$LLAMA_SERVER" ] && ! command -v g++ >/dev/null; then
  echo "SKIP local-llm live test: g++ is missing and no llama-server is cached (apt-get install -y g++ cmake)"
  exit 0
fi
command -v curl >/dev/null || die "curl not found (apt-get install -y curl)"

STARTED_HERE=0
if [ ! -f "$PID_FILE" ]; then STARTED_HERE=1; fi
BASE=$("$HERE/start.sh" smollm2)
[ "$BASE" = "http://127.0.0.1:8081/v1" ] || die "expected the default base URL, got $BASE"
cleanup() { if [ "$STARTED_HERE" = 1 ]; then "$HERE/stop.sh" || true; fi; }
trap cleanup EXIT
SERVER_READY=$(date +%s)

# The binary `cargo test --workspace` builds (same profile and features: after .ci/run's test
# step this builds nothing), so
# the run's time is the model's, not benchaudit's.
(cd "$ROOT" && cargo test --workspace --no-run --quiet)
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/debug/benchaudit
WORK=$(mktemp -d "${TMPDIR:-/tmp}/benchaudit-local-llm.XXXXXX")
# Tasks that fault, so the model is asked something at every level (L1 asks only on a fault).
TASKS=T4_rate_limit_429,T5_server_error_500,T8_mixed_faults

# A model's output budget of 2 000 tokens an episode (the default is 6 000) bounds the test's
# time: SmolLM2 sometimes loops until the budget, and at 10-17 tokens/s on this machine class
# one such L2 episode took 6 of the run's 7.7 minutes (2026-12-02). Nothing checked here depends
# on the budget; a budget reached is the episode's outcome (`token_budget`), not an error.
BUDGET=(--max-output-tokens 2000)

# No --base-url, no key: `local:` resolves to the server start.sh started.
RUN_START=$(date +%s)
"$BIN" run --model local:smollm2 "${BUDGET[@]}" --policy oracle --level L0,L1,L2 --tasks "$TASKS" \
  --seeds 0..1 --jobs 2 --out "$WORK/run" >"$WORK/run.txt"
RUN_END=$(date +%s)
cat "$WORK/run.txt"

python3 - "$WORK/run" <<'PY'
import json, pathlib, subprocess, sys
run = pathlib.Path(sys.argv[1])
records = [json.loads(l) for l in (run / "episodes.jsonl").read_text().splitlines() if l.strip()]
model = [r for r in records if r["key"]["policy"] == "local:smollm2"]
oracle = {(r["key"]["level"], r["key"]["task_id"], r["key"]["seed"]): r for r in records if r["key"]["policy"] == "oracle"}
fail = []
assert len(model) == 3 * 3 * 2, f"expected 18 model episodes, got {len(model)}"
for r in records:
    k = r["key"]
    where = f'{k["policy"]} {k["level"]} {k["task_id"]} seed {k["seed"]}'
    if r.get("outcome") in (None, ""):
        fail.append(f"{where}: no outcome")
    if r["outcome"] == "infra_error":
        fail.append(f"{where}: infra_error: {r.get('error')}")
for r in model:
    k = r["key"]
    where = f'{k["level"]} {k["task_id"]} seed {k["seed"]}'
    u = r["usage"]
    if u["requests"] < 1 or u["completion_tokens"] < 1 or u["prompt_tokens"] < 1:
        fail.append(f"{where}: no token usage {u}")
    if r["scores"] is None:
        fail.append(f"{where}: not scored")
    if k["level"] == "L0":
        o = oracle[(k["level"], k["task_id"], k["seed"])]
        if r["payload_sha256"] != o["payload_sha256"] or r["payload_sha256"] is None:
            fail.append(f"{where}: L0 payload {r['payload_sha256']} differs from the oracle's {o['payload_sha256']}")
# Transcripts are zstd-compressed JSON; the zstd tool (Debian package zstd) reads them.
transcripts = list((run / "transcripts").glob("*.json.zst")) if (run / "transcripts").is_dir() else []
texts = 0
for t in transcripts:
    doc = json.loads(subprocess.run(["zstd", "-dc", str(t)], check=True, capture_output=True).stdout)
    msgs = doc.get("messages") or {}
    if msgs.get("model") != "local:smollm2":
        continue
    for req in msgs.get("requests", []):
        choice = ((req.get("response") or {}).get("choices") or [{}])[0].get("message") or {}
        if (choice.get("content") or "").strip() or choice.get("tool_calls"):
            texts += 1
            break
    else:
        fail.append(f"{t.name}: no model text in the transcript")
if texts != len(model):
    fail.append(f"{texts} model transcripts with model text, expected {len(model)}")
manifest = json.loads((run / "manifest.json").read_text())
m = manifest["config"]["models"][0]
server = m.get("server") or {}
if not server.get("llama_cpp_build") or server.get("model_sha256") != "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53":
    fail.append(f"manifest does not record the server build and the model SHA-256: {server}")
outcomes = {}
for r in model:
    outcomes[(r["key"]["level"], r["outcome"])] = outcomes.get((r["key"]["level"], r["outcome"]), 0) + 1
print("model outcomes:", ", ".join(f"{l} {o}: {n}" for (l, o), n in sorted(outcomes.items())))
print("model completion tokens:", sum(r["usage"]["completion_tokens"] for r in model),
      "in", sum(r["usage"]["requests"] for r in model), "requests")
if fail:
    print("FAIL:\n  " + "\n  ".join(fail))
    sys.exit(1)
print(f"live checks: {len(records)} episodes, 0 infra errors, L0 payloads equal the oracle's")
PY

"$BIN" report "$WORK/run" --out "$WORK/report" >"$WORK/report.txt"
# The audit with the model, and τ² and AgentDojo audited with it (issue 34): the model under
# each agent implementation τ² ships and each pipeline AgentDojo ships, on one task per domain
# or suite. Small bounds keep it to about two minutes
# (τ²'s prompts are thousands of tokens; SmolLM2 reads ~100 a second on one thread): τ²'s
# step limit 2, 32 output tokens a request (and a 32-token budget for the ComtradeBench
# episodes, which the run above already played in full). Plumbing, not skill.
# An Inspect task too (issue 35): the model answers four arc_easy samples through the task's own
# solver and scorer, one Inspect eval per seed, its logs in the audit folder.
"$ROOT/targets/tau2/setup.sh" >/dev/null
AUDIT_START=$(date +%s)
"$ROOT/targets/agentdojo/setup.sh" >/dev/null
"$ROOT/targets/inspect/setup.sh" >/dev/null
"$BIN" audit --model local:smollm2 --seeds 0 --target tau2,agentdojo,inspect:inspect_evals/arc_easy \
  --tasks-sample 1 --step-limit 2 --max-output-tokens 32 --out "$WORK/audit" | tee "$WORK/audit.txt"
AUDIT_END=$(date +%s)
grep -q "number guard: card.md pass" "$WORK/audit.txt" || die "the audit card did not pass the number guard"
python3 - "$WORK/audit" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
t, ad = json.loads((out / "audit.json").read_text())["trajectories"]
# AgentDojo: every pipeline it ships, on one unit per suite (no user simulator).
(a,) = ad["comparisons"]
assert a.get("not_probed") is None, a.get("not_probed")
assert [s["name"] for s in a["scaffolds"]] == ["openai", "openai+repeat_user_prompt",
    "openai+spotlighting_with_delimiting", "openai+tool_filter", "openai+transformers_pi_detector", "local"], a["scaffolds"]
for r in a["runs"]:
    if r["applicable"]:
        assert r["requests"] >= 1 and r["reward"] is not None, r
    else:
        assert r["scaffold"] == "openai+transformers_pi_detector", r
assert len({r["group"] for r in a["runs"]}) == 4, a["runs"]
assert len((out / "compare" / "agentdojo.jsonl").read_text().splitlines()) == len(a["runs"])
print("AgentDojo --model:", len(a["runs"]), "runs,", sum(r["requests"] for r in a["runs"]), "model requests recorded")
(c,) = t["comparisons"]
assert c.get("not_probed") is None, c.get("not_probed")
assert c["model"] == "local:smollm2", c["model"]
assert [s["name"] for s in c["scaffolds"]] == ["llm_agent", "llm_agent_gt", "llm_agent_solo"], c["scaffolds"]
assert c["user"]["implementation"] == "user_simulator" and c["user"]["model"] == "local:smollm2", c["user"]
keys = {(r["group"], r["scaffold"], r["seed"]) for r in c["runs"]}
want = {(g, s, 0) for g in ("airline", "retail", "telecom") for s in ("llm_agent", "llm_agent_gt", "llm_agent_solo")}
assert keys == want and len(c["runs"]) == len(want), sorted(keys)
lines = [json.loads(l) for l in (out / "compare" / "tau2.jsonl").read_text().splitlines()]
assert len(lines) == len(c["runs"]), len(lines)
for r, line in zip(c["runs"], lines):
    where = f'{r["group"]} {r["scaffold"]}'
    assert line["run"] == r, where
    if not r["applicable"]:
        assert r["reward"] is None and r["requests"] == 0, where
        continue
    # Every applicable run reached the server: a reward, or a run τ² raised on (scored 0, as
    # `tau2 run --skip-failed-samples` scores it) after the model answered.
    assert r["requests"] >= 1 and len(line["requests"]) == r["requests"], where
    assert all("response" in q for q in line["requests"]), where
    assert r["reward"] is not None, (where, r.get("error"))
for s in c["scaffolds"]:
    assert s["scored"] + s["not_applicable"] + s["unscored"] == 3, s
assert "api_key" not in (out / "compare" / "tau2.jsonl").read_text()
md = (out / "card.md").read_text()
assert "### `local:smollm2` under each shipped agent implementation" in md
# The Inspect task: four samples, one seed, each answered by the server through Inspect's provider.
(arc,) = json.loads((out / "audit.json").read_text())["answers"]
(m,) = arc["model_runs"]
assert m.get("not_probed") is None, m.get("not_probed")
assert m["sample_count"] == 4 and m["seed_count"] == 1 and m["requests"] >= 4, m
assert m["failed_requests"] == 0, m
(choice,) = m["scorers"]
assert choice["scored"] == 4 and len(choice["samples"]) == 4, choice
assert len(m["logs"]) == 1 and (out / m["logs"][0]).is_file(), m["logs"]
assert "### `local:smollm2` through the task's own solver and scorers" in md
print("Inspect --model:", m["requests"], "requests,", f'mean {choice["mean"]:.3f}', "| log", m["logs"][0])
print("τ² --model:", ", ".join(f'{s["name"]} {s["scored"]} scored, {s["not_applicable"]} not applicable' for s in c["scaffolds"]),
      f'| {sum(r["requests"] for r in c["runs"])} model requests recorded')
PY
# The log the audit wrote, imported into a run directory and reported (seeds as trials).
"$BIN" import --format inspect "$WORK"/audit/inspect-logs/arc_easy/*/seed-*/*.eval --out "$WORK/imported"
"$BIN" report "$WORK/imported" --metric reward --out "$WORK/imported-report" >/dev/null

# The same server through Inspect's own OpenAI-compatible provider (issue 36): the ComtradeBench
# Inspect task, in the venv scripts/wheel/ci.sh made (the built wheel, inspect-ai, openai); .ci/run
# runs that step first. Standalone, BENCHAUDIT_INSPECT_VENV names another venv holding them.
INSPECT_VENV=${BENCHAUDIT_INSPECT_VENV:-${CARGO_TARGET_DIR:-$ROOT/target}/wheel-inspect-venv}
[ -x "$INSPECT_VENV/bin/inspect" ] && "$INSPECT_VENV/bin/python" -c 'import benchaudit, openai' 2>/dev/null \
  || die "no venv with the wheel, inspect-ai and openai at $INSPECT_VENV: run scripts/wheel/ci.sh first"
INSPECT_START=$(date +%s)
(cd "$WORK" && "$INSPECT_VENV/bin/python" "$ROOT/scripts/wheel/inspect_local_llm.py" "$BASE")
INSPECT_END=$(date +%s)

END=$(date +%s)
echo "local-llm live test: pass in $((END - START)) s (server up $((SERVER_READY - START)) s, run $((RUN_END - RUN_START)) s, audit $((AUDIT_END - AUDIT_START)) s, Inspect $((INSPECT_END - INSPECT_START)) s); outputs in $WORK"
