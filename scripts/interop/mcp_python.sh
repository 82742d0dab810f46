#!/usr/bin/env bash
# The official Python MCP SDK against `benchaudit mcp` (stdio) and `benchaudit serve`
# (streamable HTTP), on 127.0.0.1 only. Installs the `mcp` package into a venv.
#
#   scripts/interop/mcp_python.sh                      # builds the debug binary first
#   BENCHAUDIT=target/release/benchaudit VENV=$HOME/.cache/mcp-venv scripts/interop/mcp_python.sh
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
MCP_VERSION=${MCP_VERSION:-2.3.0}
peer_check "${VENV:-${TMPDIR:-/tmp}/benchaudit-mcp-venv}" "mcp==$MCP_VERSION" 300 mcp_python.py
