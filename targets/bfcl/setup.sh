#!/usr/bin/env bash
# Installs BFCL's released checker into targets/bfcl/.venv (package registry only, no keys).
# Usage: targets/bfcl/setup.sh   (PYTHON=python3.12 to choose the interpreter; Python >= 3.10)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${PYTHON:-python3}"
venv="$here/.venv"
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
    --only-binary=:all: -r "$here/requirements.txt"
# Prove the checker imports and answers before anyone relies on it.
echo '{"categories": ["simple_python"]}' | "$venv/bin/python" "$here/hook.py" entries \
    | "$venv/bin/python" -c '
import json, sys
a = json.load(sys.stdin)
c = a["checker"]
n = len(a["categories"][0]["entries"])
print("BFCL checker ready:", c["package"], c["version"], "with", n, "simple_python entries;",
      "placeholders for", ", ".join(c["placeholders"]))'
