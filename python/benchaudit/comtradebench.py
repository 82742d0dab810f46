"""ComtradeBench as an Inspect task: `inspect eval benchaudit/comtradebench --model PROVIDER/MODEL`.

One sample per (task, seed). Each sample plays one episode served by the bundled binary's MCP
stdio server (`benchaudit mcp --task T --seed S ...`): the three tools, their text, every fault
and the scoring of the submission are Rust's; this module only wires them into Inspect. The
model owns every decision (level L2); which agent loop drives it is the `scaffold` parameter
(`react`, `basic_agent` or `loop`, a plain tool loop), so the scaffold is a visible,
controlled part of the run and is recorded in the log (the task's arguments and the plan).

Two scorers per sample, both read from the episode's own answer to `submit_results` (the Rust
scorers): `f1` (ground-truth F1) and `judge` (the legacy six-dimension judge, 0-1). A sample
that never submitted is scored as the binary scores missing files (`benchaudit score` on an
empty submission), as `benchaudit run` does. Metrics: mean, worst case (the minimum) and
pass^k over seeds (each task's seeds are its trials; a trial passes at or above the threshold,
1.0 by default as in `benchaudit report`; k = the number of seeds).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from math import comb
from typing import Any, Sequence

from inspect_ai import Task, task
from inspect_ai.agent import as_solver, react
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageTool
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Target,
    mean,
    metric,
    scorer,
)
from inspect_ai.solver import Generate, Solver, TaskState, basic_agent, solver
from inspect_ai.tool import mcp_connection, mcp_server_stdio
from inspect_ai.util import subprocess as async_subprocess

from . import binary

SCAFFOLDS = ("react", "basic_agent", "loop")
"""The agent loops the task can run: Inspect's `react()`, `basic_agent()`, or a plain loop
(`generate(tool_calls="loop")`: the model's tool calls run until it answers without one)."""

INTERFACES = ("legacy", "strict")
SUBMISSIONS = ("full", "ids", "chunked")
TOOL_TEXTS = ("clarified", "ambiguous")

_CALL_LIMIT_S = 120


def _run(args: Sequence[str], stdin: str | None = None) -> str:
    """Runs the binary with a time limit; a failure names the command and its stderr."""
    cmd = [binary(), *args]
    try:
        done = subprocess.run(
            cmd, input=stdin, capture_output=True, text=True, timeout=_CALL_LIMIT_S
        )
    except subprocess.TimeoutExpired as e:
        raise RuntimeError(f"{' '.join(cmd)}: no answer within {_CALL_LIMIT_S} s") from e
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(cmd)} exited {done.returncode}: {done.stderr.strip()}"
        )
    return done.stdout


def registry_tasks() -> list[str]:
    """The task ids of the binary's registry (`benchaudit tasks --json`)."""
    return [t["task_id"] for t in json.loads(_run(["tasks", "--json"]))]


def parse_seeds(seeds: int | str | Sequence[int]) -> list[int]:
    """Seeds as `benchaudit run --seeds` writes them: `3`, `0..4` (inclusive) or `0,2,5`."""
    if isinstance(seeds, int):
        out = [seeds]
    elif isinstance(seeds, str):
        out = []
        for part in seeds.split(","):
            part = part.strip()
            lo, sep, hi = part.partition("..")
            try:
                out.extend(range(int(lo), int(hi) + 1) if sep else [int(part)])
            except ValueError as e:
                raise ValueError(f"seeds: {part!r} is not N, A..B or a list of them") from e
    else:
        out = [int(s) for s in seeds]
    if not out or any(s < 0 for s in out) or len(set(out)) != len(out):
        raise ValueError(f"seeds: need distinct non-negative seeds, got {seeds!r}")
    return out


def _names(value: str | Sequence[str] | None) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return list(value)


def _choice(name: str, value: str, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise ValueError(f"{name}: {value!r} is not one of {', '.join(allowed)}")
    return value


def episode_args(
    task_id: str, seed: int, interface: str, submission: str, tool_text: str
) -> list[str]:
    """The `benchaudit mcp` arguments serving one episode."""
    return [
        "mcp",
        "--task", task_id,
        "--seed", str(seed),
        "--interface", interface,
        "--submission", submission,
        "--tool-text", tool_text,
    ]  # fmt: skip


def server_instructions(args: Sequence[str]) -> str:
    """The episode server's own instructions (its MCP `initialize` answer), used as the prompt."""
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "benchaudit-inspect", "version": "1"},
        },
    }
    for line in _run(args, stdin=json.dumps(hello) + "\n").splitlines():
        answer = json.loads(line)
        if answer.get("id") == 1:
            return answer["result"]["instructions"]
    raise RuntimeError(f"benchaudit {' '.join(args)}: no answer to initialize")


@task
def comtradebench(
    tasks: str | list[str] | None = None,
    seeds: int | str | list[int] = "0..4",
    interface: str = "legacy",
    tool_text: str = "clarified",
    submission: str = "full",
    scaffold: str = "react",
    message_limit: int = 120,
) -> Task:
    """The repaired ComtradeBench at L2: every (task, seed) one episode served by the Rust core.

    Args:
      tasks: Task ids (a list or comma-separated); default every task of the registry.
      seeds: Seeds: `N`, `A..B` (inclusive) or a list; default 0..4.
      interface: Argument-error envelope: `legacy` (422 says retry, as released) or `strict`.
      tool_text: fetch_page's `page` text: `clarified` (1-based, stated) or `ambiguous`.
      submission: Submission protocol: `full` records, record `ids`, or `chunked`.
      scaffold: The agent loop: `react`, `basic_agent` or `loop` (a plain tool loop).
      message_limit: Most messages in one sample's conversation.
    """
    _choice("interface", interface, INTERFACES)
    _choice("tool_text", tool_text, TOOL_TEXTS)
    _choice("submission", submission, SUBMISSIONS)
    _choice("scaffold", scaffold, SCAFFOLDS)
    known = registry_tasks()
    chosen = _names(tasks) or known
    unknown = [t for t in chosen if t not in known]
    if unknown:
        raise ValueError(f"tasks: unknown {', '.join(unknown)}; known: {', '.join(known)}")
    seed_list = parse_seeds(seeds)
    prompt = server_instructions(
        episode_args(chosen[0], seed_list[0], interface, submission, tool_text)
    )
    samples = [
        Sample(
            id=f"{task_id}:{seed}",
            input=prompt,
            metadata={"task_id": task_id, "seed": seed},
        )
        for task_id in chosen
        for seed in seed_list
    ]
    return Task(
        dataset=MemoryDataset(samples, name="comtradebench"),
        solver=comtrade_agent(
            scaffold=scaffold,
            interface=interface,
            submission=submission,
            tool_text=tool_text,
        ),
        scorer=[f1(), judge()],
        message_limit=message_limit,
        metadata={
            "benchaudit": {
                "interface": interface,
                "tool_text": tool_text,
                "submission": submission,
                "scaffold": scaffold,
                "level": "L2",
            }
        },
    )


@solver
def comtrade_agent(
    scaffold: str = "react",
    interface: str = "legacy",
    submission: str = "full",
    tool_text: str = "clarified",
) -> Solver:
    """Plays the sample's episode: its MCP server connected for the whole sample, the chosen loop.

    The connection is opened here rather than by the loop, so every scaffold drives the same
    episode from its first call to its last (one server process per sample).
    """
    _choice("scaffold", scaffold, SCAFFOLDS)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        md = state.metadata
        server = mcp_server_stdio(
            name="comtradebench",
            command=binary(),
            args=episode_args(md["task_id"], md["seed"], interface, submission, tool_text),
        )
        async with mcp_connection([server]):
            tools = await server.tools()
            if scaffold == "react":
                return await as_solver(react(tools=tools))(state, generate)
            if scaffold == "basic_agent":
                return await basic_agent(tools=tools)(state, generate)
            state.tools = tools
            return await generate(state, tool_calls="loop")

    return solve


def accepted_submission(state: TaskState) -> dict[str, Any] | None:
    """The episode's answer to its accepted `submit_results` call, if any."""
    for message in state.messages:
        if (
            isinstance(message, ChatMessageTool)
            and message.function == "submit_results"
            and message.error is None
        ):
            try:
                answer = json.loads(message.text)
            except json.JSONDecodeError:
                continue
            if isinstance(answer, dict) and answer.get("done") and "scores" in answer:
                return answer
    return None


async def episode_scores(state: TaskState) -> dict[str, Any]:
    """Both scores of the sample, from the Rust side, computed once per sample.

    With a submission: the `scores` the episode answered. Without: `benchaudit score` of an
    empty submission directory (the missing files are what gets scored, as in `benchaudit run`).
    """
    cached = state.store.get("benchaudit_scores")
    if cached is not None:
        return cached
    answer = accepted_submission(state)
    if answer is not None:
        s = answer["scores"]
        scores = {
            "submitted": True,
            "f1": s["f1"],
            "precision": s["precision"],
            "recall": s["recall"],
            "judge": s["judge"],
            "judge_breakdown": s["judge_breakdown"],
        }
    else:
        md = state.metadata
        with tempfile.TemporaryDirectory(prefix="benchaudit-empty-") as empty:
            done = await async_subprocess(
                [binary(), "score", "--task", md["task_id"], "--seed", str(md["seed"]),
                 "--json", empty],
                timeout=_CALL_LIMIT_S,
            )  # fmt: skip
        if not done.success:
            raise RuntimeError(f"benchaudit score (no submission) failed: {done.stderr}")
        s = json.loads(done.stdout)
        scores = {
            "submitted": False,
            "f1": s["f1"],
            "precision": s["precision"],
            "recall": s["recall"],
            "judge": s["judge"]["score"],
            "judge_breakdown": s["judge"]["breakdown"],
        }
    state.store.set("benchaudit_scores", scores)
    return scores


@metric
def worst() -> Metric:
    """The worst case: the lowest score over all samples."""

    def compute(scores: list[SampleScore]) -> float:
        return min(s.score.as_float() for s in scores)

    return compute


@metric
def pass_hat_k(threshold: float = 1.0) -> Metric:
    """pass^k over seeds: per task, C(c, k) / C(n, k) with n seeds, c of them at or above
    `threshold`, k = n (every seed succeeds); the mean over tasks (τ-bench's estimator, as
    benchaudit's `report` computes it)."""

    def compute(scores: list[SampleScore]) -> float:
        by_task: dict[str, list[float]] = {}
        for s in scores:
            task_id = (s.sample_metadata or {}).get("task_id", "")
            by_task.setdefault(task_id, []).append(s.score.as_float())
        rates = []
        for values in by_task.values():
            n = len(values)
            c = sum(v >= threshold for v in values)
            rates.append(comb(c, n) / comb(n, n))
        return sum(rates) / len(rates)

    return compute


@scorer(metrics=[mean(), worst(), pass_hat_k()])
def f1() -> Any:
    """Ground-truth F1 of the submitted records against the seeded generator's (Rust's scorer)."""

    async def score(state: TaskState, target: Target) -> Score:
        s = await episode_scores(state)
        return Score(
            value=s["f1"],
            explanation="submitted" if s["submitted"] else "no submission",
            metadata={"precision": s["precision"], "recall": s["recall"]},
        )

    return score


@scorer(metrics=[mean(), worst(), pass_hat_k()])
def judge() -> Any:
    """The legacy six-dimension judge, 0-1 (Rust's port of the released scorer)."""

    async def score(state: TaskState, target: Target) -> Score:
        s = await episode_scores(state)
        return Score(
            value=s["judge"],
            explanation="submitted" if s["submitted"] else "no submission",
            metadata={"breakdown": s["judge_breakdown"]},
        )

    return score
