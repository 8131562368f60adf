"""The docs' examples of `tracetui trace ID` use a whole trace id (32 hex digits, the W3C form
the trace screen asks for), so pasting one gets as far as the server: an example of 16 digits
only ever got "a trace id has 32 hex digits"."""

from __future__ import annotations

import re
from pathlib import Path

from tui.ui.widgets.load_failure import TRACE_ID_DIGITS

ROOT = Path(__file__).resolve().parents[2]
# `tracetui [options] trace ID`: the id is what follows, up to a space or punctuation.
EXAMPLE = re.compile(r"tracetui (?:--\S+ \S+ )*trace ([0-9A-Za-z_.…]+)")


def examples() -> list[tuple[str, str]]:
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for match in EXAMPLE.finditer(path.read_text(encoding="utf-8")):
            found.append((path.name, match.group(1)))
    return found


def test_every_trace_example_is_a_whole_trace_id() -> None:
    found = examples()
    assert any(name == "README.md" for name, _ in found)
    # Left alone: the placeholder ID, and an id cut on purpose ("4bf9...", in a JSON example).
    whole = [(n, t) for n, t in found if t != "ID" and not t.endswith(("...", "…"))]
    wrong = [(n, t) for n, t in whole if not re.fullmatch(f"[0-9a-f]{{{TRACE_ID_DIGITS}}}", t)]
    assert whole and wrong == []
