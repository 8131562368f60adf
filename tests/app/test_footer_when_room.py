"""The footer offers the keys a newcomer looks for first (Enter, r, L, y, e, N) when there is
room after the screen's own keys, and never pushes the screen's own keys off the line."""

from __future__ import annotations

from typing import Any

from tests.support.app import loaded_traces, open_first_trace, running_app, wait_for
from tests.support.service import RunningService
from tui.ui.app import StartAt


def footer_text(screen: Any) -> str:
    return " ".join(f"{key.key_display} {key.description}" for key in screen.query("FooterKey"))


async def test_a_wide_trace_list_offers_enter_refresh_and_live(service: RunningService) -> None:
    async with running_app(service, StartAt("proj_support"), size=(160, 48)) as (app, pilot):
        screen = await loaded_traces(app, pilot)
        await wait_for(pilot, lambda: "Open" in footer_text(screen), what="Open in the footer")
        shown = footer_text(screen)
        assert "r Refresh" in shown and "L Live" in shown and "q Quit" in shown, shown


async def test_the_trace_detail_offers_export_and_reload(service: RunningService) -> None:
    # At 160 columns every key of the tree's footer fits (at 120: up to N, r in ?).
    async with running_app(service, StartAt("proj_support"), size=(160, 40)) as (app, pilot):
        await loaded_traces(app, pilot)
        screen = await open_first_trace(app, pilot)
        await wait_for(pilot, lambda: "Export" in footer_text(screen), what="Export in the footer")
        assert "r Reload" in footer_text(screen) and "q Quit" in footer_text(screen)
