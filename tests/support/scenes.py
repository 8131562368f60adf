"""The screens as people see them, on fixed demo data: shared by snapshot tests and screenshots.

Everything that would differ between runs is pinned: the demo data's anchor time and the app's
clock, the time zone (UTC), and the server label shown in place of the random loopback port.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
from pydantic import SecretStr
from textual.widgets import Input

from tests.support.service import local_service
from tui.api import ApiClient
from tui.demo.data import BIG_TRACE_ID, DEEP_TRACE_ID, DemoKeys, populate
from tui.demo.feed import INCIDENT_FAILURES, export, support_ticket
from tui.demo.regression import regression_traces
from tui.server.run import LocalService
from tui.server.store.sqlite.store import Store
from tui.ui.app import StartAt, TraceTuiApp

FIXED_NOW_MS = 1_795_262_400_000  # 2026-11-21T12:00:00Z
FIXED_NOW = datetime.fromtimestamp(FIXED_NOW_MS / 1000, timezone.utc)
# The demo summarizer's newest run, which failed after a prompt and model change.
REGRESSION_B = regression_traces(7, FIXED_NOW_MS)[0][-1].id
SIZES = {"80x24": (80, 24), "160x48": (160, 48)}


def pin_time_zone() -> None:
    os.environ["TZ"] = "UTC"
    time.tzset()


@dataclass(frozen=True)
class Scene:
    name: str
    start: StartAt
    keys: tuple[str, ...] = ()
    description: str = ""


SCENES = (
    Scene("projects", StartAt(), description="The projects of the workspace"),
    Scene("traces", StartAt(project_id="proj_support"), description="A project's traces"),
    Scene(
        "traces-query",
        StartAt(project_id="proj_support"),
        ("slash", *"error", "enter", "slash", "end", *" latency>13s model:gpt-4o"),
        "A query found by the server, and a narrower one previewed on its rows as it is typed",
    ),
    Scene(
        "trace-detail",
        StartAt(project_id="proj_agent"),
        ("enter",),
        "A trace: summary, span tree with tokens, cost and waterfall, span detail",
    ),
    Scene(
        "big-trace",
        StartAt(trace_id=BIG_TRACE_ID),
        ("down",),
        "12,000 spans, collapsed steps showing their subtree totals (Σ)",
    ),
    Scene(
        "deep-trace",
        StartAt(trace_id=DEEP_TRACE_ID),
        ("plus", "end"),
        "2,500 levels deep: the depth replaces indentation",
    ),
    Scene(
        "alerts",
        StartAt(project_id="proj_support"),
        ("a",),
        "A project's alerts: state, value against the threshold, the last 24 h",
    ),
    Scene(
        "alert-detail",
        StartAt(project_id="proj_support"),
        ("a", "down", "enter"),
        "A firing alert: its metric against the threshold, its history, the traces behind it",
    ),
    Scene(
        "alert-preview",
        StartAt(project_id="proj_support"),
        # Latency in ms over 5m, "above" are the choices a new alert starts with: the threshold
        # is five tabs on (measure, unit, period, condition).
        ("a", "n", *"Slow", *["tab"] * 5, *"6000"),
        "A new alert previews how often it would have fired in the last 24 h",
    ),
    Scene(
        "alert-form",
        StartAt(project_id="proj_support"),
        ("a", "n", "ctrl+s"),
        "Creating an alert: each field says what is wrong",
    ),
    Scene(
        "overview",
        StartAt(project_id="proj_support"),
        ("o",),
        "A project's overview: error rate, latency, tokens and cost per hour, cost by model",
    ),
    Scene("time-range", StartAt(project_id="proj_support"), ("t",), "The time range picker"),
    Scene(
        "diff",
        StartAt(project_id="proj_rag", trace_id=REGRESSION_B),
        ("D",),
        "D on a failed trace: what differs from its last good run, the cause in the first lines",
    ),
    Scene(
        "diff-prompt",
        StartAt(project_id="proj_rag", trace_id=REGRESSION_B),
        ("D", *"nnnnnn"),
        "n to the failed model call: its model, error and prompt, word by word",
    ),
    Scene(
        "help",
        StartAt(project_id="proj_agent"),
        ("enter", "question_mark"),
        "? lists every key of the current screen",
    ),
)


def demo_service(path: Path) -> tuple[LocalService, DemoKeys]:
    store = Store(path)
    keys = populate(store, seed=7, now=FIXED_NOW_MS, scale=0.2, big_traces=True)
    # The service's clock too: retention would hide the pinned data once it is old enough.
    service = local_service(store, rate_limit=1000, clock=lambda: FIXED_NOW_MS).start()
    incident_before_the_pinned_moment(service, keys)
    # One evaluation round at the pinned moment: the alerts screen shows real states and values
    # (their hooks are example names and loopback, refused without a look-up or a connection).
    service.alerts.evaluate()
    return service, keys


def incident_before_the_pinned_moment(
    service: LocalService, keys: DemoKeys, count: int = 12
) -> None:
    """Support tickets over the 10 minutes before the pinned moment, their order look-ups
    mostly failing (the demo feed's incident), sent over OTLP as the live demo sends them: the
    screenshots show an alert firing, its chart and the errored traces behind it."""
    rng = random.Random(7)
    headers = {
        "Content-Type": "application/x-protobuf",
        "Authorization": f"Bearer {keys.projects['proj_support']}",
    }
    with httpx.Client(timeout=10) as client:
        for index in range(count):
            at_ms = FIXED_NOW_MS - 600_000 + index * 50_000
            children, root = support_ticket(rng, at_ms, INCIDENT_FAILURES)
            for batch in (children, [root]):
                body = export(batch, "support-chatbot")
                client.post(
                    f"{service.base_url}/traces", content=body, headers=headers
                ).raise_for_status()


def make_app(service: LocalService, keys: DemoKeys, scene: Scene) -> TraceTuiApp:
    service.app.state.limiter.reset()  # the budget shown must not depend on earlier scenes
    client = ApiClient(service.base_url, SecretStr(keys.workspace))
    app = TraceTuiApp(client, scene.start, profile="demo")
    app.now = lambda: FIXED_NOW
    app.server_label = "localhost:8000"
    return app


async def settle(pilot: Any, seconds: float = 60.0) -> None:
    """Wait until no worker is running for a few looks in a row (data loaded, screens drawn);
    fail if that takes more than `seconds` of wall-clock time (a snapshot of a screen still
    loading would fail later, less clearly)."""
    deadline = time.monotonic() + seconds
    quiet = 0
    focused = None
    while quiet < 4:
        await pilot.pause(0.05)
        busy = [w.name for w in pilot.app.workers if not w.is_finished]
        assert not busy or time.monotonic() < deadline, f"still busy after {seconds:g} s: {busy}"
        # A focus moved after the data came (the overview's firing alerts, focused once they
        # show) is part of settling: its look must not depend on the machine's speed.
        moved, focused = pilot.app.focused is not focused, pilot.app.focused
        quiet = 0 if busy or moved else quiet + 1


def run_before(scene: Scene) -> Callable[[Any], Awaitable[None]]:
    async def steps(pilot: Any) -> None:
        await settle(pilot)
        for key in scene.keys:
            await pilot.press(key)
            await settle(pilot)
        # A focused Input's cursor blinks every 0.5 s: whether a snapshot caught it shown or
        # hidden depended on timing (the alert form's failed one time in two). Stopped, hidden.
        for field in pilot.app.screen.query(Input):
            field.cursor_blink = False
        await pilot.pause()

    return steps
