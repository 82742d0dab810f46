"""The official Python MCP SDK (package `mcp`) as a client of `benchaudit mcp` (stdio) and of
`benchaudit serve` (streamable HTTP: the per-episode URL and /mcp sessions). Run by
scripts/interop/mcp_python.sh, which installs the package into a venv.

Each client plays an oracle episode to the end (F1 = 1), and checks what a peer must be able
to rely on: tool errors arrive as tool results (isError), a second submit is refused (409), a
page after the submit is refused (409), and malformed messages are answered as JSON-RPC errors
that the SDK's own message types accept.
"""

import asyncio
import json
import logging
import os
import subprocess
import sys

import serve

import httpx2 as httpx
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

BIN = os.environ.get("BENCHAUDIT", "target/debug/benchaudit")
PORT = int(os.environ.get("PORT", "18383"))
BASE = f"http://127.0.0.1:{PORT}"


def structured(result):
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


async def oracle(session, label):
    tools = {t.name for t in (await session.list_tools()).tools}
    assert {"get_task_info", "fetch_page", "submit_results"} <= tools, tools
    info = structured(await session.call_tool("get_task_info", {}))

    async def fetch(page):
        r = await session.call_tool("fetch_page", {"page": page})
        return structured(r), r.is_error

    args = await serve.oracle_submission(info, fetch)
    answer = structured(await session.call_tool("submit_results", args))
    assert answer["scores"]["f1"] == 1.0, answer
    again = await session.call_tool("submit_results", {"data_jsonl": ""})
    assert again.is_error and structured(again)["status"] == 409, again
    late = await session.call_tool("fetch_page", {"page": 1})
    assert late.is_error and structured(late)["status"] == 409, late
    bad = await session.call_tool("fetch_page", {"page": "one"})
    assert bad.is_error and structured(bad)["status"] == 422, bad
    print(f"ok: {label}: oracle F1 1.0 on {info['task_id']}, 409 on a second submit and on a late page")


async def over_stdio():
    params = StdioServerParameters(command=BIN, args=["mcp", "--task", "T8_mixed_faults", "--seed", "3"])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await oracle(session, "stdio")


def stdio_malformed():
    """Raw lines to `benchaudit mcp`; every reply must parse as the SDK's JSONRPCMessage."""
    p = subprocess.Popen([BIN, "mcp", "--task", "T1_single_page", "--seed", "1", "--max-line-bytes", "4096"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    lines = [json.dumps(init), "{not json", "x" * 10000,
             json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": 5}})]
    p.stdin.write(("\n".join(lines) + "\n").encode())
    p.stdin.flush()
    replies = [types.jsonrpc_message_adapter.validate_json(p.stdout.readline()) for _ in range(4)]
    p.stdin.close()
    p.wait(timeout=10)
    errors = sorted((r.id is None, r.error.code) for r in replies if isinstance(r, types.JSONRPCError))
    assert errors == [(False, -32602), (True, -32700), (True, -32600)], errors
    print("ok: stdio: a bad line, an oversized line and a bad tools/call each got a JSON-RPC error the SDK parses")


def start_server():
    return serve.start_server(BIN, PORT, "/healthz")


async def over_http():
    async with httpx.AsyncClient(trust_env=False) as http:
        r = await http.post(f"{BASE}/v1/episodes", json={"task_id": "T4_rate_limit_429", "seed": 2})
        url = BASE + r.json()["mcp_url"]
        async with streamable_http_client(url, http_client=http) as (read, write, *_):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await oracle(session, "streamable HTTP, /v1/episodes/{id}/mcp")
    async with httpx.AsyncClient(trust_env=False) as http:
        async with streamable_http_client(f"{BASE}/mcp?task_id=T7_totals_trap&seed=4", http_client=http) as (
                read, write, *_):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await oracle(session, "streamable HTTP, /mcp session")
        # Malformed JSON-RPC over HTTP: JSON-RPC errors the SDK's types accept, with status 400.
        for body, code, status in [(b"{bad", -32700, 400), (b"[1]", -32600, 400),
                                   (b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{}}', -32602, 200)]:
            r = await http.post(url, content=body, headers={"content-type": "application/json",
                                                              "accept": "application/json, text/event-stream"})
            msg = types.jsonrpc_message_adapter.validate_json(r.content)
            assert r.status_code == status and msg.error.code == code, (r.status_code, r.text)
        print("ok: HTTP: malformed bodies answered -32700 / -32600 (400) and -32602, as the SDK parses them")


class Warnings(logging.Handler):
    """Collects what the SDK logs at WARNING or above: a peer's complaints fail the run."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.records = []

    def emit(self, record):
        self.records.append(record.getMessage())


def main():
    warnings = Warnings()
    logging.getLogger().addHandler(warnings)
    stdio_malformed()
    asyncio.run(over_stdio())
    server = start_server()
    try:
        asyncio.run(over_http())
    finally:
        server.terminate()
        _, err = server.communicate(timeout=15)
        if b"panicked" in err:
            sys.exit("the server panicked: " + err.decode(errors="replace"))
    if warnings.records:
        sys.exit(f"the SDK logged warnings: {warnings.records}")
    print("PASS")


if __name__ == "__main__":
    main()
