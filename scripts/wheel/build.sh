#!/usr/bin/env bash
# Builds the benchaudit wheel (maturin, binary bindings: the release `benchaudit` binary of
# crates/cli plus the python/benchaudit package) into target/wheels/ (git-ignored).
# maturin drives cargo in the workspace's own target directory with the release profile, so
# `target/release/benchaudit` is the binary the wheel carries, and a release build already made
# is reused rather than paid twice.
#
#   scripts/wheel/build.sh                 # prints the wheel's path on its last line
#   WHEEL_TOOLS=DIR scripts/wheel/build.sh # the venv holding maturin (default target/wheel-tools)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
target="${CARGO_TARGET_DIR:-$ROOT/target}"
tools="${WHEEL_TOOLS:-$target/wheel-tools}"
out="$target/wheels"
if [[ ! -x "$tools/bin/maturin" ]]; then
  python3 -m venv "$tools"
  "$tools/bin/pip" install --quiet --disable-pip-version-check \
    -r "$ROOT/scripts/wheel/requirements-build.txt"
fi
version=$(cd "$ROOT" && cargo metadata --no-deps --format-version 1 \
  | python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "benchaudit"))')
rm -f "$out"/benchaudit-"$version"-*.whl
(cd "$ROOT" && "$tools/bin/maturin" build --release --quiet --out "$out" >&2)
wheel=$(ls "$out"/benchaudit-"$version"-*.whl)
echo "$wheel"
