"""The store's contract (backend.TraceStore and what serve and the keys CLI use), run on both
stores: SQLite and PostgreSQL give the same rows, in the same order, page the same way, keep
and expire the same traces, remember Idempotency-Keys and alert rounds the same way."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from tests.support.builders import add_bulk_traces
from tui.server.alerts.metrics import percentile_95
from tui.server.store.alert_rows import AlertEventRow, AlertState, DeliveryRow, new_alert
from tui.server.store.rows import Once, SpanGroup, SpanRow, TracePosition, new_project

NOW = 1_795_000_000_000
DAY = 86_400_000


def span(
    trace: str,
    span_id: str,
    start: int,
    duration: int = 10,
    parent: str | None = None,
    name: str | None = None,
    cost: float = 0.0,
    tokens: tuple[int, int] = (0, 0),
    status: str = "ok",
    model: str | None = None,
    attributes: str = "{}",
    kind: str = "chain",
) -> SpanRow:
    return SpanRow(
        trace,
        span_id,
        parent,
        name or span_id,
        kind,
        model,
        start,
        duration,
        *tokens,
        cost,
        status,
        "boom" if status == "error" else None,
        attributes,
    )


def with_project(store: Any, project_id: str = "p", retention_days: int = 30) -> None:
    with store.transaction() as db:
        store.insert_project(db, project_id, None, retention_days, project_id=project_id)


def test_projects_are_listed_oldest_first(store: Any) -> None:
    with store.transaction() as db:
        store.insert_project(db, "b", "second", 7, project_id="proj_b", created_at=2)
        store.insert_project(db, "a", None, 30, project_id="proj_a", created_at=1)
    assert [p.id for p in store.list_projects()] == ["proj_a", "proj_b"]
    assert store.get_project("proj_b") == new_project("b", "second", 7, "proj_b", 2)
    assert store.get_project("missing") is None
    assert [p.id for p in store.list_projects(only="proj_b")] == ["proj_b"]


def test_ingest_sums_traces_and_a_resent_span_replaces_itself(store: Any) -> None:
    with_project(store)
    root = span("t1", "s1", NOW, 100, name="root", attributes='{"input.value": "hi there"}')
    call = span("t1", "s2", NOW + 5, 20, "s1", "call", 0.25, (10, 20), "error", "gpt-4o")
    store.ingest([[SpanGroup("p", None, '{"service.name": "x"}', [root, call])]])
    # The same spans again, and a third span in a later call: sums from all stored spans.
    late = span("t1", "s3", NOW + 200, 50, "s1", "late", 0.5, (1, 2), model="gpt-4o")
    store.ingest([[SpanGroup("p", None, "{}", [call, late])], [SpanGroup("p", None, "{}", [call])]])
    (trace,) = store.find_traces("t1")
    assert trace.project_id == "p" and trace.name == "root"
    assert (trace.started_at, trace.duration_ms, trace.span_count) == (NOW, 250, 3)
    assert (trace.input_tokens, trace.output_tokens, trace.total_cost_usd) == (11, 22, 0.75)
    assert (trace.status, trace.error_count) == ("error", 1)
    assert trace.attributes == '{"service.name": "x"}' and trace.listed_at == NOW
    assert trace.input_preview == "hi there"
    assert [s.id for s in store.iter_spans("t1", "p")] == ["s1", "s2", "s3"]
    assert store.list_spans("t1", "p")[1] == store.list_spans("t1")[1]
    assert store.models_of("p", ["t1", "none"]) == {"t1": {"gpt-4o": (0.75, 33)}}
    assert store.count("spans") == 3 and store.count("traces") == 1


def test_a_late_root_names_the_trace_and_moves_its_start_but_not_its_place(store: Any) -> None:
    with_project(store)
    store.ingest([[SpanGroup("p", None, "{}", [span("t1", "child", NOW, 10, "root")])]])
    store.ingest([[SpanGroup("p", None, "{}", [span("t1", "root", NOW - 50, 100, name="Run")])]])
    trace = store.get_trace("t1", "p")
    assert trace is not None and trace.name == "Run"
    assert (trace.started_at, trace.duration_ms, trace.listed_at) == (NOW - 50, 100, NOW)


def test_a_trace_id_is_its_projects_and_names_route_to_one_project(store: Any) -> None:
    with_project(store, "proj_a")
    store.ingest([[SpanGroup("proj_a", None, "{}", [span("t1", "s1", NOW, name="a's")])]])
    # The workspace key's spans go by the resource's name: made once, then found by name.
    first = [SpanGroup(None, "made", "{}", [span("t1", "s1", NOW, name="made's")])]
    second = [SpanGroup(None, "made", "{}", [span("t2", "s1", NOW)])]
    store.ingest([first, second])
    store.ingest([[SpanGroup(None, None, "{}", [span("t3", "s1", NOW)])]])
    made = [p for p in store.list_projects() if p.name == "made"]
    assert len(made) == 1
    assert [(t.project_id, t.name) for t in store.find_traces("t1")] == sorted(
        [("proj_a", "a's"), (made[0].id, "made's")]
    )
    assert store.get_trace("t1") is None  # two projects hold it
    assert [t.id for t in store.find_traces("t2", made[0].id)] == ["t2"]
    assert [p.name for p in store.list_projects() if p.name == "default"] == ["default"]
    assert [s.name for s in store.iter_spans("t1", "proj_a")] == ["a's"]


def test_pages_are_newest_first_keyset_paged_and_filtered_by_retention(store: Any) -> None:
    with_project(store)
    add_bulk_traces(store, "p", 25, NOW, span=25_000)  # one trace a second, newest first
    with store.transaction() as db:  # two traces at one instant: ordered by id
        store.insert_traces(db, [("p-tie-a", "p", "a", NOW - 500, 1, 1, 0, 0, 0.0, "ok", 0, "{}")])
        store.insert_traces(db, [("p-tie-b", "p", "b", NOW - 500, 1, 1, 0, 0, 0.0, "ok", 0, "{}")])
    seen, after, pages = [], None, 0
    while True:
        rows, more = store.list_traces("p", 0, NOW + 1, 10, after)
        seen += [r.id for r in rows]
        pages += 1
        if not more:
            break
        after = TracePosition(rows[-1].listed_at, rows[-1].id)
    assert pages == 3 and len(seen) == 27 == len(set(seen))
    assert seen[:3] == ["p-00000000", "p-tie-b", "p-tie-a"]
    assert seen[-1] == "p-00000024"
    window, _ = store.list_traces("p", NOW - 3001, NOW - 1000, 100)
    assert [r.id for r in window] == ["p-00000001", "p-00000002", "p-00000003"]
    kept, more = store.list_traces("p", 0, NOW + 1, 100, kept_since=NOW - 2000)
    assert [r.id for r in kept] == ["p-00000000", "p-tie-b", "p-tie-a", "p-00000001", "p-00000002"]
    assert more is False


def test_spans_keep_their_text_exactly(store: Any) -> None:
    with_project(store)
    attributes = '{"a": [1, {"b": "漢字 \\u2028 \\"q\\""}], "x": null, "y": 1.50}'
    odd = span("t1", "s1", NOW, name="span \x1b[2J ✓", attributes=attributes)
    store.ingest([[SpanGroup("p", None, "{}", [odd])]])
    (read,) = store.list_spans("t1", "p")
    assert read.attributes == attributes and read.name == "span \x1b[2J ✓"


def test_create_once_remembers_the_first_answer_even_when_racing(open_store: Any) -> None:
    store = open_store()
    once = Once("kh", "idem-1", "hash-1")
    project = new_project("p", None, 30, "proj_1", 1)
    assert store.create_once(project, once, 201, {"id": "proj_1"}) is None
    again = store.create_once(new_project("p", None, 30, "proj_2", 2), once, 201, {})
    assert again is not None and again.request_hash == "hash-1" and again.body == {"id": "proj_1"}
    assert [p.id for p in store.list_projects()] == ["proj_1"]
    # Eight requests with one new key at once, each through its own store handle.
    stores = [open_store() for _ in range(4)]
    results: list[Any] = []
    race = Once("kh", "idem-2", "hash-2")

    def create(n: int) -> None:
        row = new_project("r", None, 30, f"proj_r{n}", 10 + n)
        results.append(stores[n % 4].create_once(row, race, 201, {"n": n}))

    threads = [threading.Thread(target=create, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(result is None for result in results) == 1
    assert len([p for p in store.list_projects() if p.name == "r"]) == 1
    assert store.forget_responses(NOW * 10) == 2


def test_keys_are_stored_hashed_found_and_revoked(store: Any) -> None:
    assert not store.has_workspace_key()
    workspace = store.add_key("tt_ws_secret", None, "ws")
    project = store.add_key("tt_pk_secret", "p", "project key")
    assert store.has_workspace_key()
    assert store.key_scope("tt_ws_secret").is_workspace
    assert store.key_scope("tt_pk_secret").project_id == "p"
    assert store.key_scope("unknown") is None
    assert sorted(k.label for k in store.list_keys()) == ["project key", "ws"]
    assert store.find_keys(project.key_id[:6]) == [project]
    assert store.find_keys("ws") == [workspace]
    assert not store.revoke_key(project.key_id[:6])  # a prefix never revokes
    assert store.revoke_key(project.key_id)
    assert store.key_scope("tt_pk_secret") is None and store.list_keys() == [workspace]


def test_alert_rounds_events_and_the_webhook_outbox(store: Any) -> None:
    with_project(store)
    alert = new_alert(
        "p", "slow", "latency_p95_ms_5m", "gt", 100.0, "http://127.0.0.1/x", "al_1", 1
    )
    with store.transaction() as db:
        store.insert_alert(db, secret="whsec_abc", **alert._asdict())
    assert store.get_alert("al_1") == alert and store.all_alerts() == [alert]
    assert store.list_alerts("p") == [alert]
    assert store.alert_secret("al_1").secret == "whsec_abc"
    firing = AlertState("al_1", "firing", 250.0, NOW, NOW)
    event = AlertEventRow("evt_1", "al_1", "state", NOW, "no_data", "firing", 250.0)
    delivery = DeliveryRow("msg_1", "al_1", "alert.firing", "{}", NOW, 0, NOW)
    assert store.record_round([firing], {"al_1": "no_data"}, [event], [delivery]) == []
    # A second evaluator that started from the old state is left alone.
    other = AlertEventRow("evt_2", "al_1", "state", NOW, "no_data", "firing", 1.0)
    assert store.record_round([firing], {"al_1": "no_data"}, [other], []) == ["al_1"]
    assert store.alert_states() == {"al_1": firing} == store.alert_states("p")
    assert store.alert_states("elsewhere") == {}
    assert store.due_deliveries(NOW - 1, 10) == [] and store.due_deliveries(NOW, 10) == [delivery]
    assert store.next_delivery_at() == NOW and store.get_delivery("msg_1") == delivery
    attempt = AlertEventRow(
        "dlv_1", "al_1", "delivery", NOW + 1, webhook_id="msg_1", attempt=1, ok=True
    )
    store.record_attempt("msg_1", attempt, None, "delivered")
    assert store.next_delivery_at() is None
    page, more = store.list_alert_events("al_1", 1)
    assert [e.id for _, e in page] == ["dlv_1"] and more and page[0][1].ok is True
    rest, more = store.list_alert_events("al_1", 5, before=page[0][0])
    assert [e.id for _, e in rest] == ["evt_1"] and not more
    assert store.forget_alert_history(NOW + 2, NOW + 2) == 3


def test_windows_give_counts_costs_and_the_p95_of_durations(store: Any) -> None:
    with_project(store)
    durations = [5, 80, 13, 400, 21, 9, 77, 150, 3, 64, 33, 250]
    groups = [
        span(f"t{n:02d}", "s", NOW + n, d, cost=0.5, status="error" if n % 5 == 0 else "ok")
        for n, d in enumerate(durations)
    ]
    store.ingest([[SpanGroup("p", None, "{}", groups)]])
    stats = store.window_stats("p", NOW, NOW + 12, p95=True)
    assert (stats.traces, stats.errors, stats.cost_usd) == (12, 3, 6.0)
    assert stats.p95_ms == pytest.approx(percentile_95([float(d) for d in durations]))
    # The slowest among the top 5% the p95 is read from (two of twelve).
    assert stats.slowest == [("t03", 400.0), ("t11", 250.0)]
    assert store.window_stats("p", NOW, NOW + 2, errors=False, cost=False)[:3] == (2, 0, 0.0)
    assert store.window_stats("p", 0, 1).traces == 0
    assert store.worst_traces("p", NOW, NOW + 12, "cost", 2)[0][1] == 0.5
    assert store.worst_traces("p", NOW, NOW + 12, "error_rate") == [
        ("t10", 1.0),
        ("t05", 1.0),
        ("t00", 1.0),
    ]
    assert store.worst_traces("p", NOW, NOW + 12, "latency", 1) == [("t03", 400.0)]
    assert store.sample_traces("p", [(NOW, NOW + 4), (NOW + 4, NOW + 8), (0, 1)]) == [
        ("t00", 1),
        ("t04", 1),
    ]


def test_prompt_attributes_of_a_traces_first_llm_spans(store: Any) -> None:
    with_project(store)
    attributes = (
        '{"gen_ai.prompt.0.content": "hello", "other": 1, "llm.input_messages.0.message.content":'
        ' "hi", "gen_ai.prompt.1.tokens": [1, 2]}'
    )
    spans = [
        span("t1", "s1", NOW, kind="llm", attributes=attributes),
        span("t1", "s2", NOW + 1, kind="llm", attributes="not json"),
        span("t1", "s3", NOW + 2, kind="chain", attributes='{"gen_ai.prompt.0.content": "x"}'),
    ]
    store.ingest([[SpanGroup("p", None, "{}", spans)]])
    expected = [
        ("gen_ai.prompt.0.content", "hello"),
        ("llm.input_messages.0.message.content", "hi"),
        ("gen_ai.prompt.1.tokens", [1, 2]),
    ]
    assert store.prompt_attributes("t1", 3, "p") == expected
    assert store.prompt_attributes("t1") == expected
    assert store.prompt_attributes("t1", 3, "elsewhere") == []


def test_prompt_attributes_of_several_traces_at_once_are_each_traces_own(store: Any) -> None:
    """The alert round's batch read: per trace what prompt_attributes gives, in order, and
    an empty list for a trace with no prompt, no LLM span, or not in the project."""
    with_project(store)
    spans = [
        span(
            f"t{n}",
            f"s{m}",
            NOW + m,
            kind="llm",
            attributes=json.dumps(
                {"gen_ai.prompt.0.content": f"t{n} s{m}", "gen_ai.prompt.1.tokens": [n, m]}
            ),
        )
        for n in range(3)
        for m in range(4)
    ]
    spans.append(
        span("quiet", "s1", NOW, kind="chain", attributes='{"gen_ai.prompt.0.content": "x"}')
    )
    store.ingest([[SpanGroup("p", None, "{}", spans)]])
    asked = ["t2", "quiet", "t0", "missing"]
    found = store.prompt_attributes_of("p", asked, 3)
    assert list(found) == asked
    for trace_id in asked:
        assert found[trace_id] == store.prompt_attributes(trace_id, 3, "p")
    assert [value for key, value in found["t2"] if key.endswith("content")] == [
        "t2 s0",
        "t2 s1",
        "t2 s2",
    ]
    assert found["quiet"] == found["missing"] == []
    assert store.prompt_attributes_of("elsewhere", ["t0"], 3) == {"t0": []}
    assert store.prompt_attributes_of("p", [], 3) == {}


def test_retention_goes_by_the_newest_span_in_bounded_batches(store: Any) -> None:
    with_project(store, "p", retention_days=1)
    old = NOW - 3 * DAY
    store.ingest([[SpanGroup("p", None, "{}", [span(f"t{n}", "s", old + n) for n in range(5)])]])
    # t0 has a span from now: kept, whole, with its old root.
    store.ingest([[SpanGroup("p", None, "{}", [span("t0", "new", NOW - 1000, 10, "s")])]])
    assert store.expire(NOW, batch=2, max_batches=1) == 2  # bounded: the rest waits
    assert store.count("traces") == 3
    assert store.expire(NOW, batch=2) == 2
    assert [t.id for t in store.find_traces("t0")] == ["t0"] and store.count("spans") == 2
    assert store.expire(NOW + 2 * DAY) == 1
    assert store.count("traces") == 0 and store.count("spans") == 0
