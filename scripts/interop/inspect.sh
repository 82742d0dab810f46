#!/usr/bin/env bash
# Inspect interop, proven with Inspect's own code: `benchaudit export --format inspect` logs
# read back with inspect_ai's read_eval_log, and logs Inspect itself wrote (its mock model)
# imported with `benchaudit import --format inspect` and reported. Installs `inspect-ai` from
# PyPI into a venv; everything runs on this machine, no network beyond the package index.
#
#   scripts/interop/inspect.sh                       # builds the debug binary first
#   BENCHAUDIT=target/release/benchaudit VENV=/tmp/ia-venv scripts/interop/inspect.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VENV=${VENV:-/tmp/benchaudit-inspect-venv}
INSPECT_VERSION=${INSPECT_VERSION:-0.3.285}
if [[ -z "${BENCHAUDIT:-}" ]]; then
  (cd "$ROOT" && cargo test --workspace --no-run --quiet)
  BENCHAUDIT="${CARGO_TARGET_DIR:-$ROOT/target}/debug/benchaudit"
fi
export BENCHAUDIT
if [[ ! -x "$VENV/bin/python" ]]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install --quiet --disable-pip-version-check "inspect-ai==$INSPECT_VERSION"
exec timeout 600 "$VENV/bin/python" "$ROOT/scripts/interop/inspect_roundtrip.py"
