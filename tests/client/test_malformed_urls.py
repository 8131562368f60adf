"""Malformed URLs from servers and users (`http://[oops` makes urllib raise "Invalid IPv6 URL"):
in a redirect's Location, a next-page link, an alert's webhook, the base URL and the alert
form. Each is a clear message or is shown as text; none is an exception."""

from __future__ import annotations

import uuid

import httpx
import pytest

from tests.support.app import rendered_text, running_app, showing, wait_for
from tests.support.helpers import json_response, mock_client
from tests.support.service import RunningService
from tui.api import ApiClient, ApiError, BadResponse, InvalidBaseUrl
from tui.ui.app import StartAt
from tui.ui.screens.alerts import AlertsScreen
from tui.ui.screens.forms import AlertForm
from tui.ui.screens.traces import TracesScreen

MALFORMED = ["http://[oops/x", "https://a]b/", "https://h:99999999/", "https://h:port/"]
# A scheme with a path that is not absolute: httpx raises InvalidURL reading it, although the
# client never follows redirects (found by tests/client/test_fuzz.py).
NOT_URLS = ["http:0", "https:0", "x:0"]
ONE = {"id": "t1", "name": "one"}


@pytest.mark.parametrize("location", MALFORMED + NOT_URLS)
async def test_a_redirect_to_a_malformed_url_is_a_typed_error(location: str) -> None:
    answer = httpx.Response(302, headers={"Location": location})
    async with mock_client(lambda r: answer) as client:
        with pytest.raises(ApiError) as caught:
            await client.list_projects()
    # httpx itself rejects a port it cannot read (RemoteProtocolError, "failed mid-request").
    assert isinstance(caught.value, BadResponse) or location == "https://h:port/"


@pytest.mark.parametrize("link", MALFORMED)
async def test_a_malformed_next_page_link_ends_the_listing(link: str) -> None:
    body = {"data": [ONE], "links": {"next": link}}
    async with mock_client(lambda r: json_response(body)) as client:
        ids = [t.id async for t in client.iter_traces("p")]
    assert ids == ["t1"]


@pytest.mark.parametrize("url", [u + "v1" for u in MALFORMED])
def test_a_malformed_base_url_is_a_config_error(url: str) -> None:
    with pytest.raises(InvalidBaseUrl, match="base URL"):
        ApiClient(url)


async def test_an_alert_with_a_malformed_webhook_is_listed(service: RunningService) -> None:
    project = f"proj_urls_{uuid.uuid4().hex[:6]}"
    with service.store.transaction() as db:
        service.store.insert_project(db, "urls", None, 30, project_id=project)
        for url in MALFORMED:
            service.store.insert_alert(
                db,
                project_id=project,
                name=url,
                metric="latency_ms_5m",
                condition="gt",
                threshold=1.0,
                webhook_url=url,
            )
    async with running_app(service, StartAt(project_id=project)) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, TracesScreen))
        await pilot.press("a")
        await wait_for(pilot, lambda: showing(app, AlertsScreen) and bool(app.screen.alerts))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, AlertsScreen) and len(screen.alerts) == len(MALFORMED)
        assert not app._notifications  # no "tracetui bug"
        assert "http://[oops/x" in app.export_screenshot()  # shown as it is, not as a host


async def test_the_alert_form_says_a_malformed_webhook_is_not_a_url(
    service: RunningService,
) -> None:
    async with running_app(service, StartAt(project_id="proj_rag")) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, TracesScreen))
        await pilot.press("a")
        await wait_for(pilot, lambda: showing(app, AlertsScreen))
        await pilot.press("n")
        await wait_for(pilot, lambda: showing(app, AlertForm))
        form = app.screen
        assert isinstance(form, AlertForm)
        await pilot.press(*"x", *["tab"] * 5, *"1", "tab", *"http://[oops")  # latency_ms_5m, gt
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.is_running and app.screen is form
        assert "This URL cannot be read" in rendered_text(form.query_one("#error-webhook_url"))
        assert form.values()["webhook_url"] == "http://[oops"
