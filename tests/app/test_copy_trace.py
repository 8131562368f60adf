"""`Y` in a trace copies the whole trace as JSON by OSC 52 (as `y` copies a span); text too big
for the terminal to carry is not sent, and the toast says its size and the way out."""

from __future__ import annotations

import base64
import json

import pytest

from tests.support.app import open_first_trace, running_app, wait_for
from tests.support.service import RunningService
from tui.ui import app as app_module
from tui.ui.app import COPY_MAX_BYTES, StartAt
from tui.ui.screens.help import keys_table
from tui.ui.screens.trace_detail import TraceDetailScreen

# tmux holds one escape sequence of at most 1 MiB (INPUT_BUF_LIMIT in its input.c).
TMUX_SEQUENCE_LIMIT = 1_048_576


def footer_text(screen: TraceDetailScreen) -> str:
    return " ".join(f"{key.key_display} {key.description}" for key in screen.query("FooterKey"))


async def test_shift_y_copies_the_whole_trace(service: RunningService) -> None:
    async with running_app(service, StartAt("proj_agent"), size=(160, 48)) as (app, pilot):
        detail = await open_first_trace(app, pilot)
        await pilot.press("Y")
        await wait_for(pilot, lambda: bool(app.clipboard))
        copied = json.loads(app.clipboard)
        assert copied["id"] == detail.trace_id
        assert copied["span_count"] == len(copied["spans"]) > 1
        assert any("Copied the trace as JSON" in str(n.message) for n in app._notifications)
        # Offered where it fits, and in `?`.
        await wait_for(pilot, lambda: "Y Copy trace" in footer_text(detail))
        table = keys_table(detail)
        assert "Copy trace" in " ".join(
            str(cell) for column in table.columns for cell in column.cells
        )


async def test_a_trace_too_big_for_osc_52_is_not_sent_and_the_toast_says_so(
    service: RunningService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(app_module, "COPY_MAX_BYTES", 2000)  # the demo's traces are smaller
    async with running_app(service, StartAt("proj_agent")) as (app, pilot):
        await open_first_trace(app, pilot)
        await pilot.press("Y")
        await wait_for(pilot, lambda: any("too big" in str(n.message) for n in app._notifications))
        said = next(str(n.message) for n in app._notifications if "too big" in str(n.message))
        assert "The trace as JSON is " in said and "up to 2 kB" in said and "e to export" in said
        assert app.clipboard == ""  # nothing was sent
        await pilot.press("y")  # one span fits
        await wait_for(pilot, lambda: bool(app.clipboard))


def test_the_limit_fits_in_one_tmux_escape_sequence() -> None:
    sequence = b"\x1b]52;c;" + base64.b64encode(b"x" * COPY_MAX_BYTES) + b"\x07"
    assert len(sequence) <= TMUX_SEQUENCE_LIMIT
