"""The same model under each agent pipeline AgentDojo ships (`hook.py compare`).

One request:

    {"model": {"name": "local:smollm2", "model": "smollm2", "base_url": "http://…/v1",
               "api_key_env": null},
     "units": {"banking": ["user_task_0"], …}, "seeds": [0], "max_steps": 15,
     "max_tokens": 256, "jobs": 2}

One run per (suite, unit, pipeline, seed), each built by AgentDojo's own
`AgentPipeline.from_config` and scored by `TaskSuite.run_task_with_pipeline` (utility, and
security on a task × injection pair, under the attack the forged runs use). The pipelines are
the ones the package builds for a model: its OpenAI-compatible element with native tool calls
(`OpenAILLM`) bare and under each shipped defense, and its `local` element (`LocalLLM`: tools
described in the prompt, calls read from the text). AgentDojo has no user simulator: the task's
prompt is the only user turn.

The key never passes through a file: the request names its variable. Every request and
response is recorded. A run whose model request failed is unscored, with the error.
"""

import contextlib
import copy
import random
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import forge

# (name, LLM element, defense, why it cannot run here or None)
SCAFFOLDS = (
    ("openai", "openai", None, None),
    ("openai+repeat_user_prompt", "openai", "repeat_user_prompt", None),
    ("openai+spotlighting_with_delimiting", "openai", "spotlighting_with_delimiting", None),
    ("openai+tool_filter", "openai", "tool_filter", None),
    (
        "openai+transformers_pi_detector",
        "openai",
        "transformers_pi_detector",
        "needs the protectai/deberta-v3-base-prompt-injection-v2 classifier from the Hugging Face hub (offline here)",
    ),
    ("local", "local", None, None),
)
MAX_RECORDED = 16_000


def plain(value):
    """JSON data only: the OpenAI client's NOT_GIVEN sentinels become null."""
    import json

    def default(o):
        return None if type(o).__name__ == "NotGiven" else str(o)

    return json.loads(json.dumps(value, default=default))


class Recorder:
    """Stands in for `openai.OpenAI()` in AgentDojo's LLM elements: forwards each
    `chat.completions.create` to the real client with the output bound and the seed, and keeps
    the request and the response."""

    def __init__(self, client, max_tokens, seed):
        self.calls = []
        recorder = self

        class Completions:
            def create(self, **kwargs):
                kwargs = dict(kwargs, max_tokens=max_tokens, seed=seed)
                entry = {
                    "request": plain({
                        "messages": kwargs.get("messages"),
                        "tools": [t["function"]["name"] for t in (kwargs.get("tools") or []) if isinstance(t, dict)],
                        "max_tokens": max_tokens,
                        "temperature": kwargs.get("temperature"),
                        "seed": seed,
                    })
                }
                recorder.calls.append(entry)
                try:
                    response = client.chat.completions.create(**kwargs)
                except Exception as e:
                    entry["error"] = f"{type(e).__name__}: {str(e)[:2000]}"
                    raise
                choice = response.choices[0]
                entry["response"] = {
                    "content": (choice.message.content or "")[:MAX_RECORDED],
                    "tool_calls": [
                        {"name": c.function.name, "arguments": (c.function.arguments or "")[:MAX_RECORDED]}
                        for c in (choice.message.tool_calls or [])
                    ],
                    "finish_reason": choice.finish_reason,
                }
                return response

        class Chat:
            completions = Completions()

        self.chat = Chat()


def client(model):
    """The OpenAI client for the endpoint; the key read from the variable the request names."""
    import os

    import openai

    base = model.get("base_url")
    name = model.get("model")
    if not base or not name:
        raise forge.HookError("the compare request needs model.base_url and model.model")
    var = model.get("api_key_env")
    key = "no-key"
    if var:
        key = os.environ.get(var)
        if not key:
            raise forge.HookError(f"the variable {var} that should hold the API key is not set")
    return openai.OpenAI(base_url=base, api_key=key, max_retries=0, timeout=600), name


def compare(bench, request):
    model = request.get("model") or {}
    real, name = client(model)
    units = request.get("units") or {}
    seeds = [int(s) for s in (request.get("seeds") or [0])]
    max_steps = int(request.get("max_steps") or 15)
    max_tokens = int(request.get("max_tokens") or 1024)
    jobs = max(1, int(request.get("jobs") or 1))
    p = bench.a["pipeline"]
    from agentdojo.agent_pipeline.llms.local_llm import LocalLLM
    from agentdojo.agent_pipeline.tool_execution import ToolsExecutionLoop

    runs = []
    for suite_name in sorted(units):
        for unit in units[suite_name]:
            bench.split(suite_name, unit)
            for scaffold, _, _, why in SCAFFOLDS:
                for seed in seeds:
                    run = {"group": suite_name, "unit": unit, "scaffold": scaffold, "seed": seed,
                           "applicable": why is None}
                    runs.append(run)
    lock = threading.Lock()

    def play(run):
        _, element, defense, _ = next(s for s in SCAFFOLDS if s[0] == run["scaffold"])
        recorder = Recorder(real, max_tokens, run["seed"])
        # LocalLLM draws a request seed from the global RNG; fixed per run.
        with lock:
            random.seed(run["seed"])
        llm = p.OpenAILLM(recorder, name) if element == "openai" else LocalLLM(recorder, name)
        # The model's name, as `from_config` names a pipeline built from a model id (the tool
        # filter asks for it).
        llm.name = name
        suite = bench.suite(run["group"])
        task, inj = bench.split(run["group"], run["unit"])
        injections = bench.attack(run["group"]).attack(task, inj) if inj is not None else {}
        env = bench.environment(run["group"], injections)
        out = {}
        try:
            pipeline = p.AgentPipeline.from_config(
                p.PipelineConfig(llm=llm, model_id=name, defense=defense, system_message_name=None, system_message=None)
            )
            for e in pipeline.elements:
                if isinstance(e, ToolsExecutionLoop):
                    e.max_iters = max_steps
            utility, security = suite.run_task_with_pipeline(pipeline, task, inj, injections, environment=env)
            failed = next((c for c in recorder.calls if "error" in c), None)
            if failed is not None:
                # LocalLLM swallows a failed request and answers "": the endpoint failed, not the model.
                out.update(reward=None, termination="model_request_failed", error=failed["error"])
            else:
                out.update(reward=1.0 if utility else 0.0, termination="answered")
                if inj is not None:
                    out["security"] = 1.0 if security else 0.0
        except Exception as e:
            failed = next((c for c in recorder.calls if "error" in c), None)
            out["error"] = f"{type(e).__name__}: {str(e)[:500]}"
            out["reward"] = None if failed is not None else 0.0
            out["termination"] = "model_request_failed" if failed is not None else "raised"
        out["requests"] = recorder.calls
        return out

    todo = [r for r in runs if r["applicable"]]
    # LocalLLM prints its request errors to stdout, which carries the answer: stderr instead.
    with contextlib.redirect_stdout(sys.stderr), ThreadPoolExecutor(jobs) as pool:
        for run, res in zip(todo, pool.map(play, todo)):
            run.update(res)
    return {
        "scaffolds": [
            {
                "name": s,
                "applies_to": "every task" if why is None else f"no task: {why}",
                "user": None,
            }
            for s, _, _, why in SCAFFOLDS
        ],
        "user": {
            "implementation": None,
            "note": "AgentDojo's task prompt is the only user turn",
        },
        "settings": {"max_steps": max_steps, "max_tokens": max_tokens, "temperature": 0.0, "seeds": seeds},
        "runs": runs,
    }
