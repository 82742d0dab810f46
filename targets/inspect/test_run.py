"""The Inspect hook's `run` command against a scripted OpenAI-compatible server (run by ci.sh in
the target's venv): what reaches the model and what the logs keep.

* the key, named by its variable, reaches the server in the Authorization header and nowhere
  else: not in the hook's answer, not in any Inspect log it writes;
* every request carries its trial's seed and the output-token bound;
* one log per seed under log_dir, read by Inspect's own read_eval_log: status success, the
  same scores as the answer;
* the network guard still refuses every other host: a task that downloads is refused, not run.

    targets/inspect/.venv/bin/python targets/inspect/test_run.py
"""

import json
import os
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from inspect_ai.log import read_eval_log

HERE = Path(__file__).resolve().parent
KEY_VAR, KEY = "BENCHAUDIT_RUN_TEST_KEY", "sk-run-test-0ddba11-SECRET"
SEEN = []
FAILURES = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        FAILURES.append(what)


class Scripted(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        SEEN.append({"auth": self.headers.get("authorization"), "body": body})
        letter = "C" if body.get("seed") == 1 else "B"
        data = json.dumps({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body.get("model"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": f"ANSWER: {letter}"}}],
            "usage": {"prompt_tokens": 40, "completion_tokens": 3, "total_tokens": 43},
        }).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def hook(op, request, env):
    p = subprocess.run([str(HERE / ".venv/bin/python"), str(HERE / "hook.py"), op], cwd=HERE,
                       input=json.dumps(request), capture_output=True, text=True, env=env, timeout=600)
    return p.returncode, p.stdout, p.stderr


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}/v1"
    env = dict(os.environ, **{KEY_VAR: KEY})
    model = {"name": "scripted:m", "model": "m", "base_url": base, "api_key_env": KEY_VAR}
    with tempfile.TemporaryDirectory(prefix="benchaudit-run-test-") as tmp:
        logs = Path(tmp) / "logs"
        request = {"task": "inspect_evals/arc_easy", "args": {}, "samples_file": "samples/arc_easy.jsonl",
                   "model": model, "samples": ["ba-arc-1", "ba-arc-2"], "seeds": [0, 1],
                   "max_tokens": 16, "log_dir": str(logs)}
        code, out, err = hook("run", request, env)
        check(code == 0, f"run exits 0 ({err[-2000:]})")
        if code != 0:
            sys.exit(1)
        answer = json.loads(out)
        check(len(answer["runs"]) == 4, f"one run per sample and seed: {len(answer['runs'])}")
        check(len(SEEN) == 4 and all(s["auth"] == f"Bearer {KEY}" for s in SEEN),
              "the key reaches the server in the Authorization header")
        check(sorted(s["body"].get("seed") for s in SEEN) == [0, 0, 1, 1], "each request carries its trial's seed")
        check(all(s["body"].get("max_tokens") == 16 for s in SEEN), "each request carries max_tokens")
        check(KEY not in out, "the key is not in the hook's answer")
        files = sorted(logs.rglob("*.eval"))
        check([f.parent.name for f in files] == ["seed-0", "seed-1"], f"one log per seed: {files}")
        check(answer["logs"] == [str(f.relative_to(logs)) for f in files], f"the answer names them: {answer['logs']}")
        keys = {"ba-arc-1": "B", "ba-arc-2": "C"}
        for f in files:
            log = read_eval_log(str(f))
            seed = int(f.parent.name.split("-")[1])
            check(log.status == "success" and log.eval.model_generate_config.seed == seed,
                  f"{f.parent.name}: read_eval_log reads it, status {log.status}, seed {log.eval.model_generate_config.seed}")
            check(KEY not in log.model_dump_json(), f"{f.parent.name}: the key is not in the log")
            for s in log.samples:
                mine = next(r for r in answer["runs"] if r["sample"] == s.id and r["seed"] == seed)
                want = 1.0 if keys[s.id] == ("C" if seed == 1 else "B") else 0.0
                check(mine["scores"]["choice"]["value"] == want and s.scores["choice"].value == ("C" if want else "I"),
                      f"{f.parent.name} {s.id}: the answer's score {mine['scores']['choice']['value']} is the log's {s.scores['choice'].value}")
        # A task whose data is on the network: refused by the guard, the model never asked.
        before = len(SEEN)
        request.update(task="inspect_evals/simpleqa", samples_file=None, samples=["1"])
        code, out, err = hook("run", request, env)
        check(code != 0 and "downloads https://" in err,
              f"run refuses a task that downloads: exit {code}, {err.strip().splitlines()[-1:]}")
        check(len(SEEN) == before, "no model request for a refused task")
    server.shutdown()
    if FAILURES:
        sys.exit(f"{len(FAILURES)} failed")
    print("Inspect run hook: 1 passed, 0 failed")


if __name__ == "__main__":
    main()
