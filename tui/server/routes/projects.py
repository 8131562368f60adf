"""GET and POST /v1/projects: a workspace key sees and creates every project, a project key
sees its own. Extensions: GET one project, PATCH (name, description, retention, saying how many traces a
shorter retention deletes; ?dry_run=true changes nothing) and DELETE (the project with its
traces, alerts and keys), by the workspace key only. Project names are unique: a create or a
rename to a name another project has is refused (409 name_taken)."""

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse, Response

from tui.server.http.answers import ERRORS, Project, ProjectChanged, ProjectList
from tui.server.http.deps import (
    Auth,
    ClockDep,
    ReadableProject,
    StoreDep,
    apply_once,
    create_once,
    once_of,
    readable_project,
    reply_to,
)
from tui.server.http.errors import ServiceError
from tui.server.http.schemas import ProjectCreate, ProjectUpdate, project_json
from tui.server.store.errors import NameTaken
from tui.server.store.rows import DAY_MS, Once, new_project

WORKSPACE_ONLY = "Only the workspace key can change or delete projects."

router = APIRouter(responses=ERRORS)


def name_taken() -> ServiceError:
    """409 for a name another project has (the name is not repeated: no answer echoes what
    was sent)."""
    return ServiceError(
        409,
        "name_taken",
        "Another project has this name: choose another.",
        [{"field": "name", "message": "another project has this name"}],
    )


@router.get("/projects", summary="List projects", response_model=ProjectList)
def list_projects(scope: Auth, store: StoreDep) -> Response:
    rows = store.list_projects(only=scope.project_id)
    return JSONResponse({"data": [project_json(r) for r in rows]})


@router.post("/projects", status_code=201, summary="Create a project", response_model=Project)
def create_project(
    request: Request, scope: Auth, store: StoreDep, payload: ProjectCreate
) -> Response:
    if not scope.is_workspace:
        raise ServiceError(403, "forbidden", "Only the workspace key can create projects.")
    once = once_of(request, scope, payload)
    replaying = (
        once is not None and store.recall_response(once.key_hash, once.idempotency_key) is not None
    )
    # A repeat of a create answers as the first did (create_once), though its name is taken now.
    if not replaying and any(p.name == payload.name for p in store.list_projects()):
        raise name_taken()
    row = new_project(payload.name, payload.description, payload.retention_days)
    try:
        return create_once(request, store, scope, payload, row, project_json(row))
    except NameTaken:  # a store that looks again in its insert's transaction
        raise name_taken() from None


@router.get("/projects/{project_id}", summary="Get one project", response_model=Project)
def get_project(project: ReadableProject) -> Response:
    return JSONResponse(project_json(project))


@router.patch(
    "/projects/{project_id}",
    summary="Change a project's name, description or retention",
    response_model=ProjectChanged,
)
def update_project(
    request: Request,
    scope: Auth,
    store: StoreDep,
    clock: ClockDep,
    project_id: Annotated[str, Path()],
    payload: ProjectUpdate,
    dry_run: Annotated[
        bool, Query(description="Change nothing: answer what the change would do.")
    ] = False,
) -> Response:
    project = readable_project(store, scope, project_id)  # after the body's validation
    if not scope.is_workspace:
        raise ServiceError(403, "forbidden", WORKSPACE_ONLY)
    changed = project._replace(**payload.changes())
    if changed.name != project.name and any(
        p.name == changed.name and p.id != project.id for p in store.list_projects()
    ):
        raise name_taken()  # the dry run says so too
    to_delete = 0
    if changed.retention_days < project.retention_days:
        cutoff = clock() - changed.retention_days * DAY_MS
        to_delete = store.count_traces_ending_before(project.id, cutoff)
    body = ProjectChanged(**project_json(changed), traces_to_delete=to_delete).model_dump()
    if dry_run:
        return JSONResponse(body)

    def change(once: Once | None) -> tuple[int, dict[str, Any]]:
        try:
            # Looks again, with project writes held off.
            store.update_project(changed, reply_to(once, 200, body))
        except NameTaken:
            raise name_taken() from None
        return 200, body

    return apply_once(request, store, scope, {"patch": payload.changes()}, change)


@router.delete(
    "/projects/{project_id}",
    status_code=204,
    summary="Delete a project with its traces, alerts and keys",
)
def delete_project(
    request: Request, scope: Auth, store: StoreDep, project_id: Annotated[str, Path()]
) -> Response:
    def delete(once: Once | None) -> tuple[int, None]:
        # In here: a repeat of a deletion answers as the first did, though the project is gone.
        project = readable_project(store, scope, project_id)
        if not scope.is_workspace:
            raise ServiceError(403, "forbidden", WORKSPACE_ONLY)
        if not store.delete_project(project.id, reply_to(once, 204, None)):
            raise ServiceError(404, "not_found", "No project with this id.")
        return 204, None

    return apply_once(request, store, scope, {"delete": project_id}, delete)
