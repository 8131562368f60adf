"""A real Arize Phoenix for tests: a separate virtualenv with a pinned `arize-phoenix` (850 MB:
never in the app's environment), built once and cached, and `phoenix serve` started from it on
loopback with a temporary working directory, free ports and telemetry off.

Every package pip installs there is pinned by phoenix-constraints.txt (beside this file, made by
`pip freeze` in a working one), so a new release of any of Phoenix's ~140 dependencies never
changes what the tests run against. The virtualenv lives in
~/.cache/tracetui/phoenix-<version>-<hash of the constraints> ($TRACETUI_PHOENIX_VENV to put it
elsewhere): a change to the pins is a new place, so it is built anew. It is built under a file
lock (parallel xdist workers build it once) and marked built only when pip is done: a build cut
short never counts as built, and is started over. When it cannot be built, the tests that need
it fail with pip's own words: they are never skipped silently.

`phoenix serve` (one process, no children) dies with the process that started it, however that
one dies, kill -9 included: it is started with PR_SET_PDEATHSIG (as tests/support/postgres.py
starts PostgreSQL), and stopped as a process group on the way out otherwise.
"""

from __future__ import annotations

import ctypes
import fcntl
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import httpx

PHOENIX_VERSION = "20.26.1"
BUILD_SECONDS = 900.0  # a cold build downloads ~850 MB of wheels
BUILT_MARKER = ".tracetui-built"
READY_SECONDS = 180.0  # phoenix serve takes ~10 s on an idle machine; much longer under load
CONSTRAINTS = Path(__file__).with_name("phoenix-constraints.txt")
PR_SET_PDEATHSIG = 1


class PhoenixUnavailable(RuntimeError):
    """The Phoenix virtualenv could not be built, or `phoenix serve` did not come up."""


def constraints_hash() -> str:
    """The cache key's part that changes with the pins."""
    return hashlib.sha256(CONSTRAINTS.read_bytes()).hexdigest()[:12]


def venv_dir(version: str = PHOENIX_VERSION) -> Path:
    configured = os.environ.get("TRACETUI_PHOENIX_VENV")
    if configured:
        return Path(configured)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "tracetui" / f"phoenix-{version}-{constraints_hash()}"


def phoenix_executable(venv: Path) -> Path:
    return venv / "bin" / "phoenix"


def is_built(venv: Path) -> bool:
    return (venv / BUILT_MARKER).exists() and phoenix_executable(venv).exists()


def ensure_venv(version: str = PHOENIX_VERSION) -> Path:
    """The cached virtualenv with arize-phoenix==version, built first if it is not there."""
    venv = venv_dir(version)
    if is_built(venv):
        return venv
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f".{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be building it: wait for it
        if not is_built(venv):
            _build(venv, version)
    return venv


def _build(venv: Path, version: str) -> None:
    """A venv at `venv` (its scripts name their own path, so it is built where it stays) with
    arize-phoenix==version; marked built only once pip is done."""
    shutil.rmtree(venv, ignore_errors=True)  # what a build cut short left
    base_python = getattr(sys, "_base_executable", sys.executable)
    steps = (
        [base_python, "-m", "venv", str(venv)],
        [
            *(str(venv / "bin" / "python"), "-m", "pip", "install", "-q"),
            *("--constraint", str(CONSTRAINTS), f"arize-phoenix=={version}"),
        ],
    )
    for step in steps:
        try:
            done = subprocess.run(
                step, capture_output=True, text=True, timeout=BUILD_SECONDS, check=False
            )
        except subprocess.TimeoutExpired:
            raise PhoenixUnavailable(f"building the Phoenix virtualenv timed out: {step}") from None
        if done.returncode != 0:
            tail = (done.stderr or done.stdout)[-2000:]
            raise PhoenixUnavailable(
                f"could not build the Phoenix virtualenv at {venv} ({' '.join(step[-3:])}): {tail}"
            )
    if not phoenix_executable(venv).exists():
        raise PhoenixUnavailable(f"pip installed arize-phoenix=={version} but no phoenix command")
    (venv / BUILT_MARKER).write_text(f"{version} {constraints_hash()}\n")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass(frozen=True)
class RunningPhoenix:
    base_url: str  # http://127.0.0.1:PORT, as users give it
    version: str
    working_dir: Path
    log_path: Path
    pid: int  # `phoenix serve`'s process

    @property
    def otlp_endpoint(self) -> str:
        return f"{self.base_url}/v1/traces"


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


@contextmanager
def running_phoenix(tmp: Path, version: str = PHOENIX_VERSION) -> Iterator[RunningPhoenix]:
    """`phoenix serve` from the cached virtualenv, on loopback, ready; stopped on the way out
    (the whole process group, even when the test failed), and killed by the kernel if the
    process that started it dies first."""
    if threading.current_thread() is not threading.main_thread():
        # PR_SET_PDEATHSIG fires when the starting *thread* ends, not the process.
        raise PhoenixUnavailable("start Phoenix from the main thread")
    venv = ensure_venv(version)
    port, grpc_port = free_port(), free_port()
    working_dir = tmp / "phoenix"
    working_dir.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": f"{venv / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(working_dir),
        "PHOENIX_WORKING_DIR": str(working_dir),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(grpc_port),
        "PHOENIX_TELEMETRY_ENABLED": "false",
        "PHOENIX_ENABLE_AUTH": "false",
    }
    log_path = tmp / "phoenix.log"
    base_url = f"http://127.0.0.1:{port}"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [str(phoenix_executable(venv)), "serve"],
            env=env,
            cwd=working_dir,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        try:
            served = _wait_ready(process, base_url, log_path)
            yield RunningPhoenix(base_url, served, working_dir, log_path, process.pid)
        finally:
            _stop(process)


def _wait_ready(process: subprocess.Popen[bytes], base_url: str, log_path: Path) -> str:
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise PhoenixUnavailable(
                f"phoenix serve exited with {process.returncode}: {_tail(log_path)}"
            )
        try:
            answer = httpx.get(f"{base_url}/arize_phoenix_version", timeout=2.0)
            if answer.status_code == 200 and answer.text.strip():
                return answer.text.strip()
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise PhoenixUnavailable(
        f"phoenix serve was not ready within {READY_SECONDS:g} s: {_tail(log_path)}"
    )


def _tail(path: Path) -> str:
    try:
        return path.read_text(errors="replace")[-2000:]
    except OSError:
        return "(no log)"


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=20)
