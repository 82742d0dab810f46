"""Who owns AgentDojo's pipeline decisions, measured by intervention.

The pipeline AgentDojo builds for an OpenAI-compatible model (`AgentPipeline.from_config` with its
shipped `OpenAILLM` element) is played on one task with a scripted client in place of the OpenAI
client: `client.chat.completions.create` answers from a queue of completions built with the
`openai` package's own types, so the shipped element parses every answer (arguments included) as
it would a real model's, with no key and no network. A base run makes the task's expected calls
one per turn, then answers with the task's ground-truth output; each variation changes one thing
and records what AgentDojo's pipeline and `TaskSuite.run_task_with_pipeline` did, and the utility
it gave.

The declared owners come from AgentDojo's own texts: its default system message and its
pipeline documentation make the calls and the answer the model's; the tool loop's round limit
(`ToolsExecutionLoop(max_iters=15)`) and the three attempts `run_task_with_pipeline` makes when
the model's output is empty are pipeline settings.
"""

import json
import sys

import forge

MODEL = "gpt-4o-2024-05-13"
UNKNOWN_TOOL = "lookup_everything"
TEXT = "Let me look into that for you."


class ScriptedClient:
    """Stands in for `openai.OpenAI()`: `chat.completions.create` answers from a queue."""

    def __init__(self):
        from openai.types.chat import ChatCompletion

        self.ChatCompletion = ChatCompletion
        self.queue = []
        self.asked = 0
        client = self

        class Completions:
            def create(self, **kwargs):
                return client.answer()

        class Chat:
            completions = Completions()

        self.chat = Chat()

    def answer(self):
        self.asked += 1
        turn = self.queue.pop(0) if self.queue else {"content": ""}
        message = {"role": "assistant", "content": turn.get("content")}
        if "calls" in turn:
            message["tool_calls"] = [
                {
                    "id": f"call_{self.asked}_{i}",
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }
                for i, (name, arguments) in enumerate(turn["calls"])
            ]
        return self.ChatCompletion.model_validate(
            {
                "id": f"scripted-{self.asked}",
                "object": "chat.completion",
                "created": 0,
                "model": MODEL,
                "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
            }
        )


def base_task(bench, groups):
    """The first user task (in AgentDojo's order) of the first requested suite whose expected
    calls are two or more and end with the only write."""
    for g in groups:
        suite = bench.suite(g)
        for uid, task in suite.user_tasks.items():
            env = task.init_environment(bench.environment(g, {}))
            calls = bench.gold_calls(task, env.model_copy(deep=True))
            writes = bench.write_indices(g, env, calls)
            if len(calls) >= 2 and writes == [len(calls) - 1]:
                return g, uid, task, calls
    raise forge.HookError("no requested suite has a task whose expected calls read, then write")


def call(c, args=None):
    return (c.function, json.dumps(c.args if args is None else args))


def measure(bench, request):
    groups = request.get("groups") or []
    for g in groups:
        bench.suite(g)
    suite_name, uid, task, calls = base_task(bench, groups)
    suite = bench.suite(suite_name)
    p = bench.a["pipeline"]
    client = ScriptedClient()

    def play(turns):
        client.queue = list(turns)
        client.asked = 0
        llm = p.OpenAILLM(client, MODEL)
        pipeline = p.AgentPipeline.from_config(
            p.PipelineConfig(llm=llm, model_id=None, defense=None, system_message_name=None, system_message=None)
        )
        seen = {}
        original = pipeline.query

        def query(*args, **kwargs):
            out = original(*args, **kwargs)
            seen.setdefault("runs", []).append(out[3])
            return out

        pipeline.query = query
        env = bench.environment(suite_name, {})
        try:
            utility, _ = suite.run_task_with_pipeline(pipeline, task, None, {}, environment=env)
        except Exception as e:
            return None, seen.get("runs", []), f"{type(e).__name__}: {e}"
        return (1.0 if utility else 0.0), seen.get("runs", []), None

    gold = [{"calls": [call(c)]} for c in calls]
    answer = [{"content": task.GROUND_TRUTH_OUTPUT or forge.DONE}]
    base_reward, base_runs, err = play(gold + answer)
    if base_reward is None:
        raise forge.HookError(f"the base run raised: {err}")
    out = []

    def record(decision, variation, declared, claimed, outcome, reward, detail, environment=None):
        out.append(
            {
                "decision": decision,
                "variation": variation,
                "declared": declared,
                "claimed": claimed,
                "outcome": outcome,
                "reward": reward,
                "termination": None,
                "environment": environment,
                "detail": detail,
            }
        )

    def tool_messages(runs):
        return [m for m in (runs[-1] if runs else []) if m["role"] == "tool"]

    # 1. The last read and the write in one message.
    reward, runs, err = play(gold[:-2] + [{"calls": [call(calls[-2]), call(calls[-1])]}] + answer)
    if reward is None:
        record("parallel_calls", "the last read and the write in one message", "model", True, "fatal", None, err)
    else:
        n = len(tool_messages(runs)) - (len(calls) - 2)
        outcome = {2: "executed_all", 1: "executed_first"}.get(n, "executed_none")
        record("parallel_calls", "the last read and the write in one message", "model", True, outcome, reward,
               {2: "both calls executed", 1: "only the first call executed"}.get(n, "no call executed"))

    # 2. Cut-off JSON arguments on the first call, then the base run's turns.
    broken = json.dumps(calls[0].args)[:-1] + ", "
    reward, runs, err = play([{"calls": [(calls[0].function, broken)]}] + gold + answer)
    if reward is None:
        record("malformed_arguments", "the first call's arguments are cut-off JSON", "model", True, "fatal", None,
               f"run_task_with_pipeline raised {err.split(':')[0]}; AgentDojo's benchmark loop does not catch it")
    else:
        record("malformed_arguments", "the first call's arguments are cut-off JSON", "model", True, "forgiven",
               reward, None)

    # 3. An unknown tool, 4. a call the function rejects: each before the base run's calls.
    first_string = next((k for k, v in calls[0].args.items() if isinstance(v, str)), None)
    rejected = dict(calls[0].args)
    if first_string is not None:
        rejected[first_string] = "no-such-id"
    else:
        rejected = {"no_such_argument": "x"}
    for decision, variation, turn in (
        ("unknown_tool", f"a call to `{UNKNOWN_TOOL}`, a function the suite lacks", (UNKNOWN_TOOL, "{}")),
        ("tool_error", f"`{calls[0].function}` called with arguments the function rejects", call(calls[0], rejected)),
    ):
        reward, runs, err = play([{"calls": [turn]}] + gold + answer)
        if reward is None:
            record(decision, variation, "model", True, "fatal", None, err)
            continue
        errs = [m for m in tool_messages(runs) if m.get("error")]
        went_on = len(tool_messages(runs)) > len(calls)
        outcome = "forgiven" if errs and went_on else ("continued" if not errs else "ended_by_harness")
        record(decision, variation, "model", True, outcome, reward,
               f"the tool answered: {errs[0]['error']}" if errs else "no error came back")

    # 5. A text turn with no call before the first call.
    reward, runs, err = play([{"content": TEXT}] + gold + answer)
    if reward is None:
        record("text_turn", "a message with no call before the first call", "model", True, "fatal", None, err)
    else:
        went_on = bool(tool_messages(runs))
        record("text_turn", "a message with no call before the first call", "model", True,
               "continued" if went_on else "ended_by_turn", reward,
               "the message became the final answer: the pipeline has no user to answer it and ends the run"
               if not went_on else None)

    # 6. The tool loop's round limit: the base run's calls preceded by as many unknown-tool calls
    # as the loop has rounds.
    filler = [{"calls": [(UNKNOWN_TOOL, "{}")]} for _ in range(forge.LOOP_ROUNDS)]
    reward, runs, err = play(filler + gold + answer)
    if reward is None:
        record("step_limit", "the base run after as many calls as the tool loop has rounds", "harness", False,
               "fatal", None, err)
    else:
        attempts = len(runs)
        record("step_limit", "the base run after as many calls as the tool loop has rounds", "harness", False,
               "retried" if attempts > 1 else "ended_by_harness", reward,
               "the loop stopped with a call unanswered; the output was empty, so run_task_with_pipeline ran the pipeline again"
               if attempts > 1 else "the loop stopped the run",
               "kept" if attempts > 1 else None)

    # 7. An empty final answer (no text, no call) after the base run's calls.
    reward, runs, err = play(gold + [{"content": None}] + gold + answer)
    if reward is None:
        record("empty_answer", "an answer with no text and no call after the calls", "harness", False, "fatal",
               None, err)
    else:
        attempts = len(runs)
        record("empty_answer", "an answer with no text and no call after the calls", "harness", False,
               "retried" if attempts > 1 else "continued", reward,
               "run_task_with_pipeline ran the whole pipeline again on the environment the first attempt left (its writes kept), and scored the last attempt's calls"
               if attempts > 1 else None,
               "kept" if attempts > 1 else None)

    return {
        "agent": "AgentPipeline.from_config(OpenAILLM)",
        "user": None,
        "base": {"group": suite_name, "unit": uid},
        "base_reward": base_reward,
        "decisions": out,
    }


if __name__ == "__main__":
    print("use hook.py intervene", file=sys.stderr)
    sys.exit(2)
