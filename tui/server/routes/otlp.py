"""POST /v1/traces: OTLP/HTTP trace export (GET on the same path is the trace list).

`OTEL_EXPORTER_OTLP_ENDPOINT=http://HOST:PORT` makes any OTel SDK post here. Answers are in the
request's encoding (see ingest.responses), errors included, which is why this route checks the
key itself instead of through the Auth dependency (whose errors are the JSON API's). Order of
checks: content type and encoding (415), key (401), room for the body, in all and for its key
(503), body (413), its turn at the workers (ingest.turns), how much it holds (413, before it is
decoded: ingest.bounds), whether it is OTLP (400), then the spans; the writer's commit comes
before the answer, so a trace is listable when its request returns.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect

from tui.server.http.answers import EXPORT_RESPONSE_JSON
from tui.server.http.deps import scope_of
from tui.server.http.errors import ServiceError, refused_write
from tui.server.ingest.body import JSON, PROTOBUF, BodyError, encoding, media_type, read_body
from tui.server.ingest.costs import PRICES, PriceBook
from tui.server.ingest.processes import (
    IngestProcesses,
    Refusals,
    WorkerLost,
    decode,
    groups_of,
    refusals_of,
)
from tui.server.ingest.responses import answer_type, failure, success
from tui.server.ingest.turns import FairTurns, InFlight
from tui.server.ingest.types import TooLarge, Unreadable
from tui.server.ingest.writer import IngestWriter, Overloaded
from tui.server.store.errors import StoreBusy
from tui.server.store.protocol import TraceStore

log = logging.getLogger("tracetui.server")

MAX_IN_FLIGHT = 8  # requests being read and decoded at once: bounds the memory bodies take
# One key's share of them: a key sending more at once is answered 503 (retried), and the others
# still have room. Four: an exporting process sends one body at a time (BatchSpanProcessor),
# so this is four processes of one app sending at the same moment.
MAX_IN_FLIGHT_PER_KEY = 4
TURNS_PER_WORKER = 2  # one body decoding, one ready behind it (ingest.turns)
RETRY_AFTER_S = 1

router = APIRouter()


@dataclass
class Ingest:
    """The route's state, in app.state.ingest: the worker processes, the writer thread (when
    there are none, or while they start) and what bounds and shares the work in hand."""

    writer: IngestWriter
    processes: IngestProcesses = field(default_factory=IngestProcesses)
    prices: PriceBook = PRICES
    in_flight: InFlight = field(
        default_factory=lambda: InFlight(MAX_IN_FLIGHT, MAX_IN_FLIGHT_PER_KEY)
    )
    turns: FairTurns = field(init=False)

    def __post_init__(self) -> None:
        self.turns = FairTurns(self.turns_out)

    def turns_out(self) -> int:
        """How many bodies go to the workers at once. In the service's own threads, all those
        in hand: they decode side by side and the writer thread writes them together."""
        if self.processes.ready:
            return TURNS_PER_WORKER * self.processes.processes
        return self.in_flight.total


BOTH = {
    PROTOBUF: {"schema": {"type": "string", "format": "binary"}},
    JSON: {"schema": {"type": "object"}},
}
EXPORTED = {
    PROTOBUF: {"schema": {"type": "string", "format": "binary"}},
    JSON: {"schema": EXPORT_RESPONSE_JSON},
}
RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"description": text, "content": EXPORTED if status == 200 else BOTH}
    for status, text in (
        (200, "ExportTraceServiceResponse (partial_success names refused spans)"),
        (400, "Unreadable body (google.rpc.Status)"),
        (401, "Missing or unknown key"),
        (413, "Body over the limit after decompression, or too many spans or values"),
        (415, "Not application/x-protobuf or application/json; not gzip or deflate"),
        (429, "Ingest rate limit; retry after Retry-After"),
        (500, "Internal error"),
        (503, "Overloaded; retry after Retry-After"),
    )
}


@router.post(
    "/traces",
    summary="Export traces (OTLP/HTTP)",
    response_class=Response,
    responses=RESPONSES,
    openapi_extra={"requestBody": {"required": True, "content": BOTH}},
)
async def export_traces(request: Request) -> Response:
    answer = answer_type(request.headers.get("content-type"))
    try:
        return await ingest(request, answer)
    except (ServiceError, BodyError) as error:
        body = failure(answer, error.status, error.code, error.message)
        return Response(body, status_code=error.status, media_type=answer)
    except Unreadable as error:
        return Response(failure(answer, 400, "invalid_body", str(error)), 400, media_type=answer)
    except TooLarge as error:
        body = failure(answer, 413, "payload_too_large", str(error))
        return Response(body, 413, media_type=answer)
    except StoreBusy as error:
        code, message, retry_after = refused_write(error)
        return Response(
            failure(answer, 503, code, message),
            503,
            headers={"Retry-After": str(retry_after)},
            media_type=answer,
        )
    except (Overloaded, WorkerLost) as error:
        message = (
            "The service lost the process ingesting this request; retry shortly."
            if isinstance(error, WorkerLost)
            else "The service is busy writing spans; retry shortly."
        )
        return Response(
            failure(answer, 503, "overloaded", message),
            503,
            headers={"Retry-After": str(RETRY_AFTER_S)},
            media_type=answer,
        )
    except ClientDisconnect:  # the client left before its body was read: nobody to answer
        return Response(status_code=400)
    except Exception as error:  # any other: a 500 the exporter can still read
        return internal_error(answer, request, error)


def internal_error(answer: str, request: Request, error: Exception) -> Response:
    """A 500 in the request's encoding (an exporter reads a protobuf Status from a protobuf
    request), logged by the route's template and the error's type only: its message could
    quote the body, as the path could a key."""
    route = getattr(request.scope.get("route"), "path", "an OTLP route")
    log.error("internal error on POST %s (%s)", route, type(error).__name__)
    message = "The service failed unexpectedly."
    return Response(failure(answer, 500, "internal_error", message), 500, media_type=answer)


async def ingest(request: Request, answer: str) -> Response:
    media = media_type(request.headers.get("content-type"))
    compression = encoding(request.headers.get("content-encoding"))
    store: TraceStore = request.app.state.store
    scope = await scope_of(request, store, request.headers.get("authorization"))
    state: Ingest = request.app.state.ingest
    key = scope.key_hash
    if not state.in_flight.enter(key):
        raise Overloaded("too many ingest requests at once")
    try:
        body = await read_body(request.stream(), compression)
        async with state.turns.turn(key):
            now = request.app.state.clock()
            refusals = await state.processes.ingest(media, body, now, scope.project_id)
            if refusals is None:  # no worker processes (yet): decode here, the writer writes
                refusals = await ingest_here(state, media, body, now, scope.project_id)
    finally:
        state.in_flight.leave(key)
    return Response(success(answer, refusals.spans, refusals.reason), media_type=answer)


async def ingest_here(
    state: Ingest, media: str, body: bytes, now: int, project_id: str | None
) -> Refusals:
    decoded = await run_in_threadpool(decode, media, body, state.prices, now)
    groups = groups_of(decoded, project_id)
    if groups:
        await asyncio.wrap_future(state.writer.submit(groups))
    return refusals_of(decoded)
