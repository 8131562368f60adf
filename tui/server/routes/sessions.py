"""Extensions: GET /v1/projects/{project_id}/sessions and /users, a project's sessions (the
conversations its traces name) and users, newest last_seen first, keyset-paged.

A session's or user's first_seen and last_seen are the listed starts (rows.TraceRow.listed_at)
of its first and last trace, so that GET /v1/traces with from = first_seen and
to = last_seen + 1 ms holds every one of its traces. The window (default: the last 24 hours)
selects by last_seen; the totals are over all its traces within the project's retention. The
cursor carries the window (and the user a sessions listing is narrowed to); a session whose
last_seen moves while it is paged (a new trace) may move in the order. Each page is a search,
bounded as http/searches.py says.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from tui.server.http.answers import ERRORS, SessionList, UserList
from tui.server.http.deps import Auth, ClockDep, StoreDep, readable_project, retention_start
from tui.server.http.errors import ServiceError
from tui.server.http.paging import (
    Time,
    decode_cursor,
    decode_window,
    encode_cursor,
    invalid_cursor,
)
from tui.server.http.schemas import iso_ms
from tui.server.http.searches import searched
from tui.server.routes.traces import DEFAULT_WINDOW_MS, MAX_LIMIT, time_param
from tui.server.search.filters import MAX_VALUE
from tui.server.store.protocol import TraceStore
from tui.server.store.reads import ReadGuard
from tui.server.store.rows import GroupPosition, GroupRow, KeyScope

router = APIRouter(responses=ERRORS)

GROUP_CURSOR = {"t": int, "i": str, "f": Time, "u": Time}
GROUP_CURSOR_USER = {"w": str}


async def page(
    request: Request,
    column: str,
    scope: KeyScope,
    store: TraceStore,
    now: int,
    project_id: str,
    from_: str | None,
    to: str | None,
    limit: int,
    cursor: str | None,
    user_id: str | None = None,
) -> tuple[list[GroupRow], str | None, bool]:
    """One page of sessions or users, and the cursor of the next: a search (http/searches.py),
    its reads bounded in time, cancelled if its client leaves."""
    project = await run_in_threadpool(readable_project, store, scope, project_id)
    after: GroupPosition | None = None
    if cursor:
        values = decode_cursor(cursor, GROUP_CURSOR, GROUP_CURSOR_USER)
        after = GroupPosition(values["t"], values["i"])
        start, end = decode_window(values)
        user_id = values["w"]
        if user_id is not None and not 0 < len(user_id) <= MAX_VALUE:
            raise invalid_cursor()  # as the user_id parameter takes it
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

    def listed(guard: ReadGuard) -> tuple[list[GroupRow], bool]:
        kept_since = retention_start(project, now)
        with guard.applied():
            return store.list_groups(
                column, project_id, start, end, limit, after, kept_since, user_id
            )

    rows, more = await searched(request, scope.key_hash, project_id, listed)
    next_cursor = None
    if more and rows:
        last: dict[str, Any] = {"t": int(rows[-1][2]), "i": rows[-1][0], "f": start, "u": end}
        if user_id is not None:
            last["w"] = user_id
        next_cursor = encode_cursor(last)
    return rows, next_cursor, more


def totals(row: GroupRow) -> dict[str, Any]:
    """What a session and a user share: (id, first, last, traces, tokens, cost, errors, ...)."""
    return {
        "first_seen": iso_ms(int(row[1])),
        "last_seen": iso_ms(int(row[2])),
        "trace_count": int(row[3]),
        "total_tokens": int(row[4] or 0),
        "total_cost_usd": None if row[5] is None else round(float(row[5]), 9),
        "error_count": int(row[6] or 0),
    }


ProjectId = Annotated[str, Path(min_length=1)]
From = Annotated[str | None, Query(alias="from", description="Last seen at or after.")]
To = Annotated[str | None, Query(description="Last seen before.")]
Limit = Annotated[int, Query(ge=1, le=MAX_LIMIT)]


@router.get(
    "/projects/{project_id}/sessions",
    summary="Extension: list a project's sessions, last seen first",
    response_model=SessionList,
)
async def list_sessions(
    request: Request,
    scope: Auth,
    store: StoreDep,
    clock: ClockDep,
    project_id: ProjectId,
    from_: From = None,
    to: To = None,
    limit: Limit = 100,
    cursor: Annotated[str | None, Query()] = None,
    user_id: Annotated[
        str | None, Query(max_length=MAX_VALUE, description="Only this user's sessions.")
    ] = None,
) -> Response:
    rows, next_cursor, more = await page(
        request, "session_id", scope, store, clock(), project_id, from_, to, limit, cursor, user_id
    )
    data = [{"id": row[0], "user_id": row[7], **totals(row)} for row in rows]
    return JSONResponse({"data": data, "next_cursor": next_cursor, "has_more": more})


@router.get(
    "/projects/{project_id}/users",
    summary="Extension: list a project's users, last seen first",
    response_model=UserList,
)
async def list_users(
    request: Request,
    scope: Auth,
    store: StoreDep,
    clock: ClockDep,
    project_id: ProjectId,
    from_: From = None,
    to: To = None,
    limit: Limit = 100,
    cursor: Annotated[str | None, Query()] = None,
) -> Response:
    rows, next_cursor, more = await page(
        request, "user_id", scope, store, clock(), project_id, from_, to, limit, cursor
    )
    data = [{"id": row[0], **totals(row), "session_count": int(row[7])} for row in rows]
    return JSONResponse({"data": data, "next_cursor": next_cursor, "has_more": more})
