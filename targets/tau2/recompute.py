#!/usr/bin/env python3
"""Recomputes the audit's τ² scores for one domain by calling τ²'s evaluator directly, without
hook.py or forge.py: each forged trajectory recorded in OUT/forged/tau2.jsonl is rebuilt into τ²'s
own `SimulationRun` and scored by `evaluate_simulation(EvaluationType.ALL)` with the domain's
stock environment constructor; the reward and every component must equal what audit.json holds,
and so must every forgery's pass rate on the reward.

    targets/tau2/.venv/bin/python targets/tau2/recompute.py OUT airline

Prints one line per forgery ("... ok") and exits 1 when anything differs.
"""

import json
import os
import sys
from collections import defaultdict

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ["HF_HUB_OFFLINE"] = "1"

from loguru import logger  # noqa: E402

logger.remove()

from tau2.data_model.message import AssistantMessage, ToolCall, ToolMessage, UserMessage  # noqa: E402
from tau2.data_model.simulation import SimulationRun  # noqa: E402
from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation  # noqa: E402
from tau2.run import load_tasks  # noqa: E402


def message(d):
    if d["role"] == "tool":
        return ToolMessage(
            id=d["id"], role="tool", content=d["content"], requestor=d["requestor"],
            error=d["error"], turn_idx=d["turn_idx"],
        )
    calls = None
    if d.get("tool_calls") is not None:
        calls = [ToolCall(**c) for c in d["tool_calls"]]
    cls = AssistantMessage if d["role"] == "assistant" else UserMessage
    return cls(role=d["role"], content=d["content"], tool_calls=calls, turn_idx=d["turn_idx"])


def components(task, info):
    """The components as τ²'s RewardInfo states them (none where the task checks nothing)."""
    ec = task.evaluation_criteria
    out = {"reward": float(info.reward)}
    scored = info.reward_basis is not None
    db_compared = ec.actions is not None or ec.env_assertions is not None
    out["DB"] = info.db_check.db_reward if scored and info.db_check and db_compared else None
    out["COMMUNICATE"] = (
        float(all(c.met for c in info.communicate_checks or [])) if scored and ec.communicate_info else None
    )
    out["ACTION"] = (
        float(all(c.action_match for c in info.action_checks or [])) if scored and ec.actions else None
    )
    env = None
    if scored and ec.env_assertions:
        env = 1.0
        for c in info.env_assertions or []:
            env *= c.reward
    out["ENV_ASSERTION"] = env
    return out


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    out, domain = argv[1], argv[2]
    audit = json.load(open(os.path.join(out, "audit.json")))
    (t,) = [t for t in audit["trajectories"] if t["slug"] == "tau2"]
    (group,) = [g for g in t["groups"] if g["name"] == domain]
    tasks = {task.id: task for task in load_tasks(domain, "base")}
    recorded = {(r["unit"], r["forgery"]): r for r in t["runs"] if r["group"] == domain and r["built"]}
    passed = defaultdict(int)
    built = defaultdict(int)
    bad = 0
    with open(os.path.join(out, "forged", "tau2.jsonl")) as f:
        for line in f:
            run = json.loads(line)
            if run["group"] != domain:
                continue
            task = tasks[run["unit"]]
            sim = SimulationRun(
                id="recompute", task_id=task.id, start_time="", end_time="", duration=0.0,
                termination_reason=run["termination"],
                messages=[message(m) for m in run["trajectory"]],
            )
            info = evaluate_simulation(
                simulation=sim, task=task, evaluation_type=EvaluationType.ALL,
                solo_mode=False, domain=domain,
            )
            mine = components(task, info)
            theirs = recorded[(run["unit"], run["forgery"])]["scores"]
            if mine != theirs:
                bad += 1
                print(f"{domain} {run['unit']} {run['forgery']}: audit.json {theirs}, evaluator {mine}")
            built[run["forgery"]] += 1
            passed[run["forgery"]] += mine["reward"] >= 1.0
    reward = next(c for c in group["components"] if c["name"] == "reward")
    for r in reward["rates"]:
        f = r["forgery"]
        same = (r["built"], r["passed"]) == (built[f], passed[f])
        bad += not same
        print(f"{domain} {f}: reward passes {passed[f]} of {built[f]} (audit.json {r['passed']} of {r['built']})"
              + (" ok" if same else " DIFFERS"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
