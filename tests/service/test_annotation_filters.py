"""GET /v1/traces's annotation filters (`annotation`, `label`, `min_score`, `max_score`) on both
stores, against the same filters worked out in Python: alone and combined with the search's
filters, under every sort and order, page by page; over HTTP, carried by the cursor, and a 422
on a malformed one."""

from __future__ import annotations

import itertools
import time
import uuid
from typing import Any

import httpx
import pytest

from tests.service.test_search_store import (
    END,
    NOW,
    START,
    Spec,
    expected,
    fixed_specs,
    walk,
)
from tests.support.service import RunningService
from tui.server.api_keys import hash_key, new_api_key
from tui.server.search.filters import SORTS, TraceFilters
from tui.server.store import annotation_search
from tui.server.store.annotation_rows import NewAnnotation
from tui.server.store.rows import DAY_MS, SpanRow

# (name, label, score, on the span?) of each trace, by its number.
Planned = list[tuple[str, str | None, float | None, bool]]


def planned(i: int) -> Planned:
    found: Planned = []
    if i % 3 == 0:
        score = (i % 10) / 10
        found.append(("correctness", "wrong" if score < 0.5 else "right", score, False))
    if i % 4 == 1:
        found.append(("root_cause", ["retriever", "prompt"][i // 4 % 2], None, True))
    if i % 5 == 2:
        found.append(("note", None, None, i % 2 == 0))
    if i % 7 == 0:
        found.append(("correctness", None, 0.95, True))  # a second one, on the span
    return found


def holds(plan: Planned, f: TraceFilters) -> bool:
    def some(name: str, test: Any) -> bool:
        return any(n == name and test(label, score) for n, label, score, _ in plan)

    return (
        all(some(name, lambda _l, _s: True) for name in f.annotations)
        and all(some(name, lambda lab, _s, v=v: lab == v) for name, v in f.labels)
        and all(some(name, lambda _l, s, b=b: s is not None and s >= b) for name, b in f.min_scores)
        and all(some(name, lambda _l, s, b=b: s is not None and s <= b) for name, b in f.max_scores)
    )


def store_with_annotations(store: Any, project: str) -> list[Spec]:
    with store.transaction() as db:
        store.insert_project(db, project, None, 30, project_id=project)
    found = fixed_specs()
    spans = [
        SpanRow(s.id, "s", None, "step", "chain", None, s.listed_at, 1, 0, 0, 0.0, "ok", None, "{}")
        for s in found
    ]
    with store.transaction() as db:
        store.insert_traces(
            db,
            [s.row(project) for s in found],
            spans,
            texts=[(project, s.id, s.text) for s in found],
        )
    key = new_api_key("pk")
    store.add_key(key, project, "filters")
    items = [
        NewAnnotation(
            s.id, "s" if on_span else None, None, name, label, score, "why", "HUMAN", None, "{}"
        )
        for i, s in enumerate(found)
        for name, label, score, on_span in planned(i)
    ]
    store.add_annotations(project, items, hash_key(key), NOW - 30 * DAY_MS, now=NOW)
    return found


ANNOTATION_FILTERS = [
    TraceFilters(annotations=("note",)),
    TraceFilters(annotations=("note", "root_cause")),
    TraceFilters(labels=(("root_cause", "retriever"),)),
    TraceFilters(labels=(("correctness", "wrong"),)),
    TraceFilters(labels=(("correctness", "wrong"), ("root_cause", "prompt"))),
    TraceFilters(min_scores=(("correctness", 0.5),)),
    TraceFilters(max_scores=(("correctness", 0.3),)),
    TraceFilters(min_scores=(("correctness", 0.3),), max_scores=(("correctness", 0.6),)),
    TraceFilters(min_scores=(("correctness", 0.9),), annotations=("note",)),
    TraceFilters(labels=(("nobody", "x"),)),
]
COMBINED_WITH = [
    TraceFilters(),
    TraceFilters(status="error"),
    TraceFilters(q="alpha"),
    TraceFilters(tags=("prod",), user_id="alice"),
    TraceFilters(min_latency_ms=5),
]


@pytest.mark.parametrize("plan", ["read from the annotations", "walked", "small chunks"])
def test_annotation_filters_under_every_sort_page_to_what_python_finds(
    store: Any, plan: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whichever plan annotation_search picks: candidates from the annotations' indexes (in
    chunks, or whole), or the traces walked in order, each asked."""
    if plan == "read from the annotations":  # under every order, however many they are
        monkeypatch.setattr(store, "annotated_common", 10**9)
    if plan == "walked":  # under an order other than listed_at: the traces walked, each asked
        monkeypatch.setattr(store, "annotated_common", 0)
    if plan == "small chunks":
        monkeypatch.setattr(annotation_search, "MAX_CHUNK", 6)
    project = "p-annotated"
    found = store_with_annotations(store, project)
    plans = {s.id: planned(i) for i, s in enumerate(found)}
    orders = list(itertools.product(SORTS, ("desc", "asc")))
    checked = 0
    for annotated, other, (sort, order) in itertools.product(
        ANNOTATION_FILTERS, COMBINED_WITH, orders
    ):
        f = combined(annotated, other, sort, order)
        wanted = [i for i in expected(found, f) if holds(plans[i], f)]
        assert walk(store, project, f, limit=4) == wanted, f
        checked += bool(wanted)
    assert checked > 100  # most combinations find something to page through


def combined(annotated: TraceFilters, other: TraceFilters, sort: str, order: str) -> TraceFilters:
    return TraceFilters(
        q=other.q,
        status=other.status,
        user_id=other.user_id,
        min_latency_ms=other.min_latency_ms,
        tags=other.tags,
        annotations=annotated.annotations,
        labels=annotated.labels,
        min_scores=annotated.min_scores,
        max_scores=annotated.max_scores,
        sort=sort,
        order=order,
    )


def test_another_projects_annotations_never_match(store: Any) -> None:
    store_with_annotations(store, "p-one")
    with store.transaction() as db:
        store.insert_project(db, "p-two", None, 30, project_id="p-two")
        store.insert_traces(db, [s.row("p-two") for s in fixed_specs()], texts=[])
    for f in ANNOTATION_FILTERS:
        assert walk(store, "p-two", f, limit=50) == [], f


# -- over HTTP ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def service(backend_service: RunningService) -> RunningService:
    return backend_service


def test_the_cursor_carries_the_annotation_filters(service: RunningService) -> None:
    project = f"proj_{uuid.uuid4().hex[:10]}"
    found = store_with_annotations(service.store, project)
    plans = {s.id: planned(i) for i, s in enumerate(found)}
    window = {"from": iso(START), "to": iso(END)}
    f = TraceFilters(labels=(("correctness", "right"),), min_scores=(("correctness", 0.6),))
    f = TraceFilters(labels=f.labels, min_scores=f.min_scores, sort="duration_ms", order="asc")
    wanted = [i for i in expected(found, f) if holds(plans[i], f)]
    assert len(wanted) > 3
    params: dict[str, Any] = {
        "project_id": project,
        **window,
        "label": "correctness:right",
        "min_score": "correctness:0.6",
        "sort": "duration_ms",
        "order": "asc",
        "limit": 2,
    }
    seen: list[str] = []
    with service.client() as api:
        while True:
            page = api.get("traces", params=params)
            assert page.status_code == 200, page.text
            body = page.json()
            seen += [row["id"] for row in body["data"]]
            assert all(row["annotations"]["correctness"]["count"] >= 1 for row in body["data"])
            if not body["has_more"]:
                break
            # Filters sent along with a cursor are ignored: the cursor's hold.
            params = {"project_id": project, "cursor": body["next_cursor"], "label": "x:y"}
    assert seen == wanted


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"label": "no-colon"}, "label"),
        ({"label": ":value"}, "label"),
        ({"label": "name:"}, "label"),
        ({"min_score": "correctness"}, "min_score"),
        ({"min_score": "correctness:high"}, "min_score"),
        ({"max_score": "correctness:nan"}, "max_score"),
        ({"max_score": "correctness:inf"}, "max_score"),
        ({"annotation": "x" * 65}, "annotation"),
        ({"annotation": " "}, "annotation"),
        ({"annotation": [f"n{i}" for i in range(11)]}, "annotation"),
    ],
)
def test_a_malformed_annotation_filter_is_a_422_on_it(
    service: RunningService, params: dict[str, Any], field: str
) -> None:
    with service.client() as api:
        project = api.get("projects").json()["data"][0]["id"]
        answer = api.get("traces", params={"project_id": project, **params})
    assert answer.status_code == 422, answer.text
    assert [d["field"] for d in answer.json()["error"]["details"]] == [field]


def iso(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def test_a_label_value_may_hold_colons_and_a_score_name_too(service: RunningService) -> None:
    project = f"proj_{uuid.uuid4().hex[:10]}"
    found = store_with_annotations(service.store, project)
    key = new_api_key("pk")
    service.store.add_key(key, project, "colons")
    items = [
        NewAnnotation(found[0].id, None, None, "rc", "a:b:c", None, None, "HUMAN", None, "{}"),
        NewAnnotation(found[1].id, None, None, "eval:v2", None, 0.7, None, "HUMAN", None, "{}"),
    ]
    service.store.add_annotations(project, items, hash_key(key), NOW - DAY_MS, now=NOW)
    with httpx.Client(
        base_url=service.base_url + "/", headers={"Authorization": f"Bearer {key}"}, timeout=30
    ) as api:
        window = {"project_id": project, "from": iso(START), "to": iso(END)}
        by_label = api.get("traces", params={**window, "label": "rc:a:b:c"}).json()["data"]
        by_score = api.get("traces", params={**window, "min_score": "eval:v2:0.5"}).json()["data"]
    assert [r["id"] for r in by_label] == [found[0].id]
    assert [r["id"] for r in by_score] == [found[1].id]
