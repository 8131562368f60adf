"""`tracetui diff` against the real local service: the summary and the spans that differ as
text (no colour off a terminal), `--json` with every pair's status, name, path and deltas, and
errors as one line and a non-zero exit. The server is found as the app finds it: here from
TRACETUI_BASE_URL and TRACETUI_API_KEY, with no config file."""

from __future__ import annotations

import json
import socket
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from tests.support.chat_traces import SpanSpec, add_trace
from tests.support.service import RunningService
from tui.cli import main
from tui.demo.regression import NAME, PROJECT


@pytest.fixture
def env(service: RunningService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setenv("TRACETUI_BASE_URL", service.base_url)
    monkeypatch.setenv("TRACETUI_API_KEY", service.keys.workspace)
    monkeypatch.delenv("TRACETUI_PROFILE", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)


def runs(service: RunningService) -> list[dict[str, object]]:
    since = (datetime.now(timezone.utc) - timedelta(days=3)).isoformat()
    params = {"project_id": PROJECT, "name": NAME, "limit": 100, "from": since}
    with service.client() as api:
        rows: list[dict[str, object]] = api.get("traces", params=params).json()["data"]
    return rows


def test_b_alone_is_compared_with_its_last_good_trace(
    service: RunningService, env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    b = runs(service)[0]
    assert main(["diff", str(b["id"])]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("A ") and lines[1].startswith(f"B {b['id']}")
    assert lines[2].startswith(f"A is the last good {NAME}, ")
    summary = [line for line in lines if line.startswith("· ")]
    assert summary[0].startswith("· `write_summary` failed: BadRequestError")
    assert "· the model changed claude-3-5-sonnet-20241022 → gpt-4o-mini in `write_summary`" in out
    assert "· 5 `load_revision` tool calls added" in out
    assert "\x1b[" not in out  # not a terminal: no colour
    assert any(line.startswith("-   check_summary") for line in lines)


def test_json_lists_every_pair(
    service: RunningService, env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = runs(service)
    b, a = rows[0], next(r for r in rows if r["status"] == "ok")
    assert main(["diff", "--json", str(a["id"]), str(b["id"])]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["a"]["id"] == a["id"] and data["b"]["id"] == b["id"]
    assert data["a_chosen"] is None  # A was given
    pairs = data["pairs"]
    assert {p["status"] for p in pairs} == {"same", "changed", "added", "removed"}
    write = next(p for p in pairs if p["name"] == "write_summary")
    assert write["path"] == [{"name": NAME, "ordinal": 1}, {"name": "write_summary", "ordinal": 1}]
    assert write["model"] == {"a": "claude-3-5-sonnet-20241022", "b": "gpt-4o-mini"}
    assert write["deltas"]["output_tokens"] < 0 and "error" in write
    added = [p for p in pairs if p["status"] == "added"]
    assert [p["path"][-1]["ordinal"] for p in added] == [4, 5, 6, 7, 8]
    assert data["summary"][0].startswith("`write_summary` failed")


def test_colour_when_asked(
    service: RunningService, env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    b = runs(service)[0]
    assert main(["diff", "--color", "always", str(b["id"])]) == 0
    assert "\x1b[" in capsys.readouterr().out


@pytest.mark.parametrize(
    "ids, message",
    [
        (["no-such-trace"], "tracetui: Not found (404): No trace no-such-trace"),
        (["a", "b", "c"], "tracetui: diff takes two trace ids (A B) or one (B)"),
    ],
)
def test_errors_are_one_line(
    service: RunningService,
    env: None,
    capsys: pytest.CaptureFixture[str],
    ids: list[str],
    message: str,
) -> None:
    assert main(["diff", *ids]) != 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(message) and captured.err.count("\n") == 1


def test_two_projects_are_one_line(
    service: RunningService, env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    with service.client() as api:
        other = api.get("traces", params={"project_id": "proj_support", "limit": 1}).json()
    assert main(["diff", str(other["data"][0]["id"]), str(runs(service)[0]["id"])]) == 1
    err = capsys.readouterr().err
    assert err.startswith("tracetui: Cannot compare: The two traces are in different projects")
    assert err.count("\n") == 1


def test_a_server_down_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setenv("TRACETUI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("TRACETUI_API_KEY", "k" * 32)
    assert main(["--kind", "spec", "diff", "t1"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("tracetui: Cannot reach the server") and err.count("\n") == 1
    assert "k" * 32 not in err


def test_span_strings_are_inert_in_text_and_json(
    service: RunningService, env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """A span name with an escape sequence, a C1 CSI and a bidi override: made visible in the
    text, escaped in the JSON (which still reads back to the same name)."""
    project = "proj_hostile_cli"
    hostile = "evil\x1b[2J\x9b31m\u202ename"
    if service.store.get_project(project) is None:
        start = int(time.time() * 1000) - 60_000
        for n, trace_id in enumerate(("cli-a", "cli-b")):
            spans = [SpanSpec("r", None, "root", "chain", 0, 10)]
            if n:
                spans.append(SpanSpec("c", "r", hostile, "tool", 2, 5, error=hostile))
            add_trace(
                service.store,
                trace_id,
                spans,
                project_id=project,
                name="root",
                started_ms=start + n,
            )
    assert main(["diff", "--color", "always", "cli-a", "cli-b"]) == 0
    out = capsys.readouterr().out
    assert "\x1b[2J" not in out and "\x9b" not in out and "\u202e" not in out
    assert "␛[2J" in out
    assert main(["diff", "--json", "cli-a", "cli-b"]) == 0
    raw = capsys.readouterr().out
    assert "\x1b" not in raw and "\x9b" not in raw and "\u202e" not in raw
    pairs = json.loads(raw)["pairs"]
    assert [p["name"] for p in pairs if p["status"] == "added"] == [hostile]
