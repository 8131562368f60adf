"""The trace diff (tui/model/diff): alignment by path and ordinal, each row's status and
deltas, the selected pair's details, and the summary's sentences."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

from tui.api import Span
from tui.api.readers import read_trace_fast
from tui.api.span_table import SpanTable
from tui.model.diff import ADDED, CHANGED, REMOVED, SAME, diff_trees, pair_detail, plain, summary
from tui.model.diff.deltas import duration_moved
from tui.model.diff.facts import is_volatile
from tui.model.spans import build_tree

T0 = datetime(2026, 11, 21, 9, 0, tzinfo=timezone.utc)


def span(
    id: str, parent: str | None = None, at: float = 0, dur: float = 1000, **fields: Any
) -> Span:
    return Span.model_validate(
        {
            "id": id,
            "parent_id": parent,
            "started_at": (T0 + timedelta(seconds=at)).isoformat(),
            "duration_ms": dur,
            **fields,
        }
    )


def lookups(count: int, parent: str = "r") -> list[Span]:
    return [
        span(f"l{k}", parent, k, 100, name="lookup", kind="tool", attributes={"n": 1})
        for k in range(1, count + 1)
    ]


def agent(loops: int, **answer: Any) -> list[Span]:
    fields: dict[str, Any] = {
        "name": "answer",
        "kind": "llm",
        "model": "gpt-4o",
        "input_tokens": 100,
        "output_tokens": 20,
        "cost_usd": 0.001,
        "attributes": {"gen_ai.system_instructions": "Be brief and kind."},
    }
    fields |= answer
    end = loops + 2
    answer_ms = fields.pop("dur", 800)
    return [
        span("r", None, 0, end * 1000 + answer_ms, name="agent"),
        *lookups(loops),
        span("ans", "r", end - 1, answer_ms, **fields),
    ]


def test_a_loop_that_ran_longer_is_spans_added_not_changed() -> None:
    diff = diff_trees(build_tree(agent(3)), build_tree(agent(5)))
    assert diff.names == ["agent", "lookup", "lookup", "lookup", "lookup", "lookup", "answer"]
    assert [diff.status[r] for r in range(1, 6)] == [SAME, SAME, SAME, ADDED, ADDED]
    assert diff.counts[ADDED] == 2 and diff.counts[REMOVED] == 0
    assert [diff.rows.ordinal[r] for r in range(1, 6)] == [1, 2, 3, 4, 5]
    assert diff.path(4) == [("agent", 1), ("lookup", 4)]
    # The other way round, the same two are removed.
    back = diff_trees(build_tree(agent(5)), build_tree(agent(3)))
    assert back.counts[REMOVED] == 2 and back.counts[ADDED] == 0


def test_a_span_only_a_has_goes_back_where_a_had_it() -> None:
    a = [
        span("r", None, 0, name="root"),
        span("x", "r", 1, name="first"),
        span("y", "r", 2, name="middle"),
        span("z", "r", 3, name="last"),
    ]
    b = [
        span("r", None, 0, name="root"),
        span("x", "r", 1, name="first"),
        span("z", "r", 3, name="last"),
    ]
    diff = diff_trees(build_tree(a), build_tree(b))
    assert diff.names == ["root", "first", "middle", "last"]
    assert diff.status == [SAME, SAME, REMOVED, SAME]


def test_everything_below_an_added_span_is_added_and_counted_once() -> None:
    a = [span("r", None, 0, name="root")]
    b = [
        span("r", None, 0, name="root"),
        span("s", "r", 1, name="step"),
        span("t", "s", 2, name="tool"),
    ]
    diff = diff_trees(build_tree(a), build_tree(b))
    assert diff.status == [SAME, ADDED, ADDED]
    assert [diff.is_difference(r) for r in range(3)] == [False, True, False]
    assert diff.sub_differences == [2, 2, 1]
    assert diff.rows.depth == [0, 1, 2] and diff.rows.end == [3, 3, 3]


def test_what_changed_in_a_pair() -> None:
    a = agent(1)
    b = agent(
        1,
        model="gpt-4o-mini",
        output_tokens=0,
        cost_usd=0.0002,
        error_message="BadRequestError: context length",
        attributes={"gen_ai.system_instructions": "Be exhaustive and kind."},
    )
    diff = diff_trees(build_tree(a), build_tree(b))
    row = diff.names.index("answer")
    assert diff.status[row] == CHANGED
    assert set(diff.changes[row]) >= {"model", "status", "error", "tokens", "cost", "attributes"}
    assert diff.delta("outputs", row) == -20
    detail = pair_detail(diff, row)
    changed = {f.label: (f.before, f.after, f.delta) for f in detail.facts if f.changed}
    assert changed["model"] == ("gpt-4o", "gpt-4o-mini", "")
    assert changed["tokens out"] == ("20", "0", "−20")
    titles = [s.title for s in detail.sections]
    assert titles[0] == "error"
    prompt = next(s for s in detail.sections if s.title == "system prompt")
    removed, added = prompt.diff.lines
    assert (
        removed.sign == "-"
        and ("brief", True) in removed.pieces
        and ("Be ", False) in removed.pieces
    )
    assert added.sign == "+" and ("exhaustive", True) in added.pieces
    # The system prompt's attribute is the conversation shown above: not shown twice.
    assert not any(t.startswith("attribute gen_ai.system") for t in titles)


def test_ids_and_times_do_not_make_a_pair_changed() -> None:
    def one(response_id: str, at: float) -> list[Span]:
        attrs = {"gen_ai.response.id": response_id, "tool_call_id": response_id, "k": "v"}
        return [span("r", None, at, name="root", attributes=attrs)]

    diff = diff_trees(build_tree(one("a1", 0)), build_tree(one("b2", 50)))
    assert diff.status == [SAME]
    assert pair_detail(diff, 0).volatile == 2
    assert is_volatile("gen_ai.response.id") and is_volatile("session.id")
    assert not is_volatile("gen_ai.request.model") and not is_volatile("valid")


def test_a_duration_changes_only_beyond_a_runs_noise() -> None:
    assert not duration_moved(1000, 1400)  # 40 % more: noise
    assert not duration_moved(100, 500)  # 5x, but 400 ms
    assert duration_moved(1000, 1600)
    assert duration_moved(None, 10) and not duration_moved(None, None)


def test_the_summary_says_where_the_time_went_and_what_failed() -> None:
    a = agent(3)
    b = agent(
        5,
        model="gpt-4o-mini",
        error_message="BadRequestError: This model's maximum context length is 128000 tokens.",
        attributes={"gen_ai.system_instructions": "Be exhaustive and kind."},
        dur=6000,
    )
    sentences = [plain(s) for s in summary(diff_trees(build_tree(a), build_tree(b)))]
    assert sentences[0].startswith("`answer` failed: BadRequestError: This model's maximum")
    assert sentences[1:4] == [
        "the model changed gpt-4o → gpt-4o-mini in `answer`",
        "the system prompt (1 word) changed in `answer`",
        "2 `lookup` tool calls added",
    ]
    assert sentences[4] == "B took 7.2 s more (5.2 s more in `answer`)"


def test_a_trace_diffed_with_itself_says_so() -> None:
    tree = build_tree(agent(3))
    diff = diff_trees(tree, tree)
    assert set(diff.status) == {SAME}
    assert [plain(s) for s in summary(diff)] == [
        "No differences in 5 spans (durations within noise)"
    ]


def test_failures_healed_and_unchanged() -> None:
    failing = agent(1, error_message="boom")
    ok = agent(1)
    healed = [plain(s) for s in summary(diff_trees(build_tree(failing), build_tree(ok)))]
    assert "`answer` no longer fails" in healed
    both = [plain(s) for s in summary(diff_trees(build_tree(failing), build_tree(failing)))]
    assert both == ["`answer` fails in both: boom"]


def test_messages_are_paired_like_lines() -> None:
    def call(*texts: str) -> list[Span]:
        messages = [{"role": "user", "parts": [{"type": "text", "content": t}]} for t in texts]
        attrs = {"gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(messages)}
        return [span("c", None, 0, name="chat", kind="llm", attributes=attrs)]

    diff = diff_trees(
        build_tree(call("one", "two", "three")), build_tree(call("one", "new", "two", "three"))
    )
    detail = pair_detail(diff, 0)
    assert [(s.title, s.status) for s in detail.sections] == [("input 2 · user", ADDED)]
    assert detail.unchanged == ("input 1 · user", "input 3 · user", "input 4 · user")


def test_a_span_on_one_side_shows_its_texts_whole() -> None:
    a = [span("r", None, 0, name="root")]
    b = [
        *a,
        span("t", "r", 1, name="lookup", kind="tool", attributes={"tool.arguments": '{"id": 7}'}),
    ]
    diff = diff_trees(build_tree(a), build_tree(b))
    detail = pair_detail(diff, 1)
    assert detail.status == ADDED
    assert {f.label: f.after for f in detail.facts}["kind"] == "tool"
    section = next(s for s in detail.sections if s.title == "tool call")
    assert section.status == ADDED and all(line.sign == "+" for line in section.diff.lines)


def test_a_big_traces_spans_are_compared_from_their_json() -> None:
    """A trace read the fast way (a SpanTable) is compared without making its spans."""

    def body(model: str) -> bytes:
        spans = [
            {
                "id": f"s{k}",
                "parent_id": "s0" if k else None,
                "name": "root" if not k else "call",
                "kind": "SPAN_KIND_INTERNAL" if not k else "llm",
                "model": None if not k else model,
                "started_at": (T0 + timedelta(seconds=k)).isoformat(),
                "duration_ms": 100,
                "status": "ok",
                "attributes": {"gen_ai.response.id": f"{model}{k}", "temperature": 0},
            }
            for k in range(50)
        ]
        return json.dumps({"id": "t", "spans": spans}).encode()

    a, b = read_trace_fast(body("gpt-4o")), read_trace_fast(body("gpt-4o-mini"))
    assert a is not None and b is not None
    a_tree, b_tree = build_tree(a.spans), build_tree(b.spans)
    assert isinstance(a_tree.spans, SpanTable)
    diff = diff_trees(a_tree, b_tree)
    assert a_tree.spans.made == 0 and b_tree.spans.made == 0  # type: ignore[attr-defined]
    assert diff.status == [SAME] + [CHANGED] * 49
    assert diff.changes[1] == ("model",)
    assert diff.a.kinds[0] == "internal"
