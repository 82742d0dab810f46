"""benchaudit's port hook: the forged runs of a τ² or AgentDojo audit, scored by inspect_evals'
port of the same benchmark (τ²: below; AgentDojo: `agentdojo()`).

One JSON request on stdin, one JSON answer on stdout:

* request: ``{"benchmark": "tau2", "runs": [{"group", "unit", "forgery", "trajectory"}]}``,
  each run as the τ² audit wrote it (``forged/<target>.jsonl``: the messages τ²'s own
  evaluator scored, played through τ²'s orchestrator with its real environment);
* answer: ``{"port": {...}, "results": [{"score", "explanation", "messages", "notes",
  "error"}]}``, one result per run, in order.

Why drive Inspect's runtime rather than call the port's scorer on a hand-built state: the
port's scorers read what its own solver left behind (the user simulator's message list, the
agent's messages in Inspect's store, the database its own tools changed). So each forged run
is played again through the port's own task (``inspect_evals/tau2_<domain>``: its dataset
record, its solver loop, its tools, its scorer), with Inspect's ``mockllm/model`` playing the
agent and a second ``mockllm`` model playing the user role, each emitting the run's messages
of its role in order. Tool calls go to the port's tools, which answer from the port's own
copy of the database; the port's scorer then scores the state. Nothing of the port is
reimplemented here: the port's code decides how the turns alternate, what the tools return
and what the score is.

Where the port's turn-taking and the run's do not line up (the port asks a role for a turn
the run does not have, or ends before the run's last message), the result's ``notes`` say so;
an exhausted user answers τ²'s stop token and an exhausted agent an empty text.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("INSPECT_DISPLAY", "none")
os.environ.setdefault("NO_COLOR", "1")

# The port's task of each τ² domain (inspect_evals.tau2).
TAU2_TASKS = {"airline": "tau2_airline", "retail": "tau2_retail", "telecom": "tau2_telecom"}
# τ²'s stop token: what an exhausted user says (the port ends the run on it).
STOP = "###STOP###"
# The first agent message of every τ² run is the orchestrator's fixed greeting, not a turn of
# the agent; the port has no greeting (its user speaks first).
GREETING_TURN = 0


class Unavailable(Exception):
    """The port cannot be imported: the row is not probed (exit status 1)."""


def _usage() -> Any:
    from inspect_ai.model import ModelUsage

    return ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)


def _output(model: str, message: dict[str, Any] | None) -> Any:
    """One forged message as a model output: its tool calls, or its text."""
    from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, ModelOutput
    from inspect_ai.tool import ToolCall

    if message is None:
        out = ModelOutput.from_content(model=model, content="")
    elif message.get("tool_calls"):
        calls = [
            ToolCall(id=c["id"], function=c["name"], arguments=c.get("arguments") or {}, type="function")
            for c in message["tool_calls"]
        ]
        out = ModelOutput(
            model=model,
            choices=[
                ChatCompletionChoice(
                    message=ChatMessageAssistant(
                        content=message.get("content") or "", tool_calls=calls, model=model, source="generate"
                    ),
                    stop_reason="tool_calls",
                )
            ],
        )
    else:
        out = ModelOutput.from_content(model=model, content=message.get("content") or "")
    out.usage = _usage()
    return out


def _scripts(trajectory: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The agent's and the user's messages of a run, in order (the greeting left out)."""
    agent, user = [], []
    for m in trajectory:
        if m.get("role") == "assistant":
            if not agent and not user and m.get("turn_idx") == GREETING_TURN and not m.get("tool_calls"):
                continue
            agent.append(m)
        elif m.get("role") == "user":
            user.append(m)
    return agent, user


def tau2(runs: list[dict[str, Any]]) -> dict[str, Any]:
    import importlib.metadata

    try:
        from inspect_ai import eval as inspect_eval
        from inspect_ai.dataset import MemoryDataset
        from inspect_ai.model import get_model
        from inspect_ai.scorer import value_to_float
        from inspect_ai.solver._task_state import sample_state
        import inspect_evals.tau2.tau2 as port
    except ImportError as e:
        raise Unavailable(
            f"cannot import inspect_evals' τ² port ({e}); run targets/inspect/setup.sh "
            f"(python: {sys.executable})"
        )
    info = {
        "package": "inspect-evals",
        "version": importlib.metadata.version("inspect_evals"),
        "inspect_ai": importlib.metadata.version("inspect_ai"),
        "tasks": {g: f"inspect_evals/{t}" for g, t in TAU2_TASKS.items()},
        "scorer": "each domain's scorer of inspect_evals.tau2 (airline_scorer, retail_scorer, telecom_scorer)",
    }
    results: list[dict[str, Any] | None] = [None] * len(runs)
    for group in sorted({r["group"] for r in runs}):
        if group not in TAU2_TASKS:
            raise LookupError(f"the τ² port has no domain {group!r}")
        mine = [i for i, r in enumerate(runs) if r["group"] == group]
        task = getattr(port, TAU2_TASKS[group])(shuffle=False)
        by_id = {str(s.id): s for s in task.dataset}
        rows = []
        scripts: dict[str, dict[str, Any]] = {}
        for i in mine:
            run = runs[i]
            sample = by_id.get(str(run["unit"]))
            if sample is None:
                results[i] = {"error": f"the port's {group} dataset has no task {run['unit']!r}"}
                continue
            key = f"ba{i:06d}"
            rows.append(sample.model_copy(update={"id": key}, deep=True))
            agent, user = _scripts(run.get("trajectory") or [])
            scripts[key] = {"agent": agent, "user": user, "next": {"agent": 0, "user": 0}, "notes": []}

        def player(role: str) -> Any:
            def respond(messages: Any, tools: Any, tool_choice: Any, config: Any) -> Any:
                s = scripts[str(sample_state().sample_id)]
                n = s["next"][role]
                s["next"][role] = n + 1
                turns = s[role]
                if n < len(turns):
                    return _output(f"mockllm/{role}", turns[n])
                if n == len(turns):
                    s["notes"].append(f"the port asked the {role} for a turn the run does not have")
                if role == "user":
                    return _output("mockllm/user", {"content": STOP})
                return _output("mockllm/agent", None)

            return respond

        if not rows:
            continue
        task.dataset = MemoryDataset(rows, name=task.dataset.name, location=task.dataset.location)
        with tempfile.TemporaryDirectory(prefix="benchaudit-port-") as logs:
            log = inspect_eval(
                task,
                model=get_model("mockllm/agent", custom_outputs=player("agent")),
                model_roles={"user": get_model("mockllm/user", custom_outputs=player("user"))},
                display="none",
                log_dir=logs,
                log_format="json",
                max_samples=8,
                fail_on_error=False,
                score_display=False,
                epochs=1,
            )[0]
        if log.status == "error" and log.error is not None and not log.samples:
            raise RuntimeError(f"Inspect's eval of the port failed: {log.error.message}")
        to_float = value_to_float()
        by_key = {str(s.id): s for s in (log.samples or [])}
        for i in mine:
            if results[i] is not None:
                continue
            key = f"ba{i:06d}"
            s = scripts[key]
            sample = by_key.get(key)
            if sample is None:
                results[i] = {"error": "Inspect returned no result for this run"}
                continue
            for role in ("agent", "user"):
                left = len(s[role]) - s["next"][role]
                if left > 0:
                    s["notes"].append(f"the port ended the run with {left} {role} message(s) of it unplayed")
            if sample.error is not None:
                results[i] = {"error": sample.error.message, "notes": s["notes"]}
                continue
            (score,) = (sample.scores or {}).values()
            results[i] = {
                "score": float(to_float(score.value)),
                "explanation": score.explanation or "",
                "messages": len(sample.messages),
                "notes": s["notes"],
                "error": None,
            }
    return {"port": info, "results": results}


# AgentDojo units: `user_task_N` or `user_task_N+injection_task_M`.
def _agentdojo_ids(unit: str) -> tuple[int, int | None]:
    user, _, inj = unit.partition("+")
    u = int(user.removeprefix("user_task_"))
    return u, (int(inj.removeprefix("injection_task_")) if inj else None)


def agentdojo(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Each forged AgentDojo run replayed through `inspect_evals/agentdojo` (one suite and one
    kind of unit at a time): mockllm plays the run's assistant turns, the port's own tools answer
    from the port's own environment, and the port's scorer gives utility (and security on a
    pair). The score compared is utility, the first headline component of the audit's table."""
    import importlib.metadata

    try:
        from inspect_ai import eval as inspect_eval
        from inspect_ai.dataset import MemoryDataset
        from inspect_ai.model import get_model
        from inspect_ai.solver._task_state import sample_state
        from inspect_evals.agentdojo.agentdojo import agentdojo as port_task
    except ImportError as e:
        raise Unavailable(
            f"cannot import inspect_evals' AgentDojo port ({e}); run targets/inspect/setup.sh "
            f"(python: {sys.executable})"
        )
    info = {
        "package": "inspect-evals",
        "version": importlib.metadata.version("inspect_evals"),
        "inspect_ai": importlib.metadata.version("inspect_ai"),
        "tasks": {"every suite": "inspect_evals/agentdojo (with_sandbox_tasks=no)"},
        "scorer": "user_task_scorer (user tasks) and injection_task_scorer (pairs): utility compared",
        "attack": "important_instructions (the port's only attack; the forged runs' calls are replayed as they are)",
    }
    results: list[dict[str, Any] | None] = [None] * len(runs)
    kinds = sorted({(r["group"], "+" in r["unit"]) for r in runs})
    for suite, paired in kinds:
        mine = [i for i, r in enumerate(runs) if r["group"] == suite and ("+" in r["unit"]) == paired]
        ids = [_agentdojo_ids(runs[i]["unit"]) for i in mine]
        try:
            task = port_task(
                workspace=suite,
                with_sandbox_tasks="no",
                with_injections=paired,
                user_task_ids=sorted({u for u, _ in ids}),
                injection_task_ids=sorted({j for _, j in ids if j is not None}) or None,
            )
        except (KeyError, ValueError) as e:
            # An empty dataset: the port has none of these tasks (sandbox tasks are left out, and
            # inspect_evals 0.26.0 registers no slack user_task_16).
            units = list(dict.fromkeys(runs[i]["unit"] for i in mine))
            what = ", ".join(units[:3]) + (" …" if len(units) > 3 else "")
            for i in mine:
                results[i] = {"score": None, "error": f"the port has no {suite} sample for {what} ({e})"}
            continue
        by_id = {str(s.id): s for s in task.dataset}
        rows = []
        scripts: dict[str, dict[str, Any]] = {}
        for i, (u, j) in zip(mine, ids):
            sid = f"{suite}-u{u}" + (f"-i{j}" if j is not None else "")
            sample = by_id.get(sid)
            if sample is None:
                results[i] = {"score": None, "error": f"the port's dataset has no sample {sid} (a sandbox task, or not ported)"}
                continue
            key = f"ba{i:06d}"
            rows.append(sample.model_copy(update={"id": key}, deep=True))
            turns = []
            for m in runs[i].get("trajectory") or []:
                if m.get("role") != "assistant":
                    continue
                calls = [{"id": c.get("id") or f"call_{n}", "name": c["function"], "arguments": c.get("args") or {}}
                         for n, c in enumerate(m.get("tool_calls") or [])]
                turns.append({"content": m.get("content") or "", "tool_calls": calls} if calls else {"content": m.get("content") or ""})
            scripts[key] = {"turns": turns, "next": 0, "notes": []}

        def respond(messages: Any, tools: Any, tool_choice: Any, config: Any) -> Any:
            s = scripts[str(sample_state().sample_id)]
            n = s["next"]
            s["next"] = n + 1
            if n < len(s["turns"]):
                return _output("mockllm/agent", s["turns"][n])
            if n == len(s["turns"]):
                s["notes"].append("the port asked the agent for a turn the run does not have")
            return _output("mockllm/agent", None)

        if not rows:
            continue
        task.dataset = MemoryDataset(rows, name=task.dataset.name, location=task.dataset.location)
        with tempfile.TemporaryDirectory(prefix="benchaudit-port-") as logs:
            log = inspect_eval(
                task,
                model=get_model("mockllm/agent", custom_outputs=respond),
                display="none",
                log_dir=logs,
                log_format="json",
                max_samples=8,
                fail_on_error=False,
                score_display=False,
                epochs=1,
            )[0]
        if log.status == "error" and log.error is not None and not log.samples:
            raise RuntimeError(f"Inspect's eval of the port failed: {log.error.message}")
        by_key = {str(s.id): s for s in (log.samples or [])}
        for i in mine:
            if results[i] is not None:
                continue
            key = f"ba{i:06d}"
            s = scripts[key]
            sample = by_key.get(key)
            if sample is None:
                results[i] = {"score": None, "error": "Inspect returned no result for this run"}
                continue
            left = len(s["turns"]) - s["next"]
            if left > 0:
                s["notes"].append(f"the port ended the run with {left} agent message(s) of it unplayed")
            if sample.error is not None:
                results[i] = {"score": None, "error": sample.error.message, "notes": s["notes"]}
                continue
            (score,) = (sample.scores or {}).values()
            value = score.value if isinstance(score.value, dict) else {}
            utility = value.get("utility")
            results[i] = {
                "score": None if utility is None else (1.0 if utility == "C" else 0.0),
                "components": value,
                "notes": s["notes"],
                "error": None if utility is not None else f"the port's score has no utility: {value}",
            }
    return {"port": info, "results": results}


def main() -> int:
    if len(sys.argv) != 1:
        print("usage: port.py < request.json", file=sys.stderr)
        return 2
    try:
        request = json.load(sys.stdin)
    except json.JSONDecodeError as e:
        print(f"the request is not JSON: {e}", file=sys.stderr)
        return 2
    benchmark = request.get("benchmark")
    try:
        if benchmark == "tau2":
            answer = tau2(request.get("runs") or [])
        elif benchmark == "agentdojo":
            answer = agentdojo(request.get("runs") or [])
        else:
            print(f"no Inspect port is wired for the benchmark {benchmark!r}", file=sys.stderr)
            return 2
    except Unavailable as e:
        print(str(e), file=sys.stderr)
        return 1
    except LookupError as e:
        print(f"benchaudit port hook: {e}", file=sys.stderr)
        return 2
    json.dump(answer, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
