"""Starts `benchaudit serve` for an interop check and waits until it answers (shared by the
Python peer checks; the script's folder is on sys.path when Python runs a script)."""
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
