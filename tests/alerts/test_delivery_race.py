"""The webhook worker never starts a delivery twice from a stale read of the outbox: an
attempt that finishes while the outbox is being read (its row read as still due, then its id
leaving the in-flight set) is not attempted again. This happened once in a full `make test`
(two `attempt: 1` records of one refused webhook); here the interleaving is forced."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

from tui.server.alerts.delivery import DeliveryWorker
from tui.server.store.alert_rows import AlertRow, AlertSecretRow, DeliveryRow

ALERT = AlertRow("alert_1", "p", "Slow", "latency_ms_5m", "gt", 1.0, "http://127.0.0.1:9/x", 0)
SECRET = AlertSecretRow("alert_1", "whsec_" + "A" * 32)


class RacingOutbox:
    """One pending delivery. The second read of the outbox lets the running attempt record
    itself, then returns what it read before that (a stale row) a moment later."""

    def __init__(self) -> None:
        self.row = DeliveryRow("msg_1", "alert_1", "alert.firing", "{}", 0, next_attempt_at=0)
        self.reads = 0
        self.recorded: list[int] = []
        self.may_record = threading.Event()
        self.in_flight: Callable[[], int] = lambda: 1  # the worker's, once it exists

    def due_deliveries(self, now: int, limit: int, holder: str | None = None) -> list[DeliveryRow]:
        self.reads += 1
        rows = [self.row] if self.row.status == "pending" else []
        if self.reads == 2:
            # The attempt records itself and leaves the in-flight set while this read runs.
            self.may_record.set()
            until(lambda: bool(self.recorded) and self.in_flight() == 0)
        return rows

    def claim_deliveries(
        self, delivery_ids: list[str], holder: str, now: int, until: int
    ) -> list[DeliveryRow]:
        """One replica: the rows asked for that are still pending are its own."""
        return [self.row] if self.row.id in delivery_ids and self.row.status == "pending" else []

    def release_claims(self, holder: str) -> int:
        return 0

    def record_attempt(
        self, delivery_id: str, event: Any, next_at: int | None, status: str
    ) -> None:
        if not self.may_record.wait(5):
            raise AssertionError("the second read never came")
        self.recorded.append(event.attempt)
        self.row = self.row._replace(attempts=event.attempt, status=status, next_attempt_at=next_at)

    def get_alert(self, alert_id: str) -> AlertRow:
        return ALERT

    def alert_secret(self, alert_id: str) -> AlertSecretRow:
        return SECRET


def until(condition: Callable[[], bool], seconds: float = 30.0) -> None:
    """Wait in this thread until `condition` holds; fail after `seconds`."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.005)


async def until_async(condition: Callable[[], bool], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.005)


async def test_an_attempt_finishing_during_a_read_is_not_started_again() -> None:
    outbox = RacingOutbox()
    worker = DeliveryWorker(outbox, clock=lambda: 1, allow_private=False)  # type: ignore[arg-type]
    outbox.in_flight = worker.in_flight
    await worker.start()
    try:
        # The first read has started the attempt (refused: loopback), which waits to record.
        await until_async(lambda: worker.in_flight() > 0)
        worker.wake()  # the second read, while the attempt waits to record itself
        await until_async(lambda: outbox.reads >= 3 and not worker.in_flight())
    finally:
        await worker.stop()
    assert outbox.recorded == [1]  # refused is final: one attempt, never a second
