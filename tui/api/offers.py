"""What a server offers beyond reading: learnt once per source from its OpenAPI document, and the
flags and sentences the screens read of it (`Offered`, `key_offer`).

A server documents its routes at /v1/openapi.json (the local service does). A path listed there
with its method means the action is offered; a server that speaks only the spec answers 404, or
lists none of these paths, and offers none of them. Screens ask these plain flags, never which
kind of server it is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# The route templates of each action, with every {parameter} written as {}.
PROJECT_KEYS = "/projects/{}/keys"
PROJECT_KEY = "/projects/{}/keys/{}"
WORKSPACE_KEYS = "/keys"
WORKSPACE_KEY = "/keys/{}"
PROJECT = "/projects/{}"
ALERT = "/projects/{}/alerts/{}"
ROTATION = "/projects/{}/alerts/{}/rotate-secret"
ALERT_TEST = "/projects/{}/alerts/{}/test"
TRACES = "/traces"
SESSIONS = "/projects/{}/sessions"
USERS = "/projects/{}/users"
HEALTH = "/projects/health"
ANNOTATIONS = "/projects/{}/annotations"
ANNOTATION = "/projects/{}/annotations/{}"


@dataclass(frozen=True)
class Offers:
    """The actions a server offers; all False for a server whose document says nothing."""

    key_management: bool = False  # list, create and revoke a project's keys
    workspace_keys: bool = False  # the same for workspace keys
    project_edit: bool = False  # PATCH a project (with a dry run)
    project_delete: bool = False
    alert_edit: bool = False  # PATCH an alert: its fields, paused, muted_until
    alert_delete: bool = False
    secret_rotation: bool = False
    alert_test: bool = False  # send the webhook a test event
    # The query parameters GET /traces lists (its filters and sorts: TraceFilter.params), and
    # whether a project's sessions and users can be listed.
    trace_filters: frozenset[str] = frozenset()
    sessions: bool = False
    users: bool = False
    # Every project's firing alerts and recent traffic in one request (api/health.py).
    project_health: bool = False
    # A project's annotations (scores, labels, notes): listed, written in batches, changed and
    # deleted one by one (tui/api/annotations.py).
    annotations: bool = False


NOTHING = Offers()


def _template(path: str) -> str:
    """`/v1/projects/{project_id}/keys` -> `/projects/{}/keys`."""
    path = re.sub(r"\{[^}]*\}", "{}", path.strip())
    path = path.rstrip("/") or "/"
    return path.removeprefix("/v1") or "/"


def offers_from_document(document: Any) -> Offers:
    """The Offers an OpenAPI document lists; NOTHING for anything that is not one."""
    paths = document.get("paths") if isinstance(document, Mapping) else None
    if not isinstance(paths, Mapping):
        return NOTHING
    methods: dict[str, set[str]] = {}
    trace_parameters: set[str] = set()
    for path, operations in paths.items():
        if isinstance(path, str) and isinstance(operations, Mapping):
            names = {str(name).lower() for name in operations}
            methods.setdefault(_template(path), set()).update(names)
            if _template(path) == TRACES:
                trace_parameters |= _query_parameters(operations.get("get"))

    def has(path: str, *wanted: str) -> bool:
        return set(wanted) <= methods.get(path, set())

    return Offers(
        key_management=has(PROJECT_KEYS, "get", "post") and has(PROJECT_KEY, "delete"),
        workspace_keys=has(WORKSPACE_KEYS, "get", "post") and has(WORKSPACE_KEY, "delete"),
        project_edit=has(PROJECT, "patch"),
        project_delete=has(PROJECT, "delete"),
        alert_edit=has(ALERT, "patch"),
        alert_delete=has(ALERT, "delete"),
        secret_rotation=has(ROTATION, "post"),
        alert_test=has(ALERT_TEST, "post"),
        trace_filters=frozenset(trace_parameters),
        sessions=has(SESSIONS, "get"),
        users=has(USERS, "get"),
        project_health=has(HEALTH, "get"),
        annotations=has(ANNOTATIONS, "get", "post") and has(ANNOTATION, "patch", "delete"),
    )


def _query_parameters(operation: Any) -> set[str]:
    """The names of an OpenAPI operation's query parameters (none for anything else)."""
    listed = operation.get("parameters") if isinstance(operation, Mapping) else None
    if not isinstance(listed, list):
        return set()
    return {
        parameter["name"]
        for parameter in listed
        if isinstance(parameter, Mapping)
        and isinstance(parameter.get("name"), str)
        and parameter.get("in", "query") == "query"
    }


class Offered:
    """One flag of what a source offers (`offers_alert_edit`...), read from its `offers`."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, source: Any, owner: type[Any] | None = None) -> bool:
        return source is not None and bool(getattr(source.offers, self.name))


def key_offer(project_id: str | None, doing: str) -> tuple[str, str]:
    """The offer a key call needs (a project's keys, or the workspace's for None), and the
    action a sentence names when it is missing ("creating workspace keys")."""
    if project_id is None:
        return "workspace_keys", f"{doing} workspace keys"
    return "key_management", f"{doing} keys"
