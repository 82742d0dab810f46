#!/usr/bin/env python3
"""Recomputes the audit's per-forgery pass rates for AST categories by calling BFCL's checker
directly, without hook.py: the entries and possible answers are read from the wheel's data files,
each forged output is decoded with BFCL's prompt-mode decoder and checked with `ast_checker`.

    targets/bfcl/.venv/bin/python targets/bfcl/recompute.py OUT/audit.json simple_python [...]

Exits 1 when any rate differs from audit.json.
"""

import json
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import absent_sdks  # noqa: E402  (the provider SDKs the checker imports but never calls)

absent_sdks.install()
os.environ.setdefault("BFCL_PROJECT_ROOT", os.path.join(os.path.dirname(__file__), ".venv", "bfcl-root"))

from bfcl_eval.constants.enums import Language, ReturnFormat  # noqa: E402
from bfcl_eval.constants.eval_config import POSSIBLE_ANSWER_PATH, PROMPT_PATH  # noqa: E402
from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker  # noqa: E402
from bfcl_eval.model_handler.utils import default_decode_ast_prompting  # noqa: E402
from bfcl_eval.utils import is_function_calling_format_output  # noqa: E402

MODEL = "gpt-4o-2024-11-20"


def read_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def language(category):
    if "javascript" in category:
        return Language.JAVASCRIPT, ReturnFormat.JAVASCRIPT
    if "java" in category:
        return Language.JAVA, ReturnFormat.JAVA
    return Language.PYTHON, ReturnFormat.PYTHON


def passes(output, functions, answer, category):
    lang, fmt = language(category)
    try:
        decoded = default_decode_ast_prompting(output, fmt)
    except Exception:
        return False
    if not is_function_calling_format_output(decoded):
        return False
    return bool(ast_checker(functions, decoded, answer, lang, category, MODEL)["valid"])


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        audit = json.load(f)
    bad = 0
    for category in argv[2:]:
        prompts = read_lines(PROMPT_PATH / f"BFCL_v4_{category}.json")
        answers = read_lines(POSSIBLE_ANSWER_PATH / f"BFCL_v4_{category}.json")
        data = {p["id"]: (p["function"], a["ground_truth"]) for p, a in zip(prompts, answers)}
        found = [
            (c, x)
            for a in audit["calls"]
            for c in a["categories"]
            if c["name"] == category
            for x in [a]
        ]
        if not found:
            print(f"{category}: not in audit.json", file=sys.stderr)
            return 2
        result, a = found[0]
        counts = defaultdict(lambda: [0, 0])
        for item in a["items"]:
            if item["category"] != category:
                continue
            functions, answer = data[item["id"]]
            ok = passes(item["output"], functions, answer, category)
            counts[item["forgery"]][0] += ok
            counts[item["forgery"]][1] += 1
        for r in result["rates"]:
            mine = counts.get(r["forgery"], [0, 0])
            same = mine == [r["passed"], r["applicable"]]
            bad += not same
            print(f"{category} {r['forgery']:>14}: audit {r['passed']}/{r['applicable']}, "
                  f"direct {mine[0]}/{mine[1]} {'ok' if same else 'DIFFERS'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
