"""The pure span tree: order, rollups, orphans, cycles, duplicates, depth, visibility."""

from __future__ import annotations

import random
import sys
from datetime import datetime, timedelta, timezone
from typing import Any

from tui.api import Span
from tui.model.spans import (
    CYCLE,
    DUPLICATE,
    NO_ID,
    ORPHAN,
    Visibility,
    build_tree,
    conversation_at,
    find_next,
    search_flags,
    search_order,
    span_matcher,
)

T0 = datetime(2026, 11, 21, 9, 0, tzinfo=timezone.utc)


def span(id: str | None, parent: str | None = None, at: int = 0, **fields: Any) -> Span:
    return Span.model_validate(
        {
            "id": id,
            "parent_id": parent,
            "started_at": (T0 + timedelta(seconds=at)).isoformat(),
            "duration_ms": 1000,
            **fields,
        }
    )


def test_children_follow_parents_in_start_order_with_rollups() -> None:
    tree = build_tree(
        [
            span("c2", "root", 5, input_tokens=5, cost_usd=0.5),
            span("root", None, 0, input_tokens=1, output_tokens=1, cost_usd=0.01),
            span("c1", "root", 1, input_tokens=10, output_tokens=2, cost_usd=0.1, status="error"),
            span("g1", "c1", 2, input_tokens=100, cost_usd=1.0),
        ]
    )
    assert tree.keys == ["root", "c1", "g1", "c2"]
    assert tree.depth == [0, 1, 2, 1] and tree.parent == [-1, 0, 1, 0] and tree.end == [4, 3, 3, 4]
    assert tree.sub_input == [116, 110, 100, 5] and tree.sub_output == [3, 2, 0, 0]
    assert round(tree.sub_cost[0], 6) == 1.61 and tree.sub_errors == [1, 1, 0, 0]


def test_spans_without_parents_show_in_start_order() -> None:
    tree = build_tree([span("b", at=3), span("a", at=1), span("c", at=2)])
    assert tree.keys == ["a", "c", "b"] and tree.depth == [0, 0, 0]


def test_orphans_cycles_duplicates_and_missing_ids_are_kept_and_flagged() -> None:
    spans = [
        span("root"),
        span("orphan", "nowhere", 1),
        span("self", "self", 2),
        span("x", "y", 3),
        span("y", "x", 4),
        span("root", None, 5),  # duplicate id
        span(None, "root", 6),  # no id
    ]
    tree = build_tree(spans)
    assert tree.size == len(spans)
    flags = dict(zip(tree.keys, tree.flags, strict=True))
    assert ORPHAN in flags["orphan"] and CYCLE in flags["self"]
    assert CYCLE in flags["x"] and flags["y"] == ()
    assert DUPLICATE in flags["root#5"] and NO_ID in flags["#6"]
    assert tree.depth[tree.keys.index("y")] == 1  # the cycle was cut at x, its earliest span


def test_a_10000_deep_chain_builds_without_recursion() -> None:
    depth = 10_000
    spans = [span(f"s{i}", f"s{i - 1}" if i else None, i, input_tokens=1) for i in range(depth)]
    random.Random(1).shuffle(spans)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)  # prove nothing recurses per level
    try:
        tree = build_tree(spans)
        view = Visibility.initial(tree)
        view.expand_all()
        view.collapse_all()
        row = view.reveal(depth - 1)
    finally:
        sys.setrecursionlimit(limit)
    assert tree.max_depth == depth - 1 and tree.sub_input[0] == depth
    assert row == depth - 1 and len(view.rows) == depth


def test_visibility_splices_match_a_rebuild() -> None:
    rng = random.Random(7)
    spans = [span("s0")]
    for i in range(1, 400):
        spans.append(span(f"s{i}", f"s{rng.randrange(i)}", i))
    tree = build_tree(spans)
    view = Visibility(tree)
    view.rebuild()
    for _ in range(300):
        position = rng.choice(view.rows)
        view.toggle(position)
        expected = Visibility(tree, set(view.collapsed))
        expected.rebuild()
        assert view.rows == expected.rows


def test_big_trees_open_two_levels_deep() -> None:
    spans = [span("r")] + [span(f"c{i}", "r", i) for i in range(50)]
    spans += [span(f"g{i}.{j}", f"c{i}", i) for i in range(50) for j in range(30)]
    view = Visibility.initial(build_tree(spans), expand_up_to=1000)
    assert len(view.rows) == 51


def test_next_error_and_search_wrap() -> None:
    tree = build_tree(
        [span("a"), span("b", "a", 1, status="error"), span("c", "a", 2, name="Embed")]
    )
    assert find_next(tree, 0) == 1 and find_next(tree, 1) == 1
    flags = search_flags(tree, "embed")
    assert find_next(tree, 2, flags) == 2 and find_next(tree, 0, flags) == 2
    assert find_next(tree, 2, search_flags(tree, "zzz")) is None


def test_search_matches_message_text_read_only_as_far_as_needed() -> None:
    messages = (
        '[{"role": "user", "parts": [{"type": "text", "content": "Wh\\u00e9re is my ORDER?"}]}]'
    )
    tree = build_tree(
        [
            span("a", attributes={"gen_ai.input.messages": messages}),
            span("b", "a", 1, attributes={"tool.name": "lookup", "tool.result": "shipped by DHL"}),
            span("c", "a", 2),
            span("d", "a", 3, input="a Langfuse input about refunds"),
        ]
    )
    assert search_flags(tree, "whére is my order") == [True, False, False, False]  # decoded
    assert search_flags(tree, "dhl") == [False, True, False, False]
    assert search_flags(tree, "refunds") == [False, False, False, True]
    tree.texts.clear()
    assert find_next(tree, 0, span_matcher(tree, "lookup")) == 1
    assert set(tree.texts) == {1}  # the first match is found without reading the others
    assert list(search_order(tree, 2)) == [3, 0, 1, 2]
    assert list(search_order(tree, 2, backwards=True)) == [1, 0, 3, 2]


def test_conversations_are_read_once_and_kept_for_the_recent_spans() -> None:
    tree = build_tree(
        [span(f"s{i}", None, i, attributes={"llm.prompt": f"q{i}"}) for i in range(300)]
    )
    first = conversation_at(tree, 0)
    assert first is not None and conversation_at(tree, 0) is first
    for i in range(300):
        conversation_at(tree, i)
    assert len(tree.conversations) <= 256 and 299 in tree.conversations


def test_waterfall_fractions() -> None:
    tree = build_tree(
        [span("a", None, 0, duration_ms=10_000), span("b", "a", 5, duration_ms=2_500)]
    )
    assert tree.offset_and_length(0) == (0.0, 1.0)
    assert tree.offset_and_length(1) == (0.5, 0.25)
    odd = build_tree([Span.model_validate({"id": "x"})])
    assert odd.offset_and_length(0) == (0.0, 0.0)


def test_the_tree_columns_grow_with_the_pane() -> None:
    from tui.ui.widgets.span_tree import columns_for

    narrow, pane_at_160, full_160 = columns_for(78), columns_for(96), columns_for(158)
    assert narrow["model"] == 9 and narrow["bar"] == 7 and narrow["name"] >= 20
    assert pane_at_160["model"] > narrow["model"] and pane_at_160["bar"] > 7
    assert full_160["model"] >= len("claude-3-5-sonnet-2024") and full_160["kind"] >= 9
    # The pane a 160-column terminal gives the tree beside the detail (84): a model such as
    # gpt-4o-mini whole, a timing bar wider than at 80 columns, and room for the names.
    pane = columns_for(84)
    assert pane["model"] > len("gpt-4o-mini") and pane["bar"] > 7 and pane["name"] >= 24
    for width in (78, 84, 96, 158):
        columns = columns_for(width)
        assert sum(columns.values()) + len(columns) - 1 <= width
