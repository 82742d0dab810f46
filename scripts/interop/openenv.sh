#!/usr/bin/env bash
# OpenEnv interop, proven with openenv-core's own clients: MCPToolClient and GenericEnvClient
# play episodes of `benchaudit serve` over the /ws session protocol, on 127.0.0.1 only.
# Installs `openenv-core` from PyPI into a venv.
#
#   scripts/interop/openenv.sh                      # builds the debug binary first
#   BENCHAUDIT=target/release/benchaudit VENV=/tmp/oe-venv scripts/interop/openenv.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VENV=${VENV:-/tmp/benchaudit-openenv-venv}
OPENENV_VERSION=${OPENENV_VERSION:-0.3.0}
if [[ -z "${BENCHAUDIT:-}" ]]; then
  (cd "$ROOT" && cargo test --workspace --no-run --quiet)
  BENCHAUDIT="${CARGO_TARGET_DIR:-$ROOT/target}/debug/benchaudit"
fi
export BENCHAUDIT
if [[ ! -x "$VENV/bin/python" ]]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install --quiet --disable-pip-version-check "openenv-core==$OPENENV_VERSION"
exec timeout 300 "$VENV/bin/python" "$ROOT/scripts/interop/openenv_client.py"
