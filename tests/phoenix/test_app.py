"""The app with Pilot against a real Phoenix, through the Phoenix reader: the projects, a
project's trace list, a trace's tree with tokens and cost, the conversation of its model call,
and no alerts key where Phoenix has no alerts (the screen, if reached, says so)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from tests.phoenix.conftest import QUESTION, SeededPhoenix
from tests.support.app import (
    detail_lines,
    loaded_traces,
    showing,
    tree_lines,
    tree_shown,
    wait_for,
)
from tests.support.chat_app import select
from tui.api.phoenix.client import PhoenixClient
from tui.ui.app import StartAt, TraceTuiApp
from tui.ui.screens.alerts import AlertsScreen
from tui.ui.screens.projects import ProjectsScreen
from tui.ui.screens.trace_detail import TraceDetailScreen


@asynccontextmanager
async def phoenix_app(
    phoenix: SeededPhoenix, start: StartAt | None = None, size: tuple[int, int] = (120, 40)
) -> AsyncIterator[tuple[TraceTuiApp, Any]]:
    async with PhoenixClient(phoenix.base_url) as client:
        app = TraceTuiApp(client, start)
        async with app.run_test(size=size) as pilot:
            yield app, pilot


async def project_gid(phoenix: SeededPhoenix) -> str:
    async with PhoenixClient(phoenix.base_url) as client:
        projects = await client.list_projects()
    return next(p.id for p in projects if p.name == phoenix.project and p.id)


def footer_text(screen: Any) -> str:
    return " ".join(f"{key.key_display} {key.description}" for key in screen.query("FooterKey"))


def screen_actions(app: TraceTuiApp) -> set[str]:
    return {binding.action for _, binding, _, _ in app.screen.active_bindings.values()}


async def test_projects_without_an_alerts_key(phoenix: SeededPhoenix) -> None:
    async with phoenix_app(phoenix) as (app, pilot):
        await wait_for(
            pilot,
            lambda: showing(app, ProjectsScreen) and len(app.screen.projects) >= 2,
            what="Phoenix's projects listed",
        )
        assert phoenix.project in {p.name for p in app.screen.projects}
        await wait_for(pilot, lambda: "Overview" in footer_text(app.screen), what="the footer")
        assert "Alerts" not in footer_text(app.screen)
        assert "alerts" not in screen_actions(app)
        await pilot.press("a")  # not offered: nothing opens, nothing fails
        await pilot.pause()
        assert showing(app, ProjectsScreen) and app.problem is None


async def test_the_alerts_screen_says_phoenix_has_none(phoenix: SeededPhoenix) -> None:
    async with phoenix_app(phoenix) as (app, pilot):
        await wait_for(pilot, lambda: showing(app, ProjectsScreen), what="the projects")
        app.open_alerts("default", "default")
        await wait_for(pilot, lambda: showing(app, AlertsScreen), what="the alerts screen")
        header = str(app.screen.query_one("#header").content)
        assert "This Phoenix server has no alerts." in header
        assert app.problem is None


async def test_the_trace_list(phoenix: SeededPhoenix) -> None:
    start = StartAt(project_id=await project_gid(phoenix))
    async with phoenix_app(phoenix, start) as (app, pilot):
        screen = await loaded_traces(app, pilot)
        names = {trace.name for trace in screen.traces}
        assert {"answer-question", "failing-step", "filler-0"} <= names
        assert "Alerts" not in footer_text(screen)
        shown = "\n".join(screen.query_one("TraceTable").render_line(y).text for y in range(12))
        assert "answer-question" in shown and "failing-step" in shown


async def test_a_trace_tree_with_tokens_and_cost_and_its_conversation(
    phoenix: SeededPhoenix,
) -> None:
    start = StartAt(project_id=await project_gid(phoenix), trace_id=phoenix.chat_trace_id)
    async with phoenix_app(phoenix, start) as (app, pilot):
        await wait_for(
            pilot, lambda: showing(app, TraceDetailScreen) and tree_shown(app), what="the tree"
        )
        await wait_for(pilot, lambda: len(tree_lines(app)) >= 2 and "llm" in tree_lines(app)[1])
        root, call = tree_lines(app)[:2]
        assert "answer-quest" in root and "chain" in root
        assert "ChatComple" in call and "gpt-4o-m" in call
        assert " 12 " in call and " 5 " in call  # its tokens, in and out
        assert "<$0.0001" in call  # its cost, as Phoenix computed it (GraphQL)
        await select(pilot, app, "ChatCompletion")
        await wait_for(pilot, lambda: any(QUESTION in line for line in detail_lines(app)))
        whole = "\n".join(detail_lines(app))
        assert "● user" in whole and "◆ assistant" in whole and "Hi there" in whole
        assert "OpenInference" in whole
