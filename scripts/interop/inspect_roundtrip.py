"""Inspect interop against inspect-ai's own code (run by scripts/interop/inspect.sh).

1. Export: a small benchaudit run (three rule policies × L1, L2 × two tasks × four seeds) is
   exported with `benchaudit export --format inspect`; every log is read back with Inspect's
   `read_eval_log` and each sample's scores must equal the ledger record's (F1, precision,
   recall, judge total, coverage), its metadata the record's seed, level, outcome, counts and
   payload hash; the eval spec must carry benchaudit's version and the run's manifest; the
   log's results must be the mean of per-sample means, as Inspect's mean reducer gives.
2. Round trip: the exported logs imported with `benchaudit import` give back the ledger's
   records, identical.
3. Import: Inspect itself runs two evals with its mock model (`mockllm/model`, outputs
   chosen per sample and epoch so scores vary), samples × 5 epochs, scorers `match` (C/I) and a
   numeric one; `benchaudit import` + `benchaudit report --metric reward` must give the means
   Inspect computed (its `accuracy` and `mean` metrics), per sample and pooled, and
   `report --compare` must pair the two evals episode by episode.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from inspect_ai import Task, eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log, read_eval_log_sample_summaries
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import Score, Target, accuracy, mean, match, scorer
from inspect_ai.solver import TaskState, generate

BIN = os.environ.get("BENCHAUDIT", "target/debug/benchaudit")
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print(f"FAIL: {what}")


def run(*args):
    p = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        sys.exit(f"benchaudit {' '.join(map(str, args))} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p.stdout


def ledger(run_dir):
    return [json.loads(l) for l in (Path(run_dir) / "episodes.jsonl").read_text().splitlines() if l.strip()]


def export_side(work):
    run_dir = work / "run"
    run("run", "--policy", "oracle,no-dedup,skips-faults", "--level", "L1,L2",
        "--tasks", "T3_duplicates,T4_rate_limit_429", "--seeds", "0..3", "--out", run_dir, "--jobs", "2")
    records = ledger(run_dir)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    by_key = {(r["key"]["policy"], r["key"]["level"], r["key"]["task_id"], r["key"]["seed"]): r for r in records}
    logs_dir = work / "logs"
    run("export", "--format", "inspect", run_dir, "--out", logs_dir)
    logs = sorted(logs_dir.glob("*.eval"))
    check(len(logs) == 6, f"6 conditions give 6 logs, got {len(logs)}")
    seen = 0
    for path in logs:
        log = read_eval_log(str(path))
        check(log.status == "success", f"{path.name}: status {log.status}")
        meta = log.eval.metadata["benchaudit"]
        check(log.eval.packages.get("benchaudit") == manifest["version"], f"{path.name}: packages {log.eval.packages}")
        check(meta["manifest"] == manifest, f"{path.name}: the eval spec carries the run manifest")
        check(len(read_eval_log_sample_summaries(str(path))) == len(log.samples), f"{path.name}: summaries")
        per_task = {}
        for s in log.samples:
            seen += 1
            md = s.metadata
            key = (meta["policy"], meta["level"], s.id, md["seed"])
            r = by_key.get(key)
            check(r is not None, f"{path.name}: sample {s.id} epoch {s.epoch} has a ledger record {key}")
            if r is None:
                continue
            # The judge on 0-1 as every benchaudit output shows it (judge_share: 4 decimals).
            want = {"f1": r["scores"]["f1"], "precision": r["scores"]["precision"],
                    "recall": r["scores"]["recall"], "judge": round(r["scores"]["judge_total"] / 100, 4)}
            if r["coverage"] is not None:
                want["coverage"] = r["coverage"]
            got = {k: v.value for k, v in s.scores.items()}
            check(got == want, f"{path.name} {s.id} seed {md['seed']}: scores {got} != ledger {want}")
            check(md["level"] == r["key"]["level"] and md["outcome"] == r["outcome"]
                  and md["counts"] == r["counts"] and md["payload_sha256"] == r["payload_sha256"],
                  f"{path.name} {s.id}: metadata")
            calls = [c.function for m in s.messages if m.role == "assistant" and m.tool_calls for c in m.tool_calls]
            check("submit_results" in calls and "fetch_page" in calls, f"{path.name} {s.id}: transcript tool calls {calls}")
            check(s.input.startswith("{") and json.loads(s.input)["task_id"] == s.id, f"{path.name} {s.id}: input is the task info")
            per_task.setdefault(s.id, []).append(want["f1"])
        f1 = next(sc for sc in log.results.scores if sc.name == "f1")
        expected = sum(sum(v) / len(v) for v in per_task.values()) / len(per_task)
        check(abs(f1.metrics["mean"].value - expected) < 1e-12, f"{path.name}: results mean {f1.metrics['mean'].value} != {expected}")
    check(seen == len(records), f"every record is a sample: {seen} of {len(records)}")
    print(f"ok: export: {len(logs)} logs, {seen} samples read by inspect_ai.read_eval_log; scores equal the ledger's")

    back = work / "back"
    run("import", "--format", "inspect", *logs, "--out", back)
    key = lambda r: json.dumps(r["key"], sort_keys=True)
    original = sorted(records, key=key)
    restored = sorted(ledger(back), key=key)
    check(original == restored, "the exported logs import back to the ledger's records")
    print(f"ok: round trip: {len(restored)} records restored identically")


def outputs(shift):
    """Mock outputs: correct for some (sample, epoch) pairs, deterministically."""
    calls = {}

    def out(input, tools, tool_choice, config):
        text = input[-1].text
        n = calls.get(text, 0)
        calls[text] = n + 1
        sample = int(text.split()[-1])
        answer = str(sample) if (sample * 3 + n) % (4 - shift) != 0 else "wrong"
        o = ModelOutput.from_content(model="mockllm", content=answer)
        # Usage given, so the mock model does not count tokens with tiktoken (no network).
        o.usage = ModelUsage(input_tokens=20 + sample, output_tokens=len(answer), total_tokens=20 + sample + len(answer))
        return o

    return out


@scorer(metrics=[mean()])
def closeness():
    async def score(state: TaskState, target: Target) -> Score:
        answer = state.output.completion
        return Score(value=1.0 if answer == target.text else 0.25, answer=answer)

    return score


def import_side(work):
    dataset = [Sample(input=f"Repeat the number {i}", target=str(i), id=f"q{i}") for i in range(6)]
    logs = []
    for shift, name in [(0, "a"), (1, "b")]:
        task = Task(dataset=dataset, solver=[generate()], scorer=[match(), closeness()], name="repeat")
        model = get_model("mockllm/model", custom_outputs=outputs(shift))
        [log] = inspect_eval(task, model=model, epochs=5, log_dir=str(work / f"inspect_{name}"),
                             display="none", max_samples=1)
        check(log.status == "success", f"inspect eval {name}: {log.status} {log.error}")
        logs.append(log)
    for log, name in zip(logs, ["a", "b"]):
        run_dir = work / f"imported_{name}"
        run("import", "--format", "inspect", log.location, "--out", run_dir)
        run("report", run_dir, "--metric", "reward", "--out", run_dir / "report")
        stats = json.loads((run_dir / "report" / "stats.json").read_text())
        acc = next(s for s in log.results.scores if s.name == "match").metrics["accuracy"].value
        [pooled] = stats["pooled"]
        check(abs(pooled["summary"]["mean"] - acc) < 1e-12, f"{name}: pooled mean {pooled['summary']['mean']} != Inspect accuracy {acc}")
        check(pooled["summary"]["n"] == 30, f"{name}: 6 samples × 5 epochs, got n = {pooled['summary']['n']}")
        reduced = {s.sample_id: s.value for r in log.reductions if r.scorer == "match" for s in r.samples}
        cells = {c["task_id"]: c["summary"]["mean"] for c in stats["cells"]}
        for sid, v in reduced.items():
            check(abs(cells[f"repeat.{sid}"] - v) < 1e-12, f"{name}: sample {sid} mean {cells[f'repeat.{sid}']} != Inspect's {v}")
        # The numeric scorer, chosen by name.
        run_c = work / f"imported_{name}_closeness"
        run("import", "--format", "inspect", log.location, "--out", run_c, "--score", "closeness")
        run("report", run_c, "--metric", "reward", "--out", run_c / "report")
        stats_c = json.loads((run_c / "report" / "stats.json").read_text())
        m = next(s for s in log.results.scores if s.name == "closeness").metrics["mean"].value
        check(abs(stats_c["pooled"][0]["summary"]["mean"] - m) < 1e-12, f"{name}: closeness mean {stats_c['pooled'][0]['summary']['mean']} != {m}")
        print(f"ok: import {name}: report means equal Inspect's (accuracy {acc:.4f}, closeness mean {m:.4f}), "
              f"worst {pooled['summary']['worst']}, CVaR {pooled['summary']['cvar']:.3f}")
    out = work / "compare"
    run("report", "--compare", work / "imported_a", work / "imported_b", "--metric", "reward", "--out", out)
    cmp = json.loads((out / "stats.json").read_text())["comparison"]
    check(cmp["pairs"] == 30, f"paired A/B over 30 episodes, got {cmp['pairs']}")
    print(f"ok: paired A/B of two Inspect evals: {cmp['pairs']} pairs")


def main():
    work = Path(tempfile.mkdtemp(prefix="benchaudit-inspect-"))
    try:
        export_side(work)
        import_side(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if FAILURES:
        sys.exit(f"{len(FAILURES)} check(s) failed")
    print("inspect interop: all checks passed")


if __name__ == "__main__":
    main()
