"""The same model under each agent implementation τ² ships, with the user simulator held fixed.

`hook.py compare` answers one request:

    {"model": {"name": "local:smollm2", "model": "smollm2", "base_url": "http://…/v1",
               "api_key_env": null},
     "units": {"airline": ["0", "1"], …}, "seeds": [0, 1],
     "max_steps": 30, "max_tokens": 256, "jobs": 2}

with one run per (domain, task, agent implementation, seed), each played by τ²'s own `run_task`
(its orchestrator, its agent class, its user simulator, then its `evaluate_simulation`). The
answer lists the agent implementations of τ²'s registry, which tasks each applies to (τ²'s own
`check_valid_task`), the user simulator and its model, and every run with its reward and every
model request and response the run made.

The key never passes through a file: the request names the environment variable that holds it
(`api_key_env`) and this process reads it from its own environment, which the audit inherits
from the caller. The model is reached through litellm's OpenAI-compatible provider
(`openai/<model>` with `api_base`), as `tau2 run --agent-llm openai/<model>` would.

A run that raises inside τ² (the model wrote arguments that are not JSON, say) is scored 0, as
`tau2 run --skip-failed-samples` scores it; a run whose model request failed (litellm raised:
the endpoint refused, timed out or is down) is unscored, with the error.
"""

import copy
import json
import os

import forge

# The agent implementations τ² 26.3 registers, in its registry's order.
SCAFFOLDS = ("llm_agent", "llm_agent_gt", "llm_agent_solo")
USER = "user_simulator"
# Solo mode has no user: τ²'s orchestrator requires its DummyUser there.
SOLO_USER = "dummy_user"
MAX_STEPS = 30
MAX_TOKENS = 256
# Bytes of one recorded model message kept (a model that loops fills its whole output budget).
MAX_RECORDED = 16_000


def applicability(t):
    """Which agent implementations apply to which tasks, by τ²'s own checks."""
    agent = t["llm_agent"]
    return {
        "llm_agent": (lambda task: True, "every task"),
        "llm_agent_gt": (
            agent.LLMGTAgent.check_valid_task,
            "tasks with at least one expected action (LLMGTAgent.check_valid_task: the agent is given the expected actions)",
        ),
        "llm_agent_solo": (
            agent.LLMSoloAgent.check_valid_task,
            "tasks with a ticket and expected actions (LLMSoloAgent.check_valid_task); solo mode has no user simulator (τ² requires its dummy_user)",
        ),
    }


class Recorder:
    """Wraps τ²'s `completion` (tau2.utils.llm_utils) and keeps every request and response."""

    def __init__(self, llm_utils):
        self.calls = []
        inner = llm_utils.completion

        def recorded(**kwargs):
            role = (kwargs.get("extra_headers") or {}).get("X-Benchaudit-Role", "?")
            entry = {
                "role": role,
                "request": {
                    "messages": kwargs.get("messages"),
                    "tools": [t["function"]["name"] for t in (kwargs.get("tools") or [])],
                    "tool_choice": kwargs.get("tool_choice"),
                    "max_tokens": kwargs.get("max_tokens"),
                    "temperature": kwargs.get("temperature"),
                    "seed": kwargs.get("seed"),
                },
            }
            self.calls.append(entry)
            try:
                response = inner(**kwargs)
            except Exception as e:
                entry["error"] = f"{type(e).__name__}: {str(e)[:2000]}"
                raise
            choice = response.choices[0]
            message = choice.message
            entry["response"] = {
                "content": (message.content or "")[:MAX_RECORDED] if message.content is not None else None,
                "tool_calls": [
                    {"name": c.function.name, "arguments": (c.function.arguments or "")[:MAX_RECORDED]}
                    for c in (message.tool_calls or [])
                ],
                "finish_reason": choice.finish_reason,
                "usage": {
                    "prompt_tokens": getattr(response.usage, "prompt_tokens", None),
                    "completion_tokens": getattr(response.usage, "completion_tokens", None),
                },
            }
            return response

        llm_utils.completion = recorded


def endpoint(model):
    """litellm arguments for the OpenAI-compatible endpoint; the key read from the variable the
    request names (never from a file)."""
    base = model.get("base_url")
    name = model.get("model")
    if not base or not name:
        raise forge.HookError("the compare request needs model.base_url and model.model")
    var = model.get("api_key_env")
    if var:
        key = os.environ.get(var)
        if not key:
            raise forge.HookError(f"the variable {var} that should hold the API key is not set")
    else:
        # litellm's OpenAI client insists on some key; a local server ignores it.
        key = "no-key"
    return f"openai/{name}", {"api_base": base, "api_key": key}


def compare(bench, request):
    model = request.get("model") or {}
    llm, args = endpoint(model)
    units = request.get("units") or {}
    seeds = [int(s) for s in (request.get("seeds") or [0])]
    max_steps = int(request.get("max_steps") or MAX_STEPS)
    max_tokens = int(request.get("max_tokens") or MAX_TOKENS)
    jobs = request.get("jobs") or 1
    t = bench.t
    import importlib

    t["llm_agent"] = importlib.import_module("tau2.agent.llm_agent")
    llm_utils = importlib.import_module("tau2.utils.llm_utils")
    registered = list(t["registry"].get_agents())
    rules = applicability(t)
    items = []
    runs = []
    for domain in sorted(units):
        for task_id in units[domain]:
            task = bench.task(domain, task_id)
            for scaffold in SCAFFOLDS:
                check, _ = rules[scaffold]
                ok = bool(check(task))
                for seed in seeds:
                    run = {
                        "group": domain,
                        "unit": task_id,
                        "scaffold": scaffold,
                        "seed": seed,
                        "applicable": ok,
                    }
                    runs.append(run)
                    if ok:
                        items.append(len(runs) - 1)
        bench.fill_pool(domain)

    def play(i):
        r = runs[i]
        recorder = Recorder(llm_utils)
        task = bench.task(r["group"], r["unit"])
        solo = r["scaffold"] == "llm_agent_solo"
        common = dict(args, temperature=0.0, max_tokens=max_tokens, num_retries=0)
        out = {}
        try:
            sim = t["run"].run_task(
                domain=r["group"],
                task=task,
                agent=r["scaffold"],
                user=SOLO_USER if solo else USER,
                llm_agent=llm,
                llm_args_agent=dict(copy.deepcopy(common), extra_headers={"X-Benchaudit-Role": "agent"}),
                llm_user=llm,
                llm_args_user=dict(copy.deepcopy(common), extra_headers={"X-Benchaudit-Role": "user"}),
                max_steps=max_steps,
                max_errors=forge_max_errors(),
                seed=r["seed"],
            )
            out["reward"] = float(sim.reward_info.reward)
            out["termination"] = sim.termination_reason.value
            out["messages"] = len(sim.messages)
        except Exception as e:
            failed = next((c for c in recorder.calls if "error" in c), None)
            out["error"] = f"{type(e).__name__}: {str(e)[:500]}"
            # A failed model request is the endpoint's failure, not the run's outcome.
            out["reward"] = None if failed is not None else 0.0
            out["termination"] = "model_request_failed" if failed is not None else "raised"
        out["requests"] = recorder.calls
        return out

    results = forge.forked(items, play, jobs)
    for i, res in zip(items, results):
        if "error" in res and "requests" not in res:
            res = {"reward": None, "termination": "crashed", "error": res["error"], "requests": []}
        runs[i].update(res)
    return {
        "registered": registered,
        "scaffolds": [
            {"name": s, "applies_to": rules[s][1], "user": SOLO_USER if s == "llm_agent_solo" else USER}
            for s in SCAFFOLDS
        ],
        "user": {
            "implementation": USER,
            "model": model.get("name") or model.get("model"),
            "note": "the same model and arguments as the agent; llm_agent_solo runs without a user (τ²'s dummy_user)",
        },
        "settings": {"max_steps": max_steps, "max_tokens": max_tokens, "temperature": 0.0, "seeds": seeds},
        "runs": runs,
    }


def forge_max_errors():
    # τ²'s default (`tau2 run --max-errors`).
    return 10
