"""The real Python LLM stacks for tests: a separate virtualenv holding the anthropic SDK,
openai-agents, LangGraph, pydantic-ai and logfire with their instrumentations (about 280 MB,
never in the app's environment), every package pinned in tests/emitters/python/requirements.txt.

The virtualenv lives in ~/.cache/tracetui/emitters-<first 12 hex of that file's sha256>
($TRACETUI_EMITTERS_VENV to put it elsewhere), so a changed pin builds a new one. It is built
under a file lock (parallel xdist workers build it once; tests/conftest.py starts the build at
session start) and marked built only when pip is done: a build cut short never counts as built.
When it cannot be built, the tests that need it fail with pip's own words: never skipped.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

REQUIREMENTS = Path(__file__).resolve().parents[1] / "emitters" / "python" / "requirements.txt"
SCRIPTS = REQUIREMENTS.parent
BUILD_SECONDS = 900.0  # a cold build downloads ~90 wheels
BUILT_MARKER = ".tracetui-built"


class EmittersUnavailable(RuntimeError):
    """The emitters' virtualenv could not be built."""


def requirements_hash() -> str:
    return hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()[:12]


def venv_dir() -> Path:
    configured = os.environ.get("TRACETUI_EMITTERS_VENV")
    if configured:
        return Path(configured)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "tracetui" / f"emitters-{requirements_hash()}"


def python_of(venv: Path) -> Path:
    return venv / "bin" / "python"


def is_built(venv: Path) -> bool:
    return (venv / BUILT_MARKER).exists() and python_of(venv).exists()


def ensure_venv() -> Path:
    """The cached virtualenv with the pinned stacks, built first if it is not there."""
    venv = venv_dir()
    if is_built(venv):
        return venv
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f".{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be building it: wait for it
        if not is_built(venv):
            _build(venv)
    return venv


def _build(venv: Path) -> None:
    """A venv at `venv` (its scripts name their own path, so it is built where it stays) with
    the pinned requirements, without their dependencies' own choices (every one is pinned);
    marked built only once pip is done."""
    shutil.rmtree(venv, ignore_errors=True)  # what a build cut short left
    base_python = getattr(sys, "_base_executable", sys.executable)
    pip = [str(python_of(venv)), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    steps = (
        [base_python, "-m", "venv", str(venv)],
        [*pip, "--no-deps", "-r", str(REQUIREMENTS)],
    )
    for step in steps:
        try:
            done = subprocess.run(
                step, capture_output=True, text=True, timeout=BUILD_SECONDS, check=False
            )
        except subprocess.TimeoutExpired:
            raise EmittersUnavailable(
                f"building the emitters' virtualenv timed out: {step}"
            ) from None
        if done.returncode != 0:
            tail = (done.stderr or done.stdout)[-2000:]
            raise EmittersUnavailable(
                f"could not build the emitters' virtualenv at {venv} ({' '.join(step[-3:])}): {tail}"
            )
    (venv / BUILT_MARKER).write_text(requirements_hash() + "\n")
