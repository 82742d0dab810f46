"""openenv-core's own clients against `benchaudit serve` (run by scripts/interop/openenv.sh).

* MCPToolClient (reset with seed and task_id over /ws, list_tools, call_tool, step) plays an
  oracle episode: every page fetched (faults retried), records deduplicated, totals dropped,
  submitted; the observation answering the submit has done true and reward 1.0.
* Reproducibility, as GRPO groups need it: the same seed twice gives the same observations
  (every page, every fault, the reward), and a different seed gives different ones.
* GenericEnvClient (plain dict actions) plays the same episode and gets the same reward; the
  judge reward is given on request; state echoes the client's episode_id; errors arrive as
  OpenEnv error messages the client raises on.
* The HTTP routes /health, /schema, /metadata, /reset, /state answer as OpenEnv's do.
* The released ComtradeBench client's expectations (its `ComtradeEnv` is not on PyPI, so an
  `EnvClient` here reads what it reads): the task's description, query, constraints and
  instructions at the top level of the reset observation's metadata; its empty step action as
  a no-op observation, not an error; `score` (0-100) and `breakdown` in the submit answer,
  which its agent records.
"""

import asyncio
import json
import os
import subprocess
import sys
import urllib.request

import serve

from typing import Any, Dict

from openenv.core import EnvClient
from openenv.core.client_types import StepResult
from openenv.core.env_server.mcp_types import CallToolAction, CallToolObservation, ListToolsAction
from openenv.core.env_server.types import Action, Observation, State
from openenv.core.generic_client import GenericEnvClient
from openenv.core.mcp_client import MCPToolClient

BIN = os.environ.get("BENCHAUDIT", "target/debug/benchaudit")
PORT = int(os.environ.get("PORT", "18384"))
BASE = f"http://127.0.0.1:{PORT}"
TASK = "T8_mixed_faults"


def data_of(obs):
    """A tool's answer in a CallToolObservation: (value, is_error)."""
    r = obs.result
    return r["data"], r["is_error"]


async def oracle(env, seed, task=TASK, episode_id=None, reward=None):
    """Plays one oracle episode; returns (observations as JSON text, final step result)."""
    kwargs = {"seed": seed, "task_id": task}
    if episode_id:
        kwargs["episode_id"] = episode_id
    if reward:
        kwargs["reward"] = reward
    first = await env.reset(**kwargs)
    # The episode's name is the client's (or the server's); everything else must replay.
    facts = {k: v for k, v in first.observation.metadata.items() if k != "episode_id"}
    seen = [json.dumps(facts, sort_keys=True)]
    tools = {t.name for t in await env.list_tools(use_cache=False)}
    assert {"get_task_info", "fetch_page", "submit_results"} <= tools, tools
    info = first.observation.metadata["task_info"]
    assert info["task_id"] == task, info

    async def fetch(page):
        step = await env.step(CallToolAction(tool_name="fetch_page", arguments={"page": page}))
        assert isinstance(step.observation, CallToolObservation) and step.observation.error is None
        assert step.reward is None and not step.done, step
        body, is_error = data_of(step.observation)
        seen.append(json.dumps(body, sort_keys=True))
        return body, is_error

    args = await serve.oracle_submission(info, fetch)
    final = await env.step(CallToolAction(tool_name="submit_results", arguments=args))
    answer, is_error = data_of(final.observation)
    assert not is_error, answer
    # What the released agent records: the judge's total (0-100) and its breakdown.
    assert answer["score"] == round(answer["scores"]["judge"] * 100, 2), answer
    assert len(answer["breakdown"]) == 6 and abs(sum(answer["breakdown"].values()) - answer["score"]) < 0.051, answer
    seen.append(json.dumps({"reward": final.reward, "done": final.done}))
    return seen, final, answer


async def mcp_client():
    async with MCPToolClient(base_url=BASE) as env:
        first, final, answer = await oracle(env, 3, episode_id="group-7/rollout-0")
        assert final.done is True and final.reward == 1.0, (final.done, final.reward)
        assert answer["scores"]["f1"] == 1.0, answer
        state = await env.state()
        assert state.episode_id == "group-7/rollout-0" and state.step_count > 2, state
        # A second submit is the tool's own error (409), not a transport error; done stays.
        again = await env.step(CallToolAction(tool_name="submit_results", arguments={"data_jsonl": ""}))
        body, is_error = data_of(again.observation)
        assert is_error and body["status"] == 409 and again.reward is None and again.done, again
        # call_tool, the convenience API, returns the tool's data.
        info = await env.call_tool("get_task_info")
        assert info["task_id"] == TASK, info
        # An unknown tool is an OpenEnv tool error, which call_tool raises.
        try:
            await env.call_tool("no_such_tool")
            raise AssertionError("an unknown tool must raise")
        except RuntimeError as e:
            assert "tool_not_found" in str(e), e
        # The same seed again, on this connection: the same observations, page by page.
        second, final2, _ = await oracle(env, 3)
        assert first == second, "the same seed must give the same observations"
        assert final2.reward == 1.0
    async with MCPToolClient(base_url=BASE) as env:
        third, _, _ = await oracle(env, 3)
        other, final4, _ = await oracle(env, 4)
    assert third == first, "the same seed on a new connection must give the same observations"
    assert other != first, "a different seed must give different observations"
    assert final4.reward == 1.0
    print(f"ok: MCPToolClient: oracle reward 1.0 on {TASK} seed 3; same seed twice ({len(first)} observations) "
          f"identical, seed 4 different; state echoes episode_id; 409 and tool_not_found as OpenEnv errors")
    return first


async def generic_client():
    async with GenericEnvClient(base_url=BASE) as env:
        r = await env.reset(seed=5, task_id="T3_duplicates", reward="judge")
        info = r.observation["task_info"]
        tools = await env.step({"type": "list_tools"})
        assert {t["name"] for t in tools.observation["tools"]} >= {"fetch_page", "submit_results"}
        c = info["constraints"]
        pages = -(-c["total_rows"] // c["page_size"])
        records = {}
        for page in range(1, pages + 1):
            s = await env.step({"type": "call_tool", "tool_name": "fetch_page", "arguments": {"page": page}})
            body = s.observation["result"]["data"]
            for row in body["rows"]:
                if not row.get("is_total"):
                    records[row["record_id"]] = row
        data = "".join(json.dumps(x) + "\n" for x in records.values())
        s = await env.step({"type": "call_tool", "tool_name": "submit_results", "arguments": {"data_jsonl": data}})
        answer = s.observation["result"]["data"]
        assert s.done and s.reward == answer["scores"]["judge"] and answer["scores"]["f1"] == 1.0, s
        # Only data_jsonl: the missing-file rule's 10/3 points, to the released reward's four decimals.
        assert (s.reward, answer["score"]) == (0.0333, 10 * (1 / 3)), (s.reward, answer["score"])
        try:
            await env.step({"type": "dance"})
            raise AssertionError("a bad action must raise")
        except RuntimeError as e:
            assert "VALIDATION_ERROR" in str(e), e
        try:
            await env.reset(seed=-1)
            raise AssertionError("a negative seed must raise")
        except RuntimeError as e:
            assert "VALIDATION_ERROR" in str(e), e
    print(f"ok: GenericEnvClient: judge reward {s.reward} on request (F1 1.0); bad actions and seeds are VALIDATION_ERROR")


def http_routes():
    def get(path):
        with urllib.request.urlopen(BASE + path, timeout=5) as r:
            return json.loads(r.read())

    assert get("/health") == {"status": "healthy"}
    schema = get("/schema")
    assert set(schema) == {"action", "observation", "state"}
    assert get("/metadata")["name"] == "benchaudit-comtrade"
    assert get("/state") == {"episode_id": None, "step_count": 0}
    req = urllib.request.Request(BASE + "/reset", data=json.dumps({"seed": 3, "task_id": TASK}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=5) as r:
        body = json.loads(r.read())
    assert body["done"] is False and body["observation"]["task_info"]["task_id"] == TASK, body
    print("ok: HTTP /health, /schema, /metadata, /state, /reset answer as OpenEnv's")


class ReleasedTask(Observation):
    """The typed fields the released ComtradeBench client fills from a reset's metadata."""

    task_id: str = ""
    description: str = ""
    query: Dict[str, Any] = {}
    constraints: Dict[str, Any] = {}
    instructions: str = ""


class EmptyAction(Action):
    """The released client's action: it carries no data."""


class ReleasedShape(EnvClient[EmptyAction, ReleasedTask, State]):
    """An EnvClient that sends and reads what the released ComtradeEnv sends and reads."""

    def _step_payload(self, action: EmptyAction) -> Dict[str, Any]:
        return {}

    def _parse_result(self, payload: Dict[str, Any]) -> StepResult[ReleasedTask]:
        meta = payload.get("observation", {}).get("metadata", {})
        obs = ReleasedTask(task_id=meta.get("task_id", ""), description=meta.get("description", ""),
                           query=meta.get("query", {}), constraints=meta.get("constraints", {}),
                           instructions=meta.get("instructions", ""), done=payload.get("done", False),
                           reward=payload.get("reward"), metadata=meta)
        return StepResult(observation=obs, reward=payload.get("reward"), done=payload.get("done", False))

    def _parse_state(self, payload: Dict[str, Any]) -> State:
        return State(episode_id=payload.get("episode_id"), step_count=payload.get("step_count", 0))


async def released_client():
    task = "T7_totals_trap"
    async with ReleasedShape(base_url=BASE) as env:
        r = await env.reset(seed=4, task_id=task)
        t = r.observation
        info = t.metadata["task_info"]
        assert t.task_id == task and t.description == info["description"] and t.description, t
        assert t.query == info["query"] and t.query["reporter"], t.query
        assert t.constraints == info["constraints"] and t.constraints["page_size"] > 0, t.constraints
        assert t.instructions == info["instructions"] and "submit_results" in t.instructions, t.instructions
        # The empty action is a no-op: an observation (no error), nothing spent, the task kept.
        s = await env.step(EmptyAction())
        assert s.reward is None and s.done is False and s.observation.task_id == task, s
        assert s.observation.metadata["task_info"]["requests_used"] == 0, s.observation.metadata
        state = await env.state()
        assert state.step_count == 1, state
    print(f"ok: the released client's shape: reset metadata carries task_id, description, query, constraints, "
          f"instructions ({task}); the empty action is a no-op observation")


def start_server():
    return serve.start_server(BIN, PORT, "/health")


def main():
    server = start_server()
    try:
        asyncio.run(mcp_client())
        asyncio.run(generic_client())
        asyncio.run(released_client())
        http_routes()
    finally:
        server.terminate()
        _, err = server.communicate(timeout=15)
        if b"panicked" in err:
            sys.exit("the server panicked: " + err.decode(errors="replace"))
    print("openenv interop: all checks passed")


if __name__ == "__main__":
    main()
