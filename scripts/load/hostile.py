#!/usr/bin/env python3
"""Hostile-client load checks of `benchaudit serve`, on 127.0.0.1 only, bounded in count and time.

    BENCHAUDIT=target/release/benchaudit scripts/load/hostile.py healthz   # 16 MiB submit + hammer
    BENCHAUDIT=target/release/benchaudit scripts/load/hostile.py slow      # 10 000 slow connections
    BENCHAUDIT=target/release/benchaudit scripts/load/hostile.py evict     # 100 000 creates, cap 100
    BENCHAUDIT=target/release/benchaudit scripts/load/hostile.py stdio     # mcp: 20 000 requests, read late
    BENCHAUDIT=target/release/benchaudit scripts/load/hostile.py pool      # 3 rounds of 48 submits of 12 MiB of records
    BENCHAUDIT=... scripts/load/hostile.py all

Each check starts its own server (extra flags after `--` are passed to it), prints its figures and
exits non-zero when the server fails the check. Python standard library only. Figures are in
docs/servers.md.
"""

import http.client
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import threading
import time

HOST = "127.0.0.1"
PORT = int(os.environ.get("PORT", "18282"))
BIN = os.environ.get("BENCHAUDIT", "target/release/benchaudit")
WAIT = int(os.environ.get("WAIT", "120"))  # seconds a slow-connection check waits at most


class Server:
    def __init__(self, *flags):
        self.proc = subprocess.Popen(
            [BIN, "serve", "--addr", f"{HOST}:{PORT}", *flags],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                status, _ = request("GET", "/healthz", timeout=1)
                if status == 200:
                    return
            except OSError:
                time.sleep(0.05)
        raise SystemExit("server did not start")

    def stop(self):
        self.proc.terminate()
        try:
            _, err = self.proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        err = err.decode(errors="replace")
        if "panicked" in err:
            print(err)
            raise SystemExit("the server panicked")

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0


def request(method, path, body=None, timeout=60, conn=None, headers=None):
    """One request; returns (status, parsed JSON or text). Reuses `conn` when given."""
    own = conn is None
    if own:
        conn = http.client.HTTPConnection(HOST, PORT, timeout=timeout)
    hdrs = dict(headers or {})
    data = None
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        hdrs.setdefault("Content-Type", "application/json")
    conn.request(method, path, body=data, headers=hdrs)
    r = conn.getresponse()
    raw = r.read()
    if own:
        conn.close()
    try:
        return r.status, json.loads(raw)
    except ValueError:
        return r.status, raw.decode(errors="replace")


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))] if xs else float("nan")


def jsonl(n_bytes):
    lines, i, size = [], 0, 0
    while size < n_bytes:
        line = (
            f'{{"year":2021,"reporter":"USA","partner":"CHN","flow":"M","hs":"8471","cmdCode":"8471",'
            f'"tradeValue":{i}.5,"netWeight":{i},"qty":3,"record_id":"r{i:012d}"}}'
        )
        lines.append(line)
        size += len(line) + 1
        i += 1
    return "\n".join(lines) + "\n"


def check_healthz(flags):
    """/healthz latency while one client submits 16 MiB to one episode and hammers it."""
    server = Server("--idle-timeout", "0", *flags)
    try:
        _, created = request("POST", "/v1/episodes", {"task_id": "T2_multi_page", "seed": 1})
        eid = created["episode_id"]
        # As close to the server's 16 MiB body limit as JSON escaping allows.
        limit, target = 16 << 20, 16 << 20
        while True:
            body = json.dumps({"data_jsonl": jsonl(target), "metadata_json": "{}", "run_log": "x"}).encode()
            if len(body) <= limit:
                break
            target = int(target * limit / len(body)) - 4096
        done = threading.Event()
        result = {}

        def submit():
            t0 = time.perf_counter()
            status, answer = request("POST", f"/v1/episodes/{eid}/submit", body, timeout=120)
            result["submit"] = (status, time.perf_counter() - t0)
            done.set()

        hammered = [0]

        def hammer():
            conn = http.client.HTTPConnection(HOST, PORT, timeout=120)
            while not done.is_set():
                try:
                    request("GET", f"/v1/episodes/{eid}", conn=conn)
                    hammered[0] += 1
                except OSError:
                    conn = http.client.HTTPConnection(HOST, PORT, timeout=120)

        threads = [threading.Thread(target=submit)] + [threading.Thread(target=hammer) for _ in range(16)]
        for t in threads:
            t.start()
        lat = []
        conn = http.client.HTTPConnection(HOST, PORT, timeout=60)
        while not done.is_set():
            t0 = time.perf_counter()
            status, _ = request("GET", "/healthz", conn=conn)
            if not done.is_set():
                lat.append(time.perf_counter() - t0)
            assert status == 200
            time.sleep(0.005)
        for t in threads:
            t.join()
        status, took = result["submit"]
        ms = [x * 1000 for x in lat]
        print(f"healthz: submit of {len(body) / 2**20:.1f} MiB answered {status} in {took:.2f} s, "
              f"{hammered[0]} hammer requests on the same episode meanwhile")
        print(f"healthz: {len(ms)} /healthz during the submit: p50 {pct(ms, 50):.1f} ms, "
              f"p99 {pct(ms, 99):.1f} ms, max {max(ms) if ms else float('nan'):.1f} ms")
        # Pass marks: no /healthz slower than 100 ms; a chunk at 50 MiB held costs < 3x one at the start.
        ok = status == 200 and ms and max(ms) < 100
        # append: cost per chunk as the held submission grows.
        _, created = request("POST", "/v1/episodes", {"task_id": "T2_multi_page", "seed": 2, "submission": "chunked"})
        cid = created["episode_id"]
        chunk = {"data_jsonl": jsonl(256 << 10)}
        conn = http.client.HTTPConnection(HOST, PORT, timeout=60)
        times = []
        for _ in range(200):
            t0 = time.perf_counter()
            status, held = request("POST", f"/v1/episodes/{cid}/append", chunk, conn=conn)
            times.append((time.perf_counter() - t0) * 1000)
            if status != 200:
                print(f"append: stopped at {status} {held}")
                break
        first, last = statistics.median(times[:20]), statistics.median(times[-20:])
        print(f"append: 256 KiB chunks: median {first:.1f} ms for the first 20, {last:.1f} ms for the last 20 "
              f"({len(times)} chunks, {len(times) * 256 / 1024:.0f} MiB held)")
        return bool(ok) and last < 3 * first
    finally:
        server.stop()


def check_slow(flags, n=10_000, max_connections=None):
    """n connections that send part of a header (or nothing) and stall; then a healthy client."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, n + 1024)), hard))
    extra = ["--max-connections", str(max_connections)] if max_connections else []
    server = Server(*extra, *flags)
    try:
        base = server.rss_kib()
        socks = []
        t0 = time.perf_counter()
        for i in range(n):
            s = socket.socket()
            s.setblocking(True)
            s.settimeout(5)
            try:
                s.connect((HOST, PORT))
                if i % 2 == 0:
                    s.send(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n")
            except OSError:
                s.close()
                continue
            socks.append(s)
        opened = time.perf_counter() - t0
        held_rss = server.rss_kib()
        # A healthy client, while the slow ones hold their connections.
        t1 = time.perf_counter()
        try:
            status, _ = request("GET", "/healthz", timeout=WAIT)
        except OSError as e:
            status = f"failed ({e})"
        healthy = time.perf_counter() - t1
        # How long until the server has closed every slow connection?
        deadline = time.time() + WAIT
        open_socks = list(socks)
        for s in open_socks:
            s.setblocking(False)
        closed_at = None
        while open_socks and time.time() < deadline:
            still = []
            for s in open_socks:
                try:
                    if s.recv(4096) == b"":
                        s.close()
                        continue
                    still.append(s)  # some bytes (an error answer): wait for the close
                except BlockingIOError:
                    still.append(s)
                except OSError:
                    s.close()
            open_socks = still
            if not open_socks:
                closed_at = time.perf_counter() - t0
                break
            time.sleep(0.2)
        label = f"--max-connections {max_connections}" if max_connections else "default --max-connections"
        print(f"slow: {len(socks)} slow connections opened in {opened:.1f} s ({label}); server RSS "
              f"{base} KiB -> {held_rss} KiB while held")
        print(f"slow: a healthy /healthz meanwhile answered {status} after {healthy:.2f} s")
        if closed_at is None:
            print(f"slow: {len(open_socks)} slow connections still open after {WAIT} s")
        else:
            print(f"slow: the server closed all of them {closed_at:.1f} s after the first was opened")
        for s in open_socks:
            s.close()
        try:
            status_after, _ = request("GET", "/healthz", timeout=30)
        except OSError:
            status_after = None
        return status == 200 and closed_at is not None and status_after == 200
    finally:
        server.stop()


def check_evict(flags, creates=100_000, cap=100):
    """creates episodes at --max-episodes cap; every evicted id must answer 410."""
    server = Server("--max-episodes", str(cap), "--idle-timeout", "0", *flags)
    try:
        ids = [None] * creates
        workers = 4

        def create(k):
            conn = http.client.HTTPConnection(HOST, PORT, timeout=60)
            for i in range(k, creates, workers):
                status, v = request("POST", "/v1/episodes", {"task_id": "T1_single_page", "seed": i}, conn=conn)
                assert status == 201, (status, v)
                ids[i] = (time.perf_counter_ns(), v["episode_id"])

        t0 = time.perf_counter()
        threads = [threading.Thread(target=create, args=(k,)) for k in range(workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        took = time.perf_counter() - t0
        rss = server.rss_kib()
        # The last `cap` created (by completion time) may still be open; every other one left.
        order = sorted(ids)
        open_ids = {e for _, e in order[-cap:]}
        counts = {}
        reasons = {}

        def check(k):
            conn = http.client.HTTPConnection(HOST, PORT, timeout=60)
            for j in range(k, creates, workers):
                e = order[j][1]
                status, v = request("GET", f"/v1/episodes/{e}", conn=conn)
                want = 200 if e in open_ids else 410
                key = (want, status)
                counts[key] = counts.get(key, 0) + 1
                if status == 410:
                    reasons[v.get("reason")] = reasons.get(v.get("reason"), 0) + 1

        threads = [threading.Thread(target=check, args=(k,)) for k in range(workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        gone = creates - cap
        got410 = counts.get((410, 410), 0)
        print(f"evict: {creates} creates at --max-episodes {cap} in {took:.1f} s; server RSS {rss} KiB after")
        print(f"evict: of {gone} evicted ids, {got410} answered 410 "
              f"(reasons {dict(sorted(reasons.items(), key=lambda kv: str(kv[0])))}); "
              f"other answers: { {f'{w}->{s}': n for (w, s), n in counts.items() if w != s} }")
        return got410 == gone and counts.get((200, 200), 0) == cap
    finally:
        server.stop()


def check_stdio(requests=20_000, wait=5):
    """`benchaudit mcp` fed an initialize and `requests` fetch_page(page 1, page_size 1000) lines
    by a client that reads nothing for `wait` s: how many lines the server took meanwhile, its
    RSS, and whether every request got its answer once the client read."""
    proc = subprocess.Popen(
        [BIN, "mcp", "--task", "T2_multi_page", "--seed", "1", "--quota", "1000000"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    written = [0]

    def write():
        try:
            proc.stdin.write(b'{"jsonrpc":"2.0","id":"init","method":"initialize","params":'
                             b'{"protocolVersion":"2025-11-25","capabilities":{},'
                             b'"clientInfo":{"name":"hostile","version":"1"}}}\n')
            proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
            for i in range(requests):
                proc.stdin.write(b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":'
                                 b'{"name":"fetch_page","arguments":{"page":1,"page_size":1000}}}\n' % i)
                written[0] += 1
            proc.stdin.close()
        except BrokenPipeError:
            pass

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    rss = []
    for _ in range(wait):
        time.sleep(1)
        with open(f"/proc/{proc.pid}/status") as f:
            rss += [int(l.split()[1]) for l in f if l.startswith("VmRSS:")]
    taken = written[0]
    ids, errors = set(), 0
    for line in proc.stdout:
        answer = json.loads(line)
        ids.add(answer.get("id"))
        errors += "error" in answer
    writer.join()
    code = proc.wait()
    err = proc.stderr.read().decode(errors="replace")
    print(f"stdio: {taken} of {requests} request lines written while the client read nothing for {wait} s; "
          f"server RSS {rss[0]} -> {rss[-1]} KiB meanwhile")
    print(f"stdio: {len(ids)} of {requests + 1} requests answered ({errors} with an error), exit {code}"
          + (f"; stderr: {err.strip()[-200:]}" if err.strip() else ""))
    return len(ids) == requests + 1 and errors == 0 and code == 0 and taken < requests


def check_pool(flags, rounds=3, submits=48, mib=12, threads=4):
    """RSS after rounds of large submits: the allocator keeps freed memory for reuse (a pool
    as large as the peak of concurrent submissions); a second round must not grow it."""
    server = Server("--idle-timeout", "0", *flags)
    try:
        body = json.dumps({
            "data_jsonl": jsonl(mib << 20),
            "metadata_json": {"task_id": "T2_multi_page"},
            "run_log": "pool check",
        }).encode()
        rss = [server.rss_kib()]
        for r in range(rounds):
            ids = []
            for _ in range(submits):
                status, created = request("POST", "/v1/episodes", {"task_id": "T2_multi_page", "seed": len(ids)})
                assert status == 201, created
                ids.append(created["episode_id"])
            failures = []

            def work(mine):
                for i in mine:
                    status, answer = request("POST", f"/v1/episodes/{i}/submit", body, timeout=600)
                    if status != 200:
                        failures.append((status, answer))

            started = time.time()
            workers = [threading.Thread(target=work, args=(ids[t::threads],)) for t in range(threads)]
            for w in workers:
                w.start()
            for w in workers:
                w.join()
            rss.append(server.rss_kib())
            print(f"pool: round {r + 1}: {submits} submits of {mib} MiB on {threads} connections in "
                  f"{time.time() - started:.1f} s, {len(failures)} failed; server RSS {rss[-1]} KiB after")
        print(f"pool: RSS {rss[0]} KiB at start, " + ", ".join(f"{k} KiB after round {n + 1}" for n, k in enumerate(rss[1:])))
        # A leak keeps something per submit: every round would add a good part of what it
        # sent. A pool stops growing once it holds the peak of concurrent submissions.
        sent_kib = submits * len(body) // 1024
        grew = rss[-1] - rss[-2]
        print(f"pool: the last round added {grew} KiB; each round sends {sent_kib} KiB")
        return not failures and grew < sent_kib // 4
    finally:
        server.stop()


def main():
    args = sys.argv[1:]
    flags = []
    if "--" in args:
        i = args.index("--")
        args, flags = args[:i], args[i + 1:]
    what = args[0] if args else "all"
    ok = True
    if what in ("healthz", "all"):
        ok &= check_healthz(flags)
    if what in ("slow", "all"):
        ok &= check_slow(flags)
        ok &= check_slow(flags, n=250, max_connections=200)
    if what in ("evict", "all"):
        ok &= check_evict(flags)
    if what in ("stdio", "all"):
        ok &= check_stdio()
    if what in ("pool", "all"):
        ok &= check_pool(flags)
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
