"""benchaudit from Python: the bundled `benchaudit` binary and the ComtradeBench Inspect task.

The wheel carries the Rust binary (on PATH after `pip install benchaudit`); this package only
finds it. Every benchmark decision, tool answer and score comes from that binary
(`benchaudit mcp` serves one episode, `benchaudit score` scores a submission); the Inspect task
in `benchaudit.comtradebench` wires it into Inspect (`inspect eval benchaudit/comtradebench`).
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

try:
    __version__ = version("benchaudit")
except PackageNotFoundError:  # imported from a source tree, not installed
    __version__ = "0+unknown"

__all__ = ["__version__", "binary"]


def binary() -> str:
    """Path of the `benchaudit` binary to run.

    `BENCHAUDIT` (an explicit path) wins; then the binary this wheel installed into the
    interpreter's scripts folder (so a venv's package uses its own binary even when another
    `benchaudit` comes first on PATH); then `benchaudit` on PATH.
    """
    explicit = os.environ.get("BENCHAUDIT")
    if explicit:
        return explicit
    exe = "benchaudit.exe" if sys.platform == "win32" else "benchaudit"
    bundled = Path(sysconfig.get_path("scripts")) / exe
    if bundled.is_file():
        return str(bundled)
    found = shutil.which("benchaudit")
    if found:
        return found
    raise FileNotFoundError(
        "no benchaudit binary: install the benchaudit wheel, put benchaudit on PATH, "
        "or set BENCHAUDIT to its path"
    )
