#!/usr/bin/env bash
# Installs Inspect (inspect-ai) and its catalogue (inspect-evals) into targets/inspect/.venv from
# the package registry (no key), pinned by requirements.txt, then checks the hook answers.
# Usage: targets/inspect/setup.sh   (PYTHON=python3.12 to choose the interpreter; Python >= 3.10)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${PYTHON:-python3}"
venv="$here/.venv"
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
    --only-binary=:all: -r "$here/requirements.txt"
# Prove the hook loads a task offline and answers before anyone relies on it.
printf '{"task": "inspect_evals/gsm8k", "args": {"fewshot": 0}, "samples_file": "%s"}' \
    "$here/samples/gsm8k.jsonl" \
    | "$venv/bin/python" "$here/hook.py" describe \
    | "$venv/bin/python" -c '
import json, sys
a = json.load(sys.stdin)
p = a["packages"]
print("Inspect ready:", "inspect_ai", p["inspect_ai"], "and inspect_evals", p["inspect_evals"],
      "with", len(a["samples"]), "gsm8k samples from the local file")'
