"""Reading an answer's body: JSON, even nested deeper than Python's parser goes, or a typed
BadResponse; and one record as servers wrap it, bare or under `data` (`{"data": {...}}`).
`read_record` reads a record or says it is not one. Lists and their cursors are read by
pagination.py."""

from __future__ import annotations

from typing import Any

import httpx

from tui.api.deep_json import loads_with_depth_cut
from tui.api.errors import BadResponse


def read_json(response: httpx.Response) -> Any:
    """The body as JSON; BadResponse (naming only the content type) when it is not JSON."""
    try:
        try:
            return response.json()
        except RecursionError:  # nested too deep for json.loads: keep all but the depths
            return loads_with_depth_cut(response.text)
    except (ValueError, UnicodeDecodeError, RecursionError):
        kind = response.headers.get("content-type", "no content type").split(";")[0]
        raise BadResponse(
            f"The server sent {kind} that is not valid JSON (HTTP {response.status_code})",
            response.status_code,
        ) from None


def unwrap_record(body: Any) -> Any:
    """A record's fields from `{"data": {...}}`; any other body as it is (a record has an id:
    one with both `id` and a `data` object is the record itself)."""
    if isinstance(body, dict) and isinstance(body.get("data"), dict) and "id" not in body:
        return body["data"]
    return body


def read_record(response: Any, *, outcome_unknown: bool = False) -> dict[str, Any]:
    """The record an answer holds, bare or under `data`; BadResponse when it holds none
    (`outcome_unknown`: the server said yes to a create, but not what it made)."""
    try:
        data = unwrap_record(read_json(response))
    except BadResponse as error:
        raise BadResponse(error.message, error.status, outcome_unknown=outcome_unknown) from None
    if not isinstance(data, dict):
        raise BadResponse(
            f"The server's answer is not a record (HTTP {response.status_code})",
            response.status_code,
            outcome_unknown=outcome_unknown,
        )
    return data
