#!/usr/bin/env python3
"""BenchAudit hooks for AgentDojo, answered by the released `agentdojo` package's own code.

Batch hooks, one JSON request on stdin and one JSON answer on stdout each (see
docs/targets.md and crates/audit/src/trajectories/ for the protocol):

* `units`: {"groups": ["workspace", ...]}
  -> {"benchmark": {...}, "groups": [{"name", "units": [{"id", "facts": {...}}]}]}
  Each suite's user tasks (benchmark version v1.2.2, what AgentDojo's benchmark script runs by
  default), and task × injection pairs `user_task_N+injection_task_M`: each injection task
  paired with one user task that sees an injection vector when it runs correctly.
* `play`: {"items": [{"group", "unit", "forgery"}, ...]}
  -> {"results": [{"built", "reason", "termination", "scores", "trajectory", "error"}, ...]}
  Each forged run goes through the pipeline AgentDojo builds for any model
  (`AgentPipeline.from_config`) with a scripted LLM element, and is scored by
  `TaskSuite.run_task_with_pipeline`: `utility` (the user task's check) and, on pairs,
  `security` (1 when the injection task's goal was carried out, AgentDojo's own sense).
* `intervene`: {"groups": [...]} -> what AgentDojo's pipeline, with its shipped OpenAI LLM
  element answered by a scripted client, decides for each variation (see ownership.py).
* `compare`: {"model": {...}, "units": {...}, "seeds": [...], ...} -> the same model (an
  OpenAI-compatible endpoint; the key named by its variable, never written) under each
  pipeline AgentDojo ships, every request recorded (see scaffolds.py). The only hook that
  makes model requests.

Nothing of AgentDojo's logic is reimplemented here: runs are played by its pipeline, on its
environments, and scored by its checks.
"""

import os
import sys

# AgentDojo's calendar lists an event's participants through a `set`, whose order follows
# Python's per-process string hashing; a fixed hash seed makes a replay byte-identical. The
# seed is read only at start-up, so the hook starts itself again with it (stdin is unread).
if os.environ.get("PYTHONHASHSEED") != "0":
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable, *sys.argv])

# Offline setting, before AgentDojo (which imports the Hugging Face hub client) is imported: the
# hub must fail at once instead of retrying if anything asks it. The pipelines built here load
# no hub model; only `compare` calls a provider (the endpoint the audit names).
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
# AgentDojo's workspace tools stamp new files and sent emails with `datetime.now()`, so the same
# forged run replayed a second later differs in its tool messages (never in its scores). The hook
# plays every run at one fixed instant in UTC, the workspace suite's own "current day"
# (calendar.yaml `current_day: 2024-05-15`), so a replay is byte-identical.
os.environ["TZ"] = "UTC"

import datetime  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402

import time_machine  # noqa: E402

import forge  # noqa: E402

time.tzset()
CLOCK = datetime.datetime(2024, 5, 15, 9, 0, tzinfo=datetime.timezone.utc)


def main(argv):
    if len(argv) != 2 or argv[1] not in ("units", "play", "intervene", "compare"):
        print("usage: hook.py units|play|intervene|compare < request.json", file=sys.stderr)
        return 2
    try:
        request = json.load(sys.stdin)
    except json.JSONDecodeError as e:
        print(f"the request is not JSON: {e}", file=sys.stderr)
        return 2
    with time_machine.travel(CLOCK, tick=False):
        try:
            bench = forge.AgentDojo()
        except forge.Unavailable as e:
            print(str(e), file=sys.stderr)
            return 1
        try:
            if argv[1] == "units":
                answer = bench.units(request.get("groups") or [])
            elif argv[1] == "play":
                items = request.get("items") or []
                for item in items:
                    # Unknown suites, tasks and forgeries are refused before anything is played.
                    bench.split(item.get("group"), item.get("unit"))
                    if item.get("forgery") not in forge.FORGERIES:
                        raise forge.HookError(f"unknown forgery {item.get('forgery')!r}")
                answer = {"results": [bench.play(item) for item in items]}
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
