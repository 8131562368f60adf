"""The client's layout, checked on the source and on the classes: the transport apart from the
resource calls; the UI holding TraceSource, which the spec's client and Phoenix's each
implement (Phoenix's is no spec client); one paging loop; and a source that lacks a feature
says so without sending anything."""

from __future__ import annotations

import ast
from pathlib import Path

import httpx
import pytest

from tui.api import ApiError, NotOffered
from tui.api.client import ApiClient
from tui.api.phoenix.client import PhoenixClient
from tui.api.source import TraceSource
from tui.core.alert_rules import AlertDraft

API = Path(__file__).resolve().parents[2] / "tui" / "api"
UI = API.parent / "ui"


def runtime_imports(path: Path) -> set[str]:
    """What `path` imports when it runs (imports under `if TYPE_CHECKING:` left out)."""
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
    return names


def test_both_clients_are_sources_and_phoenix_is_no_spec_client() -> None:
    assert issubclass(ApiClient, TraceSource) and issubclass(PhoenixClient, TraceSource)
    assert not issubclass(PhoenixClient, ApiClient)


def test_the_resource_calls_never_touch_httpx_and_the_transport_knows_no_resource() -> None:
    resources = [
        API / "client.py",
        API / "manage.py",
        API / "source.py",
        API / "phoenix" / "client.py",
    ]
    for path in resources:
        assert "httpx" not in runtime_imports(path), f"{path.name} talks HTTP itself"
    transport = runtime_imports(API / "transport.py")
    for module in ("models", "readers", "pages", "source", "client", "manage"):
        assert f"tui.api.{module}" not in transport, f"the transport imports {module}"


def test_the_ui_holds_the_source_protocol_not_the_spec_client() -> None:
    for path in UI.rglob("*.py"):
        assert "ApiClient" not in path.read_text(), f"{path.name} names the spec's client"


def test_every_list_is_paged_by_the_one_loop() -> None:
    """Every paging loop needs the hard stop MAX_PAGES: only pages.every_page has it."""
    for path in API.rglob("*.py"):
        if path.name != "pages.py":
            assert "MAX_PAGES" not in path.read_text(), f"{path.name} pages on its own"


async def test_what_phoenix_lacks_is_said_and_nothing_is_sent() -> None:
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(500)

    draft = AlertDraft("Slow", "latency_ms_5m", "gt", 1.0, "https://hooks.example.com/x")
    async with PhoenixClient("http://127.0.0.1:6006", transport=httpx.MockTransport(handler)) as px:
        with pytest.raises(ApiError, match="This Phoenix server has no alerts"):
            await px.create_alert("p", draft)
        with pytest.raises(NotOffered, match="does not offer managing workspace keys"):
            await px.list_keys(None)
        with pytest.raises(NotOffered, match="does not offer changing alerts"):
            await px.mute_alert("p", "a", None)
        with pytest.raises(NotOffered, match="does not offer new webhook secrets"):
            await px.rotate_secret("p", "a")
    assert sent == []
