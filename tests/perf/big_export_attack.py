"""The outside review's ingest-starving attack (issue 39, point 3), repeated against a real
`tracetui serve` on both stores: one OTLP protobuf export of 16 MiB holding ~8.4 million empty
spans (two bytes each), then four at once (twice), from one project's key; meanwhile another project's
key sends 1-span exports one after another. The review saw 25.8 s per attack, 1.45 GB more
memory in the service and its worker, and the other project's export waiting 25 s.

    .venv/bin/python -m tests.perf.big_export_attack
    .venv/bin/python -m tests.perf.big_export_attack --store postgres --fours 10

Prints per store and round: each attack's status and time to answer, the service's and its
ingest workers' VmRSS before and after and VmHWM after (peak), and the other project's exports
during the round (count, p50, max, statuses).
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.perf.attack_service import Serve, add_project_key, memory_kib, store_url, uptime
from tests.support.otlp import new_span_id, new_trace_id
from tui.server.ingest.body import MAX_BODY_BYTES

PROTOBUF = {"Content-Type": "application/x-protobuf"}
ROUND_LIMIT_S = 120.0


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        if not value:
            out.append(low)
            return bytes(out)
        out.append(low | 0x80)


def field(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def attack_body() -> bytes:
    """16 MiB (just under the body bound) of empty spans in one scope: the review's body."""
    return field(1, field(2, b"\x12\x00" * (MAX_BODY_BYTES // 2 - 16)))


def one_span() -> bytes:
    request = ExportTraceServiceRequest()
    span = request.resource_spans.add().scope_spans.add().spans.add()
    span.trace_id, span.span_id, span.name = new_trace_id(), new_span_id(), "victim"
    span.start_time_unix_nano = time.time_ns()
    span.end_time_unix_nano = span.start_time_unix_nano + 1_000_000
    return request.SerializeToString()


class Victim(threading.Thread):
    """Another project's 1-span exports, one after another: (status, seconds) each."""

    def __init__(self, base: str, key: str) -> None:
        super().__init__(daemon=True)
        self.client = httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {key}", **PROTOBUF}, timeout=60
        )
        self.answers: list[tuple[int, float]] = []
        self.stop = threading.Event()

    def run(self) -> None:
        deadline = time.monotonic() + ROUND_LIMIT_S
        while not self.stop.is_set() and time.monotonic() < deadline:
            began = time.monotonic()
            try:
                status = self.client.post("traces", content=one_span()).status_code
            except httpx.HTTPError:
                status = 0
            self.answers.append((status, time.monotonic() - began))
            self.stop.wait(0.05)


def memory(served: Serve) -> str:
    parts = []
    for name, pid in [("service", served.pid)] + [("worker", p) for p in served.children()]:
        found = memory_kib(pid)
        parts.append(f"{name} {found['VmRSS'] // 1024}/{found['VmHWM'] // 1024}")
    return ", ".join(parts) + " MiB (RSS/peak)"


def attack(base: str, key: str, body: bytes) -> tuple[int, float, str]:
    began = time.monotonic()
    with httpx.Client(
        base_url=base, headers={"Authorization": f"Bearer {key}", **PROTOBUF}, timeout=120
    ) as client:
        answer = client.post("traces", content=body)
    return answer.status_code, time.monotonic() - began, answer.headers.get("content-type", "")


def round_of(served: Serve, attacker: str, victim_key: str, body: bytes, at_once: int) -> None:
    print(f"  {at_once} at once; memory before: {memory(served)}")
    victim = Victim(served.base, victim_key)
    victim.start()
    with ThreadPoolExecutor(at_once) as pool:
        answers = list(pool.map(lambda _: attack(served.base, attacker, body), range(at_once)))
    victim.stop.set()
    victim.join()
    for status, seconds, kind in answers:
        print(f"  attack: {status} in {seconds:.2f} s ({kind})")
    print(f"  memory after: {memory(served)}")
    times = sorted(t * 1000 for _, t in victim.answers)
    statuses = sorted({s for s, _ in victim.answers})
    print(
        f"  other project's 1-span exports meanwhile: {len(times)}, p50"
        f" {statistics.median(times):.0f} ms, max {times[-1]:.0f} ms, statuses {statuses}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fours", type=int, default=2, help="rounds of four at once (2)")
    parser.add_argument("--store", choices=("sqlite", "postgres"), action="append")
    args = parser.parse_args()
    fours = min(args.fours, 50)
    body = attack_body()
    print(f"body: {len(body)} bytes, {(len(body) - 16) // 2} empty spans")
    for store in args.store or ("sqlite", "postgres"):
        print(f"{store}: before {uptime()}")
        with store_url(store) as url:
            attacker = add_project_key(url, "attacker")
            victim_key = add_project_key(url, "victim")
            with Serve(url) as served:
                Victim(served.base, victim_key).client.post("traces", content=one_span())
                # Four at once again and again: whether the service's memory keeps growing.
                for at_once in (1, *[4] * fours):
                    round_of(served, attacker, victim_key, body, at_once)
        print(f"{store}: after {uptime()}")


if __name__ == "__main__":
    main()
