"""`tracetui serve` in a process of its own, as a user runs it: started with the given flags and
environment on a free loopback port, ready once it has printed how to reach it, and always
killed and reaped on the way out, so that a failed assertion never leaves a service behind.

Its output is read by threads from the start: the access log goes on being written while a
test runs, and a pipe nobody reads would fill and stall the service."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

READY = "and browse them:"  # the last line of what serve prints before it answers
ADDRESS = re.compile(r"local service on (\S+)")
NEW_KEY = re.compile(r"store it now\): (\S+)")
WORKSPACE_KEY = re.compile(r"workspace key: (\S+)")
OTLP_ENDPOINT = re.compile(r"OTEL_EXPORTER_OTLP_ENDPOINT=(\S+)")
START_SECONDS = 60.0  # generous: a loaded machine starts Python and uvicorn slowly
STOP_SECONDS = 30.0


def tracetui_command(*args: str) -> list[str]:
    """The command line of `tracetui ARGS` in this interpreter."""
    return [sys.executable, "-m", "tui", *args]


def tracetui_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without the developer's own TRACETUI_ settings, plus `env`."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("TRACETUI_")}
    return inherited | dict(env or {})


def run_tracetui(
    *args: str, env: Mapping[str, str] | None = None, timeout: float = 60.0
) -> subprocess.CompletedProcess[str]:
    """`tracetui ARGS` run to its end (a refusal, a one-off command); its output captured."""
    return subprocess.run(
        tracetui_command(*args),
        env=tracetui_env(env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


class Output:
    """A pipe's lines as they come, read by a daemon thread until the pipe closes."""

    def __init__(self, pipe: IO[str]) -> None:
        self.lines: list[str] = []
        self.arrived: queue.Queue[str | None] = queue.Queue()
        self.thread = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self.thread.start()

    def _read(self, pipe: IO[str]) -> None:
        for line in pipe:
            self.lines.append(line)
            self.arrived.put(line)
        self.arrived.put(None)

    def closed(self, timeout: float) -> bool:
        """Whether every writer closed the pipe within `timeout` seconds (the service, and any
        process that inherited it, such as an ingest worker)."""
        self.thread.join(timeout)
        return not self.thread.is_alive()

    def text(self) -> str:
        return "".join(self.lines)


@dataclass
class Served:
    """A running `tracetui serve`, and what it printed before it answered."""

    process: subprocess.Popen[str]
    stdout: Output
    stderr: Output
    banner: list[str] = field(default_factory=list)

    def _found(self, pattern: re.Pattern[str]) -> str | None:
        for line in self.banner:
            if found := pattern.search(line):
                return found[1]
        return None

    @property
    def base_url(self) -> str:
        """The API's base URL, ending in /v1."""
        url = self._found(ADDRESS)
        assert url, f"serve printed no address: {self.banner}"
        return url

    @property
    def otlp_endpoint(self) -> str:
        """The root an OTLP exporter is given (OTEL_EXPORTER_OTLP_ENDPOINT)."""
        url = self._found(OTLP_ENDPOINT)
        assert url, f"serve printed no OTLP endpoint: {self.banner}"
        return url

    @property
    def key(self) -> str | None:
        """The workspace key serve printed: the one it made for a new database, or the demo's."""
        return self._found(NEW_KEY) or self._found(WORKSPACE_KEY)

    def wait_until_ready(self, timeout: float = START_SECONDS) -> None:
        """Read what serve prints until it says how to reach it; fail if it ends first."""
        deadline = time.monotonic() + timeout
        while not self.banner or READY not in self.banner[-1]:
            left = deadline - time.monotonic()
            assert left > 0, f"serve was not ready in {timeout:g} s: {self.banner}"
            try:
                line = self.stdout.arrived.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                self.process.wait(STOP_SECONDS)
                self.stderr.closed(STOP_SECONDS)
                raise AssertionError(
                    f"serve ended ({self.process.returncode}) before it was ready: "
                    f"{self.banner} {self.stderr.text()}"
                )
            self.banner.append(line)

    def send(self, signum: signal.Signals, group: bool = False) -> None:
        """Send `signum` to the service, or to its whole process group (as a terminal's Ctrl-C
        or a systemd stop does: only for a service started in a session of its own)."""
        if group:
            os.killpg(self.process.pid, signum)
        else:
            self.process.send_signal(signum)

    def wait(self, timeout: float = STOP_SECONDS) -> int:
        """The service's exit code, once it has ended."""
        return self.process.wait(timeout)

    def interrupt(self, timeout: float = STOP_SECONDS) -> int:
        """Ctrl-C, as a user stops it; its exit code once it has ended. A service still running
        after `timeout` is asked for its threads' stacks (SIGUSR1), which the error carries."""
        self.send(signal.SIGINT)
        try:
            return self.wait(timeout)
        except subprocess.TimeoutExpired:
            self.send(signal.SIGUSR1)
            self.stderr.closed(2.0)  # a moment for the stacks to be written
            raise AssertionError(
                f"serve did not stop {timeout:g} s after Ctrl-C; its threads:\n"
                + self.stderr.text()[-20_000:]
            ) from None

    def errors(self, timeout: float = STOP_SECONDS) -> str:
        """Everything the service wrote to stderr, once every writer has closed it."""
        assert self.stderr.closed(timeout), "stderr still open: a process of the service lives on"
        return self.stderr.text()

    def kill(self, new_session: bool) -> None:
        """Kill the service if it still runs, and reap it; with a session of its own, whatever
        is left of its process group too (workers a failed test did not wait for)."""
        if new_session:
            with suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
        elif self.process.poll() is None:
            self.process.kill()
        self.process.wait()


@contextmanager
def serving(
    db: Path | str | None,
    *flags: str,
    env: Mapping[str, str] | None = None,
    new_session: bool = False,
) -> Iterator[Served]:
    """`tracetui serve --db DB --port 0 FLAGS` with `env` over this environment (less its
    TRACETUI_ settings), once it has printed how to reach it. DB is a SQLite file's path or a
    PostgreSQL URL; None leaves --db out (to give the database by TRACETUI_DB in `env`).
    `new_session`: in a process group of its own, as a shell starts it, so a signal can reach
    the service and its workers at once. Killed and reaped on the way out if still running."""
    database = [] if db is None else ["--db", str(db)]
    process = subprocess.Popen(
        tracetui_command("serve", *database, "--port", "0", *flags),
        env=tracetui_env(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=new_session,
    )
    assert process.stdout is not None and process.stderr is not None
    served = Served(process, Output(process.stdout), Output(process.stderr))
    try:
        served.wait_until_ready()
        yield served
    finally:
        served.kill(new_session)
