#!/usr/bin/env python3
"""Records a real OpenAI-compatible server's raw answers, for replay in the unit tests.

    scripts/local-llm/record.py proxy UPSTREAM PORT OUT.jsonl
        A loopback proxy on 127.0.0.1:PORT that forwards every request to UPSTREAM (e.g.
        http://127.0.0.1:8081) and appends {method, path, request, status, response} per
        exchange to OUT.jsonl. Point `benchaudit run --base-url http://127.0.0.1:PORT/v1` at it.
    scripts/local-llm/record.py send UPSTREAM PATH BODY.json OUT.json
        One request (GET when BODY.json is "-"), its answer saved the same way.

Standard library only. The bodies are kept exactly as the server sent them (as text).
"""
import json
import sys
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def forward(upstream, method, path, body):
    req = urllib.request.Request(upstream + path, data=body, method=method)
    if body is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=3600) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def exchange(method, path, body, status, answer):
    return {
        "method": method,
        "path": path,
        "request": json.loads(body) if body else None,
        "status": status,
        "response": answer.decode("utf-8", "replace"),
    }


def proxy(upstream, port, out):
    class Handler(BaseHTTPRequestHandler):
        def handle_one(self, method):
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n) if n else None
            status, answer = forward(upstream, method, self.path, body)
            with open(out, "a", encoding="utf-8") as f:
                f.write(json.dumps(exchange(method, self.path, body, status, answer)) + "\n")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def do_GET(self):
            self.handle_one("GET")

        def do_POST(self):
            self.handle_one("POST")

        def log_message(self, *args):
            pass

    ThreadingHTTPServer(("127.0.0.1", int(port)), Handler).serve_forever()


def send(upstream, path, body_file, out):
    body = None if body_file == "-" else open(body_file, "rb").read()
    status, answer = forward(upstream, "GET" if body is None else "POST", path, body)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(exchange("GET" if body is None else "POST", path, body, status, answer), f, indent=1)
        f.write("\n")
    print(status, len(answer), file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "proxy":
        proxy(*sys.argv[2:])
    elif len(sys.argv) == 6 and sys.argv[1] == "send":
        send(*sys.argv[2:])
    else:
        sys.exit(__doc__)
