"""A trace that cannot load is no dead end: the screen says why (in words, not an exception's
name), esc goes back, and the footer shows only the keys that still do something."""

from __future__ import annotations

from typing import Any

import httpx
from pydantic import SecretStr

from tests.support.app import Transport, rendered_text, running_app, showing, tree_shown, wait_for
from tests.support.service import RunningService
from tui.api import ApiClient
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.projects import ProjectsScreen
from tui.ui.screens.trace_detail import TraceDetailScreen

# The keys that act on a loaded trace: none of them may be offered when there is none.
TRACE_KEYS = ("Pane", "View", "Zoom", "Find", "Fold", "Copy")


def footer_text(screen: Any) -> str:
    return " ".join(f"{key.key_display} {key.description}" for key in screen.query("FooterKey"))


def only_live_keys(screen: Any) -> bool:
    """The footer has been built, with none of the keys that need a loaded trace."""
    shown = footer_text(screen)
    return "Quit" in shown and not any(key in shown for key in TRACE_KEYS)


def message(screen: Any) -> str:
    return " ".join(rendered_text(screen.query_one("#message")).split())


async def test_an_id_prefix_says_why_and_esc_goes_back(service: RunningService) -> None:
    async with running_app(service, StartAt(trace_id="deadbeef")) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, TraceDetailScreen))
        screen = app.screen
        await wait_for(pilot, lambda: "not found" in message(screen), what=message(screen))
        assert "32 hex digits" in message(screen)
        assert "esc goes back" in message(screen)
        await wait_for(pilot, lambda: only_live_keys(screen), what=footer_text(screen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: showing(app, ProjectsScreen))


async def test_the_service_down_says_so_in_words_and_ctrl_r_retries(
    service: RunningService,
) -> None:
    down = True
    real = httpx.AsyncHTTPTransport()

    async def handler(request: httpx.Request) -> httpx.Response:
        if down:
            raise httpx.ConnectError("[Errno 111] Connection refused", request=request)
        return await real.handle_async_request(request)

    with service.client() as client:
        trace_id = client.get("traces", params={"project_id": "proj_rag"}).json()["data"][0]["id"]
    # No retries inside the client: its waits are not what is tested here.
    client = ApiClient(
        service.base_url,
        SecretStr(service.keys.workspace),
        transport=Transport(handler),
        max_retries=0,
    )
    async with client, TraceTuiApp(client, StartAt(trace_id=trace_id)).run_test() as pilot:
        app = pilot.app
        await wait_for(pilot, lambda: showing(app, TraceDetailScreen))
        screen = app.screen
        await wait_for(
            pilot, lambda: "could not be loaded" in message(screen), what=message(screen)
        )
        assert "ConnectError" not in message(screen)
        assert "is the service running" in message(screen)
        assert "ctrl+r retries" in message(screen)
        await wait_for(pilot, lambda: only_live_keys(screen), what=footer_text(screen))
        down = False
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: tree_shown(app))
        await wait_for(pilot, lambda: "Pane" in footer_text(screen))
        await real.aclose()
