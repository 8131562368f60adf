"""Evaluation rounds share their work fairly between projects, on SQLite, then PostgreSQL (issue
39, point 9: one project's 500 alerts of many periods made 1.6 s rounds, and another project's
one alert was evaluated every 1.1-2.7 s instead of every 1 s).

A round reads a window per project and period. The light project's window is read among the
round's first, however many windows the heavy project has; a round cut short by its budget
still evaluates the light project's alert, and the heavy project resumes where it stopped, so
each of its alerts is evaluated in turn. Checked by the order of the reads and by each alert's
last_evaluated_at, never by a time: a budget of 0 s is one window per project per round.
"""

from __future__ import annotations

from typing import Any

from tui.server.alerts.evaluator import ROUND_SHARE, Evaluator
from tui.server.alerts.service import Alerts
from tui.server.store.rows import now_ms

HEAVY, LIGHT = "proj_a_heavy", "proj_b_light"  # the heavy one first in every listing
PERIODS = 12  # the heavy project's alerts: one per period, so a window each


class ReadsLogged:
    """The store, with the project of every window read noted in order."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.reads: list[str] = []

    def window_stats(self, project_id: str, *args: Any, **kwargs: Any) -> Any:
        self.reads.append(project_id)
        return self.store.window_stats(project_id, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


def with_projects(store: Any) -> tuple[list[str], str]:
    """The heavy project's alerts (oldest first: one per period, 1 to PERIODS minutes) and the
    light project's one alert."""
    with store.transaction() as db:
        store.insert_project(db, "heavy", None, 30, project_id=HEAVY)
        store.insert_project(db, "light", None, 30, project_id=LIGHT)
        heavy = [
            store.insert_alert(
                db,
                project_id=HEAVY,
                name=f"heavy {n}",
                metric=f"latency_ms_{n}m",
                condition="gt",
                threshold=1000,
                webhook_url="http://127.0.0.1:9/unused",
                created_at=1000 + n,
            ).id
            for n in range(1, PERIODS + 1)
        ]
        light = store.insert_alert(
            db,
            project_id=LIGHT,
            name="light",
            metric="error_rate_pct_5m",
            condition="gt",
            threshold=5,
            webhook_url="http://127.0.0.1:9/unused",
        ).id
    return heavy, light


class Clock:
    def __init__(self) -> None:
        self.now = now_ms()

    def __call__(self) -> int:
        return self.now


def test_the_light_projects_window_is_read_among_the_rounds_first(store: Any) -> None:
    with_projects(store)
    logged = ReadsLogged(store)
    evaluator = Evaluator(logged, Clock())  # no budget: every window is read
    result = evaluator.round()
    assert result.evaluated == PERIODS + 1
    assert sorted(logged.reads) == sorted([HEAVY] * PERIODS + [LIGHT])
    # Every project's first window before any project's second: 2 projects, 2 reads.
    assert LIGHT in logged.reads[:2], logged.reads
    assert result.deferred == 0


def test_a_round_cut_short_evaluates_the_light_alert_and_resumes_the_heavy_project(
    store: Any,
) -> None:
    heavy, light = with_projects(store)
    clock = Clock()
    logged = ReadsLogged(store)
    # No time at all: each project gets the one window every round gives it, no more.
    evaluator = Evaluator(logged, clock, budget_s=0.0)
    evaluated_in_turn = []
    for _ in range(PERIODS + 1):
        clock.now += 60_000
        logged.reads.clear()
        result = evaluator.round()
        assert sorted(logged.reads) == [HEAVY, LIGHT]
        assert result.evaluated == 2 and result.deferred == PERIODS - 1
        states = store.alert_states()
        assert states[light].last_evaluated_at == clock.now  # every round
        now_evaluated = [
            a for a in heavy if a in states and states[a].last_evaluated_at == clock.now
        ]
        assert len(now_evaluated) == 1, now_evaluated
        evaluated_in_turn += now_evaluated
    # Each heavy alert once, in the order of their periods, then the first again.
    assert evaluated_in_turn == [*heavy, heavy[0]]


def test_a_round_on_a_schedule_has_half_its_interval_and_one_when_asked_has_no_bound(
    store: Any,
) -> None:
    def alerts(interval_s: float | None) -> Alerts:
        return Alerts(store, Clock(), interval_s=interval_s, allow_private=False, timeout_s=1.0)

    assert alerts(2.0).evaluator.budget_s == 2.0 * ROUND_SHARE == 1.0
    assert alerts(None).evaluator.budget_s is None


class FailingWindow(ReadsLogged):
    """The store, whose read of one window of the heavy project fails every time."""

    def __init__(self, store: Any, start_of_failing: int) -> None:
        super().__init__(store)
        self.start_of_failing = start_of_failing

    def window_stats(self, project_id: str, start: int, *args: Any, **kwargs: Any) -> Any:
        if project_id == HEAVY and start == self.start_of_failing:
            raise RuntimeError("a bad row")
        return super().window_stats(project_id, start, *args, **kwargs)


def test_a_failing_window_stops_its_project_for_the_round_and_the_next_resumes_after_it(
    store: Any,
) -> None:
    heavy, light = with_projects(store)
    clock = Clock()
    # The heavy project's first window (1 minute) fails at the round's moment.
    failing = FailingWindow(store, clock.now - 60_000)
    evaluator = Evaluator(failing, clock)
    first = evaluator.round()
    assert first.failed_projects == 1 and first.evaluated == 1  # the light alert alone
    assert set(store.alert_states()) == {light}
    # The next round starts after the failed window: the others are read, then it fails again.
    second = evaluator.round()
    assert second.failed_projects == 1 and second.evaluated == PERIODS
    assert set(store.alert_states()) == {light, *heavy[1:]}
    assert first.deferred == PERIODS - 1 and second.deferred == 0
