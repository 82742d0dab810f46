"""Where a τ² forged run's CPU goes: the hook's `play` of the performance target's three
forgeries (gold, do_nothing, corrupt_last_write) on the first TASKS airline tasks, in this
process under cProfile, with every environment built beforehand (as the hook's forked children
find them), so the figures are the play and its scoring alone. Prints the CPU per run and the
share spent in τ²'s own functions that dominate it.

    targets/tau2/setup.sh
    targets/tau2/.venv/bin/python scripts/bench/tau2_profile.py [TASKS]   # default 8
"""

import cProfile
import os
import pstats
import sys
import time
from pathlib import Path

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("LLM_CACHE_ENABLED", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "targets" / "tau2"))

import forge  # noqa: E402

FORGERIES = ("gold", "do_nothing", "corrupt_last_write")


def main(n):
    bench = forge.Tau2()
    tasks = list(bench.domain("airline"))[:n]
    # Enough pristine environments for every run (a run and its scoring take about three).
    forge.POOL = 4 * len(tasks) * len(FORGERIES)
    built = time.process_time()
    bench.fill_pool("airline")
    built = (time.process_time() - built) / forge.POOL
    items = [{"group": "airline", "unit": t, "forgery": f} for t in tasks for f in FORGERIES]
    profile = cProfile.Profile()
    start = time.process_time()
    profile.enable()
    for item in items:
        bench.play(item)
    profile.disable()
    cpu = time.process_time() - start
    stats = pstats.Stats(profile).stats
    total = sum(tt for (_, _, tt, _, _) in stats.values())

    def cumulative(suffix, name):
        return sum(ct for (file, _, func), (_, _, _, ct, _) in stats.items()
                   if file.endswith(suffix) and func == name)

    print(f"{len(items)} runs ({len(tasks)} airline tasks × {len(FORGERIES)} forgeries): "
          f"{cpu:.2f} s CPU, {cpu / len(items) * 1000:.0f} ms a run (profiled)")
    for label, suffix, name in [
        ("τ²'s evaluate_simulation", "tau2/evaluator/evaluator.py", "evaluate_simulation"),
        ("τ²'s Environment.get_db_hash, wherever called (the whole database dumped, "
         "serialised with sorted keys and hashed)", "tau2/environment/toolkit.py", "get_db_hash"),
    ]:
        print(f"{label}: {cumulative(suffix, name) / total:.0%}")
    print(f"building one airline environment (before the forks): {built * 1000:.0f} ms CPU")
    own = sum(tt for (file, _, _), (_, _, tt, _, _) in stats.items() if file.endswith("tau2/forge.py"))
    print(f"the hook's own code (targets/tau2/forge.py, its own time): {own / total:.0%}")

if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 8)
