"""The demo data: deterministic from its seed, and shaped like real LLM traffic."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tui.demo.data import BIG_TRACE_ID, DEEP_TRACE_ID, demo_keys, populate
from tui.server.store.sqlite.store import Store

NOW = 1_795_000_000_000


def dump(path: Path) -> list[str]:
    return list(sqlite3.connect(path).iterdump())


def test_same_seed_same_data(tmp_path: Path) -> None:
    for name in ("a", "b"):
        populate(Store(tmp_path / f"{name}.sqlite3"), seed=3, now=NOW, scale=0.05, big_traces=False)
    a, b = dump(tmp_path / "a.sqlite3"), dump(tmp_path / "b.sqlite3")
    # api_keys rows carry their creation time; everything else must match exactly.
    assert [r for r in a if "api_keys" not in r] == [r for r in b if "api_keys" not in r]
    populate(Store(tmp_path / "c.sqlite3"), seed=4, now=NOW, scale=0.05, big_traces=False)
    assert dump(tmp_path / "c.sqlite3") != a
    assert demo_keys(3) == demo_keys(3) != demo_keys(4)


def test_the_summarizers_story_and_the_webhook_secrets_do_not_depend_on_the_hour(
    tmp_path: Path,
) -> None:
    """The demo's regression (tui/demo/regression.py) and its alerts' secrets come from the
    seed alone: the traffic before them draws more or fewer numbers by the hour of `now`."""

    def story(name: str, now: int) -> tuple[list[tuple[object, ...]], list[str]]:
        store = Store(tmp_path / f"{name}.sqlite3")
        populate(store, seed=7, now=now, scale=0.05, big_traces=False)
        db = sqlite3.connect(store.path)
        spans = db.execute(
            "SELECT t.started_at - ?, s.name, s.duration_ms, s.attributes FROM spans s"
            " JOIN traces t ON t.id = s.trace_id WHERE t.name = 'summarize_page'"
            " ORDER BY t.started_at, s.started_at, s.name",
            (now,),
        ).fetchall()
        secrets = [r[0] for r in db.execute("SELECT secret FROM alert_secrets ORDER BY alert_id")]
        return spans, secrets

    night, afternoon = story("night", NOW), story("afternoon", NOW + 13 * 3_600_000 + 17_000)
    assert night[0] and night[1] and night == afternoon


def depth_of(rows: list[tuple[str, str | None]]) -> int:
    parent = dict(rows)
    deepest = 0
    for span in parent:
        depth, node = 1, parent[span]
        while node is not None:
            depth, node = depth + 1, parent[node]
        deepest = max(deepest, depth)
    return deepest


def test_shape_of_the_traffic(tmp_path: Path) -> None:
    store = Store(tmp_path / "demo.sqlite3")
    populate(store, seed=7, now=NOW, scale=1.0, big_traces=True)
    db = sqlite3.connect(store.path)
    total, errors = db.execute(
        "SELECT count(*), sum(status = 'error') FROM traces WHERE id NOT IN (?, ?)",
        (BIG_TRACE_ID, DEEP_TRACE_ID),
    ).fetchone()
    assert total > 5000
    assert 0.02 <= errors / total <= 0.045
    week = 7 * 86_400_000
    lo, hi = db.execute("SELECT min(started_at), max(started_at) FROM traces").fetchone()
    assert NOW - week <= lo and hi <= NOW
    # A daily rhythm: the busiest hour of the day sees at least twice the quietest.
    hours = db.execute(
        "SELECT (started_at / 3600000) % 24 AS h, count(*) FROM traces GROUP BY h"
    ).fetchall()
    counts = [c for _, c in hours]
    assert max(counts) >= 2 * min(counts)
    models = {m for (m,) in db.execute("SELECT DISTINCT model FROM spans WHERE kind = 'llm'")}
    assert {"gpt-4o", "gpt-4o-mini", "claude-3-5-sonnet-20241022"} <= models
    for (trace_id,) in db.execute(
        "SELECT id FROM traces WHERE project_id = 'proj_agent' AND id NOT IN (?, ?) LIMIT 50",
        (BIG_TRACE_ID, DEEP_TRACE_ID),
    ).fetchall():
        rows = db.execute(
            "SELECT id, parent_id FROM spans WHERE trace_id = ?", (trace_id,)
        ).fetchall()
        assert 2 <= depth_of(rows) <= 6
    big = db.execute("SELECT count(*) FROM spans WHERE trace_id = ?", (BIG_TRACE_ID,)).fetchone()[0]
    assert big >= 10_000
    deep = db.execute(
        "SELECT id, parent_id FROM spans WHERE trace_id = ?", (DEEP_TRACE_ID,)
    ).fetchall()
    assert depth_of(deep) >= 2000
    assert store.count("alerts") >= 6
