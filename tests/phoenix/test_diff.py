"""The trace diff against the real `phoenix serve` (tests/support/phoenix.py): three runs of one
step sent over OTLP (two that worked, then one with another model and two more tool calls that
failed) with a run of another name between them. Phoenix filters its list by errors but not by
name: B's last good run is found by asking it for traces without errors and checking the names
here; the diff says what changed; `tracetui diff` finds Phoenix by asking and prints it."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.phoenix.conftest import SeededPhoenix, wait_for_spans
from tests.support.otlp import PROTOBUF, new_span_id, new_trace_id, request, span
from tui.api.phoenix.client import PhoenixClient
from tui.cli import main
from tui.model.diff import ADDED, CHANGED, plain, summary
from tui.ui.trace_pair import load_pair

PROJECT = "tracetui-phoenix-diff"
STEP = "summarize"
ERROR = "BadRequestError: maximum context length is 128000 tokens"


@dataclass(frozen=True)
class Runs:
    base_url: str
    good: list[str]  # oldest first
    other: str
    failed: str


def run(start_ms: int, model: str, tools: int, error: str | None) -> tuple[str, list[Any]]:
    trace_id, root = new_trace_id(), new_span_id()
    spans = []
    t = start_ms + 5
    for n in range(tools):
        attributes = {"openinference.span.kind": "TOOL", "input.value": f'{{"page": {n}}}'}
        spans.append(span(trace_id, new_span_id(), root, "load", t, 40, attributes))
        t += 50
    llm = {
        "openinference.span.kind": "LLM",
        "llm.model_name": model,
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": f"Summarize {tools} pages.",
        "llm.token_count.prompt": 100 * tools,
        "llm.token_count.completion": 0 if error else 20,
    }
    spans.append(span(trace_id, new_span_id(), root, "write", t, 300, llm, error=error))
    attributes = {"openinference.span.kind": "CHAIN", "input.value": "summarize the docs"}
    spans.append(span(trace_id, root, b"", STEP, start_ms, t + 310 - start_ms, attributes, error))
    return trace_id.hex(), spans


@pytest.fixture(scope="module")
def runs(phoenix: SeededPhoenix) -> Runs:
    now = int(time.time() * 1000)
    good_old, spans_a = run(now - 40 * 60_000, "gpt-4o", 2, None)
    good, spans_b = run(now - 30 * 60_000, "gpt-4o", 2, None)
    other, spans_c = run(now - 20 * 60_000, "gpt-4o", 1, None)
    for s in spans_c:
        if not s.parent_span_id:
            s.name = "translate"  # another name, newer than the good runs
    failed, spans_d = run(now - 10 * 60_000, "gpt-4o-mini", 4, ERROR)
    spans = spans_a + spans_b + spans_c + spans_d
    message = request(*spans, resource={"openinference.project.name": PROJECT})
    answer = httpx.post(
        phoenix.phoenix.otlp_endpoint,
        content=message.SerializeToString(),
        headers=PROTOBUF,
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    wait_for_spans(phoenix.base_url, PROJECT, len(spans))
    return Runs(phoenix.base_url, [good_old, good], other, failed)


async def project_id(base_url: str) -> str:
    async with PhoenixClient(base_url) as client:
        projects = await client.list_projects()
    return next(p.id for p in projects if p.name == PROJECT and p.id)


async def test_the_last_good_run_is_found_and_diffed(runs: Runs) -> None:
    project = await project_id(runs.base_url)
    async with PhoenixClient(runs.base_url) as client:
        loaded = await load_pair(client, runs.failed, None, project)
    assert loaded.a.id == runs.good[-1]  # not the newer run of another name
    found = loaded.found
    assert found is not None and found.search.filters is not None
    assert found.search.filters.status == "ok" and found.search.name_here
    assert {t.id for t in found.candidates} == set(runs.good)
    diff = loaded.diff
    statuses = {(diff.name(r), diff.rows.ordinal[r]): diff.status[r] for r in range(diff.size)}
    assert statuses[("load", 3)] == ADDED and statuses[("load", 4)] == ADDED
    assert statuses[("write", 1)] == CHANGED
    sentences = [plain(s) for s in summary(diff)]
    assert sentences[0] == f"`write` failed: {ERROR}"
    assert "the model changed gpt-4o → gpt-4o-mini in `write`" in sentences
    assert "2 `load` tool calls added" in sentences


def test_the_command_line_reads_phoenix_found_by_asking(
    runs: Runs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv("TRACETUI_API_KEY", raising=False)
    monkeypatch.delenv("PHOENIX_API_KEY", raising=False)
    monkeypatch.delenv("TRACETUI_PROFILE", raising=False)
    assert main(["--base-url", runs.base_url, "diff", runs.failed]) == 0
    captured = capsys.readouterr()
    assert "is Arize Phoenix" in captured.err  # recognised, and said so
    lines = captured.out.splitlines()
    assert lines[0].startswith(f"A {runs.good[-1]}") and lines[1].startswith(f"B {runs.failed}")
    assert "· `write` failed: " + ERROR in captured.out
