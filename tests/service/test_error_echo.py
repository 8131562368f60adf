"""No answer and no log line of the service repeats what a client sent in a path, a query
parameter, a body field or the Authorization header: a key pasted into the wrong place must not
come back in an error (where a proxy, a screenshot or a bug report keeps it) nor land in a log.

Every route of the OpenAPI document is sent a key-looking value in each of its path and query
parameters in turn (the others valid, so the value reaches as far into the route as it can),
with bodies whose fields carry it too."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from tests.support.service import RunningService

KEYS = ["sk-live-4f3c2b1aSECRETdeadbeef0042", "tt_ws_SECRET0123456789abcdef0123"]
ALERT = {
    "name": "echo",
    "metric": "latency_ms_5m",
    "condition": "gt",
    "threshold": 1000,
    "webhook_url": "https://hooks.example.com/echo",
}


def bodies(key: str) -> dict[tuple[str, str], list[Any]]:
    """What each route with a body is sent: a valid body (so that a bad path or query is what
    is answered), then bodies with the key in each field that is validated."""
    return {
        ("post", "/v1/projects"): [
            {"name": "echo", "retention_days": key},
            {"name": "echo", "description": 7, key: 1},
        ],
        ("post", "/v1/projects/{project_id}/alerts"): [
            ALERT,
            {**ALERT, "metric": key},
            {**ALERT, "condition": key},
            {**ALERT, "threshold": key},
            {**ALERT, "webhook_url": key},
            {**ALERT, "webhook_url": f"http://10.0.0.1/{key}"},
            {**ALERT, key: 1},
        ],
        ("post", "/v1/traces"): [{"resourceSpans": key}, key],
    }


@pytest.fixture(scope="module")
def known(service: RunningService) -> Iterator[tuple[httpx.Client, dict[str, str]]]:
    """A client with the workspace key, and valid values of every path parameter."""
    with service.client() as client:
        project = client.post("projects", json={"name": "error echo"}).json()["id"]
        alert = client.post(f"projects/{project}/alerts", json=ALERT).json()["id"]
        traces = client.get("traces", params={"project_id": "proj_support", "from": "2000-01-01"})
        trace = traces.json()["data"][0]["id"]
        yield client, {"project_id": project, "alert_id": alert, "trace_id": trace}


def routes(client: httpx.Client) -> list[tuple[str, str, list[str], list[str]]]:
    """(method, path, path parameters, query parameters) of every documented route."""
    document = client.get("openapi.json").json()
    found = []
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            params = operation.get("parameters", [])
            in_path = [p["name"] for p in params if p["in"] == "path"]
            in_query = [p["name"] for p in params if p["in"] == "query"]
            found.append((method, path, in_path, in_query))
    assert len(found) >= 10
    return found


def send(
    client: httpx.Client,
    method: str,
    path: str,
    values: dict[str, str],
    query: dict[str, str],
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    url = path.removeprefix("/v1/")
    for name, value in values.items():
        url = url.replace("{" + name + "}", quote(value, safe=""))
    return client.request(
        method,
        url,
        params=query,
        json=body if method == "post" else None,
        headers=headers,
    )


def assert_not_echoed(response: httpx.Response, key: str, case: str) -> None:
    told = response.text + " ".join(f"{k}: {v}" for k, v in response.headers.items())
    for form in (key, quote(key, safe=""), key.split("SECRET")[1]):
        assert form not in told, f"{case}: {response.status_code} {response.text[:300]}"


@pytest.mark.parametrize("key", KEYS)
def test_no_answer_repeats_a_value_sent(
    known: tuple[httpx.Client, dict[str, str]], key: str, caplog: pytest.LogCaptureFixture
) -> None:
    client, valid = known
    caplog.set_level(logging.DEBUG)
    answered: set[int] = set()
    for method, path, in_path, in_query in routes(client):
        sent_bodies = bodies(key).get((method, path), [None])
        cases: list[tuple[str, dict[str, str], dict[str, str], Any]] = []
        for name in in_path:
            cases += [(f"{path} {name}=key", {**valid, name: key}, {}, sent_bodies[0])]
        for name in in_query:
            query = {"project_id": valid["project_id"], name: key}
            cases += [(f"{path} ?{name}=key", valid, query, sent_bodies[0])]
        for n, body in enumerate(sent_bodies[1:] if len(sent_bodies) > 1 else []):
            cases += [(f"{path} body {n}", valid, {}, body)]
        for case, values, query, body in cases:
            response = send(client, method, path, values, query, body)
            assert response.status_code < 500, (case, response.text[:300])
            answered.add(response.status_code)
            assert_not_echoed(response, key, case)
        for header in (f"Bearer {key}", key, f"Basic {key}"):
            response = send(client, method, path, valid, {}, None, {"Authorization": header})
            assert 400 <= response.status_code < 500, response.text
            assert_not_echoed(response, key, f"{path} Authorization: {header[:6]}")
    # The values reached the routes' own checks, not only the router's.
    assert {400, 404, 422} <= answered
    # Every log line of the process but the test's own client's (httpx logs its requests).
    logged = [
        r.getMessage() for r in caplog.records if not r.name.startswith(("httpx", "httpcore"))
    ]
    assert not [line for line in logged if key in line or quote(key, safe="") in line]


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def test_the_access_log_leaves_out_the_query_string(tmp_path: Any) -> None:
    """A key pasted into a URL's query reaches no log line: the access log names the path."""
    from tests.support.service import local_service
    from tui.demo.data import populate
    from tui.server.store.sqlite.store import Store

    store = Store(tmp_path / "log.sqlite3")
    keys = populate(store, seed=7, scale=0.01, big_traces=False)
    lines = Lines()
    access = logging.getLogger("uvicorn.access")
    running = local_service(store, access_log=True)  # uvicorn sets up its loggers here
    access.addHandler(lines)
    try:
        with running as service:
            headers = {"Authorization": f"Bearer {keys.workspace}"}
            with httpx.Client(base_url=service.base_url + "/", headers=headers) as client:
                project = next(iter(keys.projects))
                answer = client.get("traces", params={"project_id": project, "cursor": KEYS[0]})
                assert answer.status_code == 400
    finally:
        access.removeHandler(lines)
    logged = [line for line in lines.lines if "/v1/traces" in line]
    assert logged, lines.lines
    assert not any(KEYS[0] in line or "cursor=" in line for line in lines.lines), logged
