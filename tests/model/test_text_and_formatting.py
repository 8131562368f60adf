"""The safe-text helper and the table formatters."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from rich.cells import cell_len

from tui.model import formatting as fmt
from tui.model.text import safe_text, visible


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("[@click=app.quit]x[/]", "[@click=app.quit]x[/]"),
        ("a\x1b[2Jb", "a␛[2Jb"),
        ("\x1b]52;c;cHduZWQ=\x07", "␛]52;c;cHduZWQ=␇"),
        ("nul\x00", "nul␀"),
        ("c1\x9b31m", "c1<U+009B>31m"),
        ("rtl\u202eevil", "rtl<U+202E>evil"),
        ("half \ud800 pair \udfff", "half <U+D800> pair <U+DFFF>"),  # lone UTF-16 halves
        ("zero\u200bwidth", "zero<U+200B>width"),
        ("line\nbreak\ttab", "line␊break␉tab"),
        ("plain 漢字 🙂", "plain 漢字 🙂"),
    ],
)
def test_visible(raw: str, shown: str) -> None:
    assert visible(raw) == shown
    text = safe_text(raw)
    assert text.plain == shown and not text.spans  # literal: no markup was parsed


def test_multiline_keeps_newlines_only() -> None:
    assert visible("a\nb\tc\x1b", multiline=True) == "a\nb\tc␛"


def test_truncation() -> None:
    assert safe_text("x" * 100, 10).plain == "x" * 9 + "…"
    assert fmt.fit("漢字漢字漢字", 7) == "漢字漢…"  # cut by cells, not characters
    assert cell_len(fmt.fit("漢字漢字漢字", 6)) == 6
    assert cell_len(fmt.fit("🙂" * 10, 9)) == 9
    assert fmt.fit_right("12", 5) == "   12"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "–"),
        (0, "0"),
        (9999, "9,999"),
        (12_345, "12.3k"),
        (720_100, "720k"),
        (2_500_000, "2.5M"),
    ],
)
def test_tokens(value: int | None, text: str) -> None:
    assert fmt.tokens(value) == text


def test_cost_duration_ago() -> None:
    assert [fmt.cost(v) for v in (None, 0, 0.00001, 0.0123, 12.5)] == [
        "–",
        "$0",
        "<$0.0001",
        "$0.0123",
        "$12.50",
    ]
    assert [fmt.duration(v) for v in (None, -1, 850, 1500, 192_000, 7_300_000)] == [
        "–",
        "<0",
        "850ms",
        "1.5s",
        "3m12s",
        "2h01m",
    ]
    now = datetime(2026, 11, 21, 12, tzinfo=timezone.utc)
    assert fmt.ago(now - timedelta(minutes=3), now) == "3m ago"
    assert fmt.ago(now + timedelta(minutes=3), now) == "future"


def test_counted_says_one_error_and_two_errors() -> None:
    from tui.model.formatting import counted

    assert [counted(n, "error") for n in (0, 1, 2)] == ["0 errors", "1 error", "2 errors"]
    assert counted(2501, "trace") == "2,501 traces"


def test_model_names_keep_what_tells_them_apart() -> None:
    assert fmt.model_label("gpt-4o-mini", 18) == "gpt-4o-mini"
    assert fmt.model_label("claude-3-5-sonnet-20241022", 18) == "claude-3-5-sonnet"
    assert fmt.model_label("text-embedding-3-small", 18) == "text-embe…-3-small"
    assert fmt.model_label("claude-3-5-sonnet-20241022", 12) == "claude…onnet"
    assert len(fmt.model_label("x" * 100, 12)) == 12
    assert fmt.model_label("a\u202eb", 10) == "a<U+202E>b"  # made visible first
