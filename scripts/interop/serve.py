"""What the Python peer checks share: starting `benchaudit serve` and waiting until it answers,
and the oracle's way through an episode (the script's folder is on sys.path when Python runs a
script)."""
import json
import subprocess
import time
import urllib.request


def start_server(binary, port, health_path, seconds=10.0):
    """`benchaudit serve` on 127.0.0.1:port, once GET health_path answers; stderr is piped so
    the caller can show it. Exits the check when the server does not come up in time."""
    proc = subprocess.Popen([binary, "serve", "--addr", f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited {proc.returncode}: {proc.stderr.read().decode(errors='replace')}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}{health_path}", timeout=1)
            return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("server did not start")


SCHEMA = ["year", "reporter", "partner", "flow", "hs", "cmdCode", "tradeValue", "netWeight", "qty", "record_id"]


async def oracle_submission(info, fetch):
    """The oracle through any client: every page fetched with `await fetch(page)` -> (body,
    is_error), faults (429/500 with retry true) retried, records deduplicated by id, totals
    dropped. Returns submit_results' arguments."""
    c = info["constraints"]
    pages = -(-c["total_rows"] // c["page_size"])
    records, log = {}, []
    for page in range(1, pages + 1):
        while True:
            body, is_error = await fetch(page)
            if is_error:
                assert body["retry"] is True and body["status"] in (429, 500), body
                log.append(f"page={page} status {body['status']} retrying with exponential backoff")
                continue
            for row in body["rows"]:
                if not row.get("is_total"):
                    records[row["record_id"]] = row
            log.append(f"page={page} ok")
            break
    meta = {"task_id": info["task_id"], "query": info["query"], "row_count": len(records), "schema": SCHEMA,
            "dedup_key": ["year", "reporter", "partner", "flow", "hs", "record_id"]}
    return {"data_jsonl": "".join(json.dumps(r) + "\n" for r in records.values()),
            "metadata_json": json.dumps(meta), "run_log": "\n".join(log)}


def truth(binary, task, seed):
    """The task's true record set as JSON Lines (`benchaudit truth`)."""
    done = subprocess.run([binary, "truth", "--task", task, "--seed", str(seed)], capture_output=True, text=True,
                          timeout=60, check=True)
    return done.stdout
