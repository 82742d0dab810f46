#!/usr/bin/env bash
# Inspect interop, proven with Inspect's own code: `benchaudit export --format inspect` logs
# read back with inspect_ai's read_eval_log, and logs Inspect itself wrote (its mock model)
# imported with `benchaudit import --format inspect` and reported. Installs `inspect-ai` from
# PyPI into a venv; everything runs on this machine, no network beyond the package index.
#
#   scripts/interop/inspect.sh                       # builds the debug binary first
#   BENCHAUDIT=target/release/benchaudit VENV=$HOME/.cache/ia-venv scripts/interop/inspect.sh
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
INSPECT_VERSION=${INSPECT_VERSION:-0.3.285}
peer_check "${VENV:-${TMPDIR:-/tmp}/benchaudit-inspect-venv}" "inspect-ai==$INSPECT_VERSION" 600 inspect_roundtrip.py
