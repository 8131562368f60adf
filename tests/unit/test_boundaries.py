"""Architecture rules, checked on the source: tui.api imports no Textual; tui.api and tui.server
share no code; routes see the store only through its protocol; widgets never reach for the app; screens never import each other (they navigate
through the app), only their common base."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "tui"


def imports_of(path: Path) -> set[str]:
    """Every module `path` imports, at run time or for type checking alone."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            # `from tui.screens import traces` imports the module tui.screens.traces
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def imported_modules(folder: Path) -> set[str]:
    names: set[str] = set()
    for path in folder.rglob("*.py"):
        names |= imports_of(path)
    return names


def test_api_imports_no_textual_at_run_time() -> None:
    code = (
        "import sys, tui.api, tui.api.client, tui.config\n"
        "heavy = ('textual', 'fastapi', 'uvicorn', 'starlette')\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in heavy)\n"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_api_and_server_never_import_each_other() -> None:
    api = imported_modules(PACKAGE / "api")
    server = imported_modules(PACKAGE / "server")
    assert not {m for m in api if m.startswith(("tui.server", "textual"))}
    assert not {m for m in server if m.startswith("tui.api")}


def test_widgets_never_import_the_app_or_screens() -> None:
    for path in (PACKAGE / "widgets").rglob("*.py"):
        bad = {m for m in imports_of(path) if m.startswith(("tui.app", "tui.screens"))}
        assert not bad, f"{path.name} imports {sorted(bad)}: widgets render what they are given"


def test_screens_never_import_each_other() -> None:
    screens = {p.stem for p in (PACKAGE / "screens").glob("*.py")} - {"__init__"}
    for path in (PACKAGE / "screens").glob("*.py"):
        others = {
            m
            for m in imports_of(path)
            if m.startswith("tui.screens.") and m.split(".")[2] in screens - {"base", path.stem}
        }
        assert not others, f"{path.name} imports {sorted(others)}: navigate through the app"


def test_the_rules_above_would_notice_a_breach(tmp_path: Path) -> None:
    breach = tmp_path / "breach.py"
    breach.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from tui.app import TraceTuiApp\n"
        "def f():\n    from tui.screens import traces\n"
    )
    assert {"tui.app", "tui.screens.traces"} <= imports_of(breach)


def test_routes_see_the_store_only_through_its_protocol() -> None:
    """Routes, their dependencies, the app, the background tasks and OTLP ingest know
    TraceStore, not the SQLite class or sqlite3: a second backend must not need them changed."""
    server = PACKAGE / "server"
    users = [*server.joinpath("routes").glob("*.py"), *server.joinpath("ingest").glob("*.py")]
    users += server.joinpath("alerts").glob("*.py")  # evaluation and webhook delivery
    assert len(users) >= 20, "the globs above found too little: were the folders moved?"
    users += [server / name for name in ("app.py", "deps.py", "background.py", "backend.py")]
    for path in users:
        forbidden = {"sqlite3", "tui.server.store", "tui.server.migrations"}
        assert not imports_of(path) & forbidden, path.name
