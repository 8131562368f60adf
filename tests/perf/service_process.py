"""The local service on a store file, in a process of its own, for the benchmarks: the app
measured in the benchmark's process then shares neither the interpreter's lock nor the CPU time
of a request with the service answering it, as with a real server.

`python -m tests.perf.service_process DB_PATH` prints the service's base URL and serves until
its standard input closes, or an hour has passed. `Processes` starts it (and the delay proxy)
and stops what it started.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from contextlib import AbstractContextManager
from pathlib import Path
from types import TracebackType

LIFETIME = 3600.0


class Processes(AbstractContextManager["Processes"]):
    """Helper processes that print one line when ready (an address) and stop when their
    standard input closes; all stopped on leaving, whatever happened."""

    def __init__(self) -> None:
        self._started: list[subprocess.Popen[str]] = []

    def start(self, command: list[str], timeout: float = 60.0) -> str:
        process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self._started.append(process)
        line: list[str] = []
        reader = threading.Thread(target=lambda: line.append(process.stdout.readline()))  # type: ignore[union-attr]
        reader.start()
        reader.join(timeout)
        if not line or not line[0].strip():
            raise RuntimeError(f"{command[2:]} did not start")
        return line[0].strip()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for process in self._started:
            if process.stdin is not None:
                process.stdin.close()
        for process in self._started:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def service_command(db: Path) -> list[str]:
    return [sys.executable, "-m", "tests.perf.service_process", str(db)]


def main(db: str) -> None:
    from tests.support.service import local_service
    from tui.server.store.sqlite.store import Store

    with local_service(Store(db), rate_limit=10**9) as service:
        print(service.base_url, flush=True)
        reader = threading.Thread(target=sys.stdin.read, daemon=True)
        reader.start()
        reader.join(LIFETIME)


if __name__ == "__main__":
    main(sys.argv[1])
