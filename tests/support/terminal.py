"""A program in a real pseudo-terminal, as a user's terminal (or an SSH session) would see it.

The benchmarks about what reaches a terminal (start-up to the first useful frame, bytes per
keypress, CPU while idle) and the adversarial tests of what hostile data can make the app write
run the app as a separate process on a pty: imports, the driver, and every byte the terminal
would receive are real.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pyte

if TYPE_CHECKING:
    from tests.support.service import RunningService


class Terminal:
    """`argv` running on a pty of `cols` x `rows`; read what it writes, type into it."""

    def __init__(
        self, argv: list[str], env: Mapping[str, str], cols: int = 80, rows: int = 24
    ) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            argv,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env={**env, "TERM": "xterm-256color", "COLUMNS": str(cols), "LINES": str(rows)},
            start_new_session=True,
        )
        os.close(slave)
        self.master = master
        self.output = bytearray()
        # What a terminal would show; fed lazily so reading stays cheap for the benchmarks.
        self._screen = pyte.Screen(cols, rows)
        self._stream = pyte.ByteStream(self._screen)
        self._fed = 0

    def _read(self, timeout: float) -> bytes:
        ready, _, _ = select.select([self.master], [], [], max(0.0, timeout))
        if not ready:
            return b""
        try:
            chunk = os.read(self.master, 65536)
        except OSError:  # the program has exited
            return b""
        self.output += chunk
        return chunk

    def wait_for(self, needle: bytes, timeout: float = 30.0) -> float:
        """Seconds from process start until `needle` was written."""
        deadline = time.perf_counter() + timeout
        while needle not in self.output:
            if time.perf_counter() > deadline:
                tail = bytes(self.output[-400:])
                raise TimeoutError(f"{needle!r} not written within {timeout} s; last: {tail!r}")
            self._read(deadline - time.perf_counter())
        return time.perf_counter() - self.started

    def drain(self, quiet: float = 0.3, limit: float = 5.0) -> int:
        """Read until nothing arrives for `quiet` seconds; the number of bytes read."""
        total, deadline = 0, time.perf_counter() + limit
        while time.perf_counter() < deadline:
            chunk = self._read(quiet)
            if not chunk:
                break
            total += len(chunk)
        return total

    def screen(self) -> str:
        """The screen as a terminal emulator draws what was written so far: one line per row."""
        self._stream.feed(bytes(self.output[self._fed :]))
        self._fed = len(self.output)
        return "\n".join(line.rstrip() for line in self._screen.display)

    def send(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def cpu_seconds(self) -> float:
        """User plus system CPU time the program has used so far."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def hang_up(self) -> None:
        """The terminal goes away, as when an SSH connection drops or a tmux pane is killed."""
        os.close(self.master)
        self.master = -1

    def close(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        if self.master >= 0:
            os.close(self.master)

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


PYTHON = sys.executable


def app_environment(service: RunningService) -> dict[str, str]:
    """A bare environment for the app against `service`: fresh home and config folders, no
    setting of the developer's."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": tempfile.mkdtemp(prefix="tracetui-hostile-home-"),
        "XDG_CONFIG_HOME": tempfile.mkdtemp(prefix="tracetui-hostile-config-"),
        "TRACETUI_BASE_URL": service.base_url,
        "TRACETUI_API_KEY": service.keys.workspace,
    }


def wait_until_shown(term: Terminal, shown: str, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while shown not in term.screen():
        if time.monotonic() > deadline:
            raise AssertionError(f"{shown!r} not on the screen:\n{term.screen()}")
        term.drain(quiet=0.2, limit=1.0)
    term.drain(quiet=0.3)  # let the frame finish before the next key
