#!/usr/bin/env python3
"""BenchAudit hooks for BFCL, answered by the released `bfcl-eval` package's own code.

Two batch hooks, one JSON request on stdin and one JSON answer on stdout each:

* `entries`: {"categories": ["simple_python", ...]}
  -> {"checker": {...}, "categories": [{"name", "kind", "language", "entries": [{"id",
     "functions", "answer"}]}]}
  The entries and possible answers are the ones the wheel ships, loaded with BFCL's
  `load_dataset_entry` / `load_ground_truth_entry`. `kind` is "ast", "relevance" or
  "irrelevance" by BFCL's own category predicates; `answer` is the possible answer
  ("ground_truth") or null where BFCL has none.
* `score`: {"items": [{"category", "id", "output"}, ...]}
  -> {"results": [{"valid": bool, "error_type": str | null}, ...]} in request order.
  Each raw output goes through the per-entry functions BFCL's evaluation runner calls for that
  category (`_evaluate_single_ast_entry` or `_evaluate_single_relevance_entry`), with the
  handler of a prompt-mode model (`DECODER_MODEL`), i.e. the decoder BFCL applies to
  prompt-mode model text before the AST checker.

Nothing of BFCL's logic is reimplemented here: this file only routes requests to it.
"""

import contextlib
import copy
import importlib.metadata
import json
import os
import shutil
import sys
import tempfile

import absent_sdks

# A prompt-mode model from BFCL's own registry: its handler decodes raw text with
# `default_decode_ast_prompting`, and it does not rewrite dots in function names.
DECODER_MODEL = "gpt-4o-2024-11-20"


class HookError(Exception):
    """A request the hook cannot answer (exit status 2)."""


def load_bfcl():
    """Imports BFCL's runner with the provider SDKs left out (see absent_sdks.py)."""
    absent_sdks.install()
    # BFCL creates result/score/lock folders under its project root at import: keep them out
    # of site-packages and the repository.
    root = tempfile.mkdtemp(prefix="bfcl-root-")
    os.environ["BFCL_PROJECT_ROOT"] = root
    try:
        from bfcl_eval.eval_checker import eval_runner
        from bfcl_eval import utils
    except ModuleNotFoundError as e:
        raise SystemExit(
            f"cannot import the BFCL checker ({e}); run targets/bfcl/setup.sh to install "
            f"bfcl-eval into targets/bfcl/.venv (python: {sys.executable})"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return eval_runner, utils


def category_kind(utils, name):
    if utils.is_relevance_or_irrelevance(name):
        return "irrelevance" if "irrelevance" in name else "relevance"
    return "ast"


def category_language(utils, name):
    if utils.is_java(name):
        return "java"
    if utils.is_js(name):
        return "javascript"
    return "python"


class Checker:
    def __init__(self):
        self.runner, self.utils = load_bfcl()
        from bfcl_eval.constants.category_mapping import SINGLE_TURN_CATEGORY

        self.known = set(SINGLE_TURN_CATEGORY)
        self.handler = self.runner.get_handler(DECODER_MODEL)
        self.loaded = {}

    def category(self, name):
        if name in self.loaded:
            return self.loaded[name]
        if name not in self.known:
            raise HookError(f"{name!r} is not a single-turn BFCL category")
        prompts = self.utils.load_dataset_entry(
            name, include_prereq=False, include_language_specific_hint=False
        )
        kind = category_kind(self.utils, name)
        answers = None if kind != "ast" else self.utils.load_ground_truth_entry(name)
        if answers is not None and len(answers) != len(prompts):
            raise HookError(f"{name}: {len(prompts)} entries but {len(answers)} answers")
        by_id = {}
        for i, p in enumerate(prompts):
            by_id[p["id"]] = (p, None if answers is None else answers[i]["ground_truth"])
        self.loaded[name] = (kind, category_language(self.utils, name), prompts, by_id)
        return self.loaded[name]

    def entries(self, names):
        out = []
        for name in names:
            kind, language, prompts, by_id = self.category(name)
            out.append(
                {
                    "name": name,
                    "kind": kind,
                    "language": language,
                    "entries": [
                        {
                            "id": p["id"],
                            "functions": p["function"],
                            "answer": by_id[p["id"]][1],
                        }
                        for p in prompts
                    ],
                }
            )
        return out

    def score(self, category, entry_id, output):
        kind, language, _, by_id = self.category(category)
        if entry_id not in by_id:
            raise HookError(f"{category} has no entry {entry_id!r}")
        prompt, answer = by_id[entry_id]
        prompt = copy.deepcopy(prompt)
        if kind != "ast":
            result = self.runner._evaluate_single_relevance_entry(
                self.handler, entry_id, output, prompt, DECODER_MODEL, category
            )
        else:
            # As ast_file_runner chooses them.
            from bfcl_eval.constants.enums import Language, ReturnFormat

            lang, fmt = {
                "java": (Language.JAVA, ReturnFormat.JAVA),
                "javascript": (Language.JAVASCRIPT, ReturnFormat.JAVASCRIPT),
                "python": (Language.PYTHON, ReturnFormat.PYTHON),
            }[language]
            result = self.runner._evaluate_single_ast_entry(
                self.handler,
                entry_id,
                output,
                copy.deepcopy(answer),
                prompt,
                DECODER_MODEL,
                category,
                language=lang,
                return_format=fmt,
                has_tool_call_tag=False,
            )
        return {"valid": bool(result["valid"]), "error_type": result.get("error_type")}


def checker_info(checker):
    return {
        "package": "bfcl-eval",
        "version": importlib.metadata.version("bfcl-eval"),
        "decoder_model": DECODER_MODEL,
        "decoder": type(checker.handler).__name__ + ".decode_ast (prompt mode)",
        "placeholders": absent_sdks.placeholders(),
    }


def answer(hook, request, checker):
    if not isinstance(request, dict):
        raise HookError("the request must be a JSON object")
    if hook == "entries":
        names = request.get("categories")
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise HookError("`categories` must be a list of names")
        return {"checker": checker_info(checker), "categories": checker.entries(names)}
    if hook == "score":
        items = request.get("items")
        if not isinstance(items, list):
            raise HookError("`items` must be a list")
        results = []
        for item in items:
            if not isinstance(item, dict) or not isinstance(item.get("output"), str):
                raise HookError("each item needs `category`, `id` and a string `output`")
            try:
                results.append(checker.score(item.get("category"), item.get("id"), item["output"]))
            except HookError:
                raise
            except Exception as e:  # the checker itself raised on this output
                results.append({"valid": False, "error_type": f"checker_raised:{type(e).__name__}", "raised": True})
        return {"results": results}
    raise HookError(f"unknown hook {hook!r} (expected entries or score)")


def main(argv):
    if len(argv) != 2:
        print("usage: hook.py entries|score < request.json", file=sys.stderr)
        return 2
    try:
        request = json.load(sys.stdin)
    except json.JSONDecodeError as e:
        print(f"the request is not JSON: {e}", file=sys.stderr)
        return 2
    out = sys.stdout
    # BFCL prints progress: keep stdout for the one JSON answer.
    with contextlib.redirect_stdout(sys.stderr):
        try:
            checker = Checker()
            reply = answer(argv[1], request, checker)
        except HookError as e:
            print(str(e), file=sys.stderr)
            return 2
    json.dump(reply, out, separators=(",", ":"))
    out.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
