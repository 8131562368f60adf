"""OTLP trace ingest: `POST /v1/traces` bodies in, span groups for the store out.

body (size limits, gzip inflated incrementally), otlp_proto and otlp_json (the two OTLP
encodings), spans (one OTLP span to a SpanRow), conventions (OTel GenAI and OpenInference
attributes to kind, model, tokens and cost), costs (offline price estimates from genai-prices),
preview (a trace's input preview for its list row), responses (ExportTraceServiceResponse and error bodies in the request's encoding), writer (the
one thread that writes, with a bounded queue). Nothing here imports the SQLite store: the
writer sees it as the TraceStore protocol.
"""
