"""How an evaluation round shares its time between projects, so that one project's many alerts
cannot hold up another's.

A round's work comes in windows: the alerts of a project that share a period share one read
of their window (evaluator.Evaluator). A project's alerts of many periods cost a read each; its
alerts of one period, however many, cost one. The windows are taken one at a time, always the
next of the project that has had the least time this round (ties: the one that has had fewest
windows, then the first in the round's order). So every project's first window is read before
any project's second; a project whose alerts share one period is done in the round's first
pass, however many windows its neighbour has; and the time left is shared evenly between the
projects that still have windows to read.

A round with a budget (evaluator.ROUND_SHARE of the evaluation interval) takes no new window
once it has run that long and every project has had one. A project cut short resumes at the
next round where it stopped, so each of its windows is read in turn: its alerts are evaluated
less often than every round, the other projects' alerts every round.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence


class FairRound:
    """One round's order of windows (project id, period in ms), as `iter` gives them; the
    time between one and the next is the first's cost. `stop` drops the rest of a project's
    windows from this round (its evaluation failed)."""

    def __init__(
        self,
        shares: FairShares,
        windows: Mapping[str, Sequence[int]],
        budget_s: float | None,
    ) -> None:
        self.shares = shares
        self.budget_s = budget_s
        self.queues = {
            project: deque(resumed(sorted(set(periods)), shares.resume.get(project)))
            for project, periods in windows.items()
            if periods
        }
        self.spent = dict.fromkeys(self.queues, 0.0)
        self.taken = dict.fromkeys(self.queues, 0)
        self.order = {project: n for n, project in enumerate(self.queues)}
        self.left: list[tuple[str, int]] = []  # the windows left for a later round

    def stop(self, project_id: str) -> None:
        """Read no more of this project's windows this round; the next round starts after the
        one that failed, so that one bad window does not keep the others from being read."""
        self.shares.forget(project_id)
        queue = self.queues.pop(project_id, None)
        if queue:
            self.shares.resume[project_id] = queue[0]
            self.left += [(project_id, period) for period in queue]

    def __iter__(self) -> Iterator[tuple[str, int]]:
        clock = self.shares.clock
        started = clock()
        try:
            while self.queues:
                project = min(
                    self.queues, key=lambda p: (self.spent[p], self.taken[p], self.order[p])
                )
                over = self.budget_s is not None and clock() - started >= self.budget_s
                if over and self.taken[project]:
                    break  # every project left has had a window: the rest waits
                queue = self.queues[project]
                period = queue.popleft()
                if not queue:
                    del self.queues[project]
                    self.shares.forget(project)
                began = clock()
                yield project, period
                self.spent[project] += clock() - began
                self.taken[project] += 1
        finally:
            for project, queue in self.queues.items():
                self.shares.resume[project] = queue[0]
                self.left += [(project, period) for period in queue]
            self.queues = {}


class FairShares:
    """Where each project cut short in the last round resumes, from round to round."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self.clock = clock
        self.resume: dict[str, int] = {}  # by project: the period of its first window next round

    def round(self, windows: Mapping[str, Sequence[int]], budget_s: float | None) -> FairRound:
        """The order of this round's `windows` (each project's periods), within `budget_s`
        seconds (None: every window)."""
        for gone in set(self.resume) - set(windows):
            del self.resume[gone]
        return FairRound(self, windows, budget_s)

    def forget(self, project_id: str) -> None:
        self.resume.pop(project_id, None)


def resumed(periods: list[int], first: int | None) -> list[int]:
    """`periods` (sorted) from `first` on, then those before it: a round resumes a project
    where the last one stopped, whatever alerts came or went meanwhile."""
    if first is None:
        return periods
    return [p for p in periods if p >= first] + [p for p in periods if p < first]
