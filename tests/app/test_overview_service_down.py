"""The overview with the service gone: a refresh that brings nothing keeps what was shown and
says it is stale; the charts carry a legend; its figures are written as everywhere else."""

from __future__ import annotations

from typing import Any

import httpx
from pydantic import SecretStr

from tests.support.app import Transport, rendered_text, showing, wait_for
from tests.support.service import RunningService
from tui.api import ApiClient
from tui.ui.app import TraceTuiApp
from tui.ui.screens.overview import OverviewScreen


def shown(screen: Any, selector: str) -> str:
    return " ".join(rendered_text(screen.query_one(selector)).split())


async def test_a_refresh_with_the_service_down_keeps_the_figures(service: RunningService) -> None:
    down = False
    real = httpx.AsyncHTTPTransport()

    async def handler(request: httpx.Request) -> httpx.Response:
        if down:
            raise httpx.ConnectError("[Errno 111] Connection refused", request=request)
        return await real.handle_async_request(request)

    client = ApiClient(
        service.base_url,
        SecretStr(service.keys.workspace),
        transport=Transport(handler),
        max_retries=0,
    )
    async with client, TraceTuiApp(client).run_test(size=(80, 24)) as pilot:
        app = pilot.app
        app.open_overview("proj_support", "support-chatbot")
        await wait_for(pilot, lambda: showing(app, OverviewScreen))
        screen = app.screen
        await wait_for(pilot, lambda: not screen.paging and screen.pages > 0)
        before = shown(screen, "#totals")
        counted = shown(screen, "#header").split(" · ")[3]  # "N traces"
        assert counted.endswith("traces") and not counted.startswith("0 ")
        assert "errors" in before and "tokens" in before
        assert "a bar per 1h" in shown(screen, "#models")  # the legend
        down = True
        await pilot.press("r")
        await wait_for(pilot, lambda: "stale" in shown(screen, "#header"), what="stale header")
        assert shown(screen, "#totals") == before
        assert shown(screen, "#header").split(" · ")[3] == counted
        down = False
        await pilot.press("r")
        await wait_for(pilot, lambda: not screen.paging and "stale" not in shown(screen, "#header"))
        assert shown(screen, "#totals") == before
    await real.aclose()
