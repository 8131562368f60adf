"""Leave when the terminal has gone.

When an SSH connection drops or a tmux pane is killed, the terminal hangs up. The app does not
always get a SIGHUP (it may not lead the terminal's session, for example under `make`). Textual's
input thread then reads end-of-file without end and keeps one core at 100 % for ever. So the
app checks every second whether its terminal still answers. If it does not, the app sends
itself the SIGHUP it should have got. (There is nothing left to show anything on.)
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from textual.app import App

CHECK_SECONDS = 1.0


def watch_for_hangup(app: App[Any]) -> None:
    """Check the app's terminal every CHECK_SECONDS, if it runs on one (not headless, a tty)."""
    stdin = sys.__stdin__
    if app.is_headless or stdin is None or not hasattr(signal, "SIGHUP"):
        return
    fd = stdin.fileno()
    if not os.isatty(fd):
        return

    def check() -> None:
        if terminal_gone(fd):
            os.kill(os.getpid(), signal.SIGHUP)

    app.set_interval(CHECK_SECONDS, check, name="hangup-watch")


def terminal_gone(fd: int) -> bool:
    """Whether the terminal on `fd` has hung up: its attributes can no longer be read (EIO)."""
    import termios  # Unix only, like SIGHUP

    try:
        termios.tcgetattr(fd)
    except (termios.error, OSError):
        return True
    return False
