#!/usr/bin/env bash
# OpenEnv interop, proven with openenv-core's own clients: MCPToolClient and GenericEnvClient
# play episodes of `benchaudit serve` over the /ws session protocol, on 127.0.0.1 only.
# Installs `openenv-core` from PyPI into a venv.
#
#   scripts/interop/openenv.sh                      # builds the debug binary first
#   BENCHAUDIT=target/release/benchaudit VENV=$HOME/.cache/oe-venv scripts/interop/openenv.sh
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
OPENENV_VERSION=${OPENENV_VERSION:-0.3.0}
peer_check "${VENV:-${TMPDIR:-/tmp}/benchaudit-openenv-venv}" "openenv-core==$OPENENV_VERSION" 300 openenv_client.py
