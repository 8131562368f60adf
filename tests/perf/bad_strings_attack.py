"""The outside review's bad-string attack (issue 39, point 2), repeated against a real
`tracetui serve` on both stores: one export holds a good trace and a trace with one bad string
(a lone surrogate, `"\\ud83d"` in JSON; or NUL, in JSON and protobuf) in one place; the review
saw a 500 and neither trace stored. Prints, per case: the status, the answer's content type,
whether both traces are stored, and whether the bad string was stored as U+FFFD.

    .venv/bin/python -m tests.perf.bad_strings_attack

Logs: a `/v1/logs` export of two GenAI events for two stored spans, one event's body holding a
lone surrogate; both must be joined to their spans.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import httpx
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.perf.attack_service import Serve, add_project_key, store_url, uptime
from tests.support.otlp import kv

LONE = "\ud83d"
NUL = "\x00"
REPLACED = "\ufffd"
# (case, attribute, value with its bad string, encodings)
CASES = [
    ("lone surrogate in input.value", "input.value", f"hi {LONE}", ("json",)),
    ("lone surrogate in output.value", "output.value", f"bye {LONE}", ("json",)),
    ("lone surrogate in session.id", "session.id", f"s-{LONE}", ("json",)),
    ("lone surrogate in a tag", "tag.tags", ["ok", f"t-{LONE}"], ("json",)),
    ("NUL in gen_ai.request.model", "gen_ai.request.model", f"gpt-4o{NUL}", ("json", "protobuf")),
    ("NUL in a tag", "tag.tags", ["ok", f"t{NUL}x"], ("json", "protobuf")),
]


def json_value(value: Any) -> dict[str, Any]:
    if isinstance(value, list):
        return {"arrayValue": {"values": [json_value(v) for v in value]}}
    return {"stringValue": value}


def new_span(attributes: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    trace_id, span_id = os.urandom(16).hex(), os.urandom(8).hex()
    start = time.time_ns()
    span = {
        "traceId": trace_id,
        "spanId": span_id,
        "name": "attack",
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 1_000_000),
        "attributes": [{"key": k, "value": json_value(v)} for k, v in attributes.items()],
    }
    return trace_id, span_id, span


def json_body(*spans: dict[str, Any]) -> bytes:
    # ensure_ascii writes a lone surrogate as the escape "\ud83d", as JSON.stringify does.
    document = {"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}
    return json.dumps(document, ensure_ascii=True).encode()


def protobuf_body(*spans: dict[str, Any]) -> bytes:
    request = ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    for given in spans:
        span = scope.spans.add()
        span.trace_id = bytes.fromhex(given["traceId"])
        span.span_id = bytes.fromhex(given["spanId"])
        span.name = given["name"]
        span.start_time_unix_nano = int(given["startTimeUnixNano"])
        span.end_time_unix_nano = int(given["endTimeUnixNano"])
        for attribute in given["attributes"]:
            value = attribute["value"]
            plain = value.get("stringValue") or [
                v["stringValue"] for v in value["arrayValue"]["values"]
            ]
            span.attributes.append(kv(attribute["key"], plain))
    return request.SerializeToString()


def stored(client: httpx.Client, trace_id: str) -> tuple[bool, bool]:
    """Whether the trace is stored, and whether U+FFFD is in what it answers."""
    answer = client.get(f"traces/{trace_id}", params={"project_id": "victim"})
    if answer.status_code != 200:
        return False, False
    return True, REPLACED in json.dumps(answer.json(), ensure_ascii=False)


def export_case(client: httpx.Client, attribute: str, value: Any, encoding: str) -> dict[str, Any]:
    good_id, _, good = new_span({"input.value": "a good trace"})
    bad_id, _, bad = new_span({attribute: value})
    body = json_body(good, bad) if encoding == "json" else protobuf_body(good, bad)
    kind = "application/json" if encoding == "json" else "application/x-protobuf"
    answer = client.post("traces", content=body, headers={"Content-Type": kind})
    good_stored, _ = stored(client, good_id)
    bad_stored, repaired = stored(client, bad_id)
    return {
        "status": answer.status_code,
        "answer type": answer.headers.get("content-type", ""),
        "good stored": good_stored,
        "bad stored": bad_stored,
        "stored as U+FFFD": repaired,
    }


def logs_case(client: httpx.Client) -> dict[str, Any]:
    spans = [new_span({"input.value": "for a log"}) for _ in range(2)]
    client.post(
        "traces",
        content=json_body(*(s for _, _, s in spans)),
        headers={"Content-Type": "application/json"},
    )
    records = [
        {
            "timeUnixNano": str(time.time_ns()),
            "traceId": trace_id,
            "spanId": span_id,
            "eventName": "gen_ai.user.message",
            "body": {"stringValue": text},
        }
        for (trace_id, span_id, _), text in zip(spans, ["good", f"bad {LONE}"], strict=True)
    ]
    document = {"resourceLogs": [{"scopeLogs": [{"logRecords": records}]}]}
    answer = client.post(
        "logs",
        content=json.dumps(document, ensure_ascii=True).encode(),
        headers={"Content-Type": "application/json"},
    )
    joined = []
    for trace_id, _, _ in spans:
        trace = client.get(f"traces/{trace_id}", params={"project_id": "victim"}).json()
        joined.append(any("tracetui.logs" in s.get("attributes", {}) for s in trace["spans"]))
    text = json.dumps(
        client.get(f"traces/{spans[1][0]}", params={"project_id": "victim"}).json(),
        ensure_ascii=False,
    )
    return {
        "status": answer.status_code,
        "answer type": answer.headers.get("content-type", ""),
        "good stored": joined[0],
        "bad stored": joined[1],
        "stored as U+FFFD": REPLACED in text,
    }


def run(store: str) -> list[tuple[str, str, dict[str, Any]]]:
    results = []
    with store_url(store) as url:
        key = add_project_key(url, "victim")
        with (
            Serve(url) as served,
            httpx.Client(
                base_url=served.base, headers={"Authorization": f"Bearer {key}"}, timeout=30
            ) as client,
        ):
            for case, attribute, value, encodings in CASES:
                for encoding in encodings:
                    results.append(
                        (case, encoding, export_case(client, attribute, value, encoding))
                    )
            results.append(("lone surrogate in a /v1/logs body", "json", logs_case(client)))
    return results


def main() -> None:
    print("before:", uptime())
    for store in ("sqlite", "postgres"):
        for case, encoding, found in run(store):
            figures = ", ".join(f"{k} {v}" for k, v in found.items())
            print(f"{store:8} {case:36} {encoding:8} {figures}")
    print("after: ", uptime())


if __name__ == "__main__":
    main()
