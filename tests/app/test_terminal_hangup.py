"""The terminal hangs up (an SSH connection drops, a tmux pane is killed) without the app being
sent SIGHUP: the app leaves within seconds instead of spinning a core for ever."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from tests.support.service import start_service
from tests.support.terminal import Terminal, app_environment


def test_the_app_leaves_when_its_terminal_hangs_up(tmp_path: Path) -> None:
    service = start_service(tmp_path / "hangup.sqlite3")
    try:
        with Terminal([sys.executable, "-m", "tui"], app_environment(service)) as term:
            term.wait_for(b"Projects")
            term.drain(quiet=0.5)
            term.hang_up()
            try:
                term.process.wait(timeout=30)  # generous: it checks every few seconds
            except subprocess.TimeoutExpired:
                raise AssertionError("still running after its terminal hung up") from None
    finally:
        service.service.stop()
    assert term.process.returncode == -signal.SIGHUP  # it went the way a hang-up goes
