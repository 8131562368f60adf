"""What `tracetui serve` prints can be pasted as it is: the command it names runs from another
shell (a virtualenv that is not activated has no `tracetui` on PATH)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tui.server.run import runnable_command


def test_not_on_path_it_prints_the_scripts_own_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "venv" / "bin" / "tracetui"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path / "elsewhere"))
    monkeypatch.setattr(sys, "argv", [str(script), "serve"])
    assert runnable_command() == str(script)


def test_run_as_a_module_it_prints_python_dash_m(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(sys, "argv", ["/somewhere/tui/__main__.py", "serve"])
    assert runnable_command() == f"{sys.executable} -m tui"


def test_on_path_it_prints_tracetui(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "tracetui"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}/usr/bin")
    monkeypatch.setattr(sys, "argv", [str(script), "serve"])
    assert runnable_command() == "tracetui"
