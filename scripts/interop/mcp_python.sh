#!/usr/bin/env bash
# MCP clients from PyPI against `benchaudit mcp` (stdio) and `benchaudit serve` (streamable
# HTTP), on 127.0.0.1 only, in one venv:
#
# * mcp_python.py: the official Python SDK's ClientSession, handshake by hand, and malformed
#   messages answered as JSON-RPC errors its own message types parse;
# * mcp_clients.py: the clients as people call them, in their default modes — the SDK's
#   `mcp.Client` and fastmcp's `Client` — full episodes over stdio and HTTP, the tool schemas
#   under Python `jsonschema`, schema and server agreeing on every argument.
#
#   scripts/interop/mcp_python.sh                      # builds the debug binary first
#   BENCHAUDIT=target/release/benchaudit VENV=$HOME/.cache/mcp-venv scripts/interop/mcp_python.sh
#
# Tested with mcp 2.3.0, fastmcp 4.2.3, jsonschema 4.26.0 (the pins below).
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
VENV=${VENV:-${TMPDIR:-/tmp}/benchaudit-mcp-venv}
peer_venv "$VENV" "mcp==${MCP_VERSION:-2.3.0}" "fastmcp==${FASTMCP_VERSION:-4.2.3}" \
  "jsonschema==${JSONSCHEMA_VERSION:-4.26.0}"
timeout 300 "$VENV/bin/python" "$ROOT/scripts/interop/mcp_python.py"
timeout 300 "$VENV/bin/python" "$ROOT/scripts/interop/mcp_clients.py"
