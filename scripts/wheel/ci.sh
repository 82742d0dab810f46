#!/usr/bin/env bash
# The wheel and the ComtradeBench Inspect task as CI tests them (issue 36; docs/python.md).
#
# 1. Builds the wheel (scripts/wheel/build.sh: one release build, shared with
#    target/release/benchaudit).
# 2. A fresh venv with no cargo or rustc on PATH: `pip install` of the wheel, then
#    `benchaudit audit` from the venv; its card must equal the release binary's
#    (`target/release/benchaudit audit`, what `cargo run --release -- audit` runs), verdicts
#    printed.
# 3. `uv tool install` and `pipx install` of the same wheel (uv and pipx pinned in
#    requirements-tools.txt): the same version and card.
# 4. A venv with the wheel and the pinned inspect-ai (requirements-inspect.txt, from PyPI):
#    scripts/wheel/inspect_task.py plays the task through Inspect's own runtime.
#
#   scripts/wheel/ci.sh
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
target="${CARGO_TARGET_DIR:-$ROOT/target}"
export HF_HUB_OFFLINE=1

echo "== wheel: build"
wheel=$(scripts/wheel/build.sh | tail -n 1)
echo "built $(basename "$wheel") ($(du -h "$wheel" | cut -f1))"
version=$(cargo metadata --no-deps --format-version 1 \
  | python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "benchaudit"))')
case "$(basename "$wheel")" in
  "benchaudit-$version-"*) ;;
  *) echo "FAIL: wheel $(basename "$wheel") does not carry the workspace version $version"; exit 1 ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== wheel: pip install into a fresh venv with no Rust toolchain on PATH, then benchaudit audit"
# PATH without any folder that holds cargo or rustc.
bare=""
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  [[ -z "$d" || -e "$d/cargo" || -e "$d/rustc" ]] && continue
  bare="${bare:+$bare:}$d"
done
python3 -m venv "$work/venv"
# The README's own lines for both routes, run as written.
readme_line() { grep -m1 -e "$1" README.md || { echo "FAIL: README has no line matching $1"; exit 1; }; }
pip_line=$(readme_line '^pip install target/wheels/benchaudit-')
audit_line=$(readme_line '^benchaudit audit ')
inspect_line=$(readme_line '^pip install .*\[inspect\]')
env -u CARGO_HOME -u RUSTUP_HOME -u BENCHAUDIT PATH="$work/venv/bin:$bare" \
  ROOT="$ROOT" OUT="$work" VERSION="$version" PIP_LINE="$pip_line" AUDIT_LINE="$audit_line" \
  bash -euo pipefail -c '
  if command -v cargo >/dev/null || command -v rustc >/dev/null; then
    echo "FAIL: a Rust toolchain is on PATH"; exit 1
  fi
  cd "$ROOT" && eval "$PIP_LINE" >/dev/null
  [[ "$(command -v benchaudit)" == "$OUT/venv/bin/benchaudit" ]] || { echo "FAIL: benchaudit is $(command -v benchaudit)"; exit 1; }
  [[ "$(benchaudit --version)" == "benchaudit $VERSION" ]] || { echo "FAIL: $(benchaudit --version)"; exit 1; }
  python -c "import benchaudit, sys; assert benchaudit.binary() == sys.argv[1], benchaudit.binary()" "$OUT/venv/bin/benchaudit"
  cd "$OUT" && eval "$AUDIT_LINE" >wheel-audit.log
'
"$target/release/benchaudit" audit --out "$work/release-audit" >"$work/release-audit.log"
python3 - "$work/benchaudit-audit/card.json" "$work/release-audit/card.json" <<'PY'
import json, sys
wheel, release = (json.load(open(p)) for p in sys.argv[1:3])
def verdicts(card, path=""):
    """Every status and licensed claim in the card, by its JSON path."""
    out = {}
    if isinstance(card, dict):
        for k, v in card.items():
            p = f"{path}/{k}"
            if k in ("status", "licensed_claim") and isinstance(v, str):
                out[p] = v
            out.update(verdicts(v, p))
    elif isinstance(card, list):
        for i, v in enumerate(card):
            out.update(verdicts(v, f"{path}/{i}"))
    return out
vw, vr = verdicts(wheel), verdicts(release)
assert vw, "no verdicts found in the card"
assert vw == vr, f"verdicts differ:\n{vw}\n{vr}"
assert wheel == release, "the cards differ beyond their verdicts"
claims = sorted({v for k, v in vw.items() if k.endswith("licensed_claim")})
print(f"wheel audit == release audit: {len(vw)} verdicts equal (claims: {', '.join(claims)}), card.json identical")
PY

echo "== wheel: uv tool install and pipx install of the same wheel (uv, pipx from PyPI, pinned)"
tools="$target/wheel-tools-venv"
[[ -x "$tools/bin/python" ]] || python3 -m venv "$tools"
"$tools/bin/pip" install --quiet --disable-pip-version-check -r scripts/wheel/requirements-tools.txt
# Each installer into its own folders under $work, offline (the wheel has no dependencies), then
# the CLI it put on its bin folder: the workspace's version and the same card as the release's.
env UV_TOOL_DIR="$work/uv/tools" UV_TOOL_BIN_DIR="$work/uv/bin" UV_CACHE_DIR="$work/uv/cache" \
  UV_PYTHON_DOWNLOADS=never "$tools/bin/uv" tool install --offline "$wheel" >/dev/null 2>&1 \
  || { echo "FAIL: uv tool install $wheel"; exit 1; }
env PIPX_HOME="$work/pipx/home" PIPX_BIN_DIR="$work/pipx/bin" PIPX_MAN_DIR="$work/pipx/man" \
  "$tools/bin/pipx" install "$wheel" >/dev/null 2>&1 || { echo "FAIL: pipx install $wheel"; exit 1; }
for installer in uv pipx; do
  bin="$work/$installer/bin/benchaudit"
  [[ "$(env -u BENCHAUDIT "$bin" --version)" == "benchaudit $version" ]] \
    || { echo "FAIL: $installer's benchaudit says $("$bin" --version)"; exit 1; }
  (cd "$work" && env -u BENCHAUDIT "$bin" audit --out "$work/$installer-audit" >/dev/null)
  cmp -s "$work/$installer-audit/card.json" "$work/release-audit/card.json" \
    || { echo "FAIL: the card of $installer's benchaudit differs from the release binary's"; exit 1; }
  echo "$installer: benchaudit $version, card.json identical to the release binary's"
done

echo "== wheel: the Inspect task through Inspect's own runtime (inspect-ai from PyPI, pinned)"
venv="$target/wheel-inspect-venv"
[[ -x "$venv/bin/python" ]] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r scripts/wheel/requirements-inspect.txt
"$venv/bin/pip" uninstall --quiet --yes benchaudit 2>/dev/null || true
PATH="$venv/bin:$PATH" bash -euo pipefail -c "$inspect_line" >/dev/null
(cd "$work" && env -u BENCHAUDIT timeout 900 "$venv/bin/python" "$ROOT/scripts/wheel/inspect_task.py")
echo "wheel: 1 passed, 0 failed"
