"""Shared by the stack scripts here: a tracer provider exporting OTLP/HTTP protobuf to the
service the test started (TRACETUI_OTLP_ENDPOINT, TRACETUI_OTLP_KEY), set as the global one, and
the stub's base URL (TRACETUI_STUB_URL). Each script ends with `finish(provider)`: it flushes,
and exits non-zero if an export failed, so the test sees exporter errors as well as their log."""

from __future__ import annotations

import logging
import os
import sys

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

STUB_URL = os.environ["TRACETUI_STUB_URL"]
FAILED_EXPORTS: list[SpanExportResult] = []
# One export at the end (`finish`): each run's trace arrives whole. (The service counts a
# model call recorded by nested spans once whatever exports they come in: conventions.
# counted_once within one, the stores' store/counting.py across them.)
BATCH_DELAY_MS = 600_000


class CountingExporter(OTLPSpanExporter):
    """The OTLP exporter, remembering each batch it could not deliver."""

    def export(self, spans):  # type: ignore[no-untyped-def]
        result = super().export(spans)
        if result is not SpanExportResult.SUCCESS:
            FAILED_EXPORTS.append(result)
        return result


def exporter() -> SpanExporter:
    return CountingExporter(
        endpoint=os.environ["TRACETUI_OTLP_ENDPOINT"],
        headers={"Authorization": f"Bearer {os.environ['TRACETUI_OTLP_KEY']}"},
        timeout=30,
    )


def provider(service_name: str) -> TracerProvider:
    """A tracer provider exporting to the service, also set as the global one."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    made = TracerProvider(resource=Resource({"service.name": service_name}))
    made.add_span_processor(BatchSpanProcessor(exporter(), schedule_delay_millis=BATCH_DELAY_MS))
    trace.set_tracer_provider(made)
    return made


def finish(made: TracerProvider) -> None:
    flushed = made.force_flush(30_000)
    made.shutdown()
    if not flushed or FAILED_EXPORTS:
        print(f"export failed: flushed={flushed} failures={FAILED_EXPORTS}", file=sys.stderr)
        sys.exit(3)


def finish_processor(processor: BatchSpanProcessor) -> None:
    """`finish` for a stack that owns its tracer provider (logfire): its processor flushed."""
    flushed = processor.force_flush(30_000)
    processor.shutdown()
    if not flushed or FAILED_EXPORTS:
        print(f"export failed: flushed={flushed} failures={FAILED_EXPORTS}", file=sys.stderr)
        sys.exit(3)
