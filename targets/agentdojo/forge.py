"""Forged AgentDojo runs, played through AgentDojo's own pipeline and scored by its own checks.

A forged run is a script: the calls and the final answer a scripted LLM element
(`ScriptedLLM`, an AgentDojo `BasePipelineElement`) emits when the pipeline asks it. The
pipeline is the one AgentDojo builds for any model (`AgentPipeline.from_config`: system message,
user query, the LLM, then the tool-execution loop with AgentDojo's `ToolsExecutor`), so every call
is executed by the suite's real functions on the suite's real environment, and
`TaskSuite.run_task_with_pipeline` scores the run with the task's own utility check (and the
injection task's security check on task × injection pairs).

The forgeries (names and declared qualities: BenchAudit's table in
crates/audit/src/trajectories/table.rs) are built from each task's own ground truth: its
`ground_truth(environment)` calls and its `GROUND_TRUTH_OUTPUT`.
"""

import copy
import importlib.metadata
import json
import math
import re
import sys

import yaml

PACKAGE = "agentdojo"
# The benchmark version AgentDojo's own benchmark script runs by default.
BENCHMARK_VERSION = "v1.2.2"
# The attack that places each injection task's goal in the injection vectors: AgentDojo's own
# `direct` attack ("TODO: {goal}"), which needs no model name.
ATTACK = "direct"
DONE = "Done."
MAX_CORRUPTIONS = 64
MAX_NUMBERS = 10000
UNRELATED = 3
# The tool-execution loop AgentDojo builds runs at most this many rounds (ToolsExecutionLoop's
# default max_iters); a longer script packs its calls into fewer messages.
LOOP_ROUNDS = 15

NUMBER = re.compile(r"\d+(?:\.\d+)?")
DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
AMOUNT = re.compile(r"\b\d+\.\d+\b")

FORGERIES = (
    "gold",
    "do_nothing",
    "env_dump",
    "gold_answer_only",
    "gold_calls_done",
    "drop_last_write",
    "corrupt_last_write",
    "echo_outputs",
    "list_numbers",
    "wrong_value",
    "calls_without_arguments",
    "injection_followed",
    "injection_only",
)


class Unavailable(Exception):
    """AgentDojo cannot be imported (exit status 1: the audit reports the stage not probed)."""


class HookError(Exception):
    """A request the hook cannot answer: an unknown suite, task or forgery (exit status 2)."""


class NotBuilt(Exception):
    """A forgery that cannot be built for this task; the message says why."""


def load():
    try:
        import agentdojo.agent_pipeline as pipeline
        import agentdojo.attacks as attacks
        import agentdojo.functions_runtime as runtime
        import agentdojo.types as types
        from agentdojo.agent_pipeline.tool_execution import tool_result_to_str
        from agentdojo.task_suite.load_suites import get_suites
    except ImportError as e:
        raise Unavailable(
            f"cannot import AgentDojo ({e}); run targets/agentdojo/setup.sh to install {PACKAGE} "
            f"into targets/agentdojo/.venv (python: {sys.executable})"
        )
    return {
        "pipeline": pipeline,
        "attacks": attacks,
        "runtime": runtime,
        "types": types,
        "tool_result_to_str": tool_result_to_str,
        "suites": get_suites(BENCHMARK_VERSION),
    }


def text_of(content):
    if content is None:
        return None
    return "\n".join(c.get("content") or "" for c in content)


def message_json(m):
    """A message as the checks saw it."""
    d = {"role": m["role"], "content": text_of(m.get("content"))}
    if m["role"] == "assistant" and m.get("tool_calls") is not None:
        d["tool_calls"] = [
            {"id": c.id, "function": c.function, "args": c.args} for c in m["tool_calls"]
        ]
    if m["role"] == "tool":
        c = m["tool_call"]
        d["tool_call"] = {"id": c.id, "function": c.function, "args": c.args}
        d["error"] = m.get("error")
    return d


def shape(s):
    return re.sub(r"[a-z]", "x", re.sub(r"[0-9A-Z]", "X", s))


def strings_in(value):
    out = []

    def walk(x):
        if isinstance(x, str):
            out.append(x)
        elif isinstance(x, (list, tuple)):
            for y in x:
                walk(y)
        elif isinstance(x, dict):
            for k, y in x.items():
                if isinstance(k, str):
                    out.append(k)
                walk(y)

    walk(value)
    return out


def bump_last_digit(s):
    for i in range(len(s) - 1, -1, -1):
        if s[i].isdigit():
            return s[:i] + str((int(s[i]) + 1) % 10) + s[i + 1 :]
    return None


def wrong(info):
    w = bump_last_digit(info)
    if w is not None:
        return w
    for i in range(len(info) - 1, -1, -1):
        c = info[i]
        if c.isalpha():
            nxt = "a" if c == "z" else "A" if c == "Z" else chr(ord(c) + 1)
            return info[:i] + nxt + info[i + 1 :]
    return info + "x"


def alternatives(name, value, seen, pool):
    """Shape-kept alternatives of one argument value, as in targets/tau2/forge.py: siblings of
    the same shape in the tool outputs that contain the value, then the other outputs, then the
    other tasks' values of the argument, then the last digit moved; numbers moved by one;
    booleans flipped; one element of a list or object changed."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1, value - 1]
    if isinstance(value, float):
        return [value + 1.0, value - 1.0]
    if isinstance(value, str):
        out = []
        want = shape(value)
        near = [s for out_ in seen if value in out_ for s in out_]
        far = [s for out_ in seen if value not in out_ for s in out_]
        for s in near + far:
            if s != value and shape(s) == want and s not in out:
                out.append(s)
        for s in sorted(pool.get(name, ())):
            if s != value and s not in out:
                out.append(s)
        b = bump_last_digit(value)
        if b is not None and b not in out:
            out.append(b)
        return out
    if isinstance(value, list):
        out = []
        for j, elem in enumerate(value):
            for alt in alternatives(name, elem, seen, pool):
                new = list(value)
                new[j] = alt
                out.append(new)
        return out
    if isinstance(value, dict):
        out = []
        for k in value:
            for alt in alternatives(k, value[k], seen, pool):
                new = dict(value)
                new[k] = alt
                out.append(new)
        return out
    return []


def list_numbers(outputs):
    nums, seen = [], set()
    for o in outputs:
        for n in NUMBER.findall(o):
            if n not in seen:
                seen.add(n)
                nums.append(n)
    amounts = [n for n in nums if "." in n]
    for i in range(len(amounts)):
        for j in range(i + 1, len(amounts)):
            if len(nums) >= MAX_NUMBERS:
                break
            s = f"{float(amounts[i]) + float(amounts[j]):.2f}"
            if s not in seen:
                seen.add(s)
                nums.append(s)
    nums = nums[:MAX_NUMBERS]
    return "It is one of these: " + ", ".join(nums) + "." if nums else DONE


def wrong_value(answer, outputs):
    dates, amounts = [], []
    for o in outputs:
        for d in DATE.findall(o):
            if d not in dates and d not in answer and len(dates) < UNRELATED:
                dates.append(d)
        for a in AMOUNT.findall(o):
            if a not in amounts and a not in answer and len(amounts) < UNRELATED:
                amounts.append(a)
    text = wrong(answer)
    if dates or amounts:
        text += " Reference details: " + ", ".join(dates + amounts) + "."
    return text


class Script:
    """The calls (in messages) and the final answer of one forged run. `answer` is a text or a
    function of the tool outputs seen."""

    def __init__(self, calls, answer):
        self.calls = list(calls)
        self.answer = answer


class AgentDojo:
    """AgentDojo's suites, loaded once per hook process."""

    def __init__(self):
        self.a = load()
        self.version = importlib.metadata.version(PACKAGE)
        self.envs = {}
        self.facts_cache = {}
        self.pairs_cache = {}
        self.pools = {}

    # -- suites and units ----------------------------------------------------------------

    def suite(self, name):
        suites = self.a["suites"]
        if name not in suites:
            raise HookError(
                f"unknown AgentDojo suite {name!r}; {BENCHMARK_VERSION} ships {', '.join(sorted(suites))}"
            )
        return suites[name]

    def environment(self, suite_name, injections):
        """A fresh copy of the suite's environment with these injections (parsed once)."""
        key = (suite_name, tuple(sorted(injections.items())))
        if key not in self.envs:
            self.envs[key] = self.suite(suite_name).load_and_inject_default_environment(dict(injections))
        return self.envs[key].model_copy(deep=True)

    def pairs(self, suite_name):
        """Each injection task paired with one user task that sees an injection vector when it
        runs correctly: the user tasks that do, in the suite's order, taken in turn."""
        if suite_name in self.pairs_cache:
            return self.pairs_cache[suite_name]
        suite = self.suite(suite_name)
        attack = self.attack(suite_name)
        injectable = []
        for uid, task in suite.user_tasks.items():
            try:
                attack.get_injection_candidates(task)
                injectable.append(uid)
            except ValueError:
                continue
        out = []
        for j, iid in enumerate(suite.injection_tasks):
            if injectable:
                out.append((injectable[j % len(injectable)], iid))
        self.pairs_cache[suite_name] = out
        return out

    def attack(self, suite_name):
        attacks = self.a["attacks"]
        return attacks.load_attack(ATTACK, self.suite(suite_name), None)

    def split(self, suite_name, unit):
        suite = self.suite(suite_name)
        user_id, _, inj_id = unit.partition("+")
        if user_id not in suite.user_tasks:
            raise HookError(f"AgentDojo {suite_name} has no user task {user_id!r}")
        if inj_id and inj_id not in suite.injection_tasks:
            raise HookError(f"AgentDojo {suite_name} has no injection task {inj_id!r}")
        return suite.user_tasks[user_id], (suite.injection_tasks[inj_id] if inj_id else None)

    def run_calls(self, suite_name, env, calls):
        """Executes calls on env with the suite's runtime: (results as text, writes flags)."""
        runtime = self.a["runtime"].FunctionsRuntime(self.suite(suite_name).tools)
        texts, writes = [], []
        for c in calls:
            before = env.model_dump()
            result, error = runtime.run_function(env, c.function, copy.deepcopy(c.args))
            texts.append(error or self.a["tool_result_to_str"](result))
            writes.append(env.model_dump() != before)
        return texts, writes

    def gold_calls(self, task, env):
        return list(task.ground_truth(env))

    def facts(self, suite_name, unit):
        key = (suite_name, unit)
        if key in self.facts_cache:
            return self.facts_cache[key]
        task, inj = self.split(suite_name, unit)
        env = task.init_environment(self.environment(suite_name, {}))
        calls = self.gold_calls(task, env.model_copy(deep=True))
        _, writes = self.run_calls(suite_name, env, calls)
        f = {
            "actions": len(calls),
            "writes": sum(writes),
            "answer": 1 if task.GROUND_TRUTH_OUTPUT.strip() else 0,
            "agent_actions": len(calls),
            "user_actions": 0,
            "actions_with_arguments": sum(1 for c in calls if c.args),
            "injection": inj is not None,
        }
        if inj is not None:
            f["injection_task"] = inj.ID
        self.facts_cache[key] = f
        return f

    def units(self, groups):
        out = []
        for name in groups:
            suite = self.suite(name)
            ids = list(suite.user_tasks) + [f"{u}+{i}" for u, i in self.pairs(name)]
            out.append({"name": name, "units": [{"id": u, "facts": self.facts(name, u)} for u in ids]})
        return {
            "benchmark": {
                "name": "agentdojo",
                "package": PACKAGE,
                "version": self.version,
                "benchmark_version": BENCHMARK_VERSION,
                "attack": ATTACK,
                "evaluator": "TaskSuite.run_task_with_pipeline (the user task's utility check; the injection task's security check)",
                "forgeries": list(FORGERIES),
            },
            "groups": out,
        }

    # -- scripts -------------------------------------------------------------------------

    def script(self, suite_name, unit, forgery, env):
        """The script of one forgery on `env` (the task's environment before the run)."""
        task, inj = self.split(suite_name, unit)
        gold = self.gold_calls(task, env.model_copy(deep=True))
        answer = task.GROUND_TRUTH_OUTPUT
        facts = self.facts(suite_name, unit)
        if inj is None and forgery in ("injection_followed", "injection_only"):
            raise NotBuilt("played on task × injection pairs only")
        if inj is not None and forgery not in ("gold", "do_nothing", "injection_followed", "injection_only"):
            raise NotBuilt("played on the task alone, not on its injection pairs")
        if forgery == "gold":
            return Script(gold, answer)
        if forgery == "do_nothing":
            return Script([], "")
        if forgery == "env_dump":
            return Script([], self.a["tool_result_to_str"](env))
        if forgery == "gold_answer_only":
            if not gold:
                raise NotBuilt("the task expects no call")
            return Script([], answer)
        if forgery in ("gold_calls_done", "echo_outputs", "list_numbers", "wrong_value"):
            if not answer.strip():
                raise NotBuilt("the task declares nothing to communicate")
            return Script(
                gold,
                {
                    "gold_calls_done": DONE,
                    "echo_outputs": lambda outputs: "\n".join(outputs) if outputs else DONE,
                    "list_numbers": list_numbers,
                    "wrong_value": lambda outputs: wrong_value(answer, outputs),
                }[forgery],
            )
        writes = self.write_indices(suite_name, env, gold)
        if forgery == "drop_last_write":
            if not writes:
                raise NotBuilt("the task's expected calls make no write")
            return Script(gold[: writes[-1]] + gold[writes[-1] + 1 :], answer)
        if forgery == "corrupt_last_write":
            if not writes:
                raise NotBuilt("the task's expected calls make no write")
            return Script(self.corrupt(suite_name, env, gold, writes[-1]), answer)
        if forgery == "calls_without_arguments":
            if not facts["actions_with_arguments"]:
                raise NotBuilt("no expected call takes an argument")
            return Script([c.model_copy(update={"args": {}}) for c in gold], answer)
        if forgery in ("injection_followed", "injection_only"):
            injected = list(inj.ground_truth(env.model_copy(deep=True)))
            if not injected:
                raise NotBuilt(f"{inj.ID} ships no ground-truth calls (its ground_truth returns none)")
            if forgery == "injection_followed":
                return Script(gold + injected, answer)
            return Script(injected, inj.GROUND_TRUTH_OUTPUT)
        raise HookError(f"unknown forgery {forgery!r}; this hook plays {', '.join(FORGERIES)}")

    def pool(self, suite_name):
        """Every string argument value of every user task's gold calls, by argument name."""
        if suite_name not in self.pools:
            pool = {}
            suite = self.suite(suite_name)
            for task in suite.user_tasks.values():
                env = task.init_environment(self.environment(suite_name, {}))
                for c in self.gold_calls(task, env):
                    collect(c.args, pool)
            self.pools[suite_name] = pool
        return self.pools[suite_name]

    def write_indices(self, suite_name, env, calls):
        _, writes = self.run_calls(suite_name, env.model_copy(deep=True), calls)
        return [i for i, w in enumerate(writes) if w]

    def corrupt(self, suite_name, env, calls, index):
        target = calls[index]
        if not target.args:
            raise NotBuilt(f"the last write ({target.function}) takes no argument")
        runtime = self.a["runtime"].FunctionsRuntime(self.suite(suite_name).tools)
        fmt = self.a["tool_result_to_str"]

        def prefix():
            e = env.model_copy(deep=True)
            seen = []
            for c in calls[:index]:
                result, error = runtime.run_function(e, c.function, copy.deepcopy(c.args))
                try:
                    seen.append(strings_in(yaml.safe_load(fmt(result))) if error is None else [])
                except yaml.YAMLError:
                    seen.append([])
            return e, seen

        gold_env, seen = prefix()
        for c in calls[index:]:
            runtime.run_function(gold_env, c.function, copy.deepcopy(c.args))
        gold_state = gold_env.model_dump()
        pool = self.pool(suite_name)
        per_argument = [
            [dict(target.args, **{k: alt}) for alt in alternatives(k, v, seen, pool)]
            for k, v in target.args.items()
        ]
        candidates = [
            c[i] for i in range(max(map(len, per_argument), default=0)) for c in per_argument if i < len(c)
        ]
        tried = 0
        for alt in candidates[:MAX_CORRUPTIONS]:
            tried += 1
            e, _ = prefix()
            _, error = runtime.run_function(e, target.function, copy.deepcopy(alt))
            if error is not None:
                continue
            for c in calls[index + 1 :]:
                runtime.run_function(e, c.function, copy.deepcopy(c.args))
            if e.model_dump() != gold_state:
                out = list(calls)
                out[index] = target.model_copy(update={"args": alt})
                return out
        raise NotBuilt(
            f"no shape-kept change of one argument of the last write ({target.function}) both "
            f"executes without error and changes the environment"
            + ("" if tried < MAX_CORRUPTIONS else " (within the alternatives tried)")
        )

    # -- play ----------------------------------------------------------------------------

    def pipeline(self, script):
        """AgentDojo's own pipeline for any model, with the scripted LLM element as the model."""
        p = self.a["pipeline"]
        types = self.a["types"]
        FunctionCall = self.a["runtime"].FunctionCall

        # Calls per message so the whole script fits the tool-execution loop's rounds (the
        # first message is sent before the loop).
        per_message = max(1, math.ceil(len(script.calls) / LOOP_ROUNDS))
        batches = [script.calls[i : i + per_message] for i in range(0, len(script.calls), per_message)]

        class ScriptedLLM(p.BasePipelineElement):
            name = "benchaudit-forged"

            def __init__(self):
                self.batches = list(batches)
                self.sent = 0
                self.outputs = []

            def query(self, query, runtime, env, messages=[], extra_args={}):
                self.outputs = [
                    text_of(m["content"]) or (m.get("error") or "")
                    for m in messages
                    if m["role"] == "tool"
                ]
                if self.batches:
                    batch = self.batches.pop(0)
                    calls = []
                    for c in batch:
                        calls.append(
                            FunctionCall(function=c.function, args=copy.deepcopy(dict(c.args)), id=f"call_{self.sent}")
                        )
                        self.sent += 1
                    out = types.ChatAssistantMessage(role="assistant", content=None, tool_calls=calls)
                else:
                    a = script.answer(self.outputs) if callable(script.answer) else script.answer
                    out = types.ChatAssistantMessage(
                        role="assistant", content=[types.text_content_block_from_string(a)], tool_calls=None
                    )
                return query, runtime, env, [*messages, out], extra_args

        config = p.PipelineConfig(
            llm=ScriptedLLM(), model_id=None, defense=None, system_message_name=None, system_message=None
        )
        return p.AgentPipeline.from_config(config)

    def play(self, item):
        suite_name, unit, forgery = item.get("group"), item.get("unit"), item.get("forgery")
        suite = self.suite(suite_name)
        task, inj = self.split(suite_name, unit)
        if forgery not in FORGERIES:
            raise HookError(f"unknown forgery {forgery!r}; this hook plays {', '.join(FORGERIES)}")
        injections = {}
        if inj is not None:
            injections = self.attack(suite_name).attack(task, inj)
        env = self.environment(suite_name, injections)
        try:
            script = self.script(suite_name, unit, forgery, task.init_environment(env.model_copy(deep=True)))
        except NotBuilt as e:
            return {"built": False, "reason": str(e)}
        pipeline = self.pipeline(script)
        # The messages of the run, as AgentDojo's checks see them, are caught at the pipeline's
        # end (run_task_with_pipeline returns only the two verdicts).
        seen = {}
        original = pipeline.query

        def query(*args, **kwargs):
            out = original(*args, **kwargs)
            seen["messages"] = out[3]
            return out

        pipeline.query = query
        try:
            utility, security = suite.run_task_with_pipeline(
                pipeline, task, inj, injections, environment=env
            )
        except Exception as e:
            return {"built": True, "error": f"{type(e).__name__}: {e}"}
        return {
            "built": True,
            "termination": "answered",
            "scores": {
                "utility": 1.0 if utility else 0.0,
                "security": (1.0 if security else 0.0) if inj is not None else None,
            },
            "trajectory": [message_json(m) for m in seen.get("messages", [])],
        }


def collect(arguments, pool):
    for k, v in arguments.items():
        vals = v if isinstance(v, list) else [v]
        for x in vals:
            if isinstance(x, str):
                pool.setdefault(k, set()).add(x)
            elif isinstance(x, dict):
                collect(x, pool)
