"""One model call recorded by nested spans counts once even when its spans come in different
OTLP exports (a BatchSpanProcessor sends the inner span, which ends first, before the outer):
on both stores, in any order, and however often a span is sent again, a trace's spans and
totals are those of the same spans sent in one export (conventions.counted_once)."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from tests.support.otlp import request
from tests.support.otlp import span as otlp_span
from tui.server.ingest.body import PROTOBUF
from tui.server.ingest.costs import PRICES
from tui.server.ingest.processes import decode, groups_of

NOW = 1_795_000_000_000
ONE_EXPORT = bytes.fromhex("a1" * 16)  # the reference: every span in one export
SPLIT = bytes.fromhex("b2" * 16)  # the same spans, split across exports

# A model call as a framework records it (pydantic-ai's `chat` span, with the messages), the
# HTTP client's instrumentation below it (logfire's openai span), and an SDK's own span below
# that: each reports the same tokens and cost. "beside" is a second, real call; "quiet" a
# model-call span below the outer reporting a cost but no tokens.
CALL = {
    "gen_ai.operation.name": "chat",
    "gen_ai.request.model": "gpt-4o-mini",
    "gen_ai.usage.input_tokens": 100,
    "gen_ai.usage.output_tokens": 20,
    "gen_ai.usage.cache_read.input_tokens": 40,
    "gen_ai.usage.reasoning.output_tokens": 5,
    "gen_ai.usage.cost": 0.25,
}
QUIET = {"gen_ai.operation.name": "chat", "gen_ai.usage.cost": 0.125}
PARENTS = {
    "agent": None,
    "outer": "agent",
    "inner": "outer",
    "sdk": "inner",
    "beside": "agent",
    "quiet": "outer",
    "noted": "agent",
    "below_noted": "noted",
    "twin": "outer",  # a second call below the outer: the outer's children are then calls
    **{"planner": "agent"},
    **{f"step{n}": "planner" for n in range(1, 10)},
}
ATTRIBUTES: dict[str, dict[str, Any]] = {
    "agent": {"gen_ai.operation.name": "invoke_agent"},
    "quiet": QUIET,
    # A model-call span reporting no tokens whose own attribute reads like the service's mark:
    # a sender's text, not a mark (the stores match the mark as they write it).
    "noted": {"gen_ai.operation.name": "chat", "note": "tracetui.counted_in"},
}
# The trace: a model-call span reporting its own tokens (2,459 in, 1,259 out) around
# nine model calls, each reporting its own (16,582 and 6,177 between them); costs estimated
# from the price table, so a call counted again is priced again.
PLANNER_TOKENS = (2_459, 1_259)
STEP_TOKENS = [(1_842, 686)] * 8 + [(1_846, 689)]


def estimated_call(tokens: tuple[int, int]) -> dict[str, Any]:
    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.usage.input_tokens": tokens[0],
        "gen_ai.usage.output_tokens": tokens[1],
    }


ATTRIBUTES["planner"] = estimated_call(PLANNER_TOKENS)
for n, step_tokens in enumerate(STEP_TOKENS, 1):
    ATTRIBUTES[f"step{n}"] = estimated_call(step_tokens)
STEPS = [f"step{n}" for n in range(1, 10)]
IDS = {name: bytes([n + 1]) * 8 for n, name in enumerate(PARENTS)}
HEX = {name: value.hex() for name, value in IDS.items()}


def spans_of(trace: bytes, names: list[str]) -> list[Any]:
    out = []
    for name in names:
        parent = PARENTS[name]
        out.append(
            otlp_span(
                trace,
                IDS[name],
                IDS[parent] if parent else b"",
                name=name,
                start_ms=NOW + list(PARENTS).index(name),  # the same in every export
                attributes=ATTRIBUTES.get(name, CALL),
            )
        )
    return out


def export(store: Any, trace: bytes, names: list[str], *more: bytes) -> None:
    """`names`' spans through ingest as one OTLP export (decoding counts calls once in it), in
    `trace` and each of `more`."""
    body = request(*(s for t in (trace, *more) for s in spans_of(t, names))).SerializeToString()
    store.ingest([groups_of(decode(PROTOBUF, body, PRICES, NOW), "p")])


def stored(store: Any, trace: bytes) -> tuple[Any, list[Any]]:
    (row,) = store.find_traces(trace.hex(), "p")
    totals = (row.span_count, row.input_tokens, row.output_tokens, row.total_cost_usd)
    return totals, store.list_spans(trace.hex(), "p")


def check_split(store: Any, exports: list[list[str]]) -> list[Any]:
    """Stores the spans of `exports` in one export and split as given; both come out the
    same. Returns the split trace's spans."""
    with store.transaction() as db:
        store.insert_project(db, "p", None, 30, project_id="p")
    names = sorted({name for names in exports for name in names}, key=list(PARENTS).index)
    export(store, ONE_EXPORT, names)
    for names_in_export in exports:
        export(store, SPLIT, names_in_export)
    reference, split = stored(store, ONE_EXPORT), stored(store, SPLIT)
    assert split == reference
    return split[1]


def counted_in(span: Any) -> str | None:
    value = json.loads(span.attributes).get("tracetui.counted_in")
    return value if isinstance(value, str) else None


TWO_LEVELS = [
    [["agent", "outer"], ["inner"]],  # the outer first
    [["inner"], ["agent", "outer"]],  # the inner first (it ends first)
    [["inner"], ["outer"], ["agent"]],
    [["agent", "outer"], ["inner"], ["outer"]],  # the outer sent again
    [["inner"], ["agent", "outer"], ["inner"]],  # the inner sent again
    [["agent", "outer"], ["inner"], ["inner"]],
    [["inner"], ["agent", "outer"], ["outer"]],
    [["agent", "outer", "inner"], ["inner"]],  # both in one export, then the inner again
    [["agent", "outer", "inner"], ["outer"], ["inner", "outer"]],
]


@pytest.mark.parametrize("exports", TWO_LEVELS, ids=lambda e: "+".join("_".join(n) for n in e))
def test_a_call_split_across_exports_counts_once(store: Any, exports: list[list[str]]) -> None:
    spans = {span.name: span for span in check_split(store, exports)}
    outer, inner = spans["outer"], spans["inner"]
    assert (outer.input_tokens, outer.output_tokens, outer.cost_usd) == (100, 20, 0.25)
    assert (outer.cost_source, counted_in(outer)) == ("reported", None)
    assert (inner.input_tokens, inner.output_tokens, inner.cost_usd, inner.cost_source) == (
        0,
        0,
        0.0,
        None,
    )
    assert (inner.cache_read_tokens, inner.reasoning_tokens) == (0, 0)
    assert counted_in(inner) == HEX["outer"]
    assert json.loads(inner.attributes)["gen_ai.usage.input_tokens"] == 100  # kept as sent
    (totals, _) = stored(store, SPLIT)
    assert totals == (3, 100, 20, 0.25)


THREE_LEVELS = [
    [[first], [second], [third]]
    for first, second, third in itertools.permutations(("outer", "inner", "sdk"))
] + [
    [["outer", "inner"], ["sdk"]],
    [["sdk"], ["outer", "inner"]],
    [["inner", "sdk"], ["outer"]],
    [["outer"], ["inner", "sdk"]],
    [["outer", "sdk"], ["inner"]],
    [["inner"], ["outer", "sdk"], ["inner"], ["sdk"]],
]


@pytest.mark.parametrize("exports", THREE_LEVELS, ids=lambda e: "+".join("_".join(n) for n in e))
def test_a_call_recorded_three_times_counts_once_in_any_order(
    store: Any, exports: list[list[str]]
) -> None:
    spans = {span.name: span for span in check_split(store, exports)}
    assert [(spans[n].input_tokens, counted_in(spans[n])) for n in ("outer", "inner", "sdk")] == [
        (100, None),
        (0, HEX["outer"]),
        (0, HEX["inner"]),
    ]
    (totals, _) = stored(store, SPLIT)
    assert totals == (3, 100, 20, 0.25)


@pytest.mark.parametrize(
    "exports",
    [[["agent", "outer"], ["beside"]], [["beside"], ["outer"]]],
    ids=lambda e: "+".join("_".join(n) for n in e),
)
def test_two_calls_side_by_side_both_count(store: Any, exports: list[list[str]]) -> None:
    spans = check_split(store, [*exports, ["agent"]])
    assert [(s.name, s.input_tokens, counted_in(s)) for s in spans if s.kind == "llm"] == [
        ("outer", 100, None),
        ("beside", 100, None),
    ]
    (totals, _) = stored(store, SPLIT)
    assert totals == (3, 200, 40, 0.5)


@pytest.mark.parametrize(
    "exports",
    [[["outer", "quiet"]], [["outer"], ["quiet"]], [["quiet"], ["outer"]]],
    ids=lambda e: "+".join("_".join(n) for n in e),
)
def test_a_model_call_span_reporting_no_tokens_is_stored_as_sent(
    store: Any, exports: list[list[str]]
) -> None:
    """Only a span reporting tokens is counted in its parent: the stores tell such a span by
    its mark, so the mark must mean it reported them, in every order."""
    spans = {span.name: span for span in check_split(store, exports)}
    quiet = spans["quiet"]
    assert (quiet.kind, quiet.cost_usd, quiet.cost_source, counted_in(quiet)) == (
        "llm",
        0.125,
        "reported",
        None,
    )


def test_traces_sharing_span_ids_in_one_export_each_count_once(store: Any) -> None:
    with store.transaction() as db:
        store.insert_project(db, "p", None, 30, project_id="p")
    export(store, ONE_EXPORT, ["agent", "outer", "inner"], SPLIT)
    for trace in (ONE_EXPORT, SPLIT):
        totals, spans = stored(store, trace)
        assert totals == (3, 100, 20, 0.25)
        assert [counted_in(s) for s in spans] == [None, None, HEX["outer"]]


@pytest.mark.parametrize(
    "exports",
    [[["agent", "noted"], ["below_noted"]], [["below_noted"], ["agent", "noted"]]],
    ids=lambda e: "+".join("_".join(n) for n in e),
)
def test_a_parents_text_that_reads_like_the_mark_does_not_count_its_child_in_it(
    store: Any, exports: list[list[str]]
) -> None:
    spans = {span.name: span for span in check_split(store, exports)}
    below = spans["below_noted"]
    assert (below.input_tokens, below.output_tokens, counted_in(below)) == (100, 20, None)


PLANNER_SPLITS = [
    [["agent", "planner", *STEPS]],  # one export: the decoder's rule
    [STEPS, ["agent", "planner"]],  # the calls first (they end first)
    [["agent", "planner"], STEPS],
    [["agent", "planner", "step1"], STEPS[1:]],  # one call counted in the planner, then not
    [["agent", "planner"], ["step1"], STEPS[1:]],
    [["step1"], ["agent", "planner"], ["step2"], STEPS[2:], ["step1"]],
    [["agent", "planner", "step1"], ["step2"], ["step1"]],  # the first call sent again
]


@pytest.mark.parametrize(
    "exports", PLANNER_SPLITS, ids=lambda e: "+".join("_".join(n)[:24] for n in e)
)
def test_a_model_span_around_nine_calls_counts_them_all(
    store: Any, exports: list[list[str]]
) -> None:
    """Issue 39, point 11: the nine calls are nine calls beside one another, not the planner's
    call recorded again, so each counts, and so does the planner's own."""
    spans = {span.name: span for span in check_split(store, exports)}
    sent = set().union(*map(set, exports))
    steps = [name for name in STEPS if name in sent]
    planner = spans["planner"]
    assert (planner.input_tokens, planner.output_tokens, counted_in(planner)) == (
        2_459,
        1_259,
        None,
    )
    for name in steps:
        step = spans[name]
        assert (step.input_tokens, step.output_tokens) == STEP_TOKENS[STEPS.index(name)], name
        assert (step.cost_source, counted_in(step)) == ("estimated", None), name
        assert step.cost_usd > 0, name
    totals, _ = stored(store, SPLIT)
    if len(steps) == 9:
        assert totals[1:3] == (19_041, 7_436)
        cost = sum(span.cost_usd for span in spans.values())
        assert totals[3] == pytest.approx(cost)


@pytest.mark.parametrize(
    "exports",
    [
        [["agent", "outer", "inner", "sdk"], ["twin"]],
        [["twin"], ["agent", "outer", "inner", "sdk"]],
        [["sdk"], ["inner"], ["agent", "outer"], ["twin"]],
        [["agent", "outer", "inner"], ["twin"], ["sdk"]],
    ],
    ids=lambda e: "+".join("_".join(n) for n in e),
)
def test_a_second_call_below_a_parent_makes_the_first_count_again(
    store: Any, exports: list[list[str]]
) -> None:
    """The outer's one child is its call recorded again; once a second child reporting tokens
    comes, both are calls of their own, and the one counted in the outer counts again (its
    tokens and cost read again from its attributes, the mark gone). The SDK's span below the
    inner stays counted in the inner, its only child."""
    spans = {span.name: span for span in check_split(store, exports)}
    assert [
        (spans[n].input_tokens, spans[n].cost_usd, counted_in(spans[n]))
        for n in ("outer", "inner", "twin")
    ] == [(100, 0.25, None)] * 3
    assert "tracetui.counted_in" not in spans["inner"].attributes
    if "sdk" in spans:
        assert (spans["sdk"].input_tokens, counted_in(spans["sdk"])) == (0, HEX["inner"])
    (totals, _) = stored(store, SPLIT)
    assert totals[1:] == (300, 60, 0.75)
