#!/usr/bin/env bash
# The official Python MCP SDK against `benchaudit mcp` (stdio) and `benchaudit serve`
# (streamable HTTP), on 127.0.0.1 only. Installs the `mcp` package into a venv.
#
#   scripts/interop/mcp_python.sh                      # builds the debug binary first
#   BENCHAUDIT=target/release/benchaudit VENV=/tmp/mcp-venv scripts/interop/mcp_python.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VENV=${VENV:-/tmp/benchaudit-mcp-venv}
MCP_VERSION=${MCP_VERSION:-2.3.0}
if [[ -z "${BENCHAUDIT:-}" ]]; then
  (cd "$ROOT" && cargo test --workspace --no-run --quiet)
  BENCHAUDIT="${CARGO_TARGET_DIR:-$ROOT/target}/debug/benchaudit"
fi
export BENCHAUDIT
if [[ ! -x "$VENV/bin/python" ]]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install --quiet --disable-pip-version-check "mcp==$MCP_VERSION"
exec timeout 300 "$VENV/bin/python" "$ROOT/scripts/interop/mcp_python.py"
