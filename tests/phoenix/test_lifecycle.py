"""The tests' Phoenix (tests/support/phoenix.py) never outlives the test process: killed with
SIGKILL (nothing of its own runs on the way out), the process that started `phoenix serve`
takes it along, through the kernel (PR_SET_PDEATHSIG). And the virtualenv's every package is
pinned by the constraints file, whose hash is part of where the virtualenv is cached."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.support.phoenix import CONSTRAINTS, constraints_hash, ensure_venv, venv_dir

DEADLINE = 240.0  # phoenix serve starting under a full test run's load
STARTER = """
import sys, time
from pathlib import Path
from tests.support.phoenix import running_phoenix
with running_phoenix(Path(sys.argv[1])) as phoenix:
    print(phoenix.pid, flush=True)
    time.sleep(3600)
"""


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, dead but not yet reaped by its new parent, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_phoenix_dies_with_the_process_that_started_it(tmp_path: Path) -> None:
    ensure_venv()  # built (or waited for) outside the deadline below
    root = Path(__file__).resolve().parents[2]
    starter = subprocess.Popen(
        [sys.executable, "-c", STARTER, str(tmp_path)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        stdout=subprocess.PIPE,
        text=True,
    )
    phoenix_pid = None
    try:
        assert starter.stdout is not None
        line = starter.stdout.readline()  # the pid, once Phoenix answers
        assert line.strip().isdigit(), f"the starter said {line!r}"
        phoenix_pid = int(line)
        assert alive(phoenix_pid)
        starter.send_signal(signal.SIGKILL)
        starter.wait(timeout=30)
        deadline = time.monotonic() + DEADLINE
        while alive(phoenix_pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(phoenix_pid), "phoenix serve outlived the process that started it"
    finally:
        if starter.poll() is None:
            starter.kill()
            starter.wait(timeout=30)
        if phoenix_pid is not None and alive(phoenix_pid):
            os.killpg(phoenix_pid, signal.SIGKILL)


def test_the_virtualenv_is_pinned_and_keyed_by_its_pins() -> None:
    pins = [
        line
        for line in CONSTRAINTS.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert all("==" in line for line in pins) and any(
        line.startswith("arize-phoenix==") for line in pins
    )
    assert venv_dir().name.endswith(constraints_hash()) or os.environ.get("TRACETUI_PHOENIX_VENV")
    venv = ensure_venv()
    frozen = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "freeze"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout.split()
    assert sorted(frozen) == sorted(pins)
