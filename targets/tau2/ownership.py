"""Who owns τ²'s harness decisions, measured by intervention.

τ²'s own `run_task` plays a task with its shipped agent (`llm_agent`) and user simulator
(`user_simulator`); both call their model through litellm, and here that model is a scripted one
(a litellm custom provider, `ScriptedModel`), so no key and no network are needed and every turn
is known. A base run plays the task's expected calls one per turn, then a final message; the user
states a request, then stops. Each variation changes one thing of that script and records what
τ²'s agent and orchestrator did with it, and the reward `run_task` gave.

The declared owners come from τ²'s own texts: the agent instruction it ships ("In each turn you
can either: send a message to the user, make a tool call ... Always make sure you generate valid
JSON only") makes the calls, their form and the messages the agent's; the user simulator ends the
conversation (`###STOP###`); the step limit and the empty-answer retries are run settings.
"""

import json
import sys

import forge

AGENT_MODEL = "benchaudit-agent/scripted"
USER_MODEL = "benchaudit-user/scripted"
# The settings `tau2 run` uses by default (tau2.config).
MAX_STEPS = 200
MAX_ERRORS = 10

REQUEST = forge.REQUEST
TEXT = "Let me look into that for you."
OK = "OK."
FINAL = "All set: your request has been handled."
UNKNOWN_TOOL = "lookup_everything"


def scripted_provider():
    """A litellm custom provider answering from a queue of turns (text or tool calls whose
    arguments are raw strings, so malformed JSON can be sent)."""
    import litellm
    from litellm import CustomLLM, ModelResponse
    from litellm.types.utils import (
        ChatCompletionMessageToolCall,
        Choices,
        Function,
        Message,
        Usage,
    )

    class ScriptedModel(CustomLLM):
        def __init__(self):
            super().__init__()
            self.queue = []
            self.asked = 0

        def completion(self, *args, **kwargs):
            self.asked += 1
            turn = self.queue.pop(0) if self.queue else {"content": forge.STOP}
            calls = None
            if "calls" in turn:
                calls = [
                    ChatCompletionMessageToolCall(
                        id=f"call_{self.asked}_{i}",
                        type="function",
                        function=Function(name=name, arguments=arguments),
                    )
                    for i, (name, arguments) in enumerate(turn["calls"])
                ]
            message = Message(role="assistant", content=turn.get("content"), tool_calls=calls)
            return ModelResponse(
                model="scripted",
                choices=[Choices(index=0, message=message, finish_reason="stop")],
                usage=Usage(prompt_tokens=1, completion_tokens=1, total_tokens=2),
            )

    agent, user = ScriptedModel(), ScriptedModel()
    litellm.custom_provider_map = [
        {"provider": AGENT_MODEL.split("/")[0], "custom_handler": agent},
        {"provider": USER_MODEL.split("/")[0], "custom_handler": user},
    ]
    return agent, user


def base_task(bench, groups):
    """The first task (in τ²'s order) of the first requested domain whose expected calls are all
    the agent's, two or more, ending with a write: a variation that loses a call then shows in
    the reward."""
    for g in groups:
        for task in bench.domain(g).values():
            acts = (task.evaluation_criteria.actions or []) if task.evaluation_criteria else []
            if (
                len(acts) >= 2
                and all(a.requestor == "assistant" for a in acts)
                and bench.is_write(g, acts[-1])
                and not any(bench.is_write(g, a) for a in acts[:-1])
            ):
                return g, task
    raise forge.HookError("no requested domain has a task whose agent reads, then writes")


def call(action, arguments=None):
    return (action.name, json.dumps(action.arguments if arguments is None else arguments))


def measure(bench, request):
    groups = request.get("groups") or []
    for g in groups:
        bench.domain(g)
    domain, task = base_task(bench, groups)
    bench.fill_pool(domain)
    jobs = request.get("jobs") or 1
    acts = list(task.evaluation_criteria.actions)
    t = bench.t
    run_task = t["run"].run_task
    agent_model, user_model = scripted_provider()

    def play(agent_turns, user_turns, max_steps=MAX_STEPS):
        agent_model.queue = list(agent_turns)
        agent_model.asked = 0
        user_model.queue = list(user_turns)
        user_model.asked = 0
        try:
            sim = run_task(
                domain=domain,
                task=task,
                agent="llm_agent",
                user="user_simulator",
                llm_agent=AGENT_MODEL,
                llm_user=USER_MODEL,
                max_steps=max_steps,
                max_errors=MAX_ERRORS,
            )
        except Exception as e:
            return None, f"{type(e).__name__}: {e}"
        return sim, None

    gold = [{"calls": [call(a)]} for a in acts]
    final = [{"content": FINAL}]
    user = [{"content": REQUEST}, {"content": forge.STOP}]
    def base_run(_):
        sim, err = play(gold + final, user)
        if sim is None:
            return {"error": err}
        return [sim.reward_info.reward, len(sim.messages), sim.termination_reason.value]

    (base,) = forge.forked([0], base_run, 1)
    if isinstance(base, dict):
        raise forge.HookError(f"the base run raised: {base.get('error')}")
    base_reward, base_len, base_termination = base

    def reward(sim):
        return None if sim is None else float(sim.reward_info.reward)

    def termination(sim):
        return None if sim is None else sim.termination_reason.value

    def tool_messages(sim):
        return [m for m in sim.messages if m.role == "tool"]

    out = []

    def record(decision, variation, declared, claimed, outcome, sim, detail, environment=None):
        out.append(
            {
                "decision": decision,
                "variation": variation,
                "declared": declared,
                "claimed": claimed,
                "outcome": outcome,
                "reward": reward(sim),
                "termination": termination(sim),
                "environment": environment,
                "detail": detail,
            }
        )

    def variation_0():
        # 1. Two tool calls in one message: the last read and the write.
        merged = gold[:-2] + [{"calls": [call(acts[-2]), call(acts[-1])]}]
        sim, err = play(merged + final, user)
        if sim is None:
            record("parallel_calls", "the last read and the write in one message", "model", True,
                   "fatal", None, err)
        else:
            both = next(m for m in sim.messages if m.role == "assistant" and m.tool_calls and len(m.tool_calls) == 2)
            ids = {c.id for c in both.tool_calls}
            answered = [m for m in tool_messages(sim) if m.id in ids]
            outcome = {2: "executed_all", 1: "executed_first", 0: "executed_none"}[len(answered)]
            record("parallel_calls", "the last read and the write in one message", "model", True,
                   outcome, sim, {2: "both calls answered by the environment", 1: "only the first call answered", 0: "no call answered"}[len(answered)])
    def variation_1():
        # 2. Malformed arguments on the first call, then the script goes on as in the base run.
        broken = json.dumps(acts[0].arguments)[:-1] + ", "
        sim, err = play([{"calls": [(acts[0].name, broken)]}] + gold + final, user)
        if sim is None:
            record("malformed_arguments", "the first call's arguments are cut-off JSON", "model", True,
                   "fatal", None,
                   f"run_task raised {err.split(':')[0]}; `tau2 run` stops the whole evaluation on it unless --skip-failed-samples, which scores the task 0")
        else:
            errs = [m for m in tool_messages(sim) if m.error]
            record("malformed_arguments", "the first call's arguments are cut-off JSON", "model", True,
                   "forgiven" if errs else "continued", sim, None)
    def variation_2():
        # 3. An unknown tool, 4. a call the tool rejects: each before the base run's calls.
        first_string = next((k for k, v in acts[0].arguments.items() if isinstance(v, str)), None)
        rejected = dict(acts[0].arguments)
        if first_string is not None:
            rejected[first_string] = "no-such-id"
        for decision, variation, turn in (
            ("unknown_tool", f"a call to `{UNKNOWN_TOOL}`, a tool the domain lacks", (UNKNOWN_TOOL, "{}")),
            ("tool_error", f"`{acts[0].name}` called with an id the environment does not have", call(acts[0], rejected)),
        ):
            sim, err = play([{"calls": [turn]}] + gold + final, user)
            if sim is None:
                record(decision, variation, "model", True, "fatal", None, err)
                continue
            errs = [m for m in tool_messages(sim) if m.error]
            went_on = len(sim.messages) > base_len
            if not errs:
                outcome, detail = "continued", "no error came back"
            elif went_on:
                outcome, detail = "forgiven", f"the tool answered: {errs[0].content}"
            else:
                outcome, detail = "ended_by_harness", f"ended: {termination(sim)}"
            record(decision, variation, "model", True, outcome, sim, detail)
    def variation_3():
        # 5. A text turn with no tool call before the first call; the user answers "OK.".
        sim, err = play([{"content": TEXT}] + gold + final, [{"content": REQUEST}, {"content": OK}, {"content": forge.STOP}])
        if sim is None:
            record("text_turn", "a message to the user before the first call", "model", True, "fatal", None, err)
        else:
            went_on = any(m.role == "tool" for m in sim.messages)
            record("text_turn", "a message to the user before the first call", "model", True,
                   "continued" if went_on else "ended_by_harness", sim,
                   "the user answered and the agent went on" if went_on else f"ended: {termination(sim)}")
    def variation_4():
        # 6. The user ends the conversation at its first turn.
        sim, err = play(gold + final, [{"content": forge.STOP}])
        if sim is None:
            record("user_ends_early", "the user stops at its first turn", "user", False, "fatal", None, err)
        else:
            record("user_ends_early", "the user stops at its first turn", "user", False,
                   "ended_by_user" if termination(sim) == "user_stop" else "continued", sim,
                   f"ended: {termination(sim)}, before any call")
    def variation_5():
        # 7. The step limit: the base run with a limit two steps short of it.
        limit = max(1, base_len - 2)
        short = "the base run under a step limit two steps short of it"
        sim, err = play(gold + final, user, max_steps=limit)
        if sim is None:
            record("step_limit", short, "harness", False, "fatal", None, err)
        else:
            record("step_limit", short, "harness", False,
                   "ended_by_harness" if termination(sim) == "max_steps" else "continued", sim,
                   f"ended: {termination(sim)}")
    def variation_6():
        # 8. An empty answer (no text, no call) before the first call.
        sim, err = play([{"content": ""}] + gold + final, user)
        if sim is None:
            record("empty_answer", "an answer with no text and no call", "harness", False, "fatal", None, err)
        else:
            asked_again = agent_model.asked > len(gold) + 1 and not any(
                m.role == "assistant" and not m.tool_calls and not (m.content or "").strip()
                for m in sim.messages
            )
            record("empty_answer", "an answer with no text and no call", "harness", False,
                   "retried" if asked_again else "continued", sim,
                   "τ²'s generate() asked the model again; the empty answer is not in the trajectory"
                   if asked_again else None)

    variations = [
        variation_0,
        variation_1,
        variation_2,
        variation_3,
        variation_4,
        variation_5,
        variation_6,
    ]

    def one(k):
        variations[k]()
        return out

    # Each variation in a forked child: its environments come from the pool of pristine ones
    # built before the forks (see forge.Tau2.play_batch); a child's records come back as JSON.
    results = forge.forked(list(range(len(variations))), one, jobs)
    out = []
    for k, r in enumerate(results):
        if isinstance(r, dict):
            raise forge.HookError(f"variation {k} failed: {r.get('error')}")
        out.extend(r)

    return {
        "agent": "llm_agent",
        "user": "user_simulator",
        "base": {
            "group": domain,
            "unit": task.id,
            "termination": base_termination,
            "messages": base_len,
        },
        "base_reward": base_reward,
        "decisions": out,
    }


if __name__ == "__main__":
    print("use hook.py intervene", file=sys.stderr)
    sys.exit(2)
