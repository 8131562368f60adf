"""GET /v1/traces (keyset-paged, newest first), /v1/traces/{trace_id} and its /spans.

Extensions of GET /v1/traces (docs/api.md): filters (`q`, `status`, `model`, `name`, latency,
Extensions of GET /v1/traces (docs/api.md): filters (`q`, `status`, `model`, `name`, latency,
cost, `user_id`, `session_id`, `tag`, the text of inputs or outputs alone: `input`, `output`,
conditions on one span: `span_model`, `span_name`, `span_kind`, `span_status`,
`span_min_latency_ms`, `span_max_latency_ms`, and the annotations' `annotation`, `label`,
`min_score`, `max_score`) and `sort` / `order`, read once into a search.filters.TraceFilters,
which the cursor carries with the window: a walk keeps the filters and the order of its first
page. Every trace answered carries its annotations' summary (`annotations`), and the single
trace's spans their own (one read for the whole trace, however many spans).

A filtered or sorted listing is a search: bounded in time and in number under way, and cancelled
when its client leaves (http/searches.py). The listing runs in a thread (trace_page), the route
itself on the event loop, where it watches its client.

A trace's spans are answered as JSON text built by splicing (schemas.spans_json_text), not
through FastAPI's encoder: big traces are tens of megabytes. A trace id is its project's: the
two trace routes take `project_id` (deps.readable_trace says which trace a key reads).
"""

import functools
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from tui.server.http.annotation_schemas import summary_json
from tui.server.http.answers import ERRORS, SpanList, TraceList, TraceWithSpans
from tui.server.http.deps import (
    Auth,
    ClockDep,
    ReadableTrace,
    StoreDep,
    may_read,
    readable_project,
    retention_start,
)
from tui.server.http.errors import ServiceError
from tui.server.http.paging import (
    Time,
    decode_cursor,
    decode_window,
    encode_cursor,
    invalid_cursor,
)
from tui.server.http.schemas import json_text, parse_timestamp, spans_json_text, trace_json
from tui.server.http.searches import searched
from tui.server.search.filters import (
    MAX_VALUE,
    InvalidFilter,
    TraceFilters,
    label_filter,
    score_filter,
)
from tui.server.store.annotation_rows import Summary
from tui.server.store.protocol import TraceStore
from tui.server.store.reads import ReadGuard
from tui.server.store.rows import ProjectRow, SearchPosition, TracePosition
from tui.server.store.search import sort_value

DEFAULT_WINDOW_MS = 24 * 3_600_000
MAX_LIMIT = 500

router = APIRouter(responses=ERRORS)


@router.get("/traces", summary="List traces, newest first", response_model=TraceList)
async def list_traces(
    request: Request,
    scope: Auth,
    store: StoreDep,
    clock: ClockDep,
    project_id: Annotated[str, Query(min_length=1)],
    from_: Annotated[str | None, Query(alias="from")] = None,
    to: Annotated[str | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 100,
    cursor: Annotated[str | None, Query()] = None,
    include: Annotated[
        str | None,
        Query(
            description="Extension: `models` adds to each row its spans' cost and tokens by"
            " model, {model: {cost_usd, tokens}} (the app's overview: cost by model)."
        ),
    ] = None,
    q: Annotated[
        str | None,
        Query(
            description='Extension: words and "quoted phrases", each found (case-insensitive,'
            " as a substring, 3 characters or more) in some span's input, output, name or"
            " error message."
        ),
    ] = None,
    status: Annotated[
        Literal["ok", "error"] | None,
        Query(description="Extension: `error`: traces with an error; `ok`: without."),
    ] = None,
    model: Annotated[
        str | None,
        Query(
            max_length=MAX_VALUE,
            description="Extension: some span used this model (exact, case-insensitive).",
        ),
    ] = None,
    name: Annotated[
        str | None,
        Query(
            max_length=MAX_VALUE,
            description="Extension: the trace's name (exact, case-insensitive).",
        ),
    ] = None,
    min_latency_ms: Annotated[
        float | None, Query(ge=0, description="Extension: duration_ms at least this.")
    ] = None,
    max_latency_ms: Annotated[
        float | None, Query(ge=0, description="Extension: duration_ms at most this.")
    ] = None,
    min_cost_usd: Annotated[
        float | None, Query(ge=0, description="Extension: total_cost_usd at least this.")
    ] = None,
    user_id: Annotated[
        str | None, Query(max_length=MAX_VALUE, description="Extension: the trace's user.")
    ] = None,
    session_id: Annotated[
        str | None, Query(max_length=MAX_VALUE, description="Extension: the trace's session.")
    ] = None,
    tag: Annotated[
        list[str] | None,
        Query(description="Extension: one of the trace's tags; repeated: every one."),
    ] = None,
    input_: Annotated[
        list[str] | None,
        Query(
            alias="input",
            description="Extension: text (3 to 64 characters, case-insensitive, a"
            " substring) in some input of the trace: an attribute named for input, prompt or"
            " query; repeated: every one.",
        ),
    ] = None,
    output: Annotated[
        list[str] | None,
        Query(
            description="Extension: text in some output of the trace (an attribute named for"
            " output, completion or response), as `input`.",
        ),
    ] = None,
    span_model: Annotated[
        str | None,
        Query(
            max_length=MAX_VALUE,
            description="Extension: a span used this model (exact, case-insensitive); every"
            " `span_` condition is of the same span.",
        ),
    ] = None,
    span_name: Annotated[
        str | None,
        Query(max_length=MAX_VALUE, description="Extension: that span's name (exact, any case)."),
    ] = None,
    span_kind: Annotated[
        Literal["llm", "retrieval", "tool", "agent", "chain"] | None,  # filters.KINDS
        Query(description="Extension: that span's kind."),
    ] = None,
    span_status: Annotated[
        Literal["ok", "error"] | None,
        Query(description="Extension: `error`: that span failed; `ok`: it did not."),
    ] = None,
    span_min_latency_ms: Annotated[
        float | None, Query(ge=0, description="Extension: that span's duration_ms at least.")
    ] = None,
    span_max_latency_ms: Annotated[
        float | None, Query(ge=0, description="Extension: that span's duration_ms at most.")
    ] = None,
    annotation: Annotated[
        list[str] | None,
        Query(
            description="Extension: the trace or one of its spans has an annotation of this"
            " name; repeated: every one."
        ),
    ] = None,
    label: Annotated[
        list[str] | None,
        Query(
            description="Extension: `NAME:VALUE` (split at the first colon): the trace or one"
            " of its spans has an annotation of this name with this label (exact); repeated:"
            " every one."
        ),
    ] = None,
    min_score: Annotated[
        list[str] | None,
        Query(
            description="Extension: `NAME:NUMBER`: the trace or one of its spans has an"
            " annotation of this name whose score is at least the number; repeated: every one."
        ),
    ] = None,
    max_score: Annotated[
        list[str] | None,
        Query(
            description="Extension: `NAME:NUMBER`: ...whose score is at most the number;"
            " repeated: every one."
        ),
    ] = None,
    sort: Annotated[
        Literal["started_at", "duration_ms", "total_cost_usd", "total_tokens"],
        Query(
            description="Extension: the order (ties by trace id). `started_at` is the start"
            " the trace had when first stored."
        ),
    ] = "started_at",
    order: Annotated[Literal["desc", "asc"], Query(description="Extension.")] = "desc",
) -> Response:
    # Called here, not as a dependency: project_id stays the first query parameter documented.
    # The key's right to the project first (no read); the project itself is read in the
    # page's own thread below, where the listing has no filter: one hop to a thread, not two.
    may_read(scope, project_id)
    now = clock()
    if cursor:
        # The window and the filters travel in the cursor, so "the last 24 hours" does not
        # slide between pages; from/to and filters sent along with a cursor are ignored.
        position, start, end, filters = read_trace_cursor(cursor)
    else:
        position = None
        end = time_param("to", to, now)
        start = time_param("from", from_, end - DEFAULT_WINDOW_MS)
        if start > end:
            raise ServiceError(
                422,
                "validation_error",
                "from must not be after to.",
                [{"field": "from", "message": "must not be after to"}],
            )
        filters = checked_filters(
            q=q,
            status=status,
            model=model,
            name=name,
            min_latency_ms=min_latency_ms,
            max_latency_ms=max_latency_ms,
            min_cost_usd=min_cost_usd,
            user_id=user_id,
            session_id=session_id,
            tags=tuple(tag or ()),
            inputs=tuple(input_ or ()),
            outputs=tuple(output or ()),
            span_model=span_model,
            span_name=span_name,
            span_kind=span_kind,
            span_status=span_status,
            span_min_latency_ms=span_min_latency_ms,
            span_max_latency_ms=span_max_latency_ms,
            annotations=tuple(annotation or ()),
            labels=tuple(label or ()),
            min_scores=tuple(min_score or ()),
            max_scores=tuple(max_score or ()),
            sort=sort,
            order=order,
        )
    if filters.is_default:

        def listed() -> Response:
            project = readable_project(store, scope, project_id)
            return trace_page(
                store, project, filters, position, start, end, limit, include, now, None
            )

        return await run_in_threadpool(listed)
    project = await run_in_threadpool(readable_project, store, scope, project_id)
    page = functools.partial(
        trace_page, store, project, filters, position, start, end, limit, include, now
    )
    return await searched(request, scope.key_hash, project.id, page)


def trace_page(
    store: TraceStore,
    project: ProjectRow,
    filters: TraceFilters,
    position: SearchPosition | None,
    start: int,
    end: int,
    limit: int,
    include: str | None,
    now: int,
    guard: ReadGuard | None,
) -> Response:
    """One page of the project's traces, and the cursor of the next; a search's reads within
    `guard` (http/searches.py), the spec's listing (no filter: a seek) as it is."""
    # Nothing past the project's retention (by each trace's newest span, as the sweep goes),
    # although the sweep may not have deleted it yet. Applied on every page, not stored in the
    # cursor: a page read later shows less, never more.
    kept_since = retention_start(project, now)
    if guard is None:
        after = None if position is None else TracePosition(int(position.value), position.trace_id)
        rows, more = store.list_traces(project.id, start, end, limit, after, kept_since)
    else:
        with guard.applied():
            rows, more = store.search_traces(
                project.id, filters, start, end, limit, position, kept_since
            )
    next_cursor = None
    if more and rows:
        last = rows[-1]
        next_cursor = trace_cursor(
            SearchPosition(sort_value(last, filters), last.id), start, end, filters
        )
    data = [trace_json(r) for r in rows]
    summaries = store.annotation_summaries(project.id, [r.id for r in rows])
    for item, row in zip(data, rows, strict=True):
        item["annotations"] = summary_json(summaries.get(row.id))
    if include and "models" in include.split(","):
        by_trace = store.models_of(project.id, [r.id for r in rows])
        for item, row in zip(data, rows, strict=True):
            item["models"] = {
                model: {"cost_usd": cost, "tokens": tokens}
                for model, (cost, tokens) in by_trace.get(row.id, {}).items()
            }
    return JSONResponse({"data": data, "next_cursor": next_cursor, "has_more": more})


@router.get(
    "/traces/{trace_id}", summary="Get one trace with all its spans", response_model=TraceWithSpans
)
def get_trace(trace: ReadableTrace, store: StoreDep) -> Response:
    summary, by_span = store.trace_annotations(trace.project_id, trace.id)
    head = json_text({**trace_json(trace), "annotations": summary_json(summary), "spans": None})
    spans = spans_json_text(
        store.iter_spans(trace.id, trace.project_id), trace.id, span_annotations(by_span)
    )
    return Response((head[: -len("null}")] + spans + "}").encode(), media_type="application/json")


@router.get(
    "/traces/{trace_id}/spans",
    summary="List a trace's spans by start time",
    response_model=SpanList,
)
def list_spans(trace: ReadableTrace, store: StoreDep) -> Response:
    _, by_span = store.trace_annotations(trace.project_id, trace.id)
    spans = spans_json_text(
        store.iter_spans(trace.id, trace.project_id), trace.id, span_annotations(by_span)
    )
    return Response(('{"data":' + spans + "}").encode(), media_type="application/json")


def span_annotations(by_span: dict[str, Summary]) -> dict[str, str]:
    """Each annotated span's summary as JSON text, to splice into its span."""
    return {span_id: json_text(summary_json(summary)) for span_id, summary in by_span.items()}


def checked_filters(**given: Any) -> TraceFilters:
    """The request's filters, or 422 naming the first one the service does not take. Labels
    and scores come as `NAME:VALUE` texts, read here."""
    try:
        given["labels"] = tuple(label_filter(text) for text in given["labels"])
        for field, key in (("min_score", "min_scores"), ("max_score", "max_scores")):
            given[key] = tuple(score_filter(field, text) for text in given[key])
        return TraceFilters(**given)
    except InvalidFilter as refused:
        details = [{"field": refused.field, "message": refused.message}]
        raise ServiceError(422, "validation_error", str(refused), details) from None


def time_param(name: str, value: str | None, default: int) -> int:
    if value is None or value == "":
        return default
    try:
        return parse_timestamp(value)
    except (ValueError, OverflowError) as exc:
        raise ServiceError(
            422,
            "validation_error",
            f"{name} is not an ISO 8601 timestamp.",
            [
                {
                    "field": name,
                    "message": "must be an ISO 8601 timestamp, e.g. 2026-11-21T09:30:00.000Z",
                }
            ],
        ) from exc


# The last row's sort value and id, the first page's window, and (when not the spec's listing)
# the filters and order.
TRACE_CURSOR = {"t": float, "i": str, "f": Time, "u": Time}
TRACE_CURSOR_FILTERS = {"x": dict}


def trace_cursor(position: SearchPosition, start: int, end: int, filters: TraceFilters) -> str:
    """The last row's position plus the time window (and the filters) of the first page."""
    values: dict[str, Any] = {"t": position.value, "i": position.trace_id, "f": start, "u": end}
    if not filters.is_default:
        values["x"] = filters.to_json()
    return encode_cursor(values)


def read_trace_cursor(cursor: str) -> tuple[SearchPosition, int, int, TraceFilters]:
    values = decode_cursor(cursor, TRACE_CURSOR, TRACE_CURSOR_FILTERS)
    try:
        filters = TraceFilters.from_json(values["x"] or {})
    except ValueError as error:
        raise invalid_cursor() from error
    if filters.sort != "total_cost_usd" and type(values["t"]) is not int:
        raise invalid_cursor()  # every other order's values are integers
    start, end = decode_window(values)
    return SearchPosition(values["t"], values["i"]), start, end, filters
