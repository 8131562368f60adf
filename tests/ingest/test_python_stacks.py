"""The Python LLM stacks nobody here wrote, run for real: each script of tests/emitters/python
runs in the emitters' cached virtualenv (tests/support/emitters_venv.py), calls the loopback
model stub (tests/support/model_stubs.py) and exports OTLP/HTTP to the service. Each trace must
count every model call's tokens and cost once, give each span its kind, and show the user's
message, the tool call and the answer once in the conversations the app reads."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.emitters_venv import SCRIPTS, ensure_venv, python_of
from tests.support.model_stubs import (
    ANSWER,
    INPUT_TOKENS,
    OUTPUT_TOKENS,
    QUESTION,
    TOOL_NAME,
    stub_models,
)
from tests.support.otlp import new_project, root_client
from tests.support.service import RunningService, wait_for
from tui.model.chat import Conversation, Message, TextPart, ToolCall, conversation

pytestmark = pytest.mark.xdist_group("python_stacks")  # one worker waits for the venv build

RUN_SECONDS = 300  # a stack's import takes seconds on an idle machine; much longer under load
GPT_4O_MINI = INPUT_TOKENS * 0.15e-6 + OUTPUT_TOKENS * 0.6e-6  # one call's cost
CLAUDE_3_5_HAIKU = INPUT_TOKENS * 0.8e-6 + OUTPUT_TOKENS * 4e-6


@pytest.fixture(scope="module")
def stub_url() -> Iterator[str]:
    with stub_models() as (url, _paths):
        yield url


def run_stack(service: RunningService, stub_url: str, script: str, tmp: Path) -> dict[str, Any]:
    """Run `script` in the emitters' virtualenv against the stub and the service; its one
    trace, once all `spans` of it are stored."""
    python = python_of(ensure_venv())  # fails with pip's words when it cannot be built
    project_id, key = new_project(service)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp),
        "TRACETUI_STUB_URL": stub_url,
        "TRACETUI_OTLP_ENDPOINT": service.base_url.removesuffix("/v1") + "/v1/traces",
        "TRACETUI_OTLP_KEY": key,
        "OTEL_SDK_DISABLED": "false",
    }
    done = subprocess.run(
        [str(python), str(SCRIPTS / script)],
        env=env,
        cwd=SCRIPTS,
        capture_output=True,
        text=True,
        timeout=RUN_SECONDS,
        check=False,
    )
    # No exporter error: the script exits 3 when a batch was not delivered, and nothing of
    # OpenTelemetry's export path complains on stderr.
    assert done.returncode == 0, done.stderr[-3000:]
    assert ANSWER in done.stdout
    for complaint in ("Failed to export", "Exception while exporting", "Traceback"):
        assert complaint not in done.stderr, done.stderr[-3000:]
    with root_client(service.base_url, key) as client:

        def listing() -> list[dict[str, Any]]:
            return list(
                client.get(
                    "/v1/traces",
                    params={"project_id": project_id, "from": "2000-01-01T00:00:00Z"},
                ).json()["data"]
            )

        wait_for(lambda: len(listing()) == 1, timeout=30, what="the stack's one trace")
        [summary] = listing()
        trace: dict[str, Any] = client.get(f"/v1/traces/{summary['id']}").json()
        return trace


def conversations(trace: dict[str, Any]) -> dict[str, Conversation]:
    """Each span's conversation as the app reads it, by span id."""
    found = {}
    for span in trace["spans"]:
        read = conversation(span["attributes"], kind=span["kind"])
        if read is not None:
            found[span["id"]] = read
    return found


def texts(messages: tuple[Message, ...]) -> list[str]:
    return [p.text for m in messages for p in m.parts if isinstance(p, TextPart)]


def calls(messages: tuple[Message, ...]) -> list[ToolCall]:
    return [p for m in messages for p in m.parts if isinstance(p, ToolCall)]


def assert_counted_once(trace: dict[str, Any], calls_made: int, one_call_cost: float) -> None:
    """The trace's tokens and cost are those of `calls_made` model calls, and its spans add up
    to them (no span counts a call another already counts)."""
    spans = trace["spans"]
    assert (trace["input_tokens"], trace["output_tokens"]) == (
        calls_made * INPUT_TOKENS,
        calls_made * OUTPUT_TOKENS,
    )
    assert sum(s["input_tokens"] for s in spans) == trace["input_tokens"]
    assert trace["total_cost_usd"] == pytest.approx(calls_made * one_call_cost)
    assert sum(s["cost_usd"] for s in spans) == pytest.approx(trace["total_cost_usd"])
    counting = [s for s in spans if s["input_tokens"]]
    assert len(counting) == calls_made and {s["kind"] for s in counting} == {"llm"}


def assert_model_calls_read(trace: dict[str, Any]) -> None:
    """Each counting model call: the user's question in its input, and in its output either the
    tool call or the answer, each once; the answer's call ends with a finish reason."""
    read = conversations(trace)
    counting = sorted(
        (s for s in trace["spans"] if s["input_tokens"]), key=lambda s: s["started_at"]
    )
    first, last = read[counting[0]["id"]], read[counting[-1]["id"]]
    assert texts(first.input)[-1:] == [QUESTION]
    assert [c.name for c in calls(first.output)] == [TOOL_NAME]
    assert calls(first.output)[0].arguments == {"order_id": 48213}
    assert texts(last.output) == [ANSWER]
    assert QUESTION in texts(last.input)
    assert last.finish_reasons, "the answer's finish reason is not shown"


def kinds(trace: dict[str, Any]) -> dict[str, str]:
    return {s["name"]: s["kind"] for s in trace["spans"]}


def test_anthropic_sdk_spans_beside_openinference_count_each_call_once(
    service: RunningService, stub_url: str, tmp_path: Path
) -> None:
    trace = run_stack(service, stub_url, "anthropic_tools.py", tmp_path)
    assert_counted_once(trace, 2, CLAUDE_3_5_HAIKU)
    sdk_spans = [s for s in trace["spans"] if s["name"] == "anthropic.messages.create"]
    instrumented = {s["id"] for s in trace["spans"] if s["name"] == "messages.create"}
    assert len(sdk_spans) == 2 and len(instrumented) == 2  # both recorded, each call once
    for span in sdk_spans:
        assert span["parent_id"] in instrumented and span["input_tokens"] == 0
        assert span["attributes"]["tracetui.counted_in"] == span["parent_id"]
    assert_model_calls_read(trace)
    assert trace["input_preview"] == QUESTION


def test_openai_agents_with_the_responses_api(
    service: RunningService, stub_url: str, tmp_path: Path
) -> None:
    trace = run_stack(service, stub_url, "openai_agents_tools.py", tmp_path)
    assert_counted_once(trace, 2, GPT_4O_MINI)
    assert kinds(trace)["Support agent"] == "agent"
    assert kinds(trace)[TOOL_NAME] == "tool" and kinds(trace)["response"] == "llm"
    assert_model_calls_read(trace)
    [tool] = [s for s in trace["spans"] if s["kind"] == "tool"]
    read = conversations(trace)[tool["id"]]
    assert read.tool_call is not None and read.tool_call.arguments == {"order_id": 48213}
    assert read.tool_result is not None and read.tool_result.content == "shipped on Monday"


def test_langgraph_through_openinference_langchain(
    service: RunningService, stub_url: str, tmp_path: Path
) -> None:
    trace = run_stack(service, stub_url, "langgraph_tools.py", tmp_path)
    assert_counted_once(trace, 2, GPT_4O_MINI)
    assert kinds(trace)["LangGraph"] == "chain" and kinds(trace)["ChatOpenAI"] == "llm"
    assert kinds(trace)[TOOL_NAME] == "tool"
    assert_model_calls_read(trace)
    [root] = [s for s in trace["spans"] if s["parent_id"] is None]
    read = conversations(trace)[root["id"]]
    # The user's message once, as input; the run's new messages once each, as output.
    assert texts(read.input) == [QUESTION] and QUESTION not in texts(read.output)
    assert texts(read.output) == [ANSWER]
    assert [c.name for c in calls(read.output)] == [TOOL_NAME]


def test_tags_user_and_session_in_a_langchain_runs_metadata(
    service: RunningService, stub_url: str, tmp_path: Path
) -> None:
    # OpenInference writes the run's metadata as the `metadata` attribute of each span; the
    # tags in it (OpenInference users' `tags`, Langfuse's `langfuse_tags`) are the trace's too.
    trace = run_stack(service, stub_url, "langgraph_metadata.py", tmp_path)
    assert any("langfuse_tags" in str(s["attributes"].get("metadata")) for s in trace["spans"])
    assert set(trace["tags"]) == {"support", "beta", "checkout"}
    assert (trace["user_id"], trace["session_id"]) == ("alice", "chat-48213")
    assert_counted_once(trace, 2, GPT_4O_MINI)


def test_pydantic_ai_through_logfire(
    service: RunningService, stub_url: str, tmp_path: Path
) -> None:
    trace = run_stack(service, stub_url, "pydantic_ai_logfire.py", tmp_path)
    # pydantic-ai's `chat` span and logfire's openai span below it record each call: once.
    assert_counted_once(trace, 2, GPT_4O_MINI)
    counting = [s for s in trace["spans"] if s["input_tokens"]]
    assert {s["attributes"]["tracetui.cost_source"] for s in counting} == {"reported"}
    assert {s["name"] for s in counting} == {"chat gpt-4o-mini"}
    # logfire names spans by their template; the message it fills in is the name shown.
    assert trace["name"] == "support turn for order 48213"
    names = kinds(trace)
    assert names["Chat Completion with 'gpt-4o-mini'"] == "llm"
    assert names["invoke_agent support_agent"] == "agent"
    assert names["execute_tool lookup_order"] == "tool"
    assert_model_calls_read(trace)


def test_openllmetry_span_kinds_and_entity_values() -> None:
    """traceloop-sdk (OpenLLMetry) cannot be installed beside the stacks above (its pins do not
    resolve on this index): its decorated functions' attributes, as it sends them."""
    from tui.server.ingest.conventions import facts
    from tui.server.ingest.costs import PRICES

    tool = {
        "traceloop.span.kind": "tool",
        "traceloop.entity.name": TOOL_NAME,
        "traceloop.entity.input": '{"args": [], "kwargs": {"order_id": 48213}}',
        "traceloop.entity.output": '"shipped on Monday"',
    }
    workflow = {
        "traceloop.span.kind": "workflow",
        "traceloop.entity.input": f'{{"messages": [{{"role": "user", "content": "{QUESTION}"}}]}}',
        "traceloop.entity.output": f'{{"role": "assistant", "content": "{ANSWER}"}}',
    }
    agent = {"traceloop.span.kind": "agent"}
    assert [facts(a, PRICES).kind for a in (tool, workflow, agent)] == ["tool", "chain", "agent"]
    read_tool = conversation(tool)
    assert read_tool is not None and read_tool.tool_result is not None
    assert read_tool.tool_result.content == "shipped on Monday"
    assert read_tool.tool_call is not None
    assert read_tool.tool_call.arguments == {"args": [], "kwargs": {"order_id": 48213}}
    read_workflow = conversation(workflow)
    assert read_workflow is not None
    assert texts(read_workflow.input) == [QUESTION] and texts(read_workflow.output) == [ANSWER]


def test_a_call_recorded_by_nested_spans_counts_once_and_templates_name_nothing() -> None:
    """counted_once and display_name alone, on rows shaped as the stacks above send them."""
    from tui.server.ingest.conventions import counted_once, display_name
    from tui.server.store.rows import SpanRow

    def row(span_id: str, parent: str | None, kind: str, tokens: int) -> SpanRow:
        return SpanRow(
            "a" * 32, span_id, parent, span_id, kind, "m", 0, 1, tokens, tokens, 0.5, "ok",
            None, '{"k":1}', "reported",
        )  # fmt: skip

    outer, inner, innermost = (
        row("1" * 16, None, "llm", 9),
        row("2" * 16, "1" * 16, "llm", 9),
        row("3" * 16, "2" * 16, "llm", 9),
    )
    tool = row("4" * 16, "1" * 16, "tool", 0)
    counted = counted_once([inner, outer, innermost, tool])
    assert [(s.input_tokens, s.cost_usd) for s in counted] == [
        (0, 0.0),
        (9, 0.5),
        (0, 0.0),
        (0, 0.5),
    ]
    assert counted[0].attributes == '{"k":1,"tracetui.counted_in":"' + "1" * 16 + '"}'
    assert counted[2].attributes.endswith('"tracetui.counted_in":"' + "2" * 16 + '"}')
    alone = [row("5" * 16, "6" * 16, "llm", 9)]  # its parent is in another export, or no call
    assert counted_once(alone) == alone
    assert (
        display_name("Chat Completion with {model!r}", {"logfire.msg": "Chat Completion with 'x'"})
        == "Chat Completion with 'x'"
    )
    assert display_name("plain", {"logfire.msg": "other"}) == "plain"
    assert display_name("{a}", {}) == "{a}"
