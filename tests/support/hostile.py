"""Hostile data: strings that try to run Textual actions, drive the terminal, hide or reorder
text, or exhaust memory; and the raw byte sequences that must never reach a terminal."""

from __future__ import annotations

import random
import uuid
from typing import Any

from tests.support.service import RunningService
from tui.demo.data import TraceBuilder, trace_row
from tui.server.store.rows import now_ms

HOSTILE = (
    "[@click=app.quit]Q[/] [@click=app.bell]B[/] [link=https://evil.example/x]L[/link] [b]bold "
    "\x1b[31;1;4;7mRED\x1b[0m \x1b[2J\x1b[H "  # CSI: colour, clear screen, cursor home
    "\x1b]52;c;cHduZWQ=\x07 "  # OSC 52: write the clipboard
    "\x1b]8;;https://evil.example/osc8\x1b\\link\x1b]8;;\x1b\\ "  # OSC 8 hyperlink
    "\x00nul \x07bel \x08bs \x7fdel \x85nel \x9b31m "  # C0, DEL and C1 (0x9B is a one-byte CSI)
    "\u202eevil\u202c \u2066iso\u2069 zero\u200bwidth\u200d\ufeff "  # bidi, zero-width
    "漢字テスト 🙂🚀 end"
)
MEGABYTE = "M" * 1_000_000 + HOSTILE  # a 1 MB string, hostile at the end

# What must never reach the terminal raw, whatever the data.
FORBIDDEN = (
    b"\x1b]52;",  # clipboard write
    b"\x1b]8;;https://evil",  # a hyperlink the data chose
    b"\x1b[31;1;4;7m",  # the data's own colours
    "\u202e".encode(),
    "\u2066".encode(),
    "\u200b".encode(),
    "\ufeff".encode(),
    b"\x00",
    "\x85".encode(),
    "\x9b".encode(),
)


def forbidden_in(output: bytes) -> list[bytes]:
    return [seq for seq in FORBIDDEN if seq in output]


def add_hostile_project(service: RunningService) -> dict[str, Any]:
    """A project whose every shown string is hostile: its name and description, a trace and
    its spans (names, kinds, models, error messages, attribute keys and values, 1 MB of each),
    a 1 MB trace name and two alerts (one 1 MB); and a project with a 1 MB name. Returns the
    ids."""
    suffix = uuid.uuid4().hex[:8]
    project_id = f"proj_hostile_{suffix}"
    t = now_ms() - 1000
    b = TraceBuilder(random.Random(5), f"hostile{suffix}")
    root = b.add(None, HOSTILE, "agent", t, 900, attributes={HOSTILE: HOSTILE})
    b.add(root, HOSTILE, HOSTILE, t + 10, 300, "gpt-4o", (10, 5), {"x": HOSTILE}, error=HOSTILE)
    b.add(root, MEGABYTE, "tool", t + 20, 100, MEGABYTE, (1, 1), {"big": MEGABYTE, MEGABYTE: 1})
    b.add(root, "big error", MEGABYTE, t + 30, 10, HOSTILE, (1, 1), error=MEGABYTE)
    long_trace = TraceBuilder(random.Random(6), f"long{suffix}")
    long_trace.add(None, "long", "agent", t - 500, 10)
    with service.store.transaction() as db:
        service.store.insert_project(db, HOSTILE, HOSTILE, 30, project_id=project_id)
        service.store.insert_traces(
            db,
            [
                trace_row(b, project_id, HOSTILE, t, 900, {HOSTILE: HOSTILE}),
                trace_row(long_trace, project_id, MEGABYTE, t - 500, 10, {}),
            ],
            [*b.rows, *long_trace.rows],
        )
        service.store.insert_project(  # a megabyte name: in lists and in the palette
            db, MEGABYTE, MEGABYTE, 30, project_id=f"proj_hostile_mb_{suffix}"
        )
        for name in (MEGABYTE, HOSTILE):
            service.store.insert_alert(
                db,
                project_id=project_id,
                name=name,
                metric="latency_p95_5m",
                condition="gt",
                threshold=1.0,
                webhook_url="https://hooks.example.com/" + name,
            )
    return {"project_id": project_id, "trace_id": b.trace_id}


# Single characters a terminal or a renderer may take for control: escape, NUL, bell, C1,
# bidirectional overrides, zero-width, a lone surrogate.
RAW = [
    "\x1b",
    "\x00",
    "\x07",
    "\x08",
    "\x85",
    "\x9b",
    "\u202e",
    "\u2066",
    "\u200b",
    "\ufeff",
    "\ud800",
]
