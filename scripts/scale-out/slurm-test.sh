#!/usr/bin/env bash
# A real single-node Slurm cluster on this machine (munged, slurmctld and slurmd on localhost,
# started by hand: no systemd), then: the Kubernetes example checked for shape and its pods'
# commands run (k8s-check.py), a 4-shard job array of a small rule run submitted through
# slurm-array.sbatch, the merge as a dependent job, and the merged ledger compared byte for byte
# (timing aside, canonical order) with a single-process run of the same plan. The cluster is
# torn down on exit. Figures for docs/scale-out.md are printed at the end.
#
#   bash scripts/scale-out/slurm-test.sh            # SHARDS=4, RUN_ARGS=… to change the plan
#
# Installs slurm-wlm and munge from Debian when missing (as root, or with sudo). BENCHAUDIT names
# the binary; by default it is the one `cargo test --workspace` builds.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SHARDS=${SHARDS:-4}
RUN_ARGS=${RUN_ARGS:---policy oracle,baseline,no-dedup,always-retry --level L0,L1,L2 --task all --seeds 0..19}
T0=$(date +%s.%N)
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
say() { echo "[$(elapsed "$T0") s] $*"; }

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
  echo "slurm-test: need root or sudo to install Slurm: $*" >&2; exit 1; fi; }
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
  say "installing slurm-wlm and munge from Debian"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi

if [[ -z "${BENCHAUDIT:-}" ]]; then
  (cd "$ROOT" && cargo test --workspace --no-run --quiet)
  BENCHAUDIT="${CARGO_TARGET_DIR:-$ROOT/target}/debug/benchaudit"
fi
BIN=$(cd "$(dirname "$BENCHAUDIT")" && pwd)/$(basename "$BENCHAUDIT")

WORK=$(mktemp -d -t benchaudit-slurm.XXXXXX)
cleanup() {
  local rc=$?
  for pid in "$WORK/slurmd.pid" "$WORK/slurmctld.pid" "$WORK/munge/munged.pid"; do
    [[ -s "$pid" ]] && kill "$(cat "$pid")" 2>/dev/null || true
  done
  sleep 1
  if [[ $rc -ne 0 ]]; then
    for log in "$WORK"/*.log; do [[ -f "$log" ]] && { echo "== $log"; tail -20 "$log"; }; done
  fi
  [[ -n "${KEEP:-}" ]] && echo "kept $WORK" || rm -rf "$WORK"
  exit $rc
}
trap cleanup EXIT

# The Kubernetes example: shape, then its pods' and merge's commands with this binary.
PY=python3
if ! python3 -c 'import yaml' 2>/dev/null; then
  python3 -m venv "$WORK/venv" && "$WORK/venv/bin/pip" install --quiet --disable-pip-version-check pyyaml==6.0.3
  PY="$WORK/venv/bin/python"
fi
"$PY" "$ROOT/scripts/scale-out/k8s-check.py" "$BIN"

# munged with its own key and socket.
mkdir -p "$WORK/munge" "$WORK/spool" "$WORK/state" "$WORK/runs"
chmod 700 "$WORK/munge"
dd if=/dev/urandom of="$WORK/munge/munge.key" bs=1024 count=1 status=none
chmod 600 "$WORK/munge/munge.key"
munged --key-file="$WORK/munge/munge.key" --socket="$WORK/munge/munge.sock" \
  --pid-file="$WORK/munge/munged.pid" --log-file="$WORK/munge/munged.log" \
  --seed-file="$WORK/munge/seed" --force

HOST=$(hostname)
export SLURM_CONF="$WORK/slurm.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=benchaudit
SlurmctldHost=$HOST
SlurmctldPort=${SLURMCTLD_PORT:-16817}
SlurmdPort=${SLURMD_PORT:-16818}
SlurmUser=$(id -un)
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$WORK/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/slurmctld.log
SlurmdLogFile=$WORK/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
# Schedule (and release dependent jobs) within a second, not at the 30-60 s defaults.
SchedulerParameters=bf_interval=1,sched_interval=1,sched_min_interval=100000
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
NodeName=$HOST CPUs=$(nproc) RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 1 60); do
  [[ "$(sinfo -h -o %T 2>/dev/null)" == idle ]] && break
  sleep 0.5
done
[[ "$(sinfo -h -o %T)" == idle ]] || { echo "slurm-test: the node did not come up" >&2; exit 1; }
say "cluster up: $(sinfo -V) on $(dpkg-query -W -f '${Version}' slurm-wlm 2>/dev/null || echo '?'), munge $(munged --version 2>&1 | awk '{print $2; exit}'): $(sinfo -h -o '%P %D node(s) %c CPUs %T')"

# The array, then the merge as a job depending on it; --wait returns the merge's exit code.
# Each array task runs the binary through a shim that records the process's own wall time.
cat >"$WORK/timed" <<EOF
#!/usr/bin/env bash
start=\$(date +%s.%N)
"$BIN" "\$@"
rc=\$?
echo "\$start \$(date +%s.%N)" >"$WORK/wall-\${SLURM_ARRAY_TASK_ID:-merge}"
exit \$rc
EOF
chmod +x "$WORK/timed"
TA=$(date +%s.%N)
ARRAY=$(RUNS="$WORK/runs" RUN_ARGS="$RUN_ARGS" BENCHAUDIT="$WORK/timed" \
  sbatch --parsable --array=0-$((SHARDS - 1)) --chdir="$WORK" --output="$WORK/shard-%a.log" \
  "$ROOT/scripts/scale-out/slurm-array.sbatch")
say "submitted job array $ARRAY: $SHARDS shards of: run $RUN_ARGS"
timeout 900 sbatch --parsable --wait --dependency=afterok:"$ARRAY" --chdir="$WORK" \
  --output="$WORK/merge.log" --job-name=benchaudit-merge \
  --wrap "$BIN merge $WORK/runs/shard-* --out $WORK/runs/merged" >/dev/null
ARRAY_S=$(elapsed "$TA")
states=$(scontrol show job "$ARRAY" | grep -o 'JobState=[A-Z]*' | sort | uniq -c | tr -s ' ')
say "array and merge done in $ARRAY_S s; array tasks:$states"
[[ "$states" == " $SHARDS JobState=COMPLETED" ]] || { echo "slurm-test: not every array task completed" >&2; exit 1; }
head -1 "$WORK/merge.log"
scontrol show job "$ARRAY" | awk '/ArrayTaskId=/ { match($0, /ArrayTaskId=[0-9]+/); t = substr($0, RSTART + 12, RLENGTH - 12) }
  /StartTime=/ { match($0, /StartTime=[^ ]+/); s = substr($0, RSTART + 10, RLENGTH - 10); match($0, /EndTime=[^ ]+/); e = substr($0, RSTART + 8, RLENGTH - 8); print "  array task " t ": " s " to " e }'

TS=$(date +%s.%N)
"$BIN" run $RUN_ARGS --out "$WORK/single" >/dev/null 2>&1
SINGLE_S=$(elapsed "$TS")
inside() { awk -F'"wall_ms":' '{ split($2, a, "}"); s += a[1] } END { printf "%.0f", s }' "$1/episodes.jsonl"; }
EPISODES=$(wc -l <"$WORK/single/episodes.jsonl")
say "single process (--jobs 1): $EPISODES episodes in $SINGLE_S s ($(awk -v n="$EPISODES" -v s="$SINGLE_S" 'BEGIN { printf "%.0f", n / s }') episodes/s), $(inside "$WORK/single") ms inside episodes"

# Byte for byte after canonical ordering, timing aside; transcripts the same files.
"$PY" - "$WORK/single" "$WORK/runs/merged" <<'EOF'
import json, os, re, sys
single, merged = sys.argv[1:]
timing = re.compile(rb',"timing":\{[^}]*\}')
def lines(d):
    with open(os.path.join(d, "episodes.jsonl"), "rb") as f:
        return [timing.sub(b"", l) for l in f.read().splitlines()]
def key(line):
    k = json.loads(line)["key"]
    return (k["policy"], k["level"], k["task_id"], k["seed"], k["arm"] is not None, k["arm"] or "", k["options_hash"])
want, got = sorted(lines(single), key=key), lines(merged)
if want != got:
    sys.exit(f"slurm-test: the merged ledger differs from the single-process one ({len(got)} vs {len(want)} lines)")
ts = lambda d: sorted(os.listdir(os.path.join(d, "transcripts")))
if ts(single) != ts(merged):
    sys.exit("slurm-test: the transcripts differ")
print(f"merged episodes.jsonl == single-process episodes.jsonl in canonical order, timing aside: {len(got)} lines, {len(ts(merged))} transcripts")
EOF
"$BIN" report "$WORK/runs/merged" --out "$WORK/report-merged" >/dev/null 2>&1
"$BIN" report "$WORK/single" --out "$WORK/report-single" >/dev/null 2>&1
diff <(sed "s|$WORK/runs/merged|RUN|g" "$WORK/report-merged/report.md") \
  <(sed "s|$WORK/single|RUN|g" "$WORK/report-single/report.md") >/dev/null \
  || { echo "slurm-test: report.md of the merged run differs" >&2; exit 1; }
say "report.md of the merged run == the single-process run's (run directory aside)"

# Figures: episodes per shard, per-shard overhead (a shard that resumes with nothing to run:
# start, plan, assignment, hashes, ledger read), the merge alone.
for i in $(seq 0 $((SHARDS - 1))); do
  n=$(wc -l <"$WORK/runs/shard-$i/episodes.jsonl")
  wall=$(awk '{ printf "%.2f", $2 - $1 }' "$WORK/wall-$i")
  echo "shard $i/$SHARDS: $n episodes, process wall $wall s, $(inside "$WORK/runs/shard-$i") ms inside episodes"
done
TO=$(date +%s.%N)
for _ in 1 2 3 4 5; do "$BIN" run $RUN_ARGS --shard 0/"$SHARDS" --out "$WORK/runs/shard-0" >/dev/null 2>&1; done
echo "per-shard overhead (resume with nothing to run, mean of 5): $(awk -v s="$(elapsed "$TO")" 'BEGIN { printf "%.3f", s / 5 }') s"
TM=$(date +%s.%N)
"$BIN" merge "$WORK"/runs/shard-* --out "$WORK/merge-again" >/dev/null
echo "merge alone: $(elapsed "$TM") s"
say "slurm-test: pass"
