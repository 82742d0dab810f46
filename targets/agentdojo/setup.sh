#!/usr/bin/env bash
# Installs AgentDojo (agentdojo, with its suites) into targets/agentdojo/.venv from
# the package registry, every dependency pinned (requirements.txt), no keys.
# Usage: targets/agentdojo/setup.sh   (PYTHON=python3.11 to choose the interpreter; tested with Python 3.11)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${PYTHON:-python3}"
venv="$here/.venv"
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
    --only-binary=:all: -r "$here/requirements.txt"
# Prove the suites load and list their tasks offline before anyone relies on it.
echo '{"groups": ["workspace", "travel", "banking", "slack"]}' | "$venv/bin/python" "$here/hook.py" units \
    | "$venv/bin/python" -c '
import json, sys
a = json.load(sys.stdin)
b = a["benchmark"]
counts = ", ".join(str(len(g["units"])) + " " + g["name"] for g in a["groups"])
print("AgentDojo ready:", b["package"], b["version"], "with", counts, "tasks and pairs")'
