"""Extension: API keys managed over the API. The workspace key manages every key: a project's
(/v1/projects/{project_id}/keys) and the workspace's (/v1/keys). A project key manages none,
but may list its own key's metadata. No answer but a creation's holds a key."""

from typing import Annotated

from fastapi import APIRouter, Path, Request
from fastapi.responses import JSONResponse, Response

from tui.server.api_keys import LAST_WORKSPACE_KEY, REVOKED, key_info, keys_of, new_key, revoke_key
from tui.server.http.answers import ERRORS, ApiKeyList, NewApiKey
from tui.server.http.deps import (
    Auth,
    ReadableProject,
    StoreDep,
    apply_once,
    create_once,
    readable_project,
    reply_to,
)
from tui.server.http.errors import ServiceError
from tui.server.http.schemas import KeyCreate, key_json
from tui.server.store.protocol import TraceStore
from tui.server.store.rows import KeyScope, Once

router = APIRouter(responses=ERRORS)

MANAGE_ONLY = "Only the workspace key can manage API keys."


def require_workspace(scope: KeyScope) -> None:
    if not scope.is_workspace:
        raise ServiceError(403, "forbidden", MANAGE_ONLY)


@router.get(
    "/projects/{project_id}/keys",
    summary="List a project's API keys (never the keys)",
    response_model=ApiKeyList,
)
def list_project_keys(scope: Auth, project: ReadableProject, store: StoreDep) -> Response:
    keys = keys_of(store, project.id)
    if not scope.is_workspace:  # a project key sees its own key's metadata only
        keys = [k for k in keys if scope.key_hash.startswith(k.key_id)]
    return JSONResponse({"data": [key_json(k) for k in keys]})


@router.post(
    "/projects/{project_id}/keys",
    status_code=201,
    summary="Create a project API key, shown in this answer only",
    response_model=NewApiKey,
)
def create_project_key(
    request: Request,
    scope: Auth,
    store: StoreDep,
    project_id: Annotated[str, Path()],
    payload: KeyCreate,
) -> Response:
    project = readable_project(store, scope, project_id)  # after the body's validation: see deps
    require_workspace(scope)
    return created(request, store, scope, payload, project.id)


@router.delete(
    "/projects/{project_id}/keys/{key_id}",
    status_code=204,
    summary="Revoke a project API key (it fails at once)",
)
def revoke_project_key(
    request: Request,
    scope: Auth,
    project: ReadableProject,
    store: StoreDep,
    key_id: Annotated[str, Path()],
) -> Response:
    require_workspace(scope)
    return revoked(request, store, scope, key_id, project.id)


@router.get(
    "/keys", summary="List the workspace API keys (never the keys)", response_model=ApiKeyList
)
def list_workspace_keys(scope: Auth, store: StoreDep) -> Response:
    require_workspace(scope)
    return JSONResponse({"data": [key_json(k) for k in keys_of(store, None)]})


@router.post(
    "/keys",
    status_code=201,
    summary="Create a workspace API key, shown in this answer only",
    response_model=NewApiKey,
)
def create_workspace_key(
    request: Request, scope: Auth, store: StoreDep, payload: KeyCreate
) -> Response:
    require_workspace(scope)
    return created(request, store, scope, payload, None)


@router.delete(
    "/keys/{key_id}",
    status_code=204,
    summary="Revoke a workspace API key (it fails at once; never the last one)",
)
def revoke_workspace_key(
    request: Request, scope: Auth, store: StoreDep, key_id: Annotated[str, Path()]
) -> Response:
    require_workspace(scope)
    return revoked(request, store, scope, key_id, None)


def created(
    request: Request, store: TraceStore, scope: KeyScope, payload: KeyCreate, project_id: str | None
) -> Response:
    key, row = new_key(project_id, payload.label)
    body = key_json(key_info(row))
    # The key joins this answer only: it is never stored, nor remembered for a replay.
    return create_once(
        request,
        store,
        scope,
        {"project_id": project_id, **payload.model_dump()},
        row,
        body,
        unstored={"key": key},
    )


def revoked(
    request: Request, store: TraceStore, scope: KeyScope, key_id: str, project_id: str | None
) -> Response:
    def revoke(once: Once | None) -> tuple[int, None]:
        outcome = revoke_key(store, key_id, project_id, reply_to(once, 204, None))
        if outcome == LAST_WORKSPACE_KEY:
            raise ServiceError(
                409,
                "last_workspace_key",
                "This is the last workspace key: create another before revoking it.",
            )
        if outcome != REVOKED:
            # The id is not repeated: whatever a client sends in its place must not come back.
            raise ServiceError(404, "not_found", "No such key here.")
        return 204, None

    return apply_once(request, store, scope, {"revoke": key_id}, revoke)
