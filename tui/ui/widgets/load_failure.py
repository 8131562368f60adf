"""What a screen says in place of something that could not be loaded: why, and what the user
can do next (retry, go back, or quit when nothing is beneath)."""

from __future__ import annotations

import re

from rich.text import Text

from tui.model.text import safe_text

_HEX = re.compile(r"[0-9a-fA-F]+")
TRACE_ID_DIGITS = 32  # a W3C trace id: 16 bytes in hex


def trace_not_loaded(trace_id: str, why: str, retryable: bool, not_found: bool, back: str) -> Text:
    """The trace detail's message when the trace did not load. `why`: the error in one line;
    `back`: what esc does ("esc goes back to the traces", "esc quits")."""
    text = Text()
    if not_found:
        text.append("Trace ", style="bold")
        text.append_text(safe_text(trace_id, 80, style="bold"))
        text.append(" was not found on this server.", style="bold")
        if _HEX.fullmatch(trace_id) and len(trace_id) < TRACE_ID_DIGITS:
            text.append(
                f"\n\nA trace id has {TRACE_ID_DIGITS} hex digits; this one has {len(trace_id)}. "
                "A prefix is not enough: paste the whole id, or find the trace in its project's "
                "list (/ filters it)."
            )
        else:
            text.append(
                "\n\nIt may be older than the project's retention, or belong to another server "
                "or profile."
            )
    else:
        text.append("The trace could not be loaded.\n\n", style="bold")
        text.append_text(safe_text(why, 400))
    text.append("\n\n")
    if retryable:  # the words of the status line, where ctrl+r retries on every screen
        text.append("ctrl+r", style="bold")
        text.append(" retries · ")
    text.append_text(Text(back))
    return text
