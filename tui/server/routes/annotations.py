"""Extensions: a project's annotations (scores, labels and notes on its traces, spans and
sessions): POST a batch, GET them newest first (keyset-paged), PATCH and DELETE one.

Scoped as everything else: a project key reads and writes its own project's (403 on another
project's path); an annotation of another project is a 404 like a missing one, and a target
in another project is refused with the same words as one that exists nowhere. The author is
the label of the key that wrote the annotation last, never taken from the body. A batch is
stored all or none, and is idempotent under Idempotency-Key as the other creates are (its
answer remembered in the batch's own transaction).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse, Response

from tui.server.http.annotation_schemas import (
    MAX_ID,
    MAX_NAME,
    AnnotationBatch,
    AnnotationUpdate,
    annotation_json,
    checked,
    refused,
)
from tui.server.http.answers import ERRORS, Annotation, AnnotationList, AnnotationsStored
from tui.server.http.deps import (
    Auth,
    ClockDep,
    ReadableProject,
    StoreDep,
    apply_once,
    once_of,
    readable_project,
    replay,
    retention_start,
)
from tui.server.http.errors import ServiceError
from tui.server.http.paging import decode_cursor, encode_cursor
from tui.server.store.annotation_rows import (
    AnnotationPosition,
    AnnotationQuery,
    AnnotationRefused,
    AnnotationRow,
)
from tui.server.store.rows import Once, Remembered

MAX_LIMIT = 500
# The last row's position (created_at, id), and the listing's filters: trace, span, session,
# name.
CURSOR = {"c": int, "i": str}
CURSOR_FILTERS = {"t": str, "p": str, "s": str, "n": str}

router = APIRouter(responses=ERRORS)


def no_such_annotation() -> ServiceError:
    # The id is not repeated: no answer echoes what was sent.
    return ServiceError(404, "not_found", "No annotation with that id in this project.")


def stored_body(rows: list[AnnotationRow]) -> dict[str, Any]:
    return {"data": [annotation_json(row) for row in rows]}


@router.post(
    "/projects/{project_id}/annotations",
    status_code=201,
    summary="Annotate traces, spans or sessions (a batch of 1 to 1,000, all or none)",
    response_model=AnnotationsStored,
)
def create_annotations(
    request: Request,
    scope: Auth,
    store: StoreDep,
    clock: ClockDep,
    project_id: Annotated[str, Path()],
    payload: AnnotationBatch,
) -> Response:
    project = readable_project(store, scope, project_id)  # after the body's validation: see deps
    items = [checked(index, item) for index, item in enumerate(payload.data)]
    once = once_of(request, scope, payload)
    now = clock()
    try:
        stored = store.add_annotations(
            project.id,
            items,
            scope.key_hash,
            retention_start(project, now),
            once,
            stored_body,
            now=now,
        )
    except AnnotationRefused as refusal:
        raise refused(refusal.field, refusal.message) from None
    if isinstance(stored, Remembered):
        return replay(stored, once)
    return JSONResponse(stored_body(stored), status_code=201)


@router.get(
    "/projects/{project_id}/annotations",
    summary="List a project's annotations, newest first",
    response_model=AnnotationList,
)
def list_annotations(
    project: ReadableProject,
    store: StoreDep,
    trace_id: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=MAX_ID,
            description="A trace's annotations and its spans' (with span_id: the span's only).",
        ),
    ] = None,
    span_id: Annotated[
        str | None, Query(min_length=1, max_length=MAX_ID, description="With trace_id.")
    ] = None,
    session_id: Annotated[
        str | None,
        Query(min_length=1, max_length=MAX_ID, description="A session's annotations."),
    ] = None,
    name: Annotated[
        str | None, Query(min_length=1, max_length=MAX_NAME, description="Of this name only.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 100,
    cursor: Annotated[
        str | None,
        Query(description="The previous page's next_cursor: it carries the filters."),
    ] = None,
) -> Response:
    after = None
    if cursor:
        values = decode_cursor(cursor, CURSOR, CURSOR_FILTERS)
        after = AnnotationPosition(values["c"], values["i"])
        query = AnnotationQuery(values["t"], values["p"], values["s"], values["n"])
    else:
        if span_id is not None and trace_id is None:
            raise refused("span_id", "needs trace_id: a span's id is its trace's")
        query = AnnotationQuery(trace_id, span_id, session_id, name)
    rows, more = store.list_annotations(project.id, query, limit, after)
    next_cursor = None
    if more and rows:
        last = rows[-1]
        position: dict[str, Any] = {"c": last.created_at, "i": last.id}
        for key, value in zip(CURSOR_FILTERS, query, strict=True):
            if value is not None:
                position[key] = value
        next_cursor = encode_cursor(position)
    return JSONResponse(
        {
            "data": [annotation_json(row) for row in rows],
            "next_cursor": next_cursor,
            "has_more": more,
        }
    )


@router.patch(
    "/projects/{project_id}/annotations/{annotation_id}",
    summary="Change an annotation (its author becomes this key's label)",
    response_model=Annotation,
)
def update_annotation(
    request: Request,
    scope: Auth,
    store: StoreDep,
    clock: ClockDep,
    project_id: Annotated[str, Path()],
    annotation_id: Annotated[str, Path()],
    payload: AnnotationUpdate,
) -> Response:
    project = readable_project(store, scope, project_id)  # after the body's validation

    def change(once: Once | None) -> tuple[int, dict[str, Any] | None]:
        try:
            row = store.update_annotation(
                project.id,
                annotation_id,
                payload.stored_changes(),
                scope.key_hash,
                clock(),
                once=once,
                answer=annotation_json,
            )
        except AnnotationRefused as refusal:
            raise refused(refusal.field, refusal.message) from None
        if row is None:
            raise no_such_annotation()
        return 200, annotation_json(row)

    return apply_once(request, store, scope, {"patch": payload.changes()}, change)


@router.delete(
    "/projects/{project_id}/annotations/{annotation_id}",
    status_code=204,
    summary="Delete an annotation",
)
def delete_annotation(
    request: Request,
    scope: Auth,
    store: StoreDep,
    project_id: Annotated[str, Path()],
    annotation_id: Annotated[str, Path()],
) -> Response:
    def delete(once: Once | None) -> tuple[int, dict[str, Any] | None]:
        # In here: a repeat of a deletion answers as the first did, though the annotation is gone.
        project = readable_project(store, scope, project_id)
        if not store.delete_annotation(project.id, annotation_id, once):
            raise no_such_annotation()
        return 204, None

    return apply_once(request, store, scope, {"delete": annotation_id}, delete)
