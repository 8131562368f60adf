"""Properties of the trace diff on random trees: a trace diffed with itself is all same; A→B's
added spans are B→A's removed ones; a pair's two spans always have the same path (names and
ordinals among same-named siblings from the root), worked out here independently."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui.api import Span
from tui.model.diff import ADDED, REMOVED, SAME, diff_trees
from tui.model.diff.align import MISSING
from tui.model.diff.view import DiffView
from tui.model.spans import TraceTree, build_tree

T0 = datetime(2026, 11, 21, 9, 0, tzinfo=timezone.utc)
NAMES = ("plan", "tool", "llm", "")  # few names: many same-named siblings (and one empty)


@st.composite
def traces(draw: Any) -> list[Span]:
    """A random trace: each span's parent one of the spans before it (or none), random names,
    models, tokens, durations, errors and attributes; sometimes an orphan."""
    count = draw(st.integers(1, 25))
    spans = []
    for n in range(count):
        parent = draw(st.one_of(st.none(), st.integers(0, max(0, n - 1)))) if n else None
        orphan = draw(st.booleans()) and draw(st.booleans()) and draw(st.booleans())
        spans.append(
            Span.model_validate(
                {
                    "id": f"s{n}",
                    "parent_id": "missing"
                    if orphan
                    else (f"s{parent}" if parent is not None else None),
                    "name": draw(st.sampled_from(NAMES)) or None,
                    "started_at": (T0 + timedelta(seconds=draw(st.integers(0, 30)))).isoformat(),
                    "duration_ms": draw(st.sampled_from([10, 900, 5000])),
                    "model": draw(st.sampled_from([None, "gpt-4o", "gpt-4o-mini"])),
                    "input_tokens": draw(st.sampled_from([None, 0, 10])),
                    "error_message": draw(st.sampled_from([None, "boom"])),
                    "attributes": {"k": draw(st.sampled_from(["x", "y"]))},
                }
            )
        )
    return spans


def reference_path(tree: TraceTree, position: int) -> list[tuple[str, int]]:
    """The path of a tree position, from the tree alone: each ancestor's (and its own) name and
    how many earlier siblings (the roots, for a root) share that name, plus one."""
    path = []
    while position != -1:
        parent = tree.parent[position]
        name = tree.spans[position].name or "(no name)"
        siblings = [p for p in range(tree.size) if tree.parent[p] == parent and p < position]
        ordinal = 1 + sum(1 for p in siblings if (tree.spans[p].name or "(no name)") == name)
        path.append((name, ordinal))
        position = parent
    return path[::-1]


FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(spans=traces())
def test_a_trace_diffed_with_itself_is_all_same(spans: list[Span]) -> None:
    diff = diff_trees(build_tree(spans), build_tree(spans))
    assert set(diff.status) == {SAME}
    assert diff.size == len(spans)


@FAST
@given(a=traces(), b=traces())
def test_what_a_to_b_adds_b_to_a_removes(a: list[Span], b: list[Span]) -> None:
    a_tree, b_tree = build_tree(a), build_tree(b)
    forward, backward = diff_trees(a_tree, b_tree), diff_trees(b_tree, a_tree)
    added = sorted(
        b_tree.keys[forward.rows.b_pos[r]]
        for r in range(forward.size)
        if forward.status[r] == ADDED
    )
    removed = sorted(
        b_tree.keys[backward.rows.a_pos[r]]
        for r in range(backward.size)
        if backward.status[r] == REMOVED
    )
    assert added == removed
    # And every span of each side is in exactly one row.
    assert sorted(p for p in forward.rows.a_pos if p != MISSING) == list(range(a_tree.size))
    assert sorted(p for p in forward.rows.b_pos if p != MISSING) == list(range(b_tree.size))


@FAST
@given(a=traces(), b=traces())
def test_a_pair_never_joins_two_paths(a: list[Span], b: list[Span]) -> None:
    a_tree, b_tree = build_tree(a), build_tree(b)
    diff = diff_trees(a_tree, b_tree)
    for row in range(diff.size):
        i, j = diff.rows.a_pos[row], diff.rows.b_pos[row]
        if i != MISSING and j != MISSING:
            assert reference_path(a_tree, i) == reference_path(b_tree, j)
            assert diff.path(row) == reference_path(b_tree, j)
        # A row's parent row holds its spans' parents.
        parent = diff.rows.parent[row]
        for side, tree, position in ((diff.rows.a_pos, a_tree, i), (diff.rows.b_pos, b_tree, j)):
            if position != MISSING:
                expected = tree.parent[position]
                assert (side[parent] if parent != -1 else -1) == expected


@FAST
@given(
    a=traces(), b=traces(), moves=st.lists(st.tuples(st.sampled_from("fuart"), st.integers(0, 40)))
)
def test_folding_splices_what_a_rebuild_would_show(
    a: list[Span], b: list[Span], moves: list[tuple[str, int]]
) -> None:
    view = DiffView.initial(diff_trees(build_tree(a), build_tree(b)))
    for move, at in moves:
        row = at % view.diff.size
        if move == "f":
            view.fold(row)
        elif move == "u":
            view.unfold(row)
        elif move == "a":
            view.unfold_all()
        elif move == "r":
            assert view.rows[view.reveal(row)] == row
        else:
            view.toggle(row)
        shown = list(view.rows)
        view.rebuild()
        assert shown == view.rows


@FAST
@given(a=traces(), b=traces())
def test_the_diff_opens_with_only_the_unchanged_subtrees_folded(
    a: list[Span], b: list[Span]
) -> None:
    diff = diff_trees(build_tree(a), build_tree(b))
    view = DiffView.initial(diff)
    for row in range(diff.size):
        below = range(row + 1, diff.rows.end[row])
        unchanged_below = bool(below) and all(diff.status[r] == SAME for r in below)
        assert view.is_folded(row) == unchanged_below
    # Every difference shows, and n visits each one's head.
    heads = [r for r in range(diff.size) if diff.is_difference(r)]
    assert all(view.shown_at(r) is not None for r in heads)
    visited, row = [], -1
    for _ in heads:
        row = view.next_difference(row)
        visited.append(row)
    assert visited == heads
