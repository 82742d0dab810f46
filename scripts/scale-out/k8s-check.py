"""Checks the Kubernetes example for shape (no cluster here), then runs its pods' commands.

    python3 scripts/scale-out/k8s-check.py BENCHAUDIT_BINARY

Shape: the Indexed Job (completionMode Indexed, completions == parallelism == N), every pod's
args carry `--shard $(JOB_COMPLETION_INDEX)/N` and an --out under the shared volume holding
$(JOB_COMPLETION_INDEX), JOB_COMPLETION_INDEX is declared from the completion-index
annotation, the volume is a ReadWriteMany PVC declared beside the Job, and the merge Job mounts
the same claim and lists shard-0 .. shard-(N-1) with an --out on the volume.

Then each of the N pods' commands runs with the given binary, $(JOB_COMPLETION_INDEX)
substituted as the kubelet would and the volume's mount path mapped to a temporary folder,
and the merge Job's command after them: it must merge (exit 0), which proves the N shards
partition the plan. Prints one line per check; exits 1 on the first failure.
"""

import os
import subprocess
import sys
import tempfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
INDEX = "$(JOB_COMPLETION_INDEX)"
ANNOTATION = "metadata.annotations['batch.kubernetes.io/job-completion-index']"


def fail(message):
    print(f"k8s-check: FAIL: {message}")
    sys.exit(1)


def ok(message):
    print(f"k8s-check: ok: {message}")


def load(name):
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d]


def one(docs, kind, what):
    found = [d for d in docs if d.get("kind") == kind]
    if len(found) != 1:
        fail(f"{what}: expected one {kind}, found {len(found)}")
    return found[0]


def flag(args, name):
    if name not in args or args.index(name) + 1 >= len(args):
        fail(f"args lack {name} VALUE: {args}")
    return args[args.index(name) + 1]


def container_and_mount(job, what):
    spec = job["spec"]["template"]["spec"]
    containers = spec["containers"]
    if len(containers) != 1:
        fail(f"{what}: expected one container, found {len(containers)}")
    c = containers[0]
    claims = {
        v["name"]: v["persistentVolumeClaim"]["claimName"]
        for v in spec.get("volumes", [])
        if "persistentVolumeClaim" in v
    }
    mounts = [m for m in c.get("volumeMounts", []) if m["name"] in claims]
    if len(mounts) != 1:
        fail(f"{what}: expected one mounted PVC, found {len(mounts)}")
    return c, claims[mounts[0]["name"]], mounts[0]["mountPath"]


def main():
    if len(sys.argv) != 2:
        fail("usage: k8s-check.py BENCHAUDIT_BINARY")
    binary = sys.argv[1]

    docs = load("k8s-indexed-job.yaml")
    pvc = one(docs, "PersistentVolumeClaim", "k8s-indexed-job.yaml")
    job = one(docs, "Job", "k8s-indexed-job.yaml")
    spec = job["spec"]
    if spec.get("completionMode") != "Indexed":
        fail(f"completionMode is {spec.get('completionMode')!r}, not 'Indexed'")
    n = spec.get("completions")
    if not isinstance(n, int) or n < 1 or spec.get("parallelism") != n:
        fail(f"completions ({n}) and parallelism ({spec.get('parallelism')}) must be equal N >= 1")
    ok(f"Indexed Job {job['metadata']['name']}: completionMode Indexed, completions = parallelism = {n}")

    c, claim, mount = container_and_mount(job, "shard Job")
    if claim != pvc["metadata"]["name"]:
        fail(f"the shard pods mount claim {claim!r}, the file declares {pvc['metadata']['name']!r}")
    if "ReadWriteMany" not in pvc["spec"]["accessModes"]:
        fail("the shared claim must be ReadWriteMany (N pods and the merge mount it)")
    ok(f"shared volume: PVC {claim} (ReadWriteMany) mounted at {mount}")

    args = c["args"]
    shard = flag(args, "--shard")
    if shard != f"{INDEX}/{n}":
        fail(f"--shard is {shard!r}, not '{INDEX}/{n}'")
    out = flag(args, "--out")
    if INDEX not in out or not out.startswith(mount.rstrip("/") + "/"):
        fail(f"--out {out!r} must lie under {mount} and hold {INDEX}")
    env = {e["name"]: e for e in c.get("env", [])}
    ref = env.get("JOB_COMPLETION_INDEX", {}).get("valueFrom", {}).get("fieldRef", {})
    if ref.get("fieldPath") != ANNOTATION:
        fail(f"JOB_COMPLETION_INDEX must come from {ANNOTATION}")
    ok(f"container args carry --shard {shard} and --out {out}")

    merge_docs = load("k8s-merge-job.yaml")
    merge = one(merge_docs, "Job", "k8s-merge-job.yaml")
    mc, mclaim, mmount = container_and_mount(merge, "merge Job")
    margs = mc["args"]
    if margs[0] != "merge" or mclaim != claim or mmount != mount:
        fail("the merge Job must run `merge` on the same claim at the same mount path")
    dirs = [a for a in margs[1:] if not a.startswith("--")][: n + 1]
    want = [out.replace(INDEX, str(i)) for i in range(n)]
    if dirs[:n] != want:
        fail(f"the merge Job lists {dirs[:n]}, not the {n} shard dirs {want}")
    ok(f"merge Job lists the {n} shard dirs and --out {flag(margs, '--out')}")

    with tempfile.TemporaryDirectory() as tmp:
        local = lambda a: a.replace(mount.rstrip("/"), tmp)  # noqa: E731
        for i in range(n):
            pod = [binary] + [local(a.replace(INDEX, str(i))) for a in args]
            r = subprocess.run(pod, capture_output=True, text=True, check=False)
            if r.returncode != 0:
                fail(f"pod {i}: {' '.join(pod)} exited {r.returncode}: {r.stderr}")
        r = subprocess.run([binary] + [local(a) for a in margs], capture_output=True, text=True, check=False)
        if r.returncode != 0:
            fail(f"the merge Job's command exited {r.returncode}: {r.stderr}")
        ok(f"ran the {n} pods' commands and the merge's here: {r.stdout.splitlines()[0]}")


if __name__ == "__main__":
    main()
