"""Hostile strings in every field, through the real app on a real pty: what reaches the terminal.

The app runs as its own process against the local service; every screen that shows server data
is visited with the keyboard, and every byte the terminal receives is checked."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

from tests.adversarial.hostile import add_hostile_project, forbidden_in
from tests.conftest import RunningService, start_service
from tests.terminal import Terminal


def app_environment(service: RunningService) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": tempfile.mkdtemp(prefix="tracetui-hostile-home-"),
        "XDG_CONFIG_HOME": tempfile.mkdtemp(prefix="tracetui-hostile-config-"),
        "TRACETUI_BASE_URL": service.base_url,
        "TRACETUI_API_KEY": service.keys.workspace,
    }


@pytest.mark.xfail(
    reason="passes alone; fails after the other app tests in one run: under investigation",
    strict=False,
)
def test_no_hostile_byte_reaches_the_terminal_on_any_screen(tmp_path: Path) -> None:
    service = start_service(tmp_path / "hostile.sqlite3")  # its own: other tests list projects
    try:
        run_the_hostile_walk(service)
    finally:
        service.service.stop()


def run_the_hostile_walk(service: RunningService) -> None:
    ids = add_hostile_project(service)
    argv = [sys.executable, "-m", "tui", "--project", ids["project_id"]]
    with Terminal(argv, app_environment(service), cols=120, rows=40) as term:
        term.wait_for(b"Live")  # the trace list's footer
        term.drain(quiet=1.0)
        visits = [
            "\r",  # open the newest trace: hostile names, kinds, models, attributes
            "j",  # the errored span: its error message in the detail panel
            "j",  # the 1 MB name and attribute value
            "+",  # expand everything
            "\x1b",  # back to the list (its 1 MB trace name among the rows)
            "a",  # the project's alerts: a hostile name and webhook
            "\x1b",
            "\x1b",  # the projects list: a hostile project name and description
            "\x10",  # ctrl+p: the command palette lists project names
            "\x1b",
            "\x0f",  # ctrl+o: the API log
            "\x1b",
            "?",  # help
            "\x1b",
        ]
        for keys in visits:
            term.send(keys)
            term.drain(quiet=1.0 if keys == "a" else 0.5)
        output = bytes(term.output)
        assert term.process.poll() is None, "the app exited: an action in the data ran"
    assert forbidden_in(output) == []
    # The data is shown, made visible: ESC as ␛, the markup as literal text.
    text = output.decode("utf-8", "replace")
    assert "␛[31;1;4;7mRED" in text
    assert "[@click=app.quit]Q[/]" in text
    assert "<U+202E>evil" in text
    assert "hooks.example.com" in text  # the alerts screen was drawn
    assert "method  status" in text  # and the API log
