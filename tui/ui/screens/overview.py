"""A project's overview over the chosen range: traces, error rate, latency percentiles, tokens
and cost per time bucket, cost by model, and the totals.

The range is paged in by a worker, page after page; each page is added to the figures
(tui/model/overview_stats.py) and the charts are redrawn at most every REDRAW_SECONDS, so they fill
in while the rest of the app stays responsive. `s` stops paging (the charts keep what came and
say they are partial); a failed page does the same and says why. Cost by model needs the
models of each trace, which the spec's list rows lack: the local service adds them when asked
(`include=models`); other servers get "not named by this server".

From here to what failed: the error chart marks a bucket (at first the one with the most
failures); ←/→ move the mark and enter opens the trace list on that bucket's stretch of time
with the query `error`. The project's firing alerts are listed above the charts (on servers
with alerts); enter on one opens it. `tab` goes between the two.
"""

from __future__ import annotations

import time
from datetime import timedelta
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid
from textual.widgets import Static

from tui.model import charts
from tui.model import formatting as fmt
from tui.model.overview_stats import Overview, Totals, shares
from tui.model.text import safe_text, visible
from tui.model.timerange import TimeRange
from tui.ui.screens.base import AppScreen
from tui.ui.widgets.firing_alerts import FiringAlerts
from tui.ui.widgets.key_footer import KeyFooter
from tui.ui.widgets.metric_chart import MetricChart
from tui.ui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from tui.api import Alert, ApiError, Page, TraceSource

PAGE = 500  # the spec's largest page
REDRAW_SECONDS = 0.25  # while paging: charts redrawn at most this often
PERCENTILES = ((0.5, "p50"), (0.95, "p95"), (0.99, "p99"))
MODEL_ROWS = 8  # models listed, the costliest first
MIN_BAR = 8  # cells a model's cost bar keeps when names are long
DAY = timedelta(days=1)


class OverviewScreen(AppScreen):
    BINDINGS = [
        Binding("escape", "back", "Back", id="overview.back"),
        Binding("s", "stop", "Stop", id="overview.stop", tooltip="Stop paging the range in"),
        Binding("p", "percentile", "p50/p95/p99", id="overview.percentile"),
        Binding("t", "time_range", "Range", id="overview.range"),
        Binding("r", "refresh", "Refresh", id="overview.refresh"),
        Binding("tab", "switch", "Switch", id="overview.switch", tooltip="Firing alerts or errors"),
        Binding(
            "enter",
            "open",
            "Open",
            id="overview.open",
            priority=False,
            tooltip="The firing alert under the cursor, or the marked bar's failed traces",
        ),
    ]
    DEFAULT_CSS = """
    OverviewScreen #header { height: 1; background: $boost; padding: 0 1; }
    OverviewScreen #totals { height: auto; padding: 0 1; }
    OverviewScreen Grid { grid-size: 2; grid-gutter: 0 2; height: 1fr; padding: 0 1; }
    OverviewScreen Grid > MetricChart { height: 1fr; padding: 0; }
    OverviewScreen #models { height: 1fr; }
    """

    def __init__(self, project_id: str, project_name: str, range_: TimeRange | None = None):
        super().__init__()
        self.project_id = project_id
        self.project_name = project_name
        self.range = range_ or TimeRange()
        self.overview: Overview | None = None  # what is shown
        self._incoming: Overview | None = None  # what is being paged in, shown from its first page
        self.stale: str | None = None  # why a refresh brought nothing: what is shown is older
        self.shown_at: float | None = None  # when what is shown was paged in
        self.paging = False
        self.stopped = False
        self.failed: str | None = None
        self.models_offered: bool | None = None  # None: not known yet
        self.percentile = 1  # index into PERCENTILES: p95 first, as the latency alerts
        self._drawn_at = 0.0
        self.pages = 0

    def compose(self) -> ComposeResult:
        yield Static(id="header")
        yield Static(id="totals")
        yield FiringAlerts(id="firing")
        with Grid():
            yield MetricChart(id="traces-chart")
            yield MetricChart(id="errors-chart", selectable=True)
            yield MetricChart(id="latency-chart")
            yield MetricChart(id="tokens-chart")
            yield MetricChart(id="cost-chart")
            yield Static(id="models")
        yield StatusBar()
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one("#errors-chart", MetricChart).focus()
        self.action_refresh()
        self.load_alerts()

    # -- to what failed --------------------------------------------------------------------------

    def load_alerts(self) -> None:
        """The firing alerts, above the charts (servers without alerts: none)."""
        try:
            has_alerts = self.tui.client.has_alerts
        except RuntimeError:
            return
        if not has_alerts:
            return
        self.call_api(
            lambda client: client.list_alerts(self.project_id),
            self._alerts,
            group="overview-alerts",
            failed=lambda _error: True,  # the charts are the screen; the status line tells
            project_id=self.project_id,
        )

    def _alerts(self, alerts: list[Alert]) -> None:
        firing = self.query_one(FiringAlerts)
        firing.show_alerts(alerts, self.tui.now())
        if firing.alerts:  # the way on-call goes first: to what is firing
            firing.focus()

    @on(FiringAlerts.Opened)
    def _open_alert(self, event: FiringAlerts.Opened) -> None:
        self.tui.open_alert(self.project_id, event.alert)

    @on(MetricChart.Chosen, "#errors-chart")
    def _open_failures(self, event: MetricChart.Chosen) -> None:
        """The trace list on the marked bucket's stretch of time, only what failed."""
        overview = self.overview
        if overview is None or not 0 <= event.index < len(overview.buckets):
            return
        start, end = overview.window(event.index)
        self.tui.open_traces(
            self.project_id, self.project_name, TimeRange(None, start, end), "error"
        )

    @on(MetricChart.Moved, "#errors-chart")
    def _mark_moved(self) -> None:
        self.draw()  # the chart's title says the marked bucket's failures

    def action_open(self) -> None:
        firing = self.query_one(FiringAlerts)
        if firing.has_focus and 0 <= firing.cursor_row < len(firing.alerts):
            self.tui.open_alert(self.project_id, firing.alerts[firing.cursor_row])
        else:
            self.query_one("#errors-chart", MetricChart).action_choose()

    def action_switch(self) -> None:
        firing = self.query_one(FiringAlerts)
        chart = self.query_one("#errors-chart", MetricChart)
        if firing.alerts and not firing.has_focus:
            firing.focus()
        else:
            chart.focus()

    # -- paging ----------------------------------------------------------------------------------

    def action_refresh(self, keep: bool = True) -> None:
        """Page the range in again. What is shown stays until the first page of the new figures
        arrives (`keep`), so a refresh that fails (the server down) leaves it, marked stale; a
        new range starts empty (the old figures answer another question)."""
        start, end = self.range.bounds(self.tui.now())
        self._incoming = Overview(start, end)
        if not keep or self.overview is None:
            self.overview = self._incoming
            self.query_one("#errors-chart", MetricChart).marked = None  # another range's buckets
        self.stale = None
        self.stopped = False
        self.failed = None
        self.pages = 0
        self.paging = True
        self.draw()
        self.call_api(
            self._page_all,
            self._done,
            group="overview",
            failed=self._failed,
            retry=self.action_refresh,
            project_id=self.project_id,
        )

    async def _page_all(self, client: TraceSource) -> None:
        from tui.api import ApiError, ValidationFailed

        overview = self._incoming
        assert overview is not None
        include: str | None = "models" if self.models_offered is not False else None
        after = None
        while not self.stopped:
            try:
                page: Page = await client.list_traces(
                    self.project_id,
                    start=overview.start,
                    end=overview.end,
                    limit=PAGE,
                    after=after,
                    include=include,
                )
            except ApiError as error:
                # A server that refuses the extension's parameter: the spec's request instead.
                refused = isinstance(error, ValidationFailed) or error.status == 400
                if include and after is None and refused:
                    include, self.models_offered = None, False
                    continue
                raise
            if overview is not self._incoming:
                return  # a refresh or a new range started over
            overview.add(page.items)
            self.overview, self.shown_at = overview, time.time()
            self.pages += 1
            if after is None and include:
                self.models_offered = overview.rows_with_models > 0 or not page.items
            after = page.next_page
            if after is None:
                break
            if time.monotonic() - self._drawn_at >= REDRAW_SECONDS:
                self.draw()

    def _done(self, _: None) -> None:
        self.paging = False
        self.draw()

    def _failed(self, error: ApiError) -> bool:
        self.paging = False
        if self.overview is not self._incoming:
            self.stale = error.title  # nothing came: the last figures stay, said to be older
        else:
            self.failed = error.title
        self.draw()
        return False  # the app says it too, and keeps ctrl+r to retry

    def action_stop(self) -> None:
        if self.paging:
            self.stopped = True
            self.paging = False
            self.draw()

    # -- drawing ---------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop":
            return self.paging  # "s Stop" only while there is something to stop
        return super().check_action(action, parameters)

    def draw(self) -> None:
        self._drawn_at = time.monotonic()
        self.refresh_bindings()  # paging may have begun or ended
        overview = self.overview
        if overview is None:
            return
        totals = overview.totals()
        header = safe_text(self.project_name, 40, style="bold")
        header.append(f" · overview · {self.range.label} · {fmt.counted(totals.traces, 'trace')}")
        if self.paging:
            header.append(" · paging… s stops", style="bold")
        elif self.stopped:
            header.append(" · stopped: partial", style="bold")
        elif self.stale:
            moment = time.strftime("%H:%M", time.localtime(self.shown_at or time.time()))
            header.append_text(
                safe_text(f" · stale, as of {moment}: {self.stale}", 60, style="bold")
            )
        elif self.failed:
            header.append_text(safe_text(f" · partial: {self.failed}", 60, style="bold"))
        self.query_one("#header", Static).update(header)
        self.query_one("#totals", Static).update(self.totals_text(totals))
        per = f"per {_period(overview.size)}"
        start, end = overview.start, overview.end
        q, name = PERCENTILES[self.percentile]
        for selector, values, title, label in (
            ("#traces-chart", overview.counts(), f"traces {per}", fmt.count),
            ("#errors-chart", overview.error_rates(), self.errors_title(per), fmt.percent),
            ("#latency-chart", overview.latency(q), f"latency {name} {per} · p: p50/95/99", _ms),
            ("#tokens-chart", overview.tokens(), f"tokens {per}", fmt.count),
            ("#cost-chart", overview.costs(), f"cost {per}", fmt.cost),
        ):
            self.query_one(selector, MetricChart).show(
                values, start, end, label, title=Text(title, style="bold")
            )
        self.query_one("#models", Static).update(self.models_text())
        chart = self.query_one("#errors-chart", MetricChart)
        if chart.marked is None or chart.marked >= len(overview.buckets):
            chart.mark(overview.spike())

    def errors_title(self, per: str) -> str:
        """The error chart's title, with the marked bucket's failures and what enter does."""
        title = f"errors % {per}"
        overview = self.overview
        if overview is None:
            return title
        marked = self.query_one("#errors-chart", MetricChart).marked
        if marked is None:
            marked = overview.spike()
        if marked is None or not 0 <= marked < len(overview.buckets):
            return title
        bucket = overview.buckets[marked]
        moment = overview.moment(marked).astimezone()
        when = moment.strftime("%H:%M" if overview.end - overview.start <= DAY else "%m-%d %H:%M")
        # One line at 80 columns (half of it): what failed at the mark, and that enter opens it.
        return f"{title} ▲ {when} {bucket.errors}/{bucket.traces} failed ⏎"

    def totals_text(self, totals: Totals) -> Text:
        # One line at 80 columns: "errors 16 (22.2%) · p50 5.6s p95 14.2s p99 15.8s · ..."
        text = Text()
        rate = totals.error_rate
        text.append(f"errors {fmt.count(totals.errors)}")
        text.append(f" ({fmt.percent(rate)})" if rate is not None else "")
        text.append(
            f" · p50 {fmt.duration(totals.p50)} p95 {fmt.duration(totals.p95)}"
            f" p99 {fmt.duration(totals.p99)}"
        )
        text.append(f" · {fmt.count(totals.tokens)} tokens · {fmt.cost(totals.cost)}")
        return text

    def models_text(self) -> Text:
        """The cost by model, and under it the charts' legend (the one panel with room)."""
        text = self._cost_by_model()
        text.append(f"\n{self.legend()}", style="dim")
        return text

    def _cost_by_model(self) -> Text:
        overview = self.overview
        assert overview is not None
        text = Text("cost by model", style="bold")
        if self.models_offered is False or (
            not self.paging and overview.added and not overview.rows_with_models
        ):
            text.append("\nthis server's trace list does not name models", style="dim")
            return text
        ranked = overview.by_model()[: MODEL_ROWS - 1]  # a row left for the legend
        if not ranked:
            text.append("\nno model calls in this range" if not self.paging else "\n…", "dim")
            return text
        width = max(10, (self.query_one("#models").content_size.width or 38))
        # The names as wide as the longest, as long as the bars keep MIN_BAR cells.
        longest = max(len(visible(name)) for name, _ in ranked)
        name_width = max(8, min(longest, width - 10 - MIN_BAR))
        labels = [fmt.model_label(name, name_width) for name, _ in ranked]
        if len(set(labels)) < len(labels):  # two dates of one model: cut, the dates kept
            labels = [fmt.middle_cut(visible(name), name_width) for name, _ in ranked]
        bar_width = max(4, width - name_width - 10)
        costs = shares([s.cost for _, s in ranked])
        for label, (_, share), part in zip(labels, ranked, costs, strict=True):
            text.append("\n")
            text.append(label.ljust(name_width + 1))
            text.append_text(charts.hbar(part, bar_width))
            text.append(f" {fmt.cost(share.cost)}".rjust(9))
        return text

    def legend(self) -> str:
        """How to read the charts: what a bar is, what `_` and a blank mean."""
        overview = self.overview
        bucket = _period(overview.size) if overview is not None else "bucket"
        return f"a bar per {bucket}; _ zero, blank none"

    def on_resize(self) -> None:
        if self.overview is not None:
            self.query_one("#models", Static).update(self.models_text())

    # -- keys ------------------------------------------------------------------------------------

    def action_percentile(self) -> None:
        self.percentile = (self.percentile + 1) % len(PERCENTILES)
        self.draw()

    def action_time_range(self) -> None:
        def chosen(value: TimeRange | None) -> None:
            if value is not None:
                self.range = value
                self.action_refresh(keep=False)  # replaces the running worker (one group)

        self.tui.pick_time_range(self.range, chosen)

    def action_back(self) -> None:
        self.stopped = True
        self.dismiss()


def _period(size: timedelta) -> str:
    hours = int(size.total_seconds() // 3600)
    if hours % 24 == 0:
        return f"{hours // 24}d"
    return f"{hours}h"


def _ms(value: float) -> str:
    return fmt.duration(value)
