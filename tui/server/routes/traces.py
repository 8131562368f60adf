"""GET /v1/traces (keyset-paged, newest first), /v1/traces/{trace_id} and its /spans.

A trace's spans are answered as JSON text built by splicing (schemas.spans_json_text), not
through FastAPI's encoder: big traces are tens of megabytes. A trace id is its project's: the
two trace routes take `project_id` (deps.readable_trace says which trace a key reads).
"""

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse, Response

from tui.server.answers import ERRORS, SpanList, TraceList, TraceWithSpans
from tui.server.deps import (
    Auth,
    ClockDep,
    ReadableTrace,
    StoreDep,
    readable_project,
    retention_start,
)
from tui.server.errors import ServiceError
from tui.server.paging import decode_cursor, encode_cursor
from tui.server.rows import TracePosition
from tui.server.schemas import json_text, parse_timestamp, spans_json_text, trace_json

DEFAULT_WINDOW_MS = 24 * 3_600_000
MAX_LIMIT = 500

router = APIRouter(responses=ERRORS)


@router.get("/traces", summary="List traces, newest first", response_model=TraceList)
def list_traces(
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
) -> Response:
    # Called here, not as a dependency: project_id stays the first query parameter documented.
    project = readable_project(store, scope, project_id)
    now = clock()
    after: TracePosition | None = None
    if cursor:
        # The window travels in the cursor, so "the last 24 hours" does not slide between
        # pages; from/to sent along with a cursor are ignored.
        after, start, end = read_trace_cursor(cursor)
    else:
        end = time_param("to", to, now)
        start = time_param("from", from_, end - DEFAULT_WINDOW_MS)
        if start > end:
            raise ServiceError(
                422,
                "validation_error",
                "from must not be after to.",
                [{"field": "from", "message": "must not be after to"}],
            )
    # Nothing past the project's retention (by each trace's newest span, as the sweep goes),
    # although the sweep may not have deleted it yet. Applied on every page, not stored in the
    # cursor: a page read later shows less, never more.
    rows, more = store.list_traces(
        project_id, start, end, limit, after, kept_since=retention_start(project, now)
    )
    next_cursor = None
    if more and rows:
        last = rows[-1]
        next_cursor = trace_cursor(TracePosition(last.listed_at, last.id), start, end)
    data = [trace_json(r) for r in rows]
    if include and "models" in include.split(","):
        by_trace = store.models_of(project_id, [r.id for r in rows])
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
    head = json_text({**trace_json(trace), "spans": None})
    spans = spans_json_text(store.iter_spans(trace.id, trace.project_id), trace.id)
    return Response((head[: -len("null}")] + spans + "}").encode(), media_type="application/json")


@router.get(
    "/traces/{trace_id}/spans",
    summary="List a trace's spans by start time",
    response_model=SpanList,
)
def list_spans(trace: ReadableTrace, store: StoreDep) -> Response:
    spans = spans_json_text(store.iter_spans(trace.id, trace.project_id), trace.id)
    return Response(('{"data":' + spans + "}").encode(), media_type="application/json")


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


TRACE_CURSOR = {"t": int, "i": str, "f": int, "u": int}  # position, then the first window


def trace_cursor(position: TracePosition, start: int, end: int) -> str:
    """The last row's position plus the time window of the first page."""
    return encode_cursor({"t": position.listed_at, "i": position.trace_id, "f": start, "u": end})


def read_trace_cursor(cursor: str) -> tuple[TracePosition, int, int]:
    values = decode_cursor(cursor, TRACE_CURSOR)
    return TracePosition(values["t"], values["i"]), values["f"], values["u"]
