"""Users, sessions, tags, output previews and search text as a batch's sums read them
(ingest.summaries, ingest.associations), alike from decoded attributes and from stored JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tui.server.ingest.associations import MAX_TAGS, associations_in
from tui.server.ingest.summaries import summarize
from tui.server.search.text import INPUT, MAX_TRACE, OTHER, OUTPUT, in_part, joined
from tui.server.store.rows import SpanRow, TraceSums

TRACE = "ab" * 16


def row(
    span_id: str, parent: str | None, start: int, kind: str = "llm", **attributes: Any
) -> SpanRow:
    return SpanRow(
        TRACE,
        span_id,
        parent,
        f"name {span_id}",
        kind,
        None,
        start,
        10,
        0,
        0,
        0.0,
        "ok",
        "it failed" if span_id == "bad" else None,
        json.dumps(attributes),
    )


def both_ways(spans: list[SpanRow]) -> TraceSums:
    """The sums from decoded attributes, checked equal to those from the stored JSON."""
    decoded = [json.loads(s.attributes) for s in spans]
    (from_decoded,) = summarize(spans, decoded)
    (from_json,) = summarize(spans)
    assert from_decoded == from_json
    return from_decoded


def test_the_roots_user_and_session_win_over_an_earlier_childs() -> None:
    sums = both_ways(
        [
            row("c1", "r1", 1, **{"session.id": "child", "enduser.id": "u-child"}),
            row("r1", None, 2, kind="chain", **{"gen_ai.conversation.id": "root"}),
        ]
    )
    assert (sums.session_id, sums.user_id) == ("root", "u-child")


@pytest.mark.parametrize(
    ("attributes", "found"),
    [
        ({"user.id": 42}, ("42", None, ())),
        ({"user.id": "  "}, (None, None, ())),
        ({"tag.tags": "not json ["}, (None, None, ("not json [",))),
        ({"tag.tags": '["a", 1, null, ""]'}, (None, None, ("a", "1"))),
        ({"metadata": '{"user_id": "m", "session_id": "s"}'}, ("m", "s", ())),
        ({"metadata": "[1, 2]", "session.id": "x"}, (None, "x", ())),
        (
            {"langfuse.tags": ["t"] * 3, "langfuse.trace.tags": ["u"]},
            (None, None, ("t", "t", "t", "u")),
        ),
        # OpenInference's `metadata` (a LangChain run's): tags, and Langfuse's keys in it.
        ({"metadata": '{"tags": ["support", "beta"]}'}, (None, None, ("support", "beta"))),
        ({"metadata": {"langfuse_tags": "one"}}, (None, None, ("one",))),
        (
            {
                "user.id": "u",
                "session.id": "s",
                "tag.tags": ["a"],
                "metadata": '{"user_id": "m", "tags": ["b"], "langfuse_tags": ["c"]}',
            },
            ("u", "s", ("a", "b", "c")),
        ),
        (
            {"metadata": '{"langfuse_user_id": "lu", "langfuse_session_id": "ls"}'},
            ("lu", "ls", ()),
        ),
        ({"metadata": '{"user_id": "m", "langfuse_user_id": "lu"}'}, ("m", None, ())),
    ],
)
def test_values_are_read_tolerantly(attributes: dict[str, Any], found: tuple[Any, ...]) -> None:
    assert tuple(associations_in(attributes)) == found


def test_tags_are_a_bounded_union_in_order() -> None:
    spans = [row(f"s{i}", "r", i, **{"tag.tags": [f"t{i}", "common"]}) for i in range(80)]
    sums = both_ways(spans)
    assert sums.tags[:3] == ("t0", "common", "t1") and len(sums.tags) == MAX_TAGS


def test_the_output_is_the_roots_else_the_last_llm_spans() -> None:
    children = [
        row("c1", "r1", 1, **{"output.value": "first"}),
        row(
            "c2",
            "r1",
            3,
            **{
                "gen_ai.output.messages": json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": "second"}]}]
                )
            },
        ),
        row("t1", "r1", 4, kind="tool", **{"output.value": "a tool's"}),
    ]
    assert both_ways(children).output_preview == "second"
    root = row("r1", None, 0, kind="agent", **{"output.value": '{"answer": "the root\'s"}'})
    assert both_ways([*children, root]).output_preview == "the root's"


def test_the_text_holds_names_errors_inputs_and_outputs_within_its_bound() -> None:
    spans = [
        row(
            "bad",
            None,
            0,
            **{
                "input.value": "QUESTION",
                "llm.output_messages.0.message.content": "REPLY",
                "tracetui.x": "hidden",
                "other": "skipped",
            },
        ),
        row("big", "bad", 1, **{"input.value": "x" * 50_000}),
    ]
    text = both_ways(spans).search_text
    for part in ("name bad", "it failed", "QUESTION", "REPLY", "name big"):
        assert part.casefold() in text  # stored folded, as it is searched
    assert "hidden" not in text and "skipped" not in text
    assert len(text) <= MAX_TRACE


def test_a_string_repeated_by_later_spans_is_taken_once_and_leaves_room_for_new_text() -> None:
    """Each model call carries the conversation so far: the repeats are not taken again, and
    they do not use up the bound that the new text at the end needs."""
    first, answer = "Q" * 1500, "A" * 1500
    spans = [
        row("s1", None, 0, **{"input.value": first, "output.value": answer}),
        row("s2", "s1", 1, **{"input.value": [first, answer, "B" * 1500]}),
        row("s3", "s1", 2, **{"input.value": [first, answer], "output.value": "C" * 1000 + "END"}),
    ]
    text = both_ways(spans).search_text
    assert text.count(first.casefold()) == 1 and text.count(answer.casefold()) == 1
    assert text.endswith("end") and len(text) <= MAX_TRACE


@pytest.mark.parametrize("key", ["tag.tags", "metadata", "langfuse.tags"])
def test_json_too_deep_for_the_parser_is_read_as_nothing(key: str) -> None:
    """Tags or metadata nested deeper than Python's parser goes (RecursionError, not
    ValueError) are left out, as unreadable JSON is: they once failed the whole batch (500)."""
    deep = "[" * 5000 + "]" * 5000 if key.endswith("tags") else '{"a":' * 5000 + "1" + "}" * 5000
    spans = [row("root", None, 0, "chain", **{key: deep, "user.id": "alice"})]
    sums = both_ways(spans)
    assert (sums.user_id, sums.tags) == ("alice", ())


def test_each_string_is_marked_input_output_or_other_and_cannot_forge_a_mark() -> None:
    """What `input:` and `output:` find: an input's strings after INPUT, an output's after
    OUTPUT, names and errors after OTHER; a string holding a mark of its own has it as a
    space, so an output cannot pass for an input."""
    spans = [
        row(
            "agent",
            None,
            0,
            **{
                "input.value": "Where is my refund?",
                "llm.output_messages.0.message.content": f"Refund sent{INPUT}forged",
                "gen_ai.prompt.0.content": "system words",
                "gen_ai.prompt.1.content": "Grüße aus der STRAßE",
                "exception.message": "an error message",
            },
        )
    ]
    # Stored folded (search.text.folded), the marks as they are.
    text = both_ways(spans).search_text
    assert f"{INPUT}where is my refund?" in text and f"{INPUT}system words" in text
    assert f"{OUTPUT}refund sent forged" in text
    assert f"{INPUT}grüsse aus der strasse" in text and in_part(text, INPUT, "STRASSE")
    assert f"{OTHER}name agent" in text and f"{OTHER}an error message" in text
    assert in_part(text, INPUT, "REFUND") and not in_part(text, INPUT, "forged")
    assert in_part(text, OUTPUT, "refund sent") and not in_part(text, OUTPUT, "where")
    assert not in_part(text, INPUT, "error message")
    # A text stored before the marks (strings joined by newlines) gets the new ones after it,
    # separated by their mark; only the new ones are found by input:.
    assert (
        joined("old question\nold answer", f"{INPUT}new") == f"old question\nold answer{INPUT}new"
    )
    assert not in_part("old question", INPUT, "question")
