"""Tests of the BFCL hook and of the provider-SDK workaround, run in the target's venv:

    targets/bfcl/.venv/bin/python -m unittest discover -s targets/bfcl -p 'test_*.py'
"""

import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import absent_sdks  # noqa: E402


def run(code):
    """Runs `code` in a fresh interpreter of this venv, so sys.modules starts clean."""
    return subprocess.run(
        [sys.executable, "-c", code], cwd=HERE, capture_output=True, text=True, timeout=120
    )


def hook(name, request):
    p = subprocess.run(
        [sys.executable, os.path.join(HERE, "hook.py"), name],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=120,
    )
    return p


class Placeholders(unittest.TestCase):
    def test_a_placeholder_sdk_imports_but_cannot_be_used(self):
        p = run(
            "import absent_sdks; absent_sdks.install()\n"
            "from openai import OpenAI\n"
            "import cohere\n"
            "x: list[cohere.types.ToolV2] = []\n"
            "client = OpenAI(api_key='k')\n"
            "try:\n"
            "    client.chat.completions.create(model='m')\n"
            "except absent_sdks.AbsentSdkError as e:\n"
            "    print('raised', e)\n"
        )
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("raised openai.OpenAI.chat", p.stdout)

    def test_only_listed_names_are_replaced(self):
        p = run(
            "import absent_sdks; absent_sdks.install()\n"
            "try:\n"
            "    import surely_not_a_module_benchaudit\n"
            "except ModuleNotFoundError:\n"
            "    print('missing stays missing')\n"
        )
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("missing stays missing", p.stdout)

    def test_an_installed_package_wins_over_its_placeholder(self):
        # tqdm is installed in the venv: listing it must not shadow it.
        p = run(
            "import absent_sdks\n"
            "absent_sdks.ABSENT = absent_sdks.ABSENT + ('tqdm',)\n"
            "absent_sdks.install()\n"
            "import tqdm\n"
            "print(getattr(tqdm, '__benchaudit_placeholder__', False), tqdm.__version__)\n"
        )
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith("False "), p.stdout)

    def test_the_checker_imports_with_placeholders_for_exactly_the_absent_sdks(self):
        p = run(
            "import absent_sdks; absent_sdks.install()\n"
            "from bfcl_eval.eval_checker import eval_runner\n"
            "print(','.join(absent_sdks.placeholders()))\n"
        )
        self.assertEqual(p.returncode, 0, p.stderr)
        used = set(p.stdout.strip().split(","))
        self.assertLessEqual(used, set(absent_sdks.ABSENT))
        # Every listed name is needed: a name BFCL no longer imports should leave the list.
        self.assertEqual(used, set(absent_sdks.ABSENT))


class Hook(unittest.TestCase):
    def test_scores_through_the_released_checker(self):
        p = hook(
            "score",
            {
                "items": [
                    {"category": "simple_python", "id": "simple_python_0",
                     "output": "[calculate_triangle_area(base=10, height=5)]"},
                    {"category": "simple_python", "id": "simple_python_0",
                     "output": "[calculate_triangle_area(base=10, height=6)]"},
                    {"category": "irrelevance", "id": "irrelevance_0",
                     "output": "No function fits."},
                ]
            },
        )
        self.assertEqual(p.returncode, 0, p.stderr)
        results = json.loads(p.stdout)["results"]
        self.assertEqual([r["valid"] for r in results], [True, False, True])
        self.assertEqual(results[1]["error_type"], "value_error:others")

    def test_bad_requests_exit_2_with_a_message(self):
        p = hook("score", {"items": [{"category": "nope", "id": "x", "output": ""}]})
        self.assertEqual(p.returncode, 2)
        self.assertIn("not a single-turn BFCL category", p.stderr)
        p = hook("entries", {"categories": "simple_python"})
        self.assertEqual(p.returncode, 2)

    def test_entries_come_from_the_wheel(self):
        p = hook("entries", {"categories": ["simple_javascript", "live_relevance"]})
        self.assertEqual(p.returncode, 0, p.stderr)
        a = json.loads(p.stdout)
        self.assertEqual(a["checker"]["version"], "2026.3.23")
        js, rel = a["categories"]
        self.assertEqual((js["kind"], js["language"], len(js["entries"])), ("ast", "javascript", 50))
        self.assertEqual(rel["kind"], "relevance")
        self.assertIsNone(rel["entries"][0]["answer"])


if __name__ == "__main__":
    unittest.main()
