"""The MCP clients people start with, in their default modes, against `benchaudit mcp` (stdio)
and `benchaudit serve` (streamable HTTP: `/mcp?task_id=&seed=` sessions and the per-episode
URL). Run by scripts/interop/mcp_python.sh, which installs the packages into a venv.

* The official Python SDK's high-level `mcp.Client` and fastmcp's `Client`, each with no
  options (auto protocol negotiation): a full episode per transport — get_task_info, fetch_page
  until every page is in, submit_results, the reward read back (F1 1.0) with the released
  client's `score` and `breakdown`.
* Per protocol, the tools listed are the tools callable: `append_results` outside the chunked
  protocol is an unknown tool, and the message lists the episode's own tools.
* Every tool schema is a valid Draft 2020-12 schema for Python `jsonschema` (with its format
  checker), and schema and server agree on every argument of arguments.json.
* The judge on 0-1 has at most four decimals (the released reward's rounding) in every answer.
"""

import asyncio
import importlib.metadata
import json
import os
import sys

import serve

import httpx2 as httpx
import jsonschema
from fastmcp import Client as FastClient
from fastmcp.client.transports import StdioTransport
from mcp import Client, StdioServerParameters

BIN = os.environ.get("BENCHAUDIT", "target/debug/benchaudit")
PORT = int(os.environ.get("PORT", "18385"))
BASE = f"http://127.0.0.1:{PORT}"
HERE = os.path.dirname(os.path.abspath(__file__))
THREE = ["get_task_info", "fetch_page", "submit_results"]


def structured(result):
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


def decimals(x):
    """Digits after the point in Python's shortest text of x (what a JSON client keeps)."""
    text = repr(float(x))
    return 0 if "e" in text or "." not in text else len(text.split(".")[1])


def check_answer(answer, label):
    assert answer["done"] is True and answer["scores"]["f1"] == 1.0, (label, answer)
    # The released ComtradeBench client's names: the judge's total in points and its breakdown.
    assert 0 <= answer["score"] <= 100 and answer["score"] == round(answer["scores"]["judge"] * 100, 2), answer
    assert set(answer["breakdown"]) == {"correctness", "completeness", "robustness", "efficiency",
                                        "data_quality", "observability"}, answer
    assert decimals(answer["scores"]["judge"]) <= 4, answer["scores"]["judge"]


def create(task, seed, **options):
    r = httpx.post(f"{BASE}/v1/episodes", json={"task_id": task, "seed": seed, **options}, trust_env=False)
    assert r.status_code == 201, r.text
    return BASE + r.json()["mcp_url"]


def stdio_params(task, seed, *extra):
    return StdioServerParameters(command=BIN, args=["mcp", "--task", task, "--seed", str(seed), *extra])


# ---- the official Python SDK, mcp.Client in its default (auto) mode -------------------------

async def sdk_episode(target, label, expect_protocol=None):
    async with Client(target) as client:
        if expect_protocol:
            assert client.protocol_version == expect_protocol, (label, client.protocol_version)
        names = [t.name for t in (await client.list_tools()).tools]
        assert names == THREE, (label, names)
        info = structured(await client.call_tool("get_task_info", {}))

        async def fetch(page):
            r = await client.call_tool("fetch_page", {"page": page})
            return structured(r), r.is_error

        args = await serve.oracle_submission(info, fetch)
        answer = structured(await client.call_tool("submit_results", args))
        check_answer(answer, label)
        # A tool the episode does not list is not callable (MCP: a protocol error).
        try:
            await client.call_tool("append_results", {"data_jsonl": ""})
            raise AssertionError(f"{label}: append_results answered under the full protocol")
        except AssertionError:
            raise
        except Exception as e:  # the SDK raises its MCPError
            assert "unknown tool `append_results` (tools: get_task_info, fetch_page, submit_results)" in str(e), e
        print(f"ok: mcp.Client (auto) over {label}: protocol {client.protocol_version}, "
              f"{info['task_id']} F1 {answer['scores']['f1']}, judge {answer['scores']['judge']} "
              f"(score {answer['score']}), append_results not callable")


# ---- fastmcp's Client, default options ----------------------------------------------------

async def fastmcp_episode(target, label):
    async with FastClient(target) as client:
        names = [t.name for t in await client.list_tools()]
        assert names == THREE, (label, names)
        info = (await client.call_tool("get_task_info", {})).structured_content

        async def fetch(page):
            r = await client.call_tool("fetch_page", {"page": page}, raise_on_error=False)
            return r.structured_content, r.is_error

        args = await serve.oracle_submission(info, fetch)
        answer = (await client.call_tool("submit_results", args)).structured_content
        check_answer(answer, label)
        print(f"ok: fastmcp Client over {label}: {info['task_id']} F1 {answer['scores']['f1']}")


# ---- schemas: jsonschema, and agreement with the server on every argument -----------------

async def listed_schemas():
    """Tool name -> input schema, as stdio lists them under the chunked protocol (all four)."""
    async with Client(stdio_params("T2_multi_page", 1, "--submission", "chunked")) as client:
        return {t.name: t.input_schema for t in (await client.list_tools()).tools}


def check_schemas(schemas):
    assert sorted(schemas) == sorted(THREE + ["append_results"]), sorted(schemas)
    validators = {}
    for name, schema in schemas.items():
        assert jsonschema.validators.validator_for(schema) is jsonschema.Draft202012Validator, name
        jsonschema.Draft202012Validator.check_schema(schema)
        assert '"format"' not in json.dumps(schema), (name, "a format other validators may not know")
        validators[name] = jsonschema.Draft202012Validator(
            schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    print(f"ok: jsonschema {importlib.metadata.version('jsonschema')}: the {len(schemas)} tool schemas are valid Draft 2020-12")
    return validators


async def server_reads(client, tool, args):
    """Whether the server's parser read the arguments (anything but a 422 `invalid arguments`)."""
    r = await client.call_tool(tool, args)
    body = structured(r)
    refused = r.is_error and body.get("status") == 422 and body["error"].startswith("invalid arguments")
    return not refused, body


async def check_agreement(validators):
    cases = json.load(open(os.path.join(HERE, "arguments.json")))["cases"]
    checked = 0
    for case in cases:
        tool, args, reads = case["tool"], case["args"], case["reads"]
        assert validators[tool].is_valid(args) == reads, ("jsonschema disagrees", case)
        # Calls that end the episode get an episode of their own.
        options = {"submission": "chunked"} if tool == "append_results" else {}
        async with Client(create("T2_multi_page", 1, max_requests=100, **options)) as client:
            got, body = await server_reads(client, tool, args)
        assert got == reads, ("the server disagrees", case, body)
        if case.get("range"):
            assert body["status"] == 422 and "must be" in body["error"], (case, body)
        checked += 1
    print(f"ok: schema and server agree on {checked} argument sets "
          f"({sum(c['reads'] for c in cases)} read, {sum(not c['reads'] for c in cases)} refused)")


async def check_judge_precision():
    """Submissions whose judge total divided by 100 is not a short decimal in binary."""
    # Only data_jsonl: the missing-file rule gives 10/3 points (0.0333 at four decimals).
    async with Client(create("T1_single_page", 1, reward="judge")) as client:
        answer = structured(await client.call_tool("submit_results", {"data_jsonl": ""}))
    assert (answer["scores"]["judge"], answer["reward"]) == (0.0333, 0.0333), answer
    # 38.8 points: 38.8 / 100 is 0.38799999999999996 in binary.
    truth = serve.truth(BIN, "T1_single_page", 1)
    async with Client(create("T1_single_page", 1, reward="judge")) as client:
        answer = structured(await client.call_tool("submit_results", {
            "data_jsonl": truth, "metadata_json": json.dumps({"query": {}}), "run_log": "retry 429 backoff page=2"}))
    assert (answer["score"], answer["scores"]["judge"], answer["reward"]) == (38.8, 0.388, 0.388), answer
    print("ok: the judge is 0.0333 and 0.388 on 0-1, never 0.0333333... or 0.38799999999999996")


async def over_http():
    await sdk_episode(f"{BASE}/mcp?task_id=T7_totals_trap&seed=4", "streamable HTTP /mcp session",
                      expect_protocol="2025-11-25")
    await sdk_episode(create("T4_rate_limit_429", 2), "streamable HTTP /v1/episodes/{id}/mcp")
    await fastmcp_episode(f"{BASE}/mcp?task_id=T8_mixed_faults&seed=3", "streamable HTTP /mcp session")
    await fastmcp_episode(create("T5_server_error_500", 1), "streamable HTTP /v1/episodes/{id}/mcp")
    validators = check_schemas(await listed_schemas())
    await check_agreement(validators)
    await check_judge_precision()


async def over_stdio():
    await sdk_episode(stdio_params("T8_mixed_faults", 3), "stdio")
    await fastmcp_episode(StdioTransport(command=BIN, args=["mcp", "--task", "T3_duplicates", "--seed", "5"]),
                          "stdio")


def main():
    asyncio.run(over_stdio())
    server = serve.start_server(BIN, PORT, "/healthz")
    try:
        asyncio.run(over_http())
    finally:
        server.terminate()
        _, err = server.communicate(timeout=15)
        if b"panicked" in err:
            sys.exit("the server panicked: " + err.decode(errors="replace"))
    print("PASS")


if __name__ == "__main__":
    main()
