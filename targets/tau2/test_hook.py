"""Tests of the τ² hook, run in the target's venv:

    targets/tau2/.venv/bin/python -m unittest discover -s targets/tau2 -p 'test_*.py'
"""

import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import hook  # noqa: E402,F401  (the offline settings, before τ² is imported)
import forge  # noqa: E402


def run(name, request):
    return subprocess.run(
        [sys.executable, os.path.join(HERE, "hook.py"), name],
        input=json.dumps(request), capture_output=True, text=True, timeout=600,
    )


class Helpers(unittest.TestCase):
    def test_shapes_group_ids_of_one_kind(self):
        self.assertEqual(forge.shape("59XX6W"), forge.shape("NQNU5R"))
        self.assertNotEqual(forge.shape("credit_card_9513926"), forge.shape("gift_card_0922"))

    def test_alternatives_try_siblings_first_and_keep_the_type(self):
        seen = [["credit_card_111", "gift_card_9", "credit_card_222"], ["credit_card_333"]]
        alts = forge.alternatives("payment_method_id", "credit_card_111", seen, {})
        self.assertEqual(alts[:2], ["credit_card_222", "credit_card_333"])
        self.assertEqual(forge.alternatives("n", 2, [], {}), [3, 1])
        self.assertEqual(forge.alternatives("ok", True, [], {}), [False])
        self.assertEqual(forge.alternatives("ids", ["a1"], [["a1", "a2"]], {})[0], ["a2"])

    def test_wrong_values_keep_their_shape(self):
        self.assertEqual(forge.wrong("327"), "328")
        self.assertEqual(forge.wrong("1093.39"), "1093.30")
        self.assertEqual(forge.wrong("camera"), "camerb")

    def test_the_number_list_holds_the_outputs_numbers_and_their_pair_sums(self):
        text = forge.list_numbers(['{"price": 10.25, "tax": 1.75, "id": 7}'])
        for n in ("10.25", "1.75", "7", "12.00"):
            self.assertIn(n, text)


class Compare(unittest.TestCase):
    """`hook.py compare`'s endpoint: the key read from the variable the request names."""

    def test_the_key_comes_from_the_named_variable_and_is_never_in_the_request(self):
        import scaffolds

        os.environ["BENCHAUDIT_TEST_KEY"] = "sk-test-123"
        try:
            llm, args = scaffolds.endpoint({"model": "m", "base_url": "http://h/v1", "api_key_env": "BENCHAUDIT_TEST_KEY"})
        finally:
            del os.environ["BENCHAUDIT_TEST_KEY"]
        self.assertEqual((llm, args), ("openai/m", {"api_base": "http://h/v1", "api_key": "sk-test-123"}))
        with self.assertRaisesRegex(forge.HookError, "BENCHAUDIT_TEST_KEY .* is not set"):
            scaffolds.endpoint({"model": "m", "base_url": "http://h/v1", "api_key_env": "BENCHAUDIT_TEST_KEY"})
        with self.assertRaisesRegex(forge.HookError, "needs model.base_url"):
            scaffolds.endpoint({"model": "m"})

    def test_a_server_that_is_down_leaves_every_applicable_run_unscored_with_the_cause(self):
        p = run("compare", {"model": {"name": "x:m", "model": "m", "base_url": "http://127.0.0.1:9/v1"},
                            "units": {"retail": ["0"]}, "seeds": [0], "max_steps": 4, "max_tokens": 8})
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        a = json.loads(p.stdout)
        self.assertEqual([s["name"] for s in a["scaffolds"]], ["llm_agent", "llm_agent_gt", "llm_agent_solo"])
        runs = {r["scaffold"]: r for r in a["runs"]}
        self.assertFalse(runs["llm_agent_solo"]["applicable"])
        for name in ("llm_agent", "llm_agent_gt"):
            r = runs[name]
            self.assertTrue(r["applicable"])
            self.assertIsNone(r["reward"], r)
            self.assertEqual(r["termination"], "model_request_failed", r)
            self.assertTrue(r["requests"] and "error" in r["requests"][0], r)


class Hook(unittest.TestCase):
    def test_units_lists_the_base_splits(self):
        p = run("units", {"groups": ["airline", "retail", "telecom"]})
        self.assertEqual(p.returncode, 0, p.stderr)
        a = json.loads(p.stdout)
        self.assertEqual([len(g["units"]) for g in a["groups"]], [50, 114, 114])
        self.assertEqual(a["benchmark"]["version"], "26.3")

    def test_unknown_domains_tasks_and_forgeries_are_refused(self):
        p = run("units", {"groups": ["nowhere"]})
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown τ² domain 'nowhere'", p.stderr)
        p = run("play", {"items": [{"group": "airline", "unit": "999", "forgery": "gold"}]})
        self.assertEqual(p.returncode, 2)
        self.assertIn("no task '999'", p.stderr)
        p = run("play", {"items": [{"group": "airline", "unit": "1", "forgery": "teleport"}]})
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown forgery 'teleport'", p.stderr)

    def test_gold_passes_and_its_trajectory_holds_the_real_responses(self):
        items = [{"group": "retail", "unit": "0", "forgery": f} for f in ("gold", "drop_last_write", "step_limit")]
        p = run("play", {"items": items, "jobs": 2})
        self.assertEqual(p.returncode, 0, p.stderr)
        gold, dropped, limit = json.loads(p.stdout)["results"]
        self.assertEqual(gold["scores"]["reward"], 1.0)
        self.assertEqual(gold["termination"], "user_stop")
        tools = [m for m in gold["trajectory"] if m["role"] == "tool"]
        self.assertEqual(len(tools), 5)
        self.assertFalse(any(m["error"] for m in tools))
        self.assertEqual(dropped["scores"]["DB"], 0.0)
        self.assertEqual(limit["termination"], "max_steps")
        self.assertEqual(limit["scores"]["reward"], 0.0)
        self.assertIsNone(limit["scores"]["DB"])


if __name__ == "__main__":
    unittest.main()
