"""`tracetui serve` as a user runs it: it answers until Ctrl-C, then stops cleanly."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from tests.support.helpers import reaped


def test_serve_answers_until_interrupted_then_exits_cleanly(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "tui", "serve", "--db", str(tmp_path / "s.sqlite3"), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    with reaped(process):
        assert process.stdout is not None
        key = url = None
        for line in process.stdout:  # the key is printed first, then the address
            if found := re.search(r"store it now\): (\S+)", line):
                key = found[1]
            if found := re.search(r"local service on (\S+)", line):
                url = found[1]
                break
        assert key and url, "serve printed no key or address"
        response = httpx.get(f"{url}/projects", headers={"Authorization": f"Bearer {key}"})
        assert response.status_code == 200 and response.json() == {"data": []}
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0
        assert process.stderr is not None
        assert "Traceback" not in process.stderr.read()
