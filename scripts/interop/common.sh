# Shared by the interop scripts (sourced): the benchaudit binary and a venv with pinned packages
# from PyPI, then the Python check runs under a time limit.
#
#   peer_check VENV "package==version" SECONDS script.py     # one package, one script
#   peer_venv VENV "a==1" "b==2" ...                          # the venv only; then run scripts
#
# BENCHAUDIT names the binary; by default it is the one `cargo test --workspace` builds (same
# profile and features, so after .ci/run's test step nothing is rebuilt).
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

peer_binary() {
  if [[ -z "${BENCHAUDIT:-}" ]]; then
    (cd "$ROOT" && cargo test --workspace --no-run --quiet)
    BENCHAUDIT="${CARGO_TARGET_DIR:-$ROOT/target}/debug/benchaudit"
  fi
  export BENCHAUDIT
}

peer_venv() {
  local venv=$1
  shift
  peer_binary
  if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv "$venv"
  fi
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$@"
}

peer_check() {
  local venv=$1 requirement=$2 seconds=$3 script=$4
  peer_venv "$venv" "$requirement"
  exec timeout "$seconds" "$venv/bin/python" "$ROOT/scripts/interop/$script"
}
