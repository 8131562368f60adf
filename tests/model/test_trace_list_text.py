"""What the trace list says of itself (tui/model/trace_list_text.py), without Textual: a header
of one line at any width, the least needed parts left out first, and the preview line."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tui.api.models import TraceFilter
from tui.model.timerange import TimeRange
from tui.model.trace_list import TraceListState
from tui.model.trace_list_rows import Preview, Shown
from tui.model.trace_list_text import header, preview_line

QUERY = "error user:alice latency>1s sort:-latency refund"
ASKED = TraceFilter(
    q="refund", status="error", user_id="alice", min_latency_ms=1000.0, sort="duration_ms"
)


def found(query: str = QUERY, asked: TraceFilter | None = ASKED) -> TraceListState:
    state = TraceListState().submitted(query)
    return state.page_loaded(first=True, asked=asked, ended=True, dropped=0)


def said(state: TraceListState, width: int | None, kept: int = 26, loaded: int = 26) -> str:
    return header(state, "support-bot", Shown([], kept, (), None), loaded, False, width).plain


def test_wide_enough_everything_is_said() -> None:
    assert said(found(), 200) == (
        f"support-bot · last 24h · slowest first · {QUERY} (x clears) · 26 found · all loaded"
    )


def test_narrow_the_least_needed_go_first_then_the_query_is_cut() -> None:
    # The default range and "all loaded" go first; then the query is cut, not the count.
    assert said(found(), 80) == (
        "support-bot · slowest first · error user:alice latency>1s… (x clears) · 26 found"
    )
    at_55 = said(found(), 55)
    assert at_55.startswith("support-bot · ") and at_55.endswith(" (x clears) · 26 found")
    assert "error user:" in at_55 and len(at_55) <= 55
    # A range that is not the default stays longer than the default one would.
    week = found().ranged(TimeRange("7d"))
    assert "last 7d" in said(week, 90) and "last 24h" not in said(found(), 90)


def test_what_must_be_said_stays_and_the_line_never_wraps() -> None:
    failed = found().page_failed("Server error: the index is rebuilding (HTTP 500)")
    line = said(failed, 80)
    assert "Server error" in line and "\n" not in line and len(line) <= 80
    # Too narrow for even that: cut with an ellipsis, never wrapped.
    assert said(failed, 30).endswith("…") and len(said(failed, 30)) <= 30


@given(
    st.integers(min_value=10, max_value=200),
    st.sampled_from(["", "error", QUERY, "x" * 300, "é" * 50]),
    st.booleans(),
    st.booleans(),
)
def test_any_width_gives_one_line_that_fits(
    width: int, query: str, errors: bool, live: bool
) -> None:
    state = TraceListState().submitted(query)
    if errors:
        state = state.errors_toggled()
    state = state.live_set(live).page_failed("x" * 100 if errors and live else "")
    line = said(state, width, kept=1_234_567, loaded=9_999_999)
    assert "\n" not in line and len(line) <= width
    assert line.startswith("support"[: width - 1])  # the name is cut last, to 10 at least


def test_the_preview_line_says_over_which_rows_and_what_enter_does() -> None:
    rows = Preview(rows=[], loaded=200, unjudged=("model", "tags"), enter="server")
    assert preview_line(rows).plain == (
        "preview: 0 of 200 loaded rows · model:, tag: not judged here · enter asks the server"
    )
    other = Preview(loaded_for="error", loaded=38, enter="server")
    assert preview_line(other).plain == (
        "no preview: the 38 loaded rows are only those of error · enter asks the server"
    )
    wrong = Preview(error='a quote (") is not closed')
    assert preview_line(wrong).plain == '✗ a quote (") is not closed'
    assert len(preview_line(rows, 40).plain) == 40 and preview_line(rows, 40).plain[-1] == "…"


def test_a_project_gone_is_said_before_anything_but_its_name() -> None:
    gone = TraceListState().live_set(True).project_gone()
    line = said(gone, 55)
    assert line == "support-bot · ⚠ project gone from the server (esc)"
    long_name = header(gone, "x" * 60, Shown([], 1, (), None), 1, False, 55).plain
    assert long_name.endswith("⚠ project gone from the server (esc)") and len(long_name) <= 55
