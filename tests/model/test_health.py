"""A project's health at a glance, pure (tui/model/health.py): counted from a server's answer or
from listed traces (with what a capped page cannot know left blank), the order that lists the
least healthy first, and what each cell says."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from tui.api.health import ProjectHealth, read_health
from tui.api.models import Alert, Project, Trace
from tui.model.health import (
    Health,
    alerts_cell,
    bars_of,
    errors_cell,
    firing_of,
    from_report,
    from_rows,
    ordered,
    traffic_cell,
)

NOW = datetime(2026, 11, 28, 12, 0, tzinfo=timezone.utc)
START = NOW - timedelta(hours=1)


def trace(minutes_ago: float, failed: bool = False) -> Trace:
    return Trace.model_validate(
        {
            "id": f"t{minutes_ago}",
            "started_at": (NOW - timedelta(minutes=minutes_ago)).isoformat(),
            "status": "error" if failed else "ok",
        }
    )


def alert(name: str, state: str, since_minutes: float | None = None, paused: bool = False) -> Alert:
    since = None if since_minutes is None else (NOW - timedelta(minutes=since_minutes)).isoformat()
    return Alert.model_validate(
        {"id": f"al_{name}", "name": name, "state": state, "firing_since": since, "paused": paused}
    )


def test_traces_are_counted_in_the_bucket_of_their_start_and_errors_with_them() -> None:
    rows = [trace(59.9), trace(55), trace(54.9, True), trace(0.1, True), trace(61), trace(-1)]
    health = from_rows(rows, [], START, NOW, 12)
    assert health.trace_counts == (1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)
    assert health.error_counts == (0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)
    assert (health.traces, health.errors, health.error_rate) == (4, 2, 50.0)
    assert (health.alerts, health.firing, health.capped) == (0, (), False)


def test_a_capped_page_leaves_the_buckets_before_its_earliest_trace_unknown() -> None:
    """The spec lists newest first: a page that did not hold the hour knows nothing of the
    buckets before its earliest trace, which are blank, not quiet."""
    health = from_rows([trace(1), trace(12, True)], None, START, NOW, 12, capped=True)
    assert health.trace_counts == (None,) * 9 + (1, 0, 1)
    assert health.error_counts == (None,) * 9 + (1, 0, 0)
    assert health.alerts is None and health.capped
    assert errors_cell(health).plain == "~50%"
    assert traffic_cell(health, 20).plain == "         █_█ 2+"


def test_firing_alerts_are_the_unpaused_ones_longest_firing_first() -> None:
    alerts = [
        alert("late", "firing", 5),
        alert("ok", "ok"),
        alert("paused", "firing", 90, paused=True),
        alert("early", "FIRING", 30),
        alert("unsaid", "firing"),
    ]
    assert [f.name for f in firing_of(alerts)] == ["early", "late", "unsaid"]
    assert firing_of(alerts)[0].alert.id == "al_early"


def test_the_server_answer_is_read_tolerantly() -> None:
    report = read_health(
        {
            "window": "1h",
            "from": "2026-11-28T11:00:00.000Z",
            "bucket_ms": 300000,
            "data": [
                {
                    "project_id": "p1",
                    "trace_counts": [1, "2", None, -4, "x"],
                    "error_counts": [0, 1],
                    "alerts": 2,
                    "firing": [{"id": "a", "name": "spike", "state": "firing"}, "junk"],
                },
                "not a project",
                {"name": "no id"},
            ],
        }
    )
    assert report.bucket_ms == 300000 and report.start == START
    health = from_report(report.projects)
    assert list(health) == ["p1"]
    assert health["p1"].trace_counts == (1, 2, 0, 0, 0)
    assert (health["p1"].traces, health["p1"].errors) == (3, 1)  # summed when not sent
    assert [f.name for f in health["p1"].firing] == ["spike"]


def test_the_unhealthy_come_first_by_firing_alerts_then_error_rate() -> None:
    projects = [Project(id=name, name=name) for name in "abcdef"]
    health = {
        "a": Health(traces=10),
        "b": Health(traces=10, errors=1),
        "c": Health(firing=firing_of([alert("x", "firing", 1)]), traces=0),
        "d": Health(traces=4, errors=2),
        "f": Health(firing=firing_of([alert("y", "firing", 1), alert("z", "firing", 2)])),
    }
    assert [p.id for p in ordered(projects, health, unhealthy_first=False)] == list("abcdef")
    assert [p.id for p in ordered(projects, health, unhealthy_first=True)] == list("fcdbae")


def test_cells_say_what_fires_since_when_and_the_rate_and_traffic() -> None:
    firing = Health(firing=firing_of([alert("Error spike", "firing", 12)]), alerts=3)
    assert alerts_cell(firing, NOW).plain == "▲ Error spike 12m"
    two = Health(firing=firing_of([alert("a", "firing", 200), alert("b", "firing", 1)]))
    assert alerts_cell(two, NOW).plain == "▲ 2 firing: a 3h"
    assert alerts_cell(Health(alerts=2), NOW).plain == "✓ 2 ok"
    assert alerts_cell(Health(alerts=0), NOW).plain == "no alerts"
    assert alerts_cell(Health(), NOW).plain == "–"  # a server without alerts
    assert alerts_cell(None, NOW).plain == "…"
    hostile = Health(firing=firing_of([alert("[@click=app.quit]\x1b[2J", "firing")]))
    assert "\x1b" not in alerts_cell(hostile, NOW).plain
    assert alerts_cell(hostile, NOW).spans  # styled, never parsed as markup
    assert errors_cell(Health(traces=0)).plain == "no traces"
    assert errors_cell(Health(traces=3, errors=1)).plain == "33%"
    busy = Health(traces=12_345, trace_counts=(0, 4, 8), error_counts=(0, 0, 1))
    drawn = traffic_cell(busy, 20)
    assert drawn.plain == "_▄█ 12.3k"
    assert [span.style for span in drawn.spans][:3] == ["dim", "cyan", "red"]
    assert traffic_cell(busy, 6).plain == "12.3k"  # no room for bars: the count alone
    assert bars_of([], [], 4).plain == "    "


def test_project_health_records_keep_unknown_fields() -> None:
    record = ProjectHealth.model_validate({"project_id": "p", "extra": 1})
    assert record.extras == {"extra": 1} and record.trace_counts == []
