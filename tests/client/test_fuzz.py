"""Property: any body, status and headers give a parsed result or a typed error, nothing else."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.helpers import mock_client
from tui.api import ApiError
from tui.core.alert_rules import AlertDraft

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=12), inner, max_size=6)
    ),
    max_leaves=30,
)
keys = st.sampled_from(
    [
        "data",
        "items",
        "spans",
        "next_cursor",
        "cursor",
        "meta",
        "links",
        "id",
        "started_at",
        "parent_id",
        "duration_ms",
        "status",
        "error",
        "usage",
        "input_tokens",
        "cost",
        "has_more",
        "errors",
        "detail",
        "message",
    ]
)
shaped = st.recursive(
    json_values,
    lambda inner: st.dictionaries(keys, inner, max_size=6) | st.lists(inner, max_size=4),
    max_leaves=40,
)
header_names = st.sampled_from(
    [
        "Retry-After",
        "X-RateLimit-Remaining",
        "X-RateLimit-Reset",
        "X-RateLimit-Limit",
        "Link",
        "Content-Type",
        "Location",
    ]
)
header_values = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=40)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    body=shaped | st.binary(max_size=60).map(lambda b: ("raw", b)),
    status=st.sampled_from(
        [200, 201, 204, 301, 400, 401, 403, 404, 409, 422, 429, 500, 502, 503, 504, 599]
    ),
    headers=st.dictionaries(header_names, header_values, max_size=4),
    call=st.sampled_from(["projects", "traces", "trace", "alerts", "create"]),
)
def test_any_response_is_a_result_or_a_typed_error(
    body: Any, status: int, headers: dict[str, str], call: str
) -> None:
    content = body[1] if isinstance(body, tuple) else json.dumps(body).encode()

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=content, headers=headers)

    async def run() -> None:
        async with mock_client(handler, max_retries=1, max_rate_limit_retries=1) as client:
            try:
                if call == "projects":
                    await client.list_projects()
                elif call == "traces":
                    [t async for t in client.iter_traces("p")]
                elif call == "trace":
                    await client.get_trace("t")
                elif call == "alerts":
                    await client.list_alerts("p")
                else:
                    await client.create_alert("p", AlertDraft("n", "m", "gt", 1, "https://h"))
            except ApiError as error:
                assert error.message and (
                    error.status is None or str(error.status) in error.message
                )

    asyncio.run(run())
