"""POST /v1/logs and /v1/metrics: the OTLP/HTTP signals beside traces, so an exporter set up
for all three (OTEL_EXPORTER_OTLP_ENDPOINT) logs no errors.

Logs: GenAI log events of a span (`gen_ai.user.message`, `gen_ai.choice`, ...) are stored and
joined into the span (ingest.logs, store/logs.py); other records are accepted and dropped.
Metrics: the body is read and dropped; the service keeps no metric series. Both answer as
OTLP does (ExportLogsServiceResponse, ExportMetricsServiceResponse, in the request's
encoding) and check what POST /v1/traces checks, in the same order: content type and encoding
(415), key (401), body (413, 400); a store that cannot write answers 503 with Retry-After.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect

from tui.server.http.answers import ERRORS
from tui.server.http.deps import scope_of
from tui.server.http.errors import ServiceError, refused_write
from tui.server.ingest.body import JSON, PROTOBUF, BodyError, encoding, media_type, read_body
from tui.server.ingest.logs import check_metrics, decode_logs, logs_answer, metrics_answer
from tui.server.ingest.responses import answer_type, failure
from tui.server.ingest.types import TooLarge, Unreadable
from tui.server.routes.otlp import internal_error
from tui.server.store.errors import StoreBusy
from tui.server.store.protocol import TraceStore
from tui.server.store.rows import KeyScope

router = APIRouter()

BOTH = {
    PROTOBUF: {"schema": {"type": "string", "format": "binary"}},
    JSON: {"schema": {"type": "object"}},
}


def answer_schema(title: str, rejected: str) -> dict[str, Any]:
    """An Export*ServiceResponse in OTLP JSON: partialSuccess when something was refused."""
    properties = {
        rejected: {"type": "string", "description": "A count, as OTLP/JSON's"},
        "errorMessage": {"type": "string"},
    }
    return {
        "title": title,
        "type": "object",
        "properties": {"partialSuccess": {"type": "object", "properties": properties}},
    }


def responses(what: str, schema: dict[str, Any]) -> dict[int | str, dict[str, Any]]:
    """The route's answers: the export response, errors in the request's encoding (JSON ones
    are the service's error body, with google.rpc.Status's code and message beside it)."""
    exported = {PROTOBUF: BOTH[PROTOBUF], JSON: {"schema": schema}}
    return {
        **ERRORS,
        200: {"description": what, "content": exported},
    } | {
        status: {"description": text, "content": BOTH}
        for status, text in (
            (400, "Unreadable body (google.rpc.Status)"),
            (401, "Missing or unknown key"),
            (413, "Body over the limit after decompression, or too many records or values"),
            (415, "Not application/x-protobuf or application/json; not gzip or deflate"),
            (503, "The store cannot write now; retry after Retry-After"),
        )
    }


@router.post(
    "/logs",
    summary="Export logs (OTLP/HTTP): GenAI log events joined to their spans",
    response_class=Response,
    responses=responses(
        "ExportLogsServiceResponse (partial_success names refused records)",
        answer_schema("ExportLogsServiceResponse", "rejectedLogRecords"),
    ),
    openapi_extra={"requestBody": {"required": True, "content": BOTH}},
)
async def export_logs(request: Request) -> Response:
    async def store_logs(media: str, body: bytes, scope: KeyScope) -> bytes:
        decoded = await run_in_threadpool(decode_logs, media, body)
        if decoded.groups:
            store: TraceStore = request.app.state.store
            now = request.app.state.clock()
            await run_in_threadpool(store.add_span_logs, decoded.groups, scope.project_id, now)
        return logs_answer(media, decoded.rejected, decoded.first_reason)

    return await answered(request, store_logs)


@router.post(
    "/metrics",
    summary="Export metrics (OTLP/HTTP): accepted and dropped",
    response_class=Response,
    responses=responses(
        "ExportMetricsServiceResponse (nothing refused; nothing kept)",
        answer_schema("ExportMetricsServiceResponse", "rejectedDataPoints"),
    ),
    openapi_extra={"requestBody": {"required": True, "content": BOTH}},
)
async def export_metrics(request: Request) -> Response:
    async def drop_metrics(media: str, body: bytes, scope: KeyScope) -> bytes:
        await run_in_threadpool(check_metrics, media, body)
        return metrics_answer(media)

    return await answered(request, drop_metrics)


Handler = Callable[[str, bytes, KeyScope], Any]


async def answered(request: Request, handle: Handler) -> Response:
    """The request's body read within its limits and handed to `handle`, which returns the
    answer; every refusal in the request's encoding."""
    answer = answer_type(request.headers.get("content-type"))
    try:
        media = media_type(request.headers.get("content-type"))
        compression = encoding(request.headers.get("content-encoding"))
        store: TraceStore = request.app.state.store
        scope = await scope_of(request, store, request.headers.get("authorization"))
        body = await read_body(request.stream(), compression)
        return Response(await handle(media, body, scope), media_type=answer)
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
    except ClientDisconnect:  # the client left before its body was read: nobody to answer
        return Response(status_code=400)
    except Exception as error:  # any other: a 500 the exporter can still read
        return internal_error(answer, request, error)
