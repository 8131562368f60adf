"""What the service holds for alerts (app.state.alerts): the evaluator, the delivery worker,
and the periodic task that runs evaluation rounds.

Tests reach it as `LocalService.alerts`: `evaluate()` runs a round at once (with the service's
clock, which tests move), of every alert (a round off the schedule has no time budget); `wake()`
has the worker look at the outbox now.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from tui.server.alerts.delivery import STANDALONE, DeliveryWorker
from tui.server.alerts.evaluator import ROUND_SHARE, Evaluator, RoundResult
from tui.server.alerts.targets import Resolver, system_resolver
from tui.server.config import ServerConfig
from tui.server.store.protocol import TraceStore


class Alerts:
    """Evaluation every `interval_s` seconds (None: only when `evaluate` is called) and the
    delivery of the webhooks it makes. `replica` names this service among those sharing its
    store: the webhooks it attempts are claimed under that name."""

    def __init__(
        self,
        store: TraceStore,
        clock: Callable[[], int],
        *,
        interval_s: float | None,
        allow_private: bool,
        timeout_s: float,
        resolve: Resolver = system_resolver,
        wall: Callable[[], float] = time.time,
        replica: str = STANDALONE,
        most_per_project: int | None = None,
    ) -> None:
        self.store = store
        self.most_per_project = most_per_project  # alerts one project may have (None: any)
        self.replica = replica
        self.interval_s = interval_s
        self.allow_private = allow_private
        self.resolve = resolve  # also what alert creation checks new webhook targets with
        self.delivery = DeliveryWorker(
            store, clock, allow_private, resolve, timeout_s=timeout_s, wall=wall, holder=replica
        )
        # A round on a schedule leaves what it has no time for to the next (evaluator.py).
        budget_s = ROUND_SHARE * interval_s if interval_s else None
        self.evaluator = Evaluator(store, clock, on_webhooks=self.delivery.wake, budget_s=budget_s)

    @classmethod
    def configured(
        cls,
        store: TraceStore,
        clock: Callable[[], int],
        config: ServerConfig,
        resolve: Resolver,
        replica: str,
    ) -> Alerts:
        """The service's alerts as `config` says: evaluated every alert_interval_s seconds (0:
        only when asked), webhooks to private addresses if allowed, each attempt timed out, at
        most alerts_per_project alerts in a project."""
        return cls(
            store,
            clock,
            interval_s=config.alert_interval_s or None,
            allow_private=config.allow_private_webhooks,
            resolve=resolve,
            timeout_s=config.webhook_timeout_s,
            replica=replica,
            most_per_project=config.alerts_per_project,
        )

    def evaluate(self) -> RoundResult:
        """One evaluation round now (blocking; from any thread but the event loop's)."""
        return self.evaluator.round()

    def wake(self) -> None:
        """Have the delivery worker look at the outbox now (from any thread)."""
        self.delivery.wake()

    async def start(self) -> None:
        await self.delivery.start()

    async def stop(self) -> None:
        await self.delivery.stop()
