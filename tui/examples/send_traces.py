"""A small LLM app instrumented with the OpenTelemetry SDK, sending its traces to tracetui.

The newcomer's path (README, "Send your own traces"):

    tracetui serve                          # prints two `export OTEL_...` lines
    export OTEL_EXPORTER_OTLP_ENDPOINT=...  # paste them into this shell
    export OTEL_EXPORTER_OTLP_HEADERS=...
    python -m tui.examples.send_traces      # three traces, in project "send-traces-example"

With the workspace key the traces go to the project named by their `tracetui.project`
resource attribute ("send-traces-example", made on first use); with a project's key (made in
the app's project settings) they go to that key's project whatever they say. At the end the
script asks the service which project that is, and says so.

It calls no model (it needs no network and no API key): each "call" is a span carrying the
attributes an instrumented OpenAI call carries in the OTel GenAI conventions (model, tokens,
gen_ai.input.messages / gen_ai.output.messages), so tracetui shows tokens, an estimated cost
and the conversation. Everything else is the real SDK: TracerProvider, BatchSpanProcessor and
the OTLP/HTTP exporter, configured by the environment as in any application. It needs the
[examples] extra: `pip install 'tracetui[examples]'`.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
import urllib.parse
import urllib.request

PROJECT = "send-traces-example"
QUESTIONS = (
    ("What's the weather in Oslo?", "get_weather", '{"city": "Oslo"}', "It is 4°C and raining."),
    ("Convert 100 EUR to NOK", "convert_currency", '{"amount": 100}', "100 EUR is 1,170 NOK."),
    ("Book a table for two", "book_table", '{"people": 2}', "No table free before 21:00."),
)


def main() -> int:
    if not os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        print(
            "Set OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_EXPORTER_OTLP_HEADERS first: "
            "`tracetui serve` prints both lines to paste.",
            file=sys.stderr,
        )
        return 2
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        print("This example needs: pip install 'tracetui[examples]'", file=sys.stderr)
        return 2
    from opentelemetry.trace import Status, StatusCode

    # The workspace key routes by these resource attributes (a project key ignores them); the
    # second is the one Arize Phoenix files traces by.
    resource = Resource.create(
        {
            "service.name": PROJECT,
            "tracetui.project": PROJECT,
            "openinference.project.name": PROJECT,
        }
    )
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))  # reads OTEL_* vars
    tracer = provider.get_tracer("tui.examples.send_traces")
    rng = random.Random()

    for n, (question, tool, arguments, answer) in enumerate(QUESTIONS):
        with tracer.start_as_current_span("answer_question") as root:
            root.set_attributes({"gen_ai.operation.name": "invoke_agent", "input.value": question})
            with tracer.start_as_current_span("chat gpt-4o-mini") as call:
                call.set_attributes(
                    {
                        "gen_ai.operation.name": "chat",
                        "gen_ai.provider.name": "openai",
                        "gen_ai.request.model": "gpt-4o-mini",
                        "gen_ai.usage.input_tokens": rng.randint(200, 900),
                        "gen_ai.usage.output_tokens": rng.randint(10, 60),
                        "gen_ai.input.messages": json.dumps(
                            [{"role": "user", "parts": [{"type": "text", "content": question}]}]
                        ),
                        "gen_ai.output.messages": json.dumps(
                            [
                                {
                                    "role": "assistant",
                                    "parts": [
                                        {"type": "tool_call", "name": tool, "arguments": arguments}
                                    ],
                                    "finish_reason": "tool_call",
                                }
                            ]
                        ),
                    }
                )
                time.sleep(0.05)
            with tracer.start_as_current_span(f"execute_tool {tool}") as step:
                step.set_attributes(
                    {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool}
                )
                if n == len(QUESTIONS) - 1:  # the last one fails, to show an error
                    try:
                        raise TimeoutError("reservations-service did not answer in 5 s")
                    except TimeoutError as error:
                        step.record_exception(error)
                        step.set_status(Status(StatusCode.ERROR))
                time.sleep(0.02)
            root.set_attribute("output.value", answer)
    provider.force_flush()
    provider.shutdown()
    print(f"Sent {len(QUESTIONS)} traces {where_they_went()}: open it in tracetui.")
    return 0


def exporter_headers() -> dict[str, str]:
    """OTEL_EXPORTER_OTLP_HEADERS as the exporter reads it: `name=value` pairs, comma
    separated, URL-encoded."""
    headers = {}
    for pair in os.environ.get("OTEL_EXPORTER_OTLP_HEADERS", "").split(","):
        name, _, value = pair.partition("=")
        if name.strip():
            headers[urllib.parse.unquote(name.strip())] = urllib.parse.unquote(value.strip())
    return headers


def where_they_went() -> str:
    """Where the traces went, as the service says: a project key's traces go to its own
    project, the workspace key's to the one they name. Said with less certainty when the
    service does not answer (another server, say)."""
    endpoint = os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"].rstrip("/")
    names: list[object] = []
    if endpoint.startswith(("http://", "https://")):  # what the exporter sends to
        url = f"{endpoint}/v1/projects"
        request = urllib.request.Request(url, headers=exporter_headers())  # noqa: S310
        try:
            with urllib.request.urlopen(request, timeout=5) as answer:  # noqa: S310
                projects = json.load(answer).get("data", [])
            names = [p.get("name") for p in projects if isinstance(p, dict)]
        except (OSError, ValueError, AttributeError):  # URLError is an OSError
            names = []
    if PROJECT in names:
        return f"to project {PROJECT!r}"
    if len(names) == 1 and isinstance(names[0], str):
        if "authorization" in {name.lower() for name in exporter_headers()}:
            return f"to project {names[0]!r}, the project of the key in OTEL_EXPORTER_OTLP_HEADERS"
        return f"to project {names[0]!r}, the only project the server lists"
    return f"tagged for project {PROJECT!r} (a project key puts them in its own project instead)"


if __name__ == "__main__":
    sys.exit(main())
