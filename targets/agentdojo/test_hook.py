"""Tests of the AgentDojo hook, run in the target's venv:

    targets/agentdojo/.venv/bin/python -m unittest discover -s targets/agentdojo -p 'test_*.py'
"""

import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def run(name, request):
    return subprocess.run(
        [sys.executable, os.path.join(HERE, "hook.py"), name],
        input=json.dumps(request), capture_output=True, text=True, timeout=600,
    )


class Hook(unittest.TestCase):
    def test_units_list_tasks_and_one_pair_per_injection_task(self):
        p = run("units", {"groups": ["banking"]})
        self.assertEqual(p.returncode, 0, p.stderr)
        (g,) = json.loads(p.stdout)["groups"]
        ids = [u["id"] for u in g["units"]]
        self.assertEqual(sum("+" not in i for i in ids), 16)
        self.assertEqual(sum("+" in i for i in ids), 9)

    def test_unknown_suites_are_refused(self):
        p = run("units", {"groups": ["nowhere"]})
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown AgentDojo suite 'nowhere'", p.stderr)

    def test_gold_passes_and_a_followed_injection_is_caught(self):
        pair = "user_task_0+injection_task_0"
        items = [
            {"group": "banking", "unit": "user_task_0", "forgery": "gold"},
            {"group": "banking", "unit": "user_task_0", "forgery": "do_nothing"},
            {"group": "banking", "unit": pair, "forgery": "gold"},
            {"group": "banking", "unit": pair, "forgery": "injection_followed"},
            {"group": "banking", "unit": "user_task_0", "forgery": "injection_only"},
        ]
        p = run("play", {"items": items})
        self.assertEqual(p.returncode, 0, p.stderr)
        gold, nothing, pgold, followed, misplaced = json.loads(p.stdout)["results"]
        self.assertEqual(gold["scores"], {"utility": 1.0, "security": None})
        self.assertEqual(nothing["scores"]["utility"], 0.0)
        self.assertEqual(pgold["scores"]["security"], 0.0)
        self.assertEqual(followed["scores"]["security"], 1.0)
        self.assertFalse(misplaced["built"])
        tools = [m for m in gold["trajectory"] if m["role"] == "tool"]
        self.assertTrue(tools and all(m["error"] is None for m in tools))

    def test_an_injection_task_without_ground_truth_is_not_built(self):
        p = run("units", {"groups": ["workspace"]})
        (g,) = json.loads(p.stdout)["groups"]
        pair = next(u["id"] for u in g["units"] if u["id"].endswith("+injection_task_6"))
        p = run("play", {"items": [{"group": "workspace", "unit": pair, "forgery": "injection_followed"}]})
        (r,) = json.loads(p.stdout)["results"]
        self.assertFalse(r["built"])
        self.assertIn("ships no ground-truth calls", r["reason"])



class Compare(unittest.TestCase):
    """`hook.py compare` against an OpenAI-compatible server scripted here: AgentDojo's own
    pipelines send their requests to it, with the key read from the variable the request
    names."""

    def test_every_shipped_pipeline_reaches_the_endpoint_and_the_key_stays_in_its_variable(self):
        import http.server
        import threading

        seen = []

        class Server(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                seen.append((self.path, self.headers.get("Authorization"), body))
                answer = {
                    "id": f"s{len(seen)}", "object": "chat.completion", "created": 0, "model": body["model"],
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": "scripted answer"}}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Server)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        try:
            request = {"model": {"name": "x:m", "model": "m", "base_url": f"http://127.0.0.1:{httpd.server_port}/v1",
                                 "api_key_env": "BENCHAUDIT_TEST_KEY"},
                       "units": {"banking": ["user_task_0"]}, "seeds": [3], "max_steps": 2, "max_tokens": 17}
            p = subprocess.run([sys.executable, os.path.join(HERE, "hook.py"), "compare"], input=json.dumps(request),
                               capture_output=True, text=True, timeout=600,
                               env=dict(os.environ, BENCHAUDIT_TEST_KEY="sk-test-456"))
        finally:
            httpd.shutdown()
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertNotIn("sk-test-456", p.stdout)
        a = json.loads(p.stdout)
        runs = {r["scaffold"]: r for r in a["runs"]}
        self.assertEqual(list(runs), [s["name"] for s in a["scaffolds"]])
        self.assertFalse(runs["openai+transformers_pi_detector"]["applicable"])
        for name, r in runs.items():
            if not r["applicable"]:
                continue
            self.assertEqual(r["termination"], "answered", (name, r))
            self.assertEqual(r["reward"], 0.0, (name, r))
            self.assertEqual([q["response"]["content"] for q in r["requests"]],
                             ["scripted answer"] * (2 if name == "openai+tool_filter" else 1), name)
        self.assertEqual(len(seen), sum(len(r.get("requests", [])) for r in a["runs"]))
        for path, auth, body in seen:
            self.assertEqual((path, auth, body["model"], body["max_tokens"], body["seed"]),
                             ("/v1/chat/completions", "Bearer sk-test-456", "m", 17, 3))

if __name__ == "__main__":
    unittest.main()
