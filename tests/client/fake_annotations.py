"""An in-memory server of the annotations contract (/work/lanes/annotations-contract.md, the
service's docs/api.md), for httpx.MockTransport: POST a batch (all or none, Idempotency-Key,
identifiers that update), GET newest first and keyset-paged, PATCH, DELETE, and the OpenAPI
document that offers them. The client and the screens' faults are tested against it; the real
service is tested in tests/app and tests/service.

`offered=False` makes it a spec-only server (its openapi.json answers 404). `store_then` makes
the next write be carried out and then answered by raising the given exception (a timeout after
the request was sent: its outcome is unknown to the client)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.support.helpers import json_response

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN = "00f067aa0ba902b7"
SESSION = "sess_checkout_17"
PROJECT = "proj_a"
AUTHOR = "on-call laptop"

DOCUMENT_PATHS: dict[str, Any] = {
    "/v1/projects": {"get": {}},
    "/v1/traces": {
        "get": {
            "parameters": [
                {"name": name, "in": "query"}
                for name in (
                    "project_id",
                    "from",
                    "to",
                    "limit",
                    "cursor",
                    "q",
                    "status",
                    "annotation",
                    "label",
                    "min_score",
                    "max_score",
                    "sort",
                    "order",
                )
            ]
        }
    },
    "/v1/projects/{project_id}/annotations": {"get": {}, "post": {}},
    "/v1/projects/{project_id}/annotations/{annotation_id}": {"patch": {}, "delete": {}},
}


def refused(field_name: str, message: str, status: int = 422) -> httpx.Response:
    return json_response(
        {
            "error": {
                "code": "validation_error",
                "message": f"Invalid fields: {field_name}.",
                "details": [{"field": field_name, "message": message}],
            }
        },
        status,
    )


def not_found(message: str = "Not Found") -> httpx.Response:
    return json_response({"error": {"code": "not_found", "message": message}}, 404)


@dataclass
class FakeAnnotations:
    offered: bool = True
    traces: dict[str, set[str]] = field(default_factory=lambda: {TRACE: {SPAN, "00f067aa0ba902b8"}})
    sessions: set[str] = field(default_factory=lambda: {SESSION})
    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[httpx.Request] = field(default_factory=list)
    remembered: dict[str, tuple[str, httpx.Response]] = field(default_factory=dict)
    fail_next: httpx.Response | None = None  # answers the next write instead of doing it
    store_then: Exception | None = None  # does the next write, then raises this
    clock: int = 0
    author: str = AUTHOR

    def writes(self) -> list[httpx.Request]:
        return [r for r in self.requests if r.method != "GET"]

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        path = request.url.path.removeprefix("/v1")
        if path == "/openapi.json":
            if not self.offered:
                return not_found()
            return json_response({"openapi": "3.1.0", "paths": DOCUMENT_PATHS})
        prefix = f"/projects/{PROJECT}/annotations"
        if not self.offered or not path.startswith(prefix):
            return not_found()
        if request.method != "GET":
            if self.fail_next is not None:
                answer, self.fail_next = self.fail_next, None
                return answer
            answer = self.write(request, path.removeprefix(prefix).strip("/"))
            if self.store_then is not None:
                raising, self.store_then = self.store_then, None
                raise raising
            return answer
        return self.listing(request)

    # -- writes ----------------------------------------------------------------------------------

    def write(self, request: httpx.Request, annotation_id: str) -> httpx.Response:
        key = request.headers.get("idempotency-key")
        if key and key in self.remembered:
            body, answer = self.remembered[key]
            if body != request.content.decode():
                return json_response({"error": {"code": "conflict", "message": "Reused"}}, 409)
            return answer
        if request.method == "POST" and not annotation_id:
            answer = self.create(json.loads(request.content))
        elif request.method == "PATCH":
            answer = self.patch(annotation_id, json.loads(request.content))
        elif request.method == "DELETE":
            if self.records.pop(annotation_id, None) is None:
                return not_found("No annotation with that id in this project.")
            answer = httpx.Response(204)
        else:
            return not_found()
        if key and answer.status_code < 300:
            self.remembered[key] = (request.content.decode(), answer)
        return answer

    def create(self, body: Any) -> httpx.Response:
        items = body.get("data") if isinstance(body, dict) else None
        if not isinstance(items, list) or not 1 <= len(items) <= 1000:
            return refused("data", "1 to 1,000 annotations")
        made: list[dict[str, Any]] = []
        for index, item in enumerate(items):
            problem = self.problem(item)
            if problem is not None:
                return refused(f"data[{index}].{problem[0]}", problem[1])
        for item in items:
            made.append(self.store(item))
        return json_response({"data": made}, 201)

    def problem(self, item: dict[str, Any]) -> tuple[str, str] | None:
        name = item.get("name")
        if not isinstance(name, str) or not name.strip() or len(name) > 64:
            return "name", "1 to 64 characters, not blank"
        trace, span, session = item.get("trace_id"), item.get("span_id"), item.get("session_id")
        if session is not None:
            if trace is not None or span is not None:
                return "session_id", "a session annotation has no trace_id or span_id"
            if session not in self.sessions:
                return "session_id", "no session with this id in this project"
        elif trace is None:
            return "trace_id", "required: a trace_id (with a span_id for a span) or a session_id"
        elif trace not in self.traces:
            return "trace_id", "no trace with this id in this project"
        elif span is not None and span not in self.traces[trace]:
            return "span_id", "no span with this id in this trace"
        score = item.get("score")
        if score is not None and (not isinstance(score, (int, float)) or not math.isfinite(score)):
            return "score", "a finite number"
        if len(item.get("explanation") or "") > 10_000:
            return "explanation", "at most 10,000 characters"
        if all(item.get(v) is None for v in ("label", "score", "explanation")):
            return "label", "an annotation needs a label, a score or an explanation"
        return None

    def store(self, item: dict[str, Any]) -> dict[str, Any]:
        self.clock += 1
        moment = f"2026-11-27T03:{self.clock // 60:02d}:{self.clock % 60:02d}.000Z"
        target = (item.get("trace_id"), item.get("span_id"), item.get("session_id"))
        identifier = item.get("identifier")
        for record in self.records.values():
            same_target = (record["trace_id"], record["span_id"], record["session_id"]) == target
            same = same_target and record["name"] == item["name"]
            if identifier and same and record["identifier"] == identifier:
                record.update(self.values(item), updated_at=moment, author=self.author)
                return record
        record = {
            "id": f"ann_{self.clock:04d}",
            "project_id": PROJECT,
            "trace_id": target[0],
            "span_id": target[1],
            "session_id": target[2],
            "name": item["name"],
            **self.values(item),
            "annotator_kind": item.get("annotator_kind", "HUMAN"),
            "identifier": identifier,
            "author": self.author,
            "metadata": item.get("metadata", {}),
            "created_at": moment,
            "updated_at": moment,
        }
        self.records[record["id"]] = record
        return record

    @staticmethod
    def values(item: dict[str, Any]) -> dict[str, Any]:
        values = {name: item.get(name) for name in ("label", "score", "explanation")}
        return {**values, "result": dict(values)}

    def patch(self, annotation_id: str, changes: dict[str, Any]) -> httpx.Response:
        record = self.records.get(annotation_id)
        if record is None:
            return not_found("No annotation with that id in this project.")
        merged = {**record, **changes}
        if all(merged.get(v) is None for v in ("label", "score", "explanation")):
            return refused("label", "an annotation needs a label, a score or an explanation")
        self.clock += 1
        record.update(changes, author=self.author, updated_at=f"2026-11-27T04:00:{self.clock:02d}Z")
        record["result"] = {n: record.get(n) for n in ("label", "score", "explanation")}
        return json_response(record)

    # -- reads -----------------------------------------------------------------------------------

    def listing(self, request: httpx.Request) -> httpx.Response:
        params = request.url.params
        wanted = {
            name: params[name]
            for name in ("trace_id", "span_id", "session_id", "name")
            if name in params
        }
        kept = [r for r in self.records.values() if all(r[n] == v for n, v in wanted.items())]
        kept.sort(key=lambda r: (r["created_at"], r["id"]), reverse=True)
        start = int(params.get("cursor", "0"))
        limit = int(params.get("limit", "100"))
        page = kept[start : start + limit]
        more = start + limit < len(kept)
        return json_response(
            {"data": page, "next_cursor": str(start + limit) if more else None, "has_more": more}
        )
