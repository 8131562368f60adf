"""OTLP trace ingest: `POST /v1/traces` bodies in, span groups for the store out.

body (size limits, gzip inflated incrementally), otlp_proto and otlp_json (the two OTLP
encodings), types (what the decoders hand over), spans (one OTLP span to a SpanRow),
conventions (OTel GenAI, OpenInference, OpenLLMetry, the Vercel AI SDK: attributes to kind,
model, tokens and cost), costs (offline price estimates from genai-prices), preview (a trace's
input and output previews for its list row), associations (its user, session and tags),
summaries (a batch's traces summed where it is decoded), logs (OTLP log records: GenAI events
of spans), responses (ExportTraceServiceResponse and error bodies in the request's encoding),
processes (the worker processes that decode and write whole bodies, 1 to 4 of them) and writer
(the thread that writes while there are none, with a bounded queue). The store is seen only as
the TraceStore protocol.
"""
