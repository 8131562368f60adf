"""The Vercel AI SDK (`ai` 6.x) run by node with its own telemetry, exporting over OTLP/HTTP
(protobuf) to the service: generateText calling a tool and answering, then streamText, against
`ai/test`'s mock model (tests/emitters/vercel/emit.mjs). Ingest must count each model call's
tokens and cost once (on its provider call, not again on the operation around it), give tool
spans the tool kind, and the app's conversation must show the user's message, the tool call
with its arguments and result, and the answer once."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest

from tests.emitters.npm import ensure_installed, node_executable, script_beside_modules
from tests.support.otlp import new_project, root_client
from tests.support.service import RunningService
from tui.model.chat import ToolCall, ToolResult, conversation, conversation_text

INPUT_PRICE, OUTPUT_PRICE = 0.15e-6, 0.6e-6  # gpt-4o-mini, per token
QUESTION = "What is the weather in Paris?"
ANSWER = "It is sunny in Paris, 21 degrees."
RUN_SECONDS = 300.0  # node starting and importing the SDK under load


@pytest.fixture(scope="module")
def vercel_traces(
    service: RunningService, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, Any]]:
    """The traces emit.mjs sent to a fresh project, by their root's name."""
    installed = ensure_installed()
    script = script_beside_modules(installed, "emit.mjs", tmp_path_factory.mktemp("vercel"))
    project_id, key = new_project(service)
    done = subprocess.run(
        [node_executable(), str(script), service.base_url.removesuffix("/v1") + "/v1/traces"],
        cwd=script.parent,
        env={**os.environ, "TRACETUI_KEY": key},
        capture_output=True,
        text=True,
        timeout=RUN_SECONDS,
        check=False,
    )
    # The script exits 0 only when every export succeeded (it checks each export's result).
    assert done.returncode == 0, f"emit.mjs failed: {done.stderr[-3000:]}"
    assert json.loads(done.stdout.strip().splitlines()[-1])["spans"] == 6
    with root_client(service.base_url, key) as client:
        listing = client.get(
            "/v1/traces", params={"project_id": project_id, "from": "2000-01-01T00:00:00Z"}
        ).json()["data"]
        traces = [client.get(f"/v1/traces/{t['id']}").json() for t in listing]
    return {t["name"]: t for t in traces}


def spans_named(trace: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """The trace's spans of this name in the order they ran (a later model call of one
    generateText was sent more messages: spans may start within one millisecond)."""

    def order(span: dict[str, Any]) -> tuple[str, int]:
        sent = span["attributes"].get("ai.prompt.messages") or "[]"
        return span["started_at"], len(json.loads(sent))

    return sorted((s for s in trace["spans"] if s["name"] == name), key=order)


def read(span: dict[str, Any]) -> Any:
    """The span's conversation as the app reads it from the service's answer."""
    found = conversation(span["attributes"], {}, span["kind"])
    assert found is not None, span["name"]
    return found


def test_each_model_call_counts_once_and_tools_are_tools(
    vercel_traces: dict[str, dict[str, Any]],
) -> None:
    assert set(vercel_traces) == {"ai.generateText", "ai.streamText"}
    agent = vercel_traces["ai.generateText"]
    kinds = sorted((s["name"], s["kind"]) for s in agent["spans"])
    assert kinds == [
        ("ai.generateText", "chain"),
        ("ai.generateText.doGenerate", "llm"),
        ("ai.generateText.doGenerate", "llm"),
        ("ai.toolCall", "tool"),
    ]
    # The operation span repeats its calls' usage (ai.usage.* = 60/20): it counts nothing.
    (outer,) = spans_named(agent, "ai.generateText")
    assert outer["attributes"]["ai.usage.inputTokens"] == 60
    assert (outer["input_tokens"], outer["output_tokens"], outer["cost_usd"]) == (0, 0, 0)
    first, second = spans_named(agent, "ai.generateText.doGenerate")
    assert (first["input_tokens"], first["output_tokens"]) == (20, 8)
    assert (second["input_tokens"], second["output_tokens"]) == (40, 12)
    assert first["model"] == second["model"] == "gpt-4o-mini"
    assert (agent["input_tokens"], agent["output_tokens"]) == (60, 20)
    assert agent["total_cost_usd"] == pytest.approx(60 * INPUT_PRICE + 20 * OUTPUT_PRICE)

    streamed = vercel_traces["ai.streamText"]
    assert sorted((s["name"], s["kind"]) for s in streamed["spans"]) == [
        ("ai.streamText", "chain"),
        ("ai.streamText.doStream", "llm"),
    ]
    assert (streamed["input_tokens"], streamed["output_tokens"]) == (10, 5)
    assert streamed["total_cost_usd"] == pytest.approx(10 * INPUT_PRICE + 5 * OUTPUT_PRICE)


def test_the_conversation_shows_the_question_the_tool_call_and_the_answer_once(
    vercel_traces: dict[str, dict[str, Any]],
) -> None:
    agent = vercel_traces["ai.generateText"]
    (outer,) = spans_named(agent, "ai.generateText")
    whole = read(outer)
    assert [m.role for m in whole.input] == ["user"]
    assert conversation_text(whole).count(QUESTION) == 1
    assert conversation_text(whole).count(ANSWER) == 1
    assert "You answer questions about the weather." in conversation_text(whole)
    assert "Vercel AI SDK" in whole.conventions

    first, second = spans_named(agent, "ai.generateText.doGenerate")
    asked = read(first)
    assert [m.role for m in asked.input] == ["system", "user"]
    assert len(asked.tools) == 1 and asked.tools[0]["name"] == "weather"
    (call,) = [p for m in asked.output for p in m.parts if isinstance(p, ToolCall)]
    assert (call.name, call.arguments, call.id) == ("weather", {"city": "Paris"}, "call-weather-1")

    answered = read(second)
    assert [m.role for m in answered.input] == ["system", "user", "assistant", "tool"]
    (result,) = answered.input[-1].parts
    assert isinstance(result, ToolResult) and result.content["forecast"] == "sunny"
    assert conversation_text(answered).count(ANSWER) == 1
    assert answered.finish_reasons == ("stop",)

    (tool,) = spans_named(agent, "ai.toolCall")
    ran = read(tool)
    assert ran.tool_call == ToolCall("weather", {"city": "Paris"}, "call-weather-1")
    assert ran.tool_result is not None and ran.tool_result.content == {
        "city": "Paris",
        "forecast": "sunny",
        "celsius": 21,
    }

    (stream_call,) = spans_named(vercel_traces["ai.streamText"], "ai.streamText.doStream")
    streamed = read(stream_call)
    assert conversation_text(streamed).count("Say hello in a stream.") == 1
    assert conversation_text(streamed).count("Streamed hello.") == 1


def test_the_emitter_is_installed_from_the_committed_lock() -> None:
    """The cache folder is named by the committed files' hash and holds the pinned `ai` 6.x."""
    installed = ensure_installed()
    assert installed.name.startswith("npm-vercel-")
    version = json.loads((installed / "node_modules" / "ai" / "package.json").read_text())
    assert version["version"].startswith("6.")
