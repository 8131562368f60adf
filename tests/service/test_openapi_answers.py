"""/v1/openapi.json documents every answer: each route has a success response whose schema
says something (the answers' shapes are in tui/server/http/answers.py), and errors have the one
error body."""

from __future__ import annotations

from typing import Any

import httpx


def test_every_route_documents_its_success(api: httpx.Client) -> None:
    document = api.get("openapi.json").json()
    operations = [
        (method, path, operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
    ]
    assert len(operations) >= 11, "fewer routes than the service has: is the document whole?"
    for method, path, operation in operations:
        successes = {s: r for s, r in operation["responses"].items() if s.startswith("2")}
        assert successes, f"{method} {path} documents no success"
        for status, response in successes.items():
            if status == "204":  # No Content (a deletion): documented without a body
                assert not response.get("content"), f"{method} {path} 204 has a body"
                continue
            schemas = [m.get("schema") for m in response.get("content", {}).values()]
            assert schemas, f"{method} {path} {status}: no content"
            for schema in schemas:
                assert schema and schema != {"type": "object"}, f"{method} {path} {status}"
                assert resolved(document, schema), f"{method} {path} {status}: empty schema"


def resolved(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if ref is None:
        return schema
    found: dict[str, Any] = document
    for part in ref.removeprefix("#/").split("/"):
        found = found[part]
    return found


def test_json_routes_document_the_error_body(api: httpx.Client) -> None:
    document = api.get("openapi.json").json()
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if (method, path) == ("post", "/v1/traces"):  # OTLP: errors in the request's encoding
                continue
            default = operation["responses"].get("default", {})
            schema = default.get("content", {}).get("application/json", {}).get("schema")
            assert schema == {"$ref": "#/components/schemas/ErrorBody"}, f"{method} {path}"
    error = resolved(document, {"$ref": "#/components/schemas/ErrorBody"})
    assert error["required"] == ["error"]
