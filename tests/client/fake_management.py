"""An in-memory server that answers issue 28's management contract (keys, project PATCH/DELETE,
alert PATCH/DELETE, rotate-secret, test) beside the spec's reads, for httpx.MockTransport: the
client and the screens are tested against exactly the contract, apart from the real service.
`offered=False` makes it a spec-only server (its openapi.json answers 404)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.support.helpers import json_response

NEW_KEY = "tt_pk_fresh_SECRET_9c1e7a"
NEW_SECRET = "whsec_rotated_SECRET_51aa"
CREATED_SECRET = "whsec_created_SECRET_77b2"
T0 = "2025-01-01T00:00:00.000Z"

DOCUMENT_PATHS = {
    "/v1/projects": {"get": {}, "post": {}},
    "/v1/projects/{project_id}": {"patch": {}, "delete": {}},
    "/v1/projects/{project_id}/keys": {"get": {}, "post": {}},
    "/v1/projects/{project_id}/keys/{key_id}": {"delete": {}},
    "/v1/keys": {"get": {}, "post": {}},
    "/v1/keys/{key_id}": {"delete": {}},
    "/v1/projects/{project_id}/alerts": {"get": {}, "post": {}},
    "/v1/projects/{project_id}/alerts/{alert_id}": {"get": {}, "patch": {}, "delete": {}},
    "/v1/projects/{project_id}/alerts/{alert_id}/rotate-secret": {"post": {}},
    "/v1/projects/{project_id}/alerts/{alert_id}/test": {"post": {}},
}


def error(status: int, message: str, **extra: Any) -> httpx.Response:
    return json_response({"error": {"code": "x", "message": message, **extra}}, status)


@dataclass
class FakeServer:
    offered: bool = True
    requests: list[httpx.Request] = field(default_factory=list)
    projects: dict[str, dict[str, Any]] = field(default_factory=dict)
    keys: dict[str, dict[str, Any]] = field(default_factory=dict)
    alerts: dict[str, dict[str, Any]] = field(default_factory=dict)
    traces_outside: int = 7  # what shortening retention below 30 days would delete
    fail_next: httpx.Response | None = None

    def __post_init__(self) -> None:
        self.projects["proj_a"] = {
            "id": "proj_a",
            "name": "support-bot",
            "description": "the bot",
            "retention_days": 30,
            "created_at": T0,
        }
        self.keys["key_1"] = {
            "id": "key_1",
            "label": "ci",
            "prefix": "tt_pk_ab12",
            "project_id": "proj_a",
            "created_at": T0,
            "last_used_at": None,
        }
        self.alerts["al_1"] = {
            "id": "al_1",
            "project_id": "proj_a",
            "name": "Slow replies",
            "metric": "latency_ms_5m",
            "condition": "gt",
            "threshold": 2500,
            "webhook_url": "https://hooks.example.com/a",
            "created_at": T0,
            "state": "firing",
            "paused": False,
            "muted_until": None,
        }

    @staticmethod
    def refusal(field_name: str, message: str) -> httpx.Response:
        """A 422 on one field, in the service's error body."""
        return error(422, "Invalid request", details=[{"field": field_name, "message": message}])

    def paths(self) -> list[tuple[str, str]]:
        return [(r.method, r.url.path) for r in self.requests]

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.fail_next is not None and request.method != "GET":
            answer, self.fail_next = self.fail_next, None
            return answer
        path = request.url.path.removeprefix("/v1")
        body = json.loads(request.content) if request.content else None
        if path == "/openapi.json":
            if not self.offered:
                return error(404, "Not Found")
            return json_response({"openapi": "3.1.0", "paths": DOCUMENT_PATHS})
        if path == "/traces":
            return json_response({"data": [], "next_cursor": None})
        if path.endswith("/events"):
            return json_response({"data": [], "next_cursor": None})
        if path == "/projects" and request.method == "GET":
            return json_response({"data": list(self.projects.values()), "has_more": False})
        if match := re.fullmatch(r"/projects/([^/]+)", path):
            return self.project(request, match.group(1), body)
        if match := re.fullmatch(r"/projects/([^/]+)/keys(?:/([^/]+))?", path):
            return self.key(request, match.group(1), match.group(2), body)
        if match := re.fullmatch(r"/projects/([^/]+)/alerts", path):
            alerts = [a for a in self.alerts.values() if a["project_id"] == match.group(1)]
            if request.method == "POST":
                alert = {**body, "id": f"al_{len(self.alerts) + 1}", "project_id": match.group(1)}
                self.alerts[alert["id"]] = alert
                return json_response({**alert, "webhook_secret": CREATED_SECRET}, 201)
            return json_response({"data": alerts, "has_more": False})
        if match := re.fullmatch(r"/projects/([^/]+)/alerts/([^/]+)(/[a-z-]+)?", path):
            return self.alert(request, match.group(2), match.group(3), body)
        return error(404, "Not Found")

    def project(self, request: httpx.Request, pid: str, body: Any) -> httpx.Response:
        project = self.projects.get(pid)
        if project is None or not self.offered:
            return error(404, "No project with that id.")
        if request.method == "DELETE":
            del self.projects[pid]
            return httpx.Response(204)
        if request.method != "PATCH":
            return json_response(project)
        days = body.get("retention_days", project["retention_days"])
        if not isinstance(days, int) or not 1 <= days <= 365:
            return error(
                422,
                "Invalid request",
                details=[{"field": "retention_days", "message": "1 to 365"}],
            )
        changed = {**project, **body}
        dropping = self.traces_outside if days < project["retention_days"] else 0
        if request.url.params.get("dry_run") != "true":
            self.projects[pid] = changed
        return json_response({**changed, "traces_to_delete": dropping})

    def key(self, request: httpx.Request, pid: str, kid: str | None, body: Any) -> httpx.Response:
        if not self.offered:
            return error(404, "Not Found")
        if request.method == "POST":
            label = body.get("label", "")
            if not 1 <= len(label) <= 100:
                return error(
                    422, "Invalid request", details=[{"field": "label", "message": "1 to 100"}]
                )
            info = {
                "id": f"key_{len(self.keys) + 1}",
                "label": label,
                "prefix": NEW_KEY[:10],
                "project_id": pid,
                "created_at": T0,
                "last_used_at": None,
            }
            self.keys[info["id"]] = info
            return json_response({**info, "key": NEW_KEY}, 201)
        if request.method == "DELETE":
            if self.keys.pop(kid or "", None) is None:
                return error(404, "No key with that id.")
            return httpx.Response(204)
        return json_response({"data": [k for k in self.keys.values() if k["project_id"] == pid]})

    def alert(
        self, request: httpx.Request, aid: str, tail: str | None, body: Any
    ) -> httpx.Response:
        alert = self.alerts.get(aid)
        if alert is None or (not self.offered and tail != "/test"):
            return error(404, "Not Found")
        if tail == "/rotate-secret":
            return json_response({"secret": NEW_SECRET, "previous_valid_until": T0})
        if tail == "/test":
            return json_response({"webhook_id": "msg_1"}, 202)
        if request.method == "DELETE":
            del self.alerts[aid]
            return httpx.Response(204)
        if request.method == "PATCH":
            if "webhook_url" in body and not str(body["webhook_url"]).startswith("http"):
                return error(
                    422,
                    "Invalid request",
                    details=[{"field": "webhook_url", "message": "not a URL"}],
                )
            alert.update(body)
        return json_response(alert)
