"""Pure (no Textual): every trace of a time range, paged in, up to a cap, for what is computed
from trace lists (the alert charts and values, the overview).

The spec does not say in which order a server lists traces: when the cap is reached, what was
collected is some part of the range, and `covered` says which, so a chart leaves the rest
blank instead of calling it quiet.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from tui.api import Trace, TraceSource

CAP = 50_000  # traces held for charts: ~20 MB of rows, a few seconds of paging on loopback


@dataclass
class Collected:
    """The traces of [start, end) that were paged in, and whether the cap cut the range."""

    start: datetime
    end: datetime
    traces: list[Trace] = field(default_factory=list)
    capped: bool = False

    @property
    def covered(self) -> tuple[datetime, datetime]:
        """The part of the range the collected traces stand for: all of it unless the cap cut
        it, then from the first to the last start collected."""
        if not self.capped:
            return self.start, self.end
        starts = [t.started_at for t in self.traces if t.started_at is not None]
        return min(starts, default=self.end), max(starts, default=self.end)


async def collect(
    client: TraceSource,
    project_id: str,
    start: datetime,
    end: datetime,
    cap: int = CAP,
    on_progress: Callable[[Collected], object] | None = None,
    every: int = 500,
) -> Collected:
    """The range's traces, page after page; `on_progress` is called each `every` traces (a page
    of the usual size) with what is collected so far."""
    collected = Collected(start, end)
    async for trace in client.iter_traces(project_id, start=start, end=end):
        collected.traces.append(trace)
        count = len(collected.traces)
        if count >= cap:
            collected.capped = True
            break
        if on_progress is not None and count % every == 0:
            on_progress(collected)
    return collected
