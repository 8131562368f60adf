"""Demo data: realistic LLM application traffic, deterministic from a seed and an anchor time.

Three projects (a support chatbot, a RAG search, a coding agent) with thousands of traces over
the last seven days following a daily rhythm, spans nested one to six levels, real model names
costed from `prices`, about 3% errors with real-looking messages and a latency tail. The coding
agent also holds one trace of 12,000 spans and one 2,500 levels deep, so the app's limits show.
Here: the projects, keys, alerts and filling a store; the traces themselves are built in
`traces`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui.demo.regression import regression_traces
from tui.demo.sessions import session_id, support_turns
from tui.demo.traces import (
    BIG_TRACE_ID,
    DAY_MS,
    DEEP_TRACE_ID,
    GENERATORS,
    HOUR_MS,
    TraceBuilder,
    big_trace,
    daily_rhythm_start,
    deep_trace,
    trace_row,
)
from tui.model.formatting import counted
from tui.server.store.rows import now_ms
from tui.server.store.sqlite.store import Store

# The names of traces.py that builders of demo-like stores (tests, benchmarks) use, besides
# this module's own: one import for a whole demo store.
__all__ = [
    "BIG_TRACE_ID",
    "DEEP_TRACE_ID",
    "DEMO_ALERTS",
    "DEMO_PROJECTS",
    "LIVE_ALERT",
    "DemoKeys",
    "DemoProject",
    "TraceBuilder",
    "big_trace",
    "demo_keys",
    "demo_secret",
    "insert_big_traces",
    "open_demo_store",
    "point_alerts_at",
    "populate",
    "trace_row",
]


@dataclass(frozen=True)
class DemoProject:
    id: str
    name: str
    description: str
    retention_days: int
    trace_count: int


DEMO_PROJECTS = (
    DemoProject(
        "proj_support", "support-chatbot", "Customer support assistant for the web shop", 30, 2500
    ),
    DemoProject(
        "proj_rag", "docs-rag-search", "Retrieval-augmented search over the product docs", 90, 2000
    ),
    DemoProject(
        "proj_agent", "coding-agent", "Autonomous agent that fixes failing tests in CI", 14, 1200
    ),
)


@dataclass(frozen=True)
class DemoKeys:
    """The keys of a demo database: one workspace key and one key per project."""

    workspace: str
    projects: dict[str, str]


def demo_keys(seed: int) -> DemoKeys:
    """Keys derived from the seed, so a demo database and its printed keys always agree."""

    def derive(label: str) -> str:
        return hashlib.sha256(f"tracetui-demo:{seed}:{label}".encode()).hexdigest()[:32]

    return DemoKeys(
        workspace=f"tt_ws_{derive('workspace')}",
        projects={p.id: f"tt_pk_{derive(p.id)}" for p in DEMO_PROJECTS},
    )


def demo_secret(seed: int, alert_id: str) -> str:
    """A demo alert's webhook secret, derived from the seed like the demo keys (so the same
    seed makes the same database)."""
    digest = hashlib.sha256(f"tracetui-demo:{seed}:{alert_id}:whsec".encode()).digest()
    return "whsec_" + base64.b64encode(digest).decode()


def populate(
    store: Store,
    seed: int = 7,
    now: int | None = None,
    scale: float = 1.0,
    big_traces: bool = True,
    progress: Callable[[str], None] | None = None,
) -> DemoKeys:
    """Fill an empty database with the demo projects, traces, alerts and keys.

    `scale` shrinks the trace counts (tests use a small one); `big_traces` adds the 12,000-span
    and the 2,500-deep traces to the coding agent; `progress` is told each step as it starts.
    """
    now = now_ms() if now is None else now
    rng = random.Random(seed)
    keys = demo_keys(seed)
    say = progress or (lambda step: None)
    with store.transaction() as db:
        for i, project in enumerate(DEMO_PROJECTS):
            count = max(1, int(project.trace_count * scale))
            say(
                f"Demo data {i + 1}/{len(DEMO_PROJECTS)}: {counted(count, 'trace')} of {project.name}"
            )
            store.insert_project(
                db,
                project.name,
                project.description,
                project.retention_days,
                project_id=project.id,
                created_at=now - 30 * DAY_MS + i,
            )
            traces, spans = [], []
            drawn = []
            for _ in range(count):
                start = daily_rhythm_start(rng, now)
                # Each trace draws from its own generator: how one trace's story goes (a
                # failure, its retry) leaves every other trace as it is.
                trace_id = f"{rng.getrandbits(128):032x}"
                trace_seed = rng.getrandbits(64)
                failing = rng.random() < 0.035  # most of these fail
                drawn.append((trace_id, start, trace_seed, failing, who_and_where(trace_id, start)))
            # A support session is one conversation: each of its traces asks the next question.
            turns = (
                support_turns((t, start, who["user.id"]) for t, start, _, _, who in drawn)
                if project.id == "proj_support"
                else {}
            )
            for trace_id, start, trace_seed, failing, who in drawn:
                b = TraceBuilder(random.Random(trace_seed), trace_id)
                b.failure = "pending" if failing else None
                if trace_id in turns:
                    who["session.id"], b.turn = turns[trace_id]
                name, attrs, duration = GENERATORS[project.id](b, start)
                attrs |= {"environment": "production"}
                b.rows = with_root_attributes(b.rows, who)
                traces.append(trace_row(b, project.id, name, start, duration, attrs))
                spans += b.rows
            store.insert_traces(db, traces, spans)
            for n, alert in enumerate(DEMO_ALERTS[project.id]):
                alert_id = f"alert_{project.id}_{n}"
                store.insert_alert(
                    db,
                    secret=demo_secret(seed, alert_id),
                    id=alert_id,
                    project_id=project.id,
                    created_at=now - DAY_MS + n,
                    **alert,
                )
        # The docs search's summarizer, which failed after a prompt and model change: the
        # story a trace diff tells (tui/demo/regression.py).
        store.insert_traces(db, *regression_traces(seed, now))
        if big_traces:
            say("Demo data: a 12,000-span trace and a 2,500-deep one")
            insert_big_traces(store, db, rng, now)
    store.add_key(keys.workspace, None, "demo workspace key")
    for project_id, key in keys.projects.items():
        store.add_key(key, project_id, f"demo key for {project_id}")
    return keys


def insert_big_traces(
    store: Store, db: Any, rng: random.Random, now: int, project_id: str = "proj_agent"
) -> None:
    """The 12,000-span and the 2,500-deep traces (by default in the coding agent's project)."""
    for builder, name, ago in (
        (big_trace(rng, now - 2 * HOUR_MS), "migrate_monorepo", 2 * HOUR_MS),
        (deep_trace(rng, now - 3 * HOUR_MS), "recursive_planner", 3 * HOUR_MS),
    ):
        root = builder.rows[-1] if name == "migrate_monorepo" else builder.rows[0]
        row = trace_row(builder, project_id, name, now - ago, root.duration_ms, {"demo": "big"})
        store.insert_traces(db, [row], builder.rows)


DEMO_ALERTS: dict[str, list[dict[str, Any]]] = {
    "proj_support": [
        {
            "name": "Slow replies",
            "metric": "latency_ms_5m",
            "condition": "gt",
            "threshold": 8000,
            "webhook_url": "https://hooks.slack.example.com/services/T0/B0/support",
        },
        {
            "name": "Error spike",
            "metric": "error_rate_pct_15m",
            "condition": "gte",
            "threshold": 5,
            "webhook_url": "https://events.pagerduty.example.com/v2/enqueue",
        },
        {
            "name": "Spend guard",
            "metric": "cost_usd_1h",
            "condition": "gt",
            "threshold": 2.5,
            "webhook_url": "https://hooks.slack.example.com/services/T0/B0/finops",
        },
    ],
    "proj_rag": [
        {
            "name": "Answer drift",
            "metric": "prompt_drift_score_24h",
            "condition": "gt",
            "threshold": 0.3,
            "webhook_url": "https://ml-alerts.example.com/drift",
        },
        {
            "name": "p95 latency",
            "metric": "latency_ms_1h",
            "condition": "gt",
            "threshold": 4500,
            "webhook_url": "http://localhost:9000/alerts",
        },
    ],
    "proj_agent": [
        {
            "name": "Runaway agent cost",
            "metric": "cost_usd_1d",
            "condition": "gt",
            "threshold": 40,
            "webhook_url": "https://hooks.slack.example.com/services/T0/B0/agents",
        },
        {
            "name": "Tool failures",
            "metric": "error_rate_ratio_1h",
            "condition": "gt",
            "threshold": 0.1,
            "webhook_url": "https://events.pagerduty.example.com/v2/enqueue",
        },
        {
            "name": "Quiet agent",
            "metric": "latency_s_1d",
            "condition": "lt",
            "threshold": 1,
            "webhook_url": "https://ml-alerts.example.com/quiet",
        },
    ],
}

# The demo's live alert: the feed's order-service incidents (feed.Incidents) take the support
# bot's error rate over 2 minutes from about 2% to 90%, so it fires during one and resolves
# after it.
LIVE_ALERT: dict[str, Any] = {
    "id": "alert_proj_support_live",
    "project_id": "proj_support",
    "name": "Order look-ups failing",
    "metric": "error_rate_pct_2m",
    "condition": "gte",
    "threshold": 40,
}


def point_alerts_at(store: Store, receiver_url: str) -> None:
    """Send every alert's webhooks to `receiver_url` (the demo's own receiver), and add the
    live alert if the database has not got it yet."""
    if store.get_alert(LIVE_ALERT["id"]) is None:
        with store.transaction() as db:
            store.insert_alert(db, webhook_url=receiver_url, **LIVE_ALERT)
    for alert in store.all_alerts():
        store.set_webhook_url(alert.id, f"{receiver_url}/{alert.id}")


def open_demo_store(
    path: str | Path | None = None, seed: int = 7, progress: Callable[[str], None] | None = None
) -> tuple[Store, DemoKeys]:
    """A demo database at `path` (a fresh temporary file if None), filled if it is empty;
    `progress` is told each step of filling it."""
    if path is None:
        path = Path(tempfile.mkdtemp(prefix="tracetui-demo-")) / "demo.sqlite3"
    store = Store(path)
    if store.count("projects"):
        return store, demo_keys(seed)
    return store, populate(store, seed=seed, progress=progress)


# The users the demo's traces come from: a few named (the ones a reader tries first) among many.
NAMED_USERS = ("alice", "bob", "carol", "dave", "erin")


def who_and_where(trace_id: str, start: int) -> dict[str, Any]:
    """The user, session and tags of a demo trace, as OpenInference names them on a root span
    (`user.id`, `session.id`, `tag.tags`; the store reads them from there as ingest does).
    Drawn from the trace's id, not the demo's generator, so every other trace stays as it is."""
    pick = random.Random(trace_id)
    user = pick.choice(NAMED_USERS) if pick.random() < 0.3 else f"u_{pick.randint(1, 400)}"
    tags = (
        ["prod"] + (["vip"] if user == "alice" else []) + (["beta"] if pick.random() < 0.1 else [])
    )
    return {"user.id": user, "session.id": session_id(user, start), "tag.tags": tags}


def with_root_attributes(rows: list[Any], extra: dict[str, Any]) -> list[Any]:
    """The rows with `extra` merged into the root span's attributes (JSON text)."""
    return [
        row._replace(attributes=json.dumps(json.loads(row.attributes) | extra))
        if row.parent_id is None
        else row
        for row in rows
    ]
