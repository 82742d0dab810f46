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


if __name__ == "__main__":
    unittest.main()
