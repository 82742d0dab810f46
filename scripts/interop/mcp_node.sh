#!/usr/bin/env bash
# MCP clients and schema compilers from npm against `benchaudit mcp` (stdio) and `benchaudit
# serve` (streamable HTTP), on 127.0.0.1 only: the official TypeScript SDK (full episodes), the
# MCP Inspector's --cli mode (one tool call per transport, its --strict schema check) and Ajv's
# draft 2020-12 compiler (defaults and strict). One `npm install` of the exact versions in
# scripts/interop/node/package.json (no lockfile is kept); node_modules stays in that folder.
#
#   scripts/interop/mcp_node.sh                      # builds the debug binary first
#   BENCHAUDIT=target/release/benchaudit scripts/interop/mcp_node.sh
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
peer_binary
cd "$ROOT/scripts/interop/node"
npm install --no-package-lock --no-audit --no-fund --ignore-scripts --loglevel=error
exec timeout 600 node mcp_node.mjs
