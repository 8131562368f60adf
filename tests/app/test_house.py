"""The app's shared seams: every screen on the one base, the status line fed on every screen, the
keymap checked at start, server strings capped in toasts and titles, list items that are not
records counted on screen, and a form's idempotency key tied to the values it sends."""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil

import httpx
import pytest
from pydantic import SecretStr
from textual.screen import Screen

import tui.ui.screens
from tests.app.test_faults import app_with_faults
from tests.app.test_flows import loaded_traces, rendered_text, running_app, wait_for
from tests.support.service import RunningService
from tui.api import ApiClient
from tui.model.text import NOTICE_MAX_CHARS
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.base import AppModal, AppScreen
from tui.ui.screens.forms import AlertForm
from tui.ui.widgets.status_bar import StatusBar


def test_every_screen_stands_on_the_one_base() -> None:
    screens = []
    for info in pkgutil.iter_modules(tui.ui.screens.__path__):
        module = importlib.import_module(f"tui.ui.screens.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and issubclass(cls, Screen):
                screens.append(cls)
    assert len(screens) >= 10
    off_base = [c.__name__ for c in screens if not issubclass(c, (AppScreen, AppModal))]
    assert not off_base


async def test_an_unknown_binding_id_in_the_keymap_is_reported_at_start(
    service: RunningService,
) -> None:
    keymap = {"traces.filter": "f", "traces.fliter": "x", "app.nope": "z"}
    async with ApiClient(service.base_url, SecretStr(service.keys.workspace)) as client:
        app = TraceTuiApp(client, keymap=keymap)
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: bool(app._notifications))
            notes = [n.message for n in app._notifications]
    assert len(notes) == 1
    assert "traces.fliter, app.nope" in notes[0] and "traces.filter," not in notes[0]


async def test_a_known_keymap_says_nothing(service: RunningService) -> None:
    async with ApiClient(service.base_url, SecretStr(service.keys.workspace)) as client:
        app = TraceTuiApp(client, keymap={"traces.filter": "f", "app.quit": "ctrl+q"})
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause(0.3)
            assert not app._notifications


async def test_the_status_line_is_fed_again_when_a_screen_comes_back(
    service: RunningService,
) -> None:
    async with running_app(service, StartAt(project_id="proj_rag")) as (app, pilot):
        traces = await loaded_traces(app, pilot)
        await pilot.press("a")  # the alerts screen, on top
        await wait_for(pilot, lambda: app.screen is not traces)
        app.problem = "⚠ a problem that arose elsewhere"
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is traces)
        await pilot.pause(0.1)
        assert "a problem that arose elsewhere" in rendered_text(traces.query_one(StatusBar))


MEGABYTE_NAME = "[b]big[/b] " + "n" * 1_000_000


def projects_with_a_megabyte_name(request: httpx.Request) -> httpx.Response:
    if request.url.path.endswith("/projects"):
        return httpx.Response(200, json={"data": [{"id": "p1", "name": MEGABYTE_NAME}]})
    if request.url.path.endswith("/alerts") and request.method == "POST":
        body = json.loads(request.content)
        return httpx.Response(201, json={**body, "id": "a1", "name": MEGABYTE_NAME})
    if request.url.path.endswith("/alerts"):
        return httpx.Response(200, json={"data": []})
    return httpx.Response(200, json={"data": [], "next_cursor": None})


async def test_server_strings_in_toasts_and_titles_are_capped() -> None:
    transport = httpx.MockTransport(projects_with_a_megabyte_name)
    async with ApiClient("http://x.example/v1", SecretStr("k" * 20), transport=transport) as client:
        app = TraceTuiApp(client)
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: bool(app.projects))
            await pilot.press("a", "n")
            await wait_for(pilot, lambda: isinstance(app.screen, AlertForm))
            form = app.screen
            title = rendered_text(form.query_one(".title"))
            assert "New alert for [b]big[/b] nnn" in title and len(title.strip()) <= 80
            for field, value in {
                "name": "n",
                "metric": "latency_ms_5m",
                "threshold": "1",
                "webhook_url": "https://h.example/x",
            }.items():
                form.query_one(f"#field-{field}").value = value  # type: ignore[attr-defined]
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: bool(app._notifications))
            note = next(iter(app._notifications))
    assert note.message.startswith("Alert [b]big[/b] nnn") and not note.markup
    assert len(note.message) <= NOTICE_MAX_CHARS


async def test_list_items_that_are_not_records_are_counted_on_screen() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/traces"):
            items = [{"id": "t1", "name": "fine"}, "junk", 7, {"id": "t2"}]
            return httpx.Response(200, json={"data": items, "next_cursor": None})
        return httpx.Response(200, json={"data": [{"id": "p1", "name": "p"}]})

    transport = httpx.MockTransport(handler)
    async with ApiClient("http://x.example/v1", SecretStr("k" * 20), transport=transport) as client:
        app = TraceTuiApp(client, StartAt(project_id="p1"))
        async with app.run_test(size=(100, 24)) as pilot:
            screen = await loaded_traces(app, pilot)
            header = rendered_text(screen.query_one("#header"))
    assert len(screen.traces) == 2 and "2 unreadable skipped" in header


@pytest.mark.parametrize("change_values", [False, True])
async def test_a_form_sends_one_idempotency_key_per_set_of_values(
    service: RunningService, change_values: bool
) -> None:
    keys: list[str] = []

    async def refuse_posts(request: httpx.Request) -> httpx.Response:
        keys.append(request.headers["idempotency-key"])
        return httpx.Response(422, json={"error": {"message": "no", "details": []}})

    async with app_with_faults(service, StartAt(project_id="proj_rag")) as (app, pilot, net):
        await loaded_traces(app, pilot)
        await pilot.press("a", "n")
        await wait_for(pilot, lambda: isinstance(app.screen, AlertForm))
        form = app.screen
        typed = {
            "name": "Keyed",
            "metric": "latency_ms_5m",
            "threshold": "1",
            "webhook_url": "https://h.example/x",
        }
        for field, value in typed.items():
            form.query_one(f"#field-{field}").value = value  # type: ignore[attr-defined]
        net.fault = refuse_posts
        for attempt in range(2):
            if change_values and attempt:
                form.query_one("#field-threshold").value = "2"  # type: ignore[attr-defined]
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda n=attempt + 1: len(keys) == n)
            await wait_for(pilot, lambda: not form.submitting)
    assert (keys[0] != keys[1]) is change_values
