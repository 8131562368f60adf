"""One project's many alerts against another's one (issue 39, point 9: a project's 500 alerts
made 1.6 s rounds, and another project's alert was evaluated every 1.1-2.7 s instead of 1 s).

A SQLite file with two projects: the heavy one has 500 alerts of 500 periods (1 to 500
minutes, latency, error rate, cost and prompt drift in turn: a window read each) over 50,000
traces of the last day; the light one has one alert over 1,000 traces. Measured:

- rounds of the evaluator in this process (the median of ROUNDS, after a first): as
  `tracetui serve --alert-interval 1` runs them (half the interval's budget, fairness.py),
  against a round that reads every window (what every round was before);
- `tracetui serve --alert-interval 1` over the file: how often the light project's alert is
  evaluated, from its last_evaluated_at read back every 20 ms for WATCH_S seconds after its
  first WARM evaluations (the service's first rounds read every prompt cold): the median and
  the longest gap.
"""

from __future__ import annotations

import itertools
import random
import shutil
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from tests.perf.bench_alerts import prompt
from tests.perf.report import Row
from tests.support.serve import serving
from tui.server.alerts.evaluator import ROUND_SHARE, Evaluator
from tui.server.store.rows import SpanRow, TraceRow, now_ms
from tui.server.store.sql import INSERT
from tui.server.store.sqlite.store import Store

HEAVY, LIGHT = "proj_heavy", "proj_light"
HEAVY_ALERTS = 500
HEAVY_TRACES = 50_000
LIGHT_TRACES = 1_000
INTERVAL_S = 1.0
ROUNDS = 5
WATCH_S = 15.0
WARM = 3
DAY = 86_400_000
MEASURES = ("latency_ms", "error_rate_pct", "cost_usd", "prompt_drift_score")
# What `make test` runs this module with (tests/bench/test_tiny_benches.py): every code path
# once, at a size that takes seconds; no figure of it means anything.
TINY = {
    "HEAVY_ALERTS": 8,
    "HEAVY_TRACES": 200,
    "LIGHT_TRACES": 20,
    "ROUNDS": 1,
    "WATCH_S": 2.5,
    "WARM": 1,
}


def build(path: Path, now: int) -> Store:
    store = Store(path)
    with store.transaction() as db:
        store.insert_project(db, "heavy", None, 30, project_id=HEAVY)
        store.insert_project(db, "light", None, 30, project_id=LIGHT)
    rng = random.Random(9)
    prompts = [prompt(rng) for _ in range(200)]
    db = store._connection()
    db.execute("BEGIN")
    for project, count in ((HEAVY, HEAVY_TRACES), (LIGHT, LIGHT_TRACES)):
        traces, spans = [], []
        for n in range(count):
            start = now - 1 - n * DAY // count
            duration = int(rng.lognormvariate(7, 0.6))
            errored = rng.random() < 0.03
            cost = round(rng.random() * 0.004, 6)
            trace_id, status = f"{n:032x}", "error" if errored else "ok"
            row = (trace_id, project, "chat", start, duration, 1, 900, 80, cost, status)
            traces.append(TraceRow(*row, int(errored), "{}", start))
            span = SpanRow(
                trace_id,
                f"{n:016x}",
                None,
                "chat",
                "llm",
                "gpt-4o-mini",
                start,
                duration,
                900,
                80,
                cost,
                status,
                None,
                prompts[n % len(prompts)],
            )
            spans.append((project, *span))
        db.executemany(INSERT[TraceRow], traces)
        db.executemany(INSERT[SpanRow], spans)
    db.execute("COMMIT")
    db.execute("ANALYZE main")  # the text file is attached read-only
    hook = "http://127.0.0.1:9/unused"
    with store.transaction() as db:
        for n in range(HEAVY_ALERTS):
            metric = f"{MEASURES[n % len(MEASURES)]}_{n + 1}m"
            store.insert_alert(
                db,
                project_id=HEAVY,
                name=f"heavy {n}",
                metric=metric,
                condition="gt",
                threshold=1e9,
                webhook_url=hook,
            )
        store.insert_alert(
            db,
            project_id=LIGHT,
            name="light",
            metric="latency_ms_5m",
            condition="gt",
            threshold=1e9,
            webhook_url=hook,
        )
    return store


def rounds_ms(store: Store, budget_s: float | None) -> tuple[float, int]:
    """The median round (ms) of an evaluator with this budget, after a first; and how many
    alerts its rounds evaluated at the median."""
    evaluator = Evaluator(store, now_ms, budget_s=budget_s)
    evaluator.round()
    times, evaluated = [], []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        result = evaluator.round()
        times.append(time.perf_counter() - started)
        evaluated.append(result.evaluated)
    return statistics.median(times) * 1000, int(statistics.median(evaluated))


def light_alert_gaps(path: Path) -> list[float]:
    """Seconds between the light alert's evaluations under `serve --alert-interval 1`."""
    flags = ("--alert-interval", str(INTERVAL_S), "--allow-private-webhooks")
    seen: list[int] = []
    with serving(path, *flags) as served:
        db = sqlite3.connect(path)
        try:
            deadline = time.monotonic() + WATCH_S + 60  # the first rounds come as it starts
            while time.monotonic() < deadline and (
                len(seen) <= WARM or (seen[-1] - seen[WARM]) / 1000 < WATCH_S
            ):
                row = db.execute(
                    "SELECT s.last_evaluated_at FROM alert_states s JOIN alerts a "
                    "ON a.id = s.alert_id WHERE a.project_id = ?",
                    (LIGHT,),
                ).fetchone()
                if row is not None and row[0] is not None and (not seen or row[0] != seen[-1]):
                    seen.append(int(row[0]))
                time.sleep(0.02)
        finally:
            db.close()
        served.interrupt()
    watched = seen[WARM:]
    return [(b - a) / 1000 for a, b in itertools.pairwise(watched)]


def run() -> list[Row]:
    folder = Path(tempfile.mkdtemp(prefix="tracetui-bench-fairness-"))
    try:
        path = folder / "fairness.sqlite3"
        store = build(path, now_ms())
        budgeted, per_round = rounds_ms(store, ROUND_SHARE * INTERVAL_S)
        every, _ = rounds_ms(store, None)
        store.close()
        gaps = light_alert_gaps(path) or [float("nan")]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    typical, longest = statistics.median(gaps), max(gaps)
    print(
        f"alert fairness: a round at --alert-interval {INTERVAL_S:g} {budgeted:.0f} ms "
        f"({per_round} of {HEAVY_ALERTS + 1} alerts), every window {every:.0f} ms; the light "
        f"alert evaluated every {typical:.2f} s (longest {longest:.2f} s, {len(gaps)} gaps)"
    )
    return [
        Row(
            f"alert fairness: round, {HEAVY_ALERTS} + 1 alerts",
            budgeted,
            every,
            "ms",
            "<= 600 ms",
            budgeted <= 600,
        ),
        Row(
            "  the light alert: evaluated every (median)",
            typical * 1000,
            INTERVAL_S * 1000,
            "ms",
            "<= 1200 ms",
            typical <= 1.2,
        ),
        Row(
            "  (the longest gap)",
            longest * 1000,
            INTERVAL_S * 1000,
            "ms",
            "<= 1500 ms",
            longest <= 1.5,
        ),
    ]
