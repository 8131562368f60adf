"""Hostile strings in every field, through the real app on a real pty: what reaches the terminal.

The app runs as its own process against the local service; every screen that shows server data
is visited with the keyboard, and every byte the terminal receives is checked."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.support.hostile import add_hostile_project, forbidden_in
from tests.support.service import RunningService, start_service
from tests.support.terminal import Terminal, app_environment, wait_until_shown


def test_no_hostile_byte_reaches_the_terminal_on_any_screen(tmp_path: Path) -> None:
    service = start_service(tmp_path / "hostile.sqlite3")  # its own: other tests list projects
    try:
        run_the_hostile_walk(service)
    finally:
        service.service.stop()


# Each visit: the keys, and a string the screen must show afterwards (checked on the screen a
# terminal emulator draws, not in the raw bytes, where styles split text into pieces).
VISITS = [
    ("\r", "␛[31;1;4;7mRED"),  # the newest trace: hostile names, kinds, models, attributes
    ("j", "[@click=app.quit]Q[/]"),  # the errored span: its error message in the detail panel
    ("j", "MMMMMMMM"),  # the 1 MB name and attribute value
    ("+", "MMMMMMMM"),  # expand everything
    ("\x1b", "newest first"),  # back to the list (its 1 MB trace name among the rows)
    ("a", "hooks.example.com"),  # the project's alerts: a hostile name and webhook
    ("\x1b", "newest first"),
    ("\x1b", "[@click=app.quit]Q[/] [@click=app.bell]"),  # projects: a hostile name
    ("\x10", "Switch project: [@click=app.quit]Q[/]"),  # ctrl+p: the palette lists projects
    ("MMM", "MMMMMMM…"),  # a search over a megabyte name, cut
    ("\x1b", "Projects"),
    ("\x0f", "method  status"),  # ctrl+o: the API log
    ("\x1b", "Projects"),
    ("?", "Keys"),  # help
    ("\x1b", "Projects"),
]


def run_the_hostile_walk(service: RunningService) -> None:
    ids = add_hostile_project(service)
    argv = [sys.executable, "-m", "tui", "--project", ids["project_id"]]
    with Terminal(argv, app_environment(service), cols=120, rows=40) as term:
        term.wait_for(b"Errors")  # the trace list's footer
        # Its rows, before the first key: the footer is drawn before the first page arrives,
        # and an Enter on a list still empty opens nothing (under load, the page came after).
        wait_until_shown(term, "row 1 of 2")
        term.drain(quiet=1.0)
        screens = []
        for keys, shown in VISITS:
            term.send(keys)
            wait_until_shown(term, shown)
            assert term.process.poll() is None, f"the app exited after {keys!r}: data ran an action"
            screens.append(term.screen())
        click_across_the_hostile_row(term)
        assert term.process.poll() is None, "the app exited after a click: data ran an action"
        output = bytes(term.output)
    assert forbidden_in(output) == []
    seen = "\n".join(screens)  # bidi and zero-width made visible; wide characters drawn
    assert "<U+202E>evil" in seen and "zero<U+200B>width" in seen and "漢字テスト" in seen
    assert service.keys.workspace.encode() not in output  # the key, in the environment only


def click_across_the_hostile_row(term: Terminal) -> None:
    """Mouse clicks (SGR encoding) all along the projects list's hostile row: a name drawn as
    markup would run its @click action."""
    rows = term.screen().splitlines()
    # Found by its name: at 120 columns the health columns leave no room for the ID's.
    y = next(i for i, line in enumerate(rows) if "[@click=app.quit]Q[/]" in line) + 1
    for x in range(2, 120, 3):
        term.send(f"\x1b[<0;{x};{y}M\x1b[<0;{x};{y}m")
        term.drain(quiet=0.05)
    term.drain(quiet=0.5)
