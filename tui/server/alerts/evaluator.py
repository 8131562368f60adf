"""One evaluation round over every alert: values, states, events and the webhooks to send.

At the round's moment `at` (the service's clock), each alert's metric is computed over
[at - period, at). Alerts of a project that share a period share the work: one read of the
window gives the count, errors, cost and p95 that all of them need, and only the columns they
need are read. An empty window has no value: state `no_data`, which pages nobody.

States are ok, firing and no_data (also the state of an alert never evaluated). Every change is
an event in the alert's history. Entering firing makes one `alert.firing` webhook; leaving it
(to ok, or to no_data when the traffic stops) makes one `alert.resolved`; staying firing makes
none. The states, events and webhooks of a round are stored in one transaction, so a webhook is
never made without the state change that caused it, or lost after it.

A paused alert is not evaluated: its state stays as it was, with no events and no webhooks.
A muted alert (muted_until later than the round) is evaluated and its changes recorded, but
makes no webhook for them: a change muted away is never sent afterwards.

A round shares its time fairly between projects (alerts/fairness.py): one window at a time,
always the next of the project that has had the least time, so a project's alert is never
held up by another project's many. A round evaluating on a schedule stops taking windows past
ROUND_SHARE of its interval, once every project has had one; a project cut short resumes
where it stopped at the next round.

A window whose evaluation fails (a bad row, a locked database) is skipped with the rest of its
project's for this round, its alerts keeping their state until the next; the error is logged
by type only.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from typing import NamedTuple

from tui.server.alerts.drift import js_distance, novelty, prompt_text, tokens
from tui.server.alerts.fairness import FairShares
from tui.server.alerts.metrics import MetricParts, breaches, in_unit, parse_metric
from tui.server.alerts.payload import FIRING, RESOLVED, Evaluated, event_body, worst_json
from tui.server.store.alert_rows import (
    AlertEventRow,
    AlertRow,
    AlertState,
    DeliveryRow,
    WindowStats,
    new_event_id,
)
from tui.server.store.protocol import TraceStore
from tui.server.store.rows import DAY_MS, ProjectRow

log = logging.getLogger("tracetui.server")

OK, FIRING_STATE, NO_DATA = "ok", "firing", "no_data"
DRIFT_BASELINE_MS = DAY_MS  # drift compares a window with the 24 hours before it
DRIFT_SAMPLE = 300  # prompts sampled on each side (see drift_strata)
PROMPT_SPANS = 3  # LLM spans read per sampled trace
PROMPT_CACHE = 4096  # traces whose prompt words are kept between rounds
WORST = 5
# The part of the evaluation interval a scheduled round may take before it leaves the windows
# it has not read for the next round: the rest of the interval stays free, so rounds keep to
# their schedule and every project's alerts are evaluated each round however many another has.
ROUND_SHARE = 0.5


class Drift(NamedTuple):
    score: float | None
    worst: list[tuple[str, float]]  # sampled window traces, most novel first


class RoundResult(NamedTuple):
    """What a round did: alerts evaluated, state changes, webhooks made, projects skipped,
    and alerts left for a later round (their project's share of the round was spent)."""

    evaluated: int
    changes: int
    webhooks: int
    failed_projects: int
    deferred: int = 0


Member = tuple[AlertRow, MetricParts]
Result = tuple[AlertRow, MetricParts, Evaluated, Drift | None, WindowStats | None]


class Outcome(NamedTuple):
    """What a round stores: new states, the states they replace, events and webhooks."""

    states: list[AlertState]
    expected: dict[str, str]
    events: list[AlertEventRow]
    webhooks: list[DeliveryRow]


def strata(start: int, end: int, count: int) -> list[tuple[int, int]]:
    """[start, end) cut into about `count` slices on a grid fixed in absolute time, so the
    next round, a minute later, mostly cuts the same slices (and samples the same traces)."""
    if end <= start:
        return []
    step = max(1000, -(-(end - start) // count))
    cuts = []
    t = start - start % step
    while t < end:
        cuts.append((max(t, start), min(t + step, end)))
        t += step
    return cuts


class Evaluator:
    """Evaluates every alert when `round` is called (by the periodic task, or a test). One
    round at a time; `on_webhooks` is called after a round that made webhooks (it wakes the
    delivery worker). With `budget_s`, a round takes no new window past that many seconds
    once every project has had one (fairness.py); without, it reads every window."""

    def __init__(
        self,
        store: TraceStore,
        clock: Callable[[], int],
        on_webhooks: Callable[[], None] = lambda: None,
        drift_sample: int = DRIFT_SAMPLE,
        budget_s: float | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.on_webhooks = on_webhooks
        self.drift_sample = drift_sample
        self.budget_s = budget_s
        self.shares = FairShares()  # where each project cut short resumes
        self._lock = threading.Lock()
        self._worst: dict[tuple[str, int, int, str], list[tuple[str, float]]] = {}
        self._project_rows: dict[str, ProjectRow | None] = {}
        self._prompts: OrderedDict[tuple[str, str, int], Counter[str]] = OrderedDict()

    def round(self) -> RoundResult:
        with self._lock:
            result = self._round(self.clock())
        if result.webhooks:
            self.on_webhooks()
        return result

    def _round(self, at: int) -> RoundResult:
        self._worst = {}
        self._project_rows = {}
        windows: dict[str, dict[int, list[Member]]] = {}
        for alert in self.store.all_alerts():
            if alert.paused:
                continue
            try:
                metric = parse_metric(alert.metric)
            except ValueError:
                continue  # validated on create; a row edited by hand is left alone
            periods = windows.setdefault(alert.project_id, {})
            periods.setdefault(metric.period_ms, []).append((alert, metric))
        before = self.store.alert_states()

        out = Outcome([], {}, [], [])
        failed = 0
        plan = self.shares.round(
            {p: list(periods) for p, periods in windows.items()}, self.budget_s
        )
        for project_id, period_ms in plan:
            window = Outcome([], {}, [], [])
            try:
                members = windows[project_id][period_ms]
                for result in self._window(project_id, period_ms, members, at):
                    self._settle(result, before.get(result[0].id), at, window)
            except Exception as error:
                failed += 1
                plan.stop(project_id)
                log.warning(
                    "alert evaluation of a project failed (%s); its alerts keep their state",
                    type(error).__name__,
                )
                continue
            out.states.extend(window.states)
            out.expected.update(window.expected)
            out.events.extend(window.events)
            out.webhooks.extend(window.webhooks)
        stale = self.store.record_round(out.states, out.expected, out.events, out.webhooks)
        skipped = set(stale)
        return RoundResult(
            len(out.states) - len(skipped),
            sum(e.alert_id not in skipped for e in out.events),
            sum(w.alert_id not in skipped for w in out.webhooks),
            failed,
            sum(len(windows[project][period]) for project, period in plan.left),
        )

    def _settle(self, result: Result, old: AlertState | None, at: int, out: Outcome) -> None:
        """An evaluated alert's new state into `out`, with its event and webhook if it
        changed."""
        alert, metric, evaluated, drift, stats = result
        old_state = old.state if old is not None else NO_DATA
        new_state = self._state(alert, evaluated.value)
        firing_since = None
        if new_state == FIRING_STATE:
            firing_since = at
            if old is not None and old_state == FIRING_STATE:
                firing_since = old.firing_since
        out.states.append(AlertState(alert.id, new_state, evaluated.value, at, firing_since))
        out.expected[alert.id] = old_state
        if new_state == old_state:
            return
        out.events.append(
            AlertEventRow(
                id=new_event_id("evt"),
                alert_id=alert.id,
                kind="state",
                at=at,
                from_state=old_state,
                to_state=new_state,
                value=evaluated.value,
                window_start=evaluated.window_start,
                window_end=evaluated.window_end,
            )
        )
        event_type = None
        if new_state == FIRING_STATE:
            event_type = FIRING
        elif old_state == FIRING_STATE:
            event_type = RESOLVED
        muted = alert.muted_until is not None and at < alert.muted_until
        if event_type is not None and not muted:
            out.webhooks.append(
                self._webhook(event_type, alert, metric, evaluated, new_state, drift, stats)
            )

    @staticmethod
    def _state(alert: AlertRow, value: float | None) -> str:
        if value is None:
            return NO_DATA
        return FIRING_STATE if breaches(alert.condition, value, alert.threshold) else OK

    # -- values -----------------------------------------------------------------------------------

    def _window(
        self, project_id: str, period_ms: int, group: Sequence[Member], at: int
    ) -> list[Result]:
        """The alerts of one project and period evaluated at `at`: one read of their window."""
        start = at - period_ms
        measures = {metric.measure for _, metric in group}
        stats = None
        if measures - {"prompt_drift"}:
            stats = self.store.window_stats(
                project_id,
                start,
                at,
                errors="error_rate" in measures,
                cost="cost" in measures,
                p95="latency" in measures,
            )
        drift = self._drift(project_id, start, at) if "prompt_drift" in measures else None
        out = []
        for alert, metric in group:
            raw = raw_value(metric.measure, stats, drift)
            value = None if raw is None else in_unit(metric.measure, metric.unit, raw)
            out.append((alert, metric, Evaluated(value, start, at, at), drift, stats))
        return out

    def _drift(self, project_id: str, start: int, end: int) -> Drift:
        window, per_trace = self._prompt_words(project_id, start, end)
        if not window:
            return Drift(None, [])
        baseline, _ = self._prompt_words(project_id, start - DRIFT_BASELINE_MS, start)
        score = js_distance(window, baseline)
        if score is None:
            return Drift(None, [])
        ranked = sorted(
            ((trace_id, novelty(words, baseline)) for trace_id, words in per_trace),
            key=lambda pair: -pair[1],
        )
        return Drift(score, ranked[:WORST])

    def _prompt_words(
        self, project_id: str, start: int, end: int
    ) -> tuple[Counter[str], list[tuple[str, Counter[str]]]]:
        """The words of the prompts of traces sampled over [start, end), summed and per
        trace. A trace's words are kept between rounds (keyed by its span count, which a late
        span changes)."""
        total: Counter[str] = Counter()
        per_trace = []
        sample = self.store.sample_traces(project_id, strata(start, end, self.drift_sample))
        unread = [t for t, n in sample if (project_id, t, n) not in self._prompts]
        read = self.store.prompt_attributes_of(project_id, unread, PROMPT_SPANS) if unread else {}
        for trace_id, span_count in sample:
            key = (project_id, trace_id, span_count)  # a trace id is its project's
            words = self._prompts.get(key)
            if words is None:
                attributes = read.get(trace_id, [])
                words = Counter(
                    {sys.intern(w): n for w, n in tokens(prompt_text(attributes)).items()}
                )
                self._prompts[key] = words
                if len(self._prompts) > PROMPT_CACHE:
                    self._prompts.popitem(last=False)
            else:
                self._prompts.move_to_end(key)
            if words:
                total.update(words)
                per_trace.append((trace_id, words))
        return total, per_trace

    # -- webhooks ---------------------------------------------------------------------------------

    def _webhook(
        self,
        event_type: str,
        alert: AlertRow,
        metric: MetricParts,
        evaluated: Evaluated,
        state: str,
        drift: Drift | None,
        stats: WindowStats | None,
    ) -> DeliveryRow:
        if metric.measure == "prompt_drift":
            worst = drift.worst if drift is not None else []
        elif metric.measure == "latency" and stats is not None and stats.p95_ms is not None:
            worst = stats.slowest  # read along with the p95
        else:
            # Alerts that share a window and a measure share its worst traces: one read each.
            key = (alert.project_id, evaluated.window_start, evaluated.window_end, metric.measure)
            if key not in self._worst:
                self._worst[key] = self.store.worst_traces(*key, WORST)
            worst = self._worst[key]
        if alert.project_id not in self._project_rows:  # read once a round, for its webhooks
            self._project_rows[alert.project_id] = self.store.get_project(alert.project_id)
        project = self._project_rows[alert.project_id]
        body = event_body(
            event_type,
            alert,
            project,
            evaluated,
            state,
            worst_json(metric, worst, alert.project_id),
            evaluated.evaluated_at,
        )
        at = evaluated.evaluated_at
        return DeliveryRow(new_event_id("msg"), alert.id, event_type, body, at, 0, at)


def raw_value(measure: str, stats: WindowStats | None, drift: Drift | None) -> float | None:
    """A measure's value before its unit: p95 in ms, error rate and drift as ratios, cost in
    usd; None for an empty window."""
    if measure == "prompt_drift":
        return drift.score if drift is not None else None
    if stats is None or stats.traces == 0:
        return None
    if measure == "latency":
        return stats.p95_ms
    if measure == "error_rate":
        return stats.errors / stats.traces
    return stats.cost_usd
