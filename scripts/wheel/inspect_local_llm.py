"""A real model plays the ComtradeBench Inspect task through Inspect's own OpenAI-compatible provider.

Run by scripts/local-llm/ci.sh while its llama-server is up, in the venv scripts/wheel/ci.sh made
(the built wheel, the pinned inspect-ai and openai). Plumbing, not skill:

1. The command a user types: `inspect eval benchaudit/comtradebench --model
   openai-api/localllm/smollm2` (Inspect's `openai-api/<service>/<model>` provider, configured by
   LOCALLLM_BASE_URL and LOCALLLM_API_KEY), on T3_duplicates seed 0 under react().
   `--max-tokens` bounds each answer: SmolLM2 otherwise writes until the context is full (7 712
   tokens in 8.5 minutes here) and the next request no longer fits.
2. The log, read by `read_eval_log`: status success; every model call went to the local server
   with the three tools offered and token usage recorded; both scorers on the sample.
3. Each sample's scores equal `benchaudit score` of the submission the log records or, when the
   model never submitted (SmolLM2 has no tool template, so it answers in text), of missing files.
4. `benchaudit import` of the log gives one ComtradeBench record with the same scores.
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from inspect_ai.log import read_eval_log

from benchaudit import binary

BIN = binary()
TASK, SEED = "T3_duplicates", 0
MODEL = "openai-api/localllm/smollm2"
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


def main(base_url):
    with tempfile.TemporaryDirectory(prefix="benchaudit-inspect-llm-") as tmp:
        work = Path(tmp)
        env = dict(os.environ, LOCALLLM_BASE_URL=base_url, LOCALLLM_API_KEY="none",
                   HF_HUB_OFFLINE="1")
        # The venv's own `inspect` console script, as a user of this venv types it.
        inspect = str(Path(sys.executable).parent / "inspect")
        cmd = [inspect, "eval", "benchaudit/comtradebench", "--model", MODEL,
               "-T", f"tasks={TASK}", "-T", f"seeds={SEED}", "-T", "scaffold=react",
               "-T", "message_limit=8", "--max-tokens", "256", "--max-retries", "0",
               "--timeout", "300", "--log-dir", str(work / "logs"), "--display", "plain"]
        print("$ inspect " + " ".join(cmd[1:]))
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1200)
        check(p.returncode == 0, f"inspect eval exited {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
        logs = sorted((work / "logs").glob("*.eval"))
        check(len(logs) == 1, f"one log written: {[l.name for l in logs]}")
        if not logs:
            return
        log = read_eval_log(str(logs[0]))
        check(log.status == "success", f"log status {log.status} {log.error or ''}")
        check(log.eval.model == MODEL and log.eval.task_registry_name == "benchaudit/comtradebench",
              f"log: model {log.eval.model}, task {log.eval.task_registry_name}")
        [sample] = log.samples
        calls = [e for e in sample.events if e.event == "model"]
        check(len(calls) >= 1, f"{len(calls)} model call(s)")
        for i, e in enumerate(calls):
            offered = {t.name for t in e.tools}
            usage = e.output.usage
            check(e.error is None and e.call is not None and e.call.request.get("model") == "smollm2",
                  f"call {i}: answered by the local server ({e.error or 'no error'})")
            check({"get_task_info", "fetch_page", "submit_results"} <= offered,
                  f"call {i}: the three tools offered ({sorted(offered)})")
            check(usage is not None and usage.input_tokens > 0 and usage.output_tokens > 0,
                  f"call {i}: token usage {usage and (usage.input_tokens, usage.output_tokens)}")
        scores = {k: v.value for k, v in sample.scores.items()}
        check(set(scores) == {"f1", "judge"}, f"both scorers on the sample: {scores}")

        submitted = [c.arguments for m in sample.messages if m.role == "assistant"
                     for c in (m.tool_calls or []) if c.function == "submit_results"]
        d = work / "submission"
        d.mkdir()
        if submitted:
            args = submitted[-1]
            for name, key in [("data.jsonl", "data_jsonl"), ("metadata.json", "metadata_json"),
                              ("run.log", "run_log")]:
                if isinstance(args.get(key), str):
                    (d / name).write_text(args[key])
            what = "the submission the log records"
        else:
            what = "missing files (the model never called submit_results)"
        cli = json.loads(run("score", "--task", TASK, "--seed", SEED, "--json", d))
        check(scores == {"f1": cli["f1"], "judge": cli["judge"]["score"]},
              f"sample scores {scores} equal benchaudit score of {what}")

        imported = work / "imported"
        print(run("import", "--format", "inspect", logs[0], "--out", imported).strip())
        [record] = [json.loads(l) for l in (imported / "episodes.jsonl").read_text().splitlines() if l.strip()]
        check(record["key"]["policy"] == f"{MODEL}+react" and record["key"]["task_id"] == TASK
              and record["scores"]["f1"] == cli["f1"],
              f"benchaudit import: {record['key']}, F1 {record['scores']['f1']}")
    if FAILURES:
        sys.exit(f"{len(FAILURES)} check(s) failed")
    print(f"Inspect task with a real model: all checks passed ({len(calls)} model calls)")


if __name__ == "__main__":
    main(sys.argv[1])
