"""The ComtradeBench Inspect task proven with Inspect's own runtime (run by scripts/wheel/ci.sh).

Needs a venv holding the built benchaudit wheel and the pinned inspect-ai (no network: the mock
model's outputs carry their token usage, so it never fetches a tokenizer).

1. The scripted players: `benchaudit run --policy oracle,fabricator --level L2` plays T3_duplicates
   seed 0; their recorded tool calls become the mock model's turns (`mockllm/model` with
   `custom_outputs`). The oracle's records, elided in its transcript, are `benchaudit truth`
   (checked against the transcript's byte and line counts).
2. `eval("benchaudit/comtradebench", ...)`, resolved through the `inspect_ai` entry point: the
   oracle scores F1 1.0 and judge 0.987; the fabricator F1 0.0 and judge 0.987 (the paper's
   probe: invented records the judge cannot tell from the truth).
3. `read_eval_log` reads every log; each sample's scores equal `benchaudit score` of the
   submission the log records (its submit_results arguments written to files).
4. The same scripted turns under `react()`, `basic_agent()` and a plain tool loop: the same tool
   calls reach the episode, the same scores, and the scaffold is recorded in each log (task
   arguments and plan).
5. Two seeds played with the seed-0 script: `worst` and `pass_hat_k` over seeds; a model that
   never calls a tool is scored as `benchaudit score` scores missing files.
6. `benchaudit import` of the logs Inspect wrote (the oracle under the three loops) gives
   ComtradeBench records, re-scored in Rust from the logged submissions, in a run directory
   `benchaudit report` reads.
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatMessageAssistant, ModelOutput, ModelUsage, get_model

from benchaudit import binary

BIN = binary()
TASK, SEED = "T3_duplicates", 0
FAILURES = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        FAILURES.append(what)


def run(*args):
    p = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        sys.exit(f"benchaudit {' '.join(map(str, args))} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p.stdout


def scripted_calls(work):
    """Each rule player's L2 tool calls, as benchaudit's own runner made them."""
    run("run", "--policy", "oracle,fabricator", "--level", "L2", "--task", TASK, "--seeds", SEED,
        "--out", work / "rule", "--jobs", "1")
    truth = run("truth", "--task", TASK, "--seed", SEED)
    scripts = {}
    # Transcripts are zstd-compressed JSON (`run --transcripts keep`); the zstd CLI reads them.
    for path in sorted((work / "rule" / "transcripts").glob("*.json.zst")):
        policy = path.name.split("__")[0]
        calls = []
        doc = subprocess.run(["zstd", "-dc", str(path)], capture_output=True, check=True).stdout
        for e in json.loads(doc)["events"]:
            if e["event"] != "call":
                continue
            args = dict(e["arguments"])
            data = args.get("data_jsonl")
            if isinstance(data, dict):  # elided in the transcript: the oracle re-emits the truth
                check(data == {"bytes": len(truth.encode()), "lines": truth.count("\n")},
                      f"{policy}: the elided records are the truth ({data})")
                args["data_jsonl"] = truth
            calls.append((e["name"], args))
        scripts[policy] = calls
    check(set(scripts) == {"oracle", "fabricator"}, f"transcripts of both players: {sorted(scripts)}")
    return scripts


def mock_player(calls):
    """Mock model turns: the scripted tool calls in order, then the loop's own way to stop."""

    def out(input, tools, tool_choice, config):
        turn = sum(isinstance(m, ChatMessageAssistant) for m in input)
        names = {t.name for t in tools}
        if turn < len(calls):
            name, args = calls[turn]
            o = ModelOutput.for_tool_call("mockllm/model", name, args)
        elif "submit" in names:  # react() and basic_agent() end on their submit tool
            o = ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": "submitted"})
        else:  # a plain loop ends when the model stops calling tools
            o = ModelOutput.from_content(model="mockllm/model", content="submitted")
        # Usage given, so the mock model never counts tokens with a downloaded tokenizer.
        o.usage = ModelUsage(input_tokens=100 + turn, output_tokens=10, total_tokens=110 + turn)
        return o

    return out


def play(calls, log_dir, **task_args):
    args = {"tasks": TASK, "seeds": str(SEED), **task_args}
    [log] = inspect_eval("benchaudit/comtradebench", task_args=args,
                         model=get_model("mockllm/model", custom_outputs=mock_player(calls)),
                         log_dir=str(log_dir), display="none", max_samples=1)
    check(log.status == "success", f"{log_dir.name}: eval status {log.status} {log.error or ''}")
    return read_eval_log(log.location)


def sample_scores(log):
    return {s.id: {k: v.value for k, v in s.scores.items()} for s in log.samples}


def submissions(log):
    """Each sample's submit_results arguments, as the log records them."""
    out = {}
    for s in log.samples:
        for m in s.messages:
            for c in (m.tool_calls or []) if m.role == "assistant" else []:
                if c.function == "submit_results":
                    out[s.id] = c.arguments
    return out


def tool_calls(log):
    return [(c.function, c.arguments) for s in log.samples for m in s.messages
            if m.role == "assistant" for c in (m.tool_calls or []) if c.function != "submit"]


def equals_benchaudit_score(log, work):
    for sid, args in submissions(log).items():
        task_id, seed = sid.split(":")
        d = Path(tempfile.mkdtemp(dir=work))
        (d / "data.jsonl").write_text(args["data_jsonl"])
        (d / "metadata.json").write_text(args["metadata_json"])
        (d / "run.log").write_text(args["run_log"])
        cli = json.loads(run("score", "--task", task_id, "--seed", seed, "--json", d))
        got = sample_scores(log)[sid]
        check(got == {"f1": cli["f1"], "judge": cli["judge"]["score"]},
              f"{sid}: sample scores {got} equal benchaudit score's "
              f"(f1 {cli['f1']}, judge {cli['judge']['score']})")


def main():
    with tempfile.TemporaryDirectory(prefix="benchaudit-inspect-task-") as work:
        checks(Path(work))
    if FAILURES:
        sys.exit(f"{len(FAILURES)} check(s) failed")
    print("Inspect task: all checks passed")


def checks(work):
    scripts = scripted_calls(work)

    logs = {}
    for policy, want_f1 in [("oracle", 1.0), ("fabricator", 0.0)]:
        log = play(scripts[policy], work / f"logs_{policy}")
        logs[policy] = log
        got = sample_scores(log)[f"{TASK}:{SEED}"]
        check(got == {"f1": want_f1, "judge": 0.987},
              f"{policy} scripted in mockllm: F1 {got['f1']}, judge {got['judge']} "
              f"(want F1 {want_f1}, judge 0.987)")
        check(log.eval.task_registry_name == "benchaudit/comtradebench",
              f"{policy}: task resolved through the entry point as {log.eval.task_registry_name}")
        metrics = {(s.name, k): m.value for s in log.results.scores for k, m in s.metrics.items()}
        check(metrics[("f1", "mean")] == want_f1 and metrics[("judge", "worst")] == 0.987,
              f"{policy}: log metrics {metrics}")
        equals_benchaudit_score(log, work)

    # One sample under three loops, the same scripted turns.
    by_scaffold = {"react": logs["oracle"]}
    for scaffold in ["basic_agent", "loop"]:
        by_scaffold[scaffold] = play(scripts["oracle"], work / f"logs_{scaffold}", scaffold=scaffold)
    reference = tool_calls(by_scaffold["react"])
    for scaffold, log in by_scaffold.items():
        check(log.eval.task_args.get("scaffold", "react") == scaffold
              and log.eval.metadata["benchaudit"]["scaffold"] == scaffold,
              f"{scaffold}: the scaffold is recorded in the log's task arguments and metadata")
        plan = [(step.solver, step.params) for step in log.plan.steps]
        check(any(p.get("scaffold") == scaffold for _, p in plan), f"{scaffold}: plan {plan}")
        check(tool_calls(log) == reference, f"{scaffold}: the same {len(reference)} tool calls reach the episode")
        check(sample_scores(log) == sample_scores(by_scaffold["react"]),
              f"{scaffold}: scores {sample_scores(log)}")
    systems = {s: "\n".join(m.text for m in log.samples[0].messages if m.role == "system")
               for s, log in by_scaffold.items()}
    check(len(set(systems.values())) == 3, "the three loops differ in what they tell the model")

    # Worst case and pass^k over two seeds: the seed-0 script played on seeds 0 and 1 (on seed 1
    # it re-emits seed 0's records: a real submission, scored by the episode).
    two = play(scripts["oracle"], work / "logs_two_seeds", seeds="0..1")
    equals_benchaudit_score(two, work)
    scores = sample_scores(two)
    metrics = {(s.name, k): m.value for s in two.results.scores for k, m in s.metrics.items()}
    low = scores[f"{TASK}:1"]["f1"]
    check(low < 1.0 and metrics[("f1", "mean")] == (1.0 + low) / 2 and metrics[("f1", "worst")] == low
          and metrics[("f1", "pass_hat_k")] == 0.0, f"two seeds: {scores}, metrics {metrics}")

    # No submission (a model that answers without calling a tool): scored as benchaudit score
    # scores missing files.
    silent = play([], work / "logs_silent", scaffold="loop")
    empty = json.loads(run("score", "--task", TASK, "--seed", SEED, "--json", Path(tempfile.mkdtemp(dir=work))))
    check(sample_scores(silent)[f"{TASK}:{SEED}"] == {"f1": empty["f1"], "judge": empty["judge"]["score"]},
          f"no submission scores as benchaudit score of missing files: {sample_scores(silent)}")

    # benchaudit import of logs Inspect wrote itself (the oracle under three loops), then report.
    imported = work / "imported"
    print(run("import", "--format", "inspect", *(log.location for log in by_scaffold.values()),
              "--out", imported).strip())
    ledger = [json.loads(l) for l in (imported / "episodes.jsonl").read_text().splitlines() if l.strip()]
    rule = {r["key"]["policy"]: r for r in
            (json.loads(l) for l in (work / "rule" / "episodes.jsonl").read_text().splitlines() if l.strip())}
    check(sorted(r["key"]["policy"] for r in ledger) == sorted(f"mockllm/model+{s}" for s in by_scaffold),
          f"one record per loop: {[r['key'] for r in ledger]}")
    for r in ledger:
        check(r["key"]["task_id"] == TASK and r["key"]["seed"] == SEED and r["key"]["level"] == "L2"
              and r["scores"]["f1"] == 1.0 and r["scores"]["judge_total"] == 98.7
              and r["outcome"] == "submitted" and r["payload_sha256"],
              f"{r['key']['policy']}: re-scored F1 {r['scores']['f1']}, judge {r['scores']['judge_total']} "
              f"(benchaudit's own oracle: F1 {rule['oracle']['scores']['f1']}, judge {rule['oracle']['scores']['judge_total']})")
    run("report", imported, "--out", work / "report")
    report = json.loads((work / "report" / "stats.json").read_text())
    check((work / "report" / "report.md").is_file() and report, "benchaudit report reads the imported run")


if __name__ == "__main__":
    main()
