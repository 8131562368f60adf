"""The README's newcomer path, as a newcomer follows it: `tracetui serve`, paste its two lines,
run the example script, see its traces (through the app's own client); and the demo's feed."""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

from pydantic import SecretStr

from tests.support.serve import serving
from tests.support.service import RunningService
from tui.api import ApiClient
from tui.api.models import Span, Trace
from tui.cli import build_parser
from tui.demo.feed import Feed


def test_serve_then_paste_its_two_lines_then_run_the_example(tmp_path: Path) -> None:
    with serving(tmp_path / "new.sqlite3") as served:
        pasted: dict[str, str] = {}
        for line in served.banner:  # what the newcomer reads, and pastes
            if found := re.match(r"\s+export (OTEL_EXPORTER_OTLP_\w+)=(.*)$", line):
                pasted.update(dict([shlex.split(f"{found[1]}={found[2]}")[0].split("=", 1)]))
        browse = next(line for line in served.banner if "and browse them:" in line)
        assert set(pasted) == {"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS"}
        assert pasted["OTEL_EXPORTER_OTLP_HEADERS"].startswith("Authorization=Bearer tt_ws_")
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")} | pasted
        example = subprocess.run(
            [sys.executable, "-m", "tui.examples.send_traces"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert example.returncode == 0, example.stderr
        assert "Sent 3 traces" in example.stdout

        settings = dict(re.findall(r"(TRACETUI_\w+)=(\S+)", browse))
        traces, spans = asyncio.run(read_as_the_app(settings))
        assert sorted(t.name for t in traces) == ["answer_question"] * 3
        assert sum(t.error_count or 0 for t in traces) == 1
        chat = next(s for s in spans if s.kind == "llm")
        assert chat.model == "gpt-4o-mini" and (chat.cost_usd or 0) > 0
        assert chat.attributes["tracetui.cost_source"] == "estimated"
        assert served.interrupt() == 0


async def read_as_the_app(settings: dict[str, str]) -> tuple[list[Trace], list[Span]]:
    async with ApiClient(
        settings["TRACETUI_BASE_URL"], SecretStr(settings["TRACETUI_API_KEY"])
    ) as client:
        [project] = [p for p in await client.list_projects() if p.name == "send-traces-example"]
        page = await client.list_traces(project.id)
        spans: list[Span] = []
        for trace in page.items:
            spans += (await client.get_trace(trace.id)).spans
        return page.items, spans


def test_the_demo_feed_sends_both_apps_through_otlp(service: RunningService) -> None:
    before = {
        project: {t["id"] for t in listed(service, project)}
        for project in ("proj_support", "proj_rag")
    }
    feed = Feed(
        service.base_url.removesuffix("/v1"), service.keys.projects, interval_s=0.02, seed=5
    )
    feed.start()
    deadline = time.monotonic() + 60
    while feed.sent < 6 and time.monotonic() < deadline:
        time.sleep(0.02)
    feed.stop()
    assert feed.sent >= 6
    with service.client() as client:
        for project, root_kind, leaf_kind in (
            ("proj_support", "agent", "tool"),
            ("proj_rag", "chain", "retrieval"),
        ):
            new = [t for t in listed(service, project) if t["id"] not in before[project]]
            assert new, f"nothing arrived in {project}"
            trace = client.get(f"traces/{new[0]['id']}").json()
            kinds = {s["kind"] for s in trace["spans"]}
            assert {root_kind, leaf_kind, "llm"} <= kinds
            assert trace["spans"][0]["parent_id"] is None  # the root, sent last, is the root
            assert trace["total_cost_usd"] > 0 and trace["input_tokens"] > 0


def listed(service: RunningService, project: str) -> list[dict[str, str]]:
    with service.client() as client:
        data: list[dict[str, str]] = client.get(
            "traces", params={"project_id": project, "limit": 500}
        ).json()["data"]
        return data


def test_demo_has_a_no_feed_switch() -> None:
    assert build_parser().parse_args(["demo", "--no-feed"]).no_feed is True
    assert build_parser().parse_args(["demo"]).no_feed is False
