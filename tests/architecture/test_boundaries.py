"""Architecture rules, checked on the source: each package imports only the layers its docstring
allows (core < api < model < ui; the server alone; the demo on top); tui.api imports no Textual;
tui.api and tui.server share no code; routes see the store only through its protocol; nothing
under tui.ui imports the app module at run time; widgets never reach for the app; screens never
import each other (they navigate through the app), only their common base; and no module
imports itself through others (no import cycle, an import inside a function included)."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Callable
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
            # `from tui.ui.screens import traces` imports the module tui.ui.screens.traces
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


def test_the_store_imports_no_web_framework_at_run_time() -> None:
    """The store is storage: FastAPI, Starlette and uvicorn belong to the HTTP edge, and an
    ingest worker process, which opens a store, needs none of them."""
    code = (
        "import sys, tui.server.store.sqlite.store, tui.server.store.postgres.store\n"
        "heavy = ('fastapi', 'starlette', 'uvicorn')\n"
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
    for path in (PACKAGE / "ui" / "widgets").rglob("*.py"):
        bad = {m for m in imports_of(path) if m.startswith(("tui.ui.app", "tui.ui.screens"))}
        assert not bad, f"{path.name} imports {sorted(bad)}: widgets render what they are given"


# What screens share, and may import: their base, the modal dialogs and forms they open over
# themselves, and the mixins of their actions. Anything else is a screen one navigates to.
SHARED_SCREEN_PARTS = {
    "base",
    "dialogs",
    "prompts",
    "forms",
    "edit_forms",
    "alert_actions",
    "annotate_form",
    "annotation_actions",
    "trace_annotating",
    "detail_annotating",
    "session_annotating",
    "trace_query",
    "trace_loading",
}


def screens_imported(path: Path) -> set[str]:
    """The screens (not shared parts) that the module at `path` imports."""
    screens = {p.stem for p in (PACKAGE / "ui" / "screens").glob("*.py")} - {"__init__"}
    allowed = SHARED_SCREEN_PARTS | {path.stem}
    return {
        m
        for m in imports_of(path)
        if m.startswith("tui.ui.screens.") and m.split(".")[3] in screens - allowed
    }


def test_screens_never_import_each_other() -> None:
    for path in (PACKAGE / "ui" / "screens").glob("*.py"):
        others = screens_imported(path)
        assert not others, f"{path.name} imports {sorted(others)}: navigate through the app"


def test_the_rules_above_would_notice_a_breach(tmp_path: Path) -> None:
    breach = tmp_path / "breach.py"
    breach.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from tui.ui.app import TraceTuiApp\n"
        "def f():\n    from tui.ui.screens import traces\n"
    )
    assert {"tui.ui.app", "tui.ui.screens.traces"} <= imports_of(breach)
    assert screens_imported(breach) == {"tui.ui.screens.traces"}


# The two stores behind the protocol: only the store itself, and whatever opens one by its URL,
# may name them.
BACKENDS = ("tui.server.store.sqlite", "tui.server.store.postgres")


def test_routes_see_the_store_only_through_its_protocol() -> None:
    """Routes, their dependencies, the app, the background tasks and OTLP ingest know
    TraceStore, not the SQLite class or sqlite3: a second backend must not need them changed."""
    server = PACKAGE / "server"
    users = [*server.joinpath("routes").glob("*.py"), *server.joinpath("ingest").glob("*.py")]
    users += server.joinpath("alerts").glob("*.py")  # evaluation and webhook delivery
    users += server.joinpath("http").glob("*.py")  # the HTTP edge: deps, errors, limits
    assert len(users) >= 30, "the globs above found too little: were the folders moved?"
    users += [server / name for name in ("app.py", "background.py")]
    users += [server / "store" / "protocol.py"]
    for path in users:
        backends = {m for m in imports_of(path) if m.startswith(BACKENDS)}
        assert not backends and "sqlite3" not in imports_of(path), path.name


def runtime_imports_of(path: Path) -> set[str]:
    """What `path` imports when it runs: imports under `if TYPE_CHECKING:` left out."""
    tree = ast.parse(path.read_text())
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(inner) for child in node.body for inner in ast.walk(child))
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_nothing_under_ui_imports_the_app_module_at_run_time() -> None:
    """The app imports its screens, widgets and keymap; were one of them to import the app at
    run time, importing it alone would start a cycle (types alone may name the app)."""
    # keymap_doc writes docs/keymap.md from the command line: nothing in the app imports it.
    outside_the_app = {PACKAGE / "ui" / "app.py", PACKAGE / "ui" / "keymap_doc.py"}
    for path in (PACKAGE / "ui").rglob("*.py"):
        if path in outside_the_app:
            continue
        assert "tui.ui.app" not in runtime_imports_of(path), f"{path} imports tui.ui.app"


# What each package may import of tracetui (its own modules always); see each package's docstring.
ALLOWED = {
    "core": set(),
    "api": {"core"},
    "model": {"core", "api"},
    "ui": {"core", "api", "model", "config"},
    "server": set(),
    "demo": {"core", "api", "model", "ui", "server", "config"},
}


def test_nothing_in_the_app_imports_the_keymap_document() -> None:
    for path in PACKAGE.rglob("*.py"):
        assert "tui.ui.keymap_doc" not in imports_of(path), path


def test_each_package_imports_only_the_layers_below_it() -> None:
    assert {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()} >= set(ALLOWED)
    for package, allowed in ALLOWED.items():
        for path in (PACKAGE / package).rglob("*.py"):
            for name in imports_of(path):
                parts = name.split(".")
                if parts[0] != "tui" or len(parts) < 2 or parts[1] == package:
                    continue
                assert parts[1] in allowed, f"{path} imports {name}: {package} may not"


def test_the_pure_model_imports_no_textual() -> None:
    for path in (PACKAGE / "model").rglob("*.py"):
        bad = {m for m in imports_of(path) if m.split(".")[0] == "textual"}
        assert not bad, f"{path} imports {sorted(bad)}: the model is pure"


def test_the_layer_rules_would_notice_a_breach(tmp_path: Path) -> None:
    breach = tmp_path / "breach.py"
    breach.write_text("from tui.ui import app\nimport tui.server.store\n")
    found = imports_of(breach)
    assert "tui.ui.app" in found and "tui.server.store" in found


def test_the_postgres_store_imports_only_the_server_and_psycopg() -> None:
    """tui/server/store/postgres uses the server's own modules, the standard library and psycopg
    (an optional dependency): so nothing outside tui/server may import it, or `tracetui`
    without the postgres extra would fail to start."""
    folder = PACKAGE / "server" / "store" / "postgres"
    assert (folder / "store.py").exists(), "was the PostgreSQL store moved?"
    for path in folder.rglob("*.py"):
        for name in imports_of(path):
            top = name.split(".")[0]
            if top == "tui":
                assert name.startswith("tui.server."), f"{path.name} imports {name}"
            else:
                assert top in sys.stdlib_module_names or top in {"psycopg", "psycopg_pool"}, (
                    f"{path.name} imports {name}"
                )
    for path in PACKAGE.rglob("*.py"):
        if PACKAGE / "server" in path.parents:
            continue
        assert not any(m.startswith("tui.server.store.postgres") for m in imports_of(path)), path


def test_the_phoenix_reader_imports_no_textual_at_run_time() -> None:
    code = (
        "import sys, tui.api.source, tui.api.phoenix.client, tui.api.phoenix.probe\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'fastapi'))\n"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_screen_or_widget_knows_which_server_it_reads() -> None:
    """Screens ask the client what it offers (`has_alerts`); none names a kind of server."""
    for path in (PACKAGE / "ui").rglob("*.py"):
        kinds = {m for m in imports_of(path) if m.startswith("tui.api.phoenix")}
        assert not kinds, f"{path.name} imports {sorted(kinds)}: ask the client what it offers"
        assert "phoenix" not in path.read_text().lower(), f"{path.name} names a kind of server"


# -- import cycles -----------------------------------------------------------------------------


def module_of(path: Path, root: Path) -> str:
    """The dotted name of the module at `path`, below the folder `root` that holds tui/."""
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_in(path: Path) -> list[tuple[str, str | None, bool]]:
    """What `path` imports, wherever the import stands (an import moved into a function to
    break a cycle is still one): (module, name imported from it or None, for types alone)."""
    tree = ast.parse(path.read_text())
    type_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            type_only.update(id(inner) for child in node.body for inner in ast.walk(child))
    found: list[tuple[str, str | None, bool]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, None, id(node) in type_only) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(node.module, alias.name, id(node) in type_only) for alias in node.names]
    return found


# (importer, imported, for types alone) -> left out of the graph
Leave = Callable[[str, str, bool], bool]


def import_graph(
    folder: Path, leave: Leave = lambda *_: False, root: Path = PACKAGE.parent
) -> dict[str, set[str]]:
    """Each module under `folder` and those under it that it imports. `from m import x`
    imports the module m.x if there is one, else m."""
    paths = {module_of(path, root): path for path in folder.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        edges = set()
        for imported, name, type_only in imports_in(path):
            target = f"{imported}.{name}" if f"{imported}.{name}" in paths else imported
            if target in paths and not leave(module, target, type_only):
                edges.add(target)
        graph[module] = edges
    return graph


def cycles_in(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (or a module that
    imports itself): each holds at least one cycle. Tarjan's algorithm."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in sorted(graph[module]):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while True:
                other = stack.pop()
                component.append(other)
                if other == module:
                    break
            if len(component) > 1 or module in graph[module]:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def screens_name_the_app(importer: str, imported: str, type_only: bool) -> bool:
    """The one cycle the app may have: the app imports its screens and widgets, and they name
    the app in types alone (test_nothing_under_ui_imports_the_app_module_at_run_time)."""
    return type_only and imported == "tui.ui.app" and importer.startswith("tui.ui.")


# Cycles known today outside the service, each to be broken by the change that owns its code.
# When one is broken, this test fails until its line here goes too.
KNOWN_CYCLES: list[list[str]] = []  # none: a cycle found here is one to break, not to list


def test_no_import_cycle_among_the_services_modules() -> None:
    """Every import counts: at run time, inside a function, or for types alone."""
    graph = import_graph(PACKAGE / "server")
    assert len(graph) > 60 and sum(map(len, graph.values())) > 200, "was the service moved?"
    assert cycles_in(graph) == []


def test_no_import_cycle_in_tui_but_the_screens_naming_the_app() -> None:
    assert cycles_in(import_graph(PACKAGE, screens_name_the_app)) == KNOWN_CYCLES


def test_the_cycle_rules_would_notice_a_cycle(tmp_path: Path) -> None:
    package = tmp_path / "tui"
    (package / "server").mkdir(parents=True)
    for name, body in {
        "__init__": "",
        "server/__init__": "",
        "server/a": "from tui.server import b\n",
        "server/b": "def f():\n    from tui.server.c import g\n",
        "server/c": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import tui.server.a\n",
        "server/d": "import tui.server.a\n",
    }.items():
        (package / f"{name}.py").write_text(body)
    assert cycles_in(import_graph(package / "server", root=tmp_path)) == [
        ["tui.server.a", "tui.server.b", "tui.server.c"]
    ]
    graph = import_graph(package, lambda importer, imported, type_only: type_only, tmp_path)
    assert cycles_in(graph) == []
