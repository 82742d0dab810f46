"""Recomputes an Inspect audit's per-forgery pass rates by calling the task's scorer directly,
independently of the hook: no eval(), no solver, no mock model. For each forged answer in
audit.json, a TaskState whose output is that answer goes straight into the task's own scorer
with the sample's target; the full-marks counts per (scorer, forgery) must equal the audit's.

Usage: .venv/bin/python recompute.py AUDIT_JSON TASK [SAMPLES_FILE]
(for a scorer that reads the model's text; a multiple-choice scorer needs the solver's parse,
so the check is for answer-text scorers such as match, includes, pattern, f1 and exact).
Prints one line per forgery and exits 1 if any differs.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import sys
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main(argv: list[str]) -> int:
    if len(argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    audit = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    spec = argv[2]
    samples_file = argv[3] if len(argv) == 4 else None
    found = [a for a in audit["answers"] if a["task"] and a["task"]["spec"] == spec]
    if not found:
        print(f"{spec}: not in {argv[1]}", file=sys.stderr)
        return 2
    result = found[0]

    # The hook's loader stand-ins give the task the same samples the audit probed.
    sys.path.insert(0, str(Path(__file__).parent))
    import hook

    task = hook._setup({"task": spec, "args": {}, "samples_file": samples_file})
    samples = {str(s.id): s for s in task.dataset}

    from inspect_ai.model import ChatMessageUser, ModelOutput
    from inspect_ai.scorer import Target, value_to_float
    from inspect_ai.solver import TaskState

    scorers = task.scorer if isinstance(task.scorer, list) else [task.scorer]
    from inspect_ai._util.registry import registry_info

    named = {registry_info(s).name.split("/")[-1]: s for s in scorers}
    to_float = value_to_float()

    async def score(scorer, sample, output: str) -> float:
        state = TaskState(
            model="direct/none",
            sample_id=sample.id,
            epoch=1,
            input=sample.input,
            messages=[ChatMessageUser(content=str(sample.input))],
            choices=sample.choices,
            output=ModelOutput.from_content(model="direct/none", content=output),
            metadata=sample.metadata or {},
        )
        s = await scorer(state, Target(sample.target))
        return float(to_float(s.value))

    bad = 0
    for scorer_result in result["scorers"]:
        name = scorer_result["name"]
        if scorer_result["refused"]:
            continue
        scorer = named.get(name)
        if scorer is None:
            print(f"{name}: no such scorer on the task", file=sys.stderr)
            return 2
        counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for item in result["items"]:
            value = asyncio.run(score(scorer, samples[item["id"]], item["output"]))
            counts[item["forgery"]][0] += value >= 1.0
            counts[item["forgery"]][1] += 1
        for r in scorer_result["rates"]:
            mine = counts.get(r["forgery"], [0, 0])
            same = mine == [r["passed"], r["applicable"]]
            bad += not same
            print(
                f"{spec} {name} {r['forgery']:>24}: audit {r['passed']}/{r['applicable']}, "
                f"direct {mine[0]}/{mine[1]} {'ok' if same else 'DIFFERS'}"
            )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
