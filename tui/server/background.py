"""The service's background work: the one place where periodic tasks and long-running workers
are registered, started and stopped (by the app's lifespan).

Periodic tasks: checkpoints of the write-ahead log, the text index (store/texts.py), forgetting
Idempotency-Keys, the retention sweep, and alert evaluation (every `--alert-interval` seconds). Workers: the webhook delivery
worker (alerts/delivery.py), a task of the event loop that sends over the network and waits on
nothing else.

Replicas on one database (PostgreSQL) share the rounds that must run once, not once per
replica: alert evaluation, the retention sweep and the clean-ups are `leased`. A leased task
runs its round only while this replica holds the task's lease (a row with an expiry,
ReplicaStore.take_lease), taken before the round and renewed after it, LEASE_TTLS periods
long. The others look every 1/LEASE_POLLS of a period, so when the holder dies (kill -9,
mid-round) its lease expires and another replica takes the task over: the next round runs
at most about half a period plus a poll later than it was due (a round cut short by the kill
is not stored: record_round is one transaction). A round runs at most once a period on the
holder. A stop gives up the replica's leases, so another takes them at its next poll. With
SQLite one process holds every lease, through the same code. Two rounds that overlap anyway (a
round longer than the lease) are still safe: record_round stores a change only from the state
the round started from.

A task is a blocking round run every `period_s` seconds in a worker thread, so no round, however
slow its SQLite work, ever holds up the event loop that answers requests. A round that raises is
logged by exception type only (a message could carry a key or a prompt) and the task carries on
at its next period. Stopping wakes every task and waits for a round in progress to end, up to
`stop_timeout_s`; a round still running after that is abandoned to its thread (threads cannot be
interrupted) and its task cancelled, so shutdown never hangs on it. Rounds run in daemon threads
of their own, not in the event loop's default executor, whose threads the loop's shutdown joins:
an abandoned round there would hold up the service's exit for as long as it lasts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from tui.server.alerts.service import Alerts
from tui.server.store.protocol import TraceStore
from tui.server.store.rows import now_ms
from tui.server.store.texts import INDEX_BATCH, INDEX_PERIOD_S
from tui.server.threads import in_daemon_thread

log = logging.getLogger("tracetui.server")

IDEMPOTENCY_TTL_MS = 24 * 3_600_000  # how long an Idempotency-Key's first answer is replayed
CHECKPOINT_PERIOD_S = 0.5  # how often the write-ahead log is copied into the database
RETENTION_PERIOD_S = 600.0  # how often expired traces are swept (reads hide them meanwhile)
REQUEST_COUNTS_PERIOD_S = 60.0  # how often windows of shared request counts are dropped
LEASE_TTLS = 1.5  # a lease lasts this many periods of its task past its last renewal
LEASE_POLLS = 10  # how often a period a replica that does not hold a lease looks at it
RELEASE_S = 2.0  # a stop waits this long for its leases to be given up (they expire anyway)
ALERT_HISTORY_MS = 90 * 86_400_000  # state changes and attempts listed by .../events
FINISHED_WEBHOOKS_MS = 7 * 86_400_000  # delivered or given-up webhooks (and their bodies)


@dataclass(frozen=True)
class PeriodicTask:
    """`round` (blocking) every `period_s` seconds, the first time as the service starts."""

    name: str
    period_s: float
    round: Callable[[], object]


class Worker(Protocol):
    """Long-running background work with its own loop, started and stopped with the service."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


def new_replica_id() -> str:
    """This service's name among the replicas sharing its store: host, process and a random
    part (a process id is reused after a restart)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


def default_tasks(
    store: TraceStore,
    clock: Callable[[], int] = now_ms,
    alerts: Alerts | None = None,
    replica: str | None = None,
) -> list[PeriodicTask]:
    """Every periodic task the service runs; register new ones here. Those that must run once
    across replicas hold a lease under `replica` (default: the alerts' replica, else a new
    id)."""
    if replica is None:
        replica = alerts.replica if alerts is not None else new_replica_id()
    tasks = [
        checkpoint_log(store),
        index_texts(store),
        leased(forget_old_responses(store, clock), store, replica),
        leased(expire_old_traces(store, clock), store, replica),
    ]
    if alerts is not None:
        tasks.append(leased(forget_alert_history(store, clock), store, replica))
        if alerts.interval_s:
            tasks.append(leased(evaluate_alerts(alerts, alerts.interval_s), store, replica))
    if store.is_shared():  # the only store the rate limiters count in
        tasks.append(forget_request_counts(store))
    return tasks


class LeasedRound:
    """A task's round run only while `holder` holds the task's lease (see the module's
    docstring), at most once every `period_s`. Called every period_s / LEASE_POLLS."""

    def __init__(
        self,
        store: TraceStore,
        holder: str,
        task: PeriodicTask,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.holder = holder
        self.task = task
        self.ttl_ms = max(1, int(task.period_s * LEASE_TTLS * 1000))
        self.monotonic = monotonic
        self.last_round: float | None = None  # when this replica's last round started
        self.rounds = 0  # rounds run here (tests count them)

    def __call__(self) -> None:
        now = self.monotonic()
        if self.last_round is not None and now - self.last_round < self.task.period_s:
            return  # this replica ran the round this period (and holds the lease meanwhile)
        if not self.store.take_lease(self.task.name, self.holder, self.ttl_ms):
            return  # another replica holds it
        self.last_round = now
        self.rounds += 1
        try:
            self.task.round()
        finally:
            # Renewed after the round too: a round longer than half a period keeps its lease.
            with contextlib.suppress(Exception):
                self.store.take_lease(self.task.name, self.holder, self.ttl_ms)

    def release(self) -> None:
        """Give the lease up (the service stops): another replica takes it at its next poll."""
        self.store.release_lease(self.task.name, self.holder)


def leased(task: PeriodicTask, store: TraceStore, holder: str) -> PeriodicTask:
    """`task` run once a period across every replica sharing `store` (see LeasedRound)."""
    return PeriodicTask(task.name, task.period_s / LEASE_POLLS, LeasedRound(store, holder, task))


def index_texts(store: TraceStore, period_s: float = INDEX_PERIOD_S) -> PeriodicTask:
    """The texts ingest left waiting moved into the text index (store/texts.py), all of them
    each round, INDEX_BATCH per transaction. Not leased: every replica indexes (each text is
    claimed by one), so the bound holds while any replica runs. Not at a lower priority
    either: the ingest workers are, and the bound holds when they keep the CPU busy."""

    def index() -> None:
        while store.index_texts(INDEX_BATCH) >= INDEX_BATCH:
            pass

    return PeriodicTask("index-texts", period_s, index)


def forget_request_counts(
    store: TraceStore, period_s: float = REQUEST_COUNTS_PERIOD_S, keep_ms: int = 3_600_000
) -> PeriodicTask:
    """Drop the shared request counts of windows over an hour old (ratelimit.SharedRateLimiter
    writes a row per key and window): the table holds only the windows in use. Any replica
    may: deleting what another already deleted is nothing."""

    def forget() -> None:
        store.forget_request_counts(int(time.time() * 1000) - keep_ms)

    return PeriodicTask("forget-request-counts", period_s, forget)


def forget_alert_history(
    store: TraceStore, clock: Callable[[], int] = now_ms, period_s: float = 3600.0
) -> PeriodicTask:
    """Keep an alert's history for ALERT_HISTORY_MS and finished webhooks for a week: without
    this, both tables grow by a row per state change and per attempt, for ever."""

    def forget() -> None:
        now = clock()
        store.forget_alert_history(now - ALERT_HISTORY_MS, now - FINISHED_WEBHOOKS_MS)

    return PeriodicTask("forget-alert-history", period_s, forget)


def evaluate_alerts(alerts: Alerts, period_s: float) -> PeriodicTask:
    """An evaluation round of every alert every `period_s` seconds (`--alert-interval`). A
    round reads windows of traces by index and writes in one short transaction; its webhooks
    go to the delivery worker, so a slow receiver never slows the next round."""

    def evaluate() -> None:
        lower_priority()
        alerts.evaluate()

    return PeriodicTask("evaluate-alerts", period_s, evaluate)


def lower_priority(niceness: int = 10) -> None:
    """Make the calling thread yield the CPU to the service's requests (Linux, where a thread
    has a niceness of its own: each round runs in a thread of its own). Elsewhere, nothing:
    the call would change the whole process's, or another process's."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), niceness)


def checkpoint_log(store: TraceStore, period_s: float = CHECKPOINT_PERIOD_S) -> PeriodicTask:
    """Copy the write-ahead log into the database every `period_s`, beside the writers, and
    truncate a big log once a burst is over (Store.checkpoint): the ingest worker processes
    commit without checkpointing (Store.opener), as a checkpoint syncs the disk twice and held
    up the worker whose commit ran it (50,000 spans: 2.4-3.5 -> 2.0-2.6 s). The service's own
    connections (the writer thread, with no workers) still checkpoint at 32 MiB, mostly
    finding it done. A round with nothing new to copy costs a look at the log's header."""

    def checkpoint() -> None:
        store.checkpoint()

    return PeriodicTask("checkpoint-log", period_s, checkpoint)


def expire_old_traces(
    store: TraceStore, clock: Callable[[], int] = now_ms, period_s: float = RETENTION_PERIOD_S
) -> PeriodicTask:
    """Delete traces older than their project's retention_days. The store deletes in short
    transactions of a few hundred traces, and a round stops after a bounded number of them
    (the next round takes the rest), so the ingest writer never waits long for the lock."""

    def expire() -> None:
        store.expire(clock())

    return PeriodicTask("expire-old-traces", period_s, expire)


def forget_old_responses(
    store: TraceStore, clock: Callable[[], int] = now_ms, period_s: float = 3600.0
) -> PeriodicTask:
    """Drop remembered Idempotency-Key answers older than a day: without this the table grows
    by one row per keyed create, for ever. `clock` gives epoch ms (tests move it)."""

    def forget() -> None:
        store.forget_responses(created_before=clock() - IDEMPOTENCY_TTL_MS)

    return PeriodicTask("forget-idempotency-keys", period_s, forget)


class Background:
    """Runs its tasks between `start` and `stop`, both called from the service's event loop."""

    def __init__(
        self,
        tasks: Iterable[PeriodicTask] = (),
        stop_timeout_s: float = 5.0,
        workers: Iterable[Worker] = (),
    ) -> None:
        self.tasks: Sequence[PeriodicTask] = tuple(tasks)
        self.workers: Sequence[Worker] = tuple(workers)
        self.stop_timeout_s = stop_timeout_s
        self._running: dict[str, asyncio.Task[None]] = {}
        self._stopping = asyncio.Event()

    def running(self) -> list[str]:
        """The names of the periodic tasks whose loop has not ended."""
        return [name for name, task in self._running.items() if not task.done()]

    async def start(self) -> None:
        self._stopping = asyncio.Event()  # bound to the loop that runs the service
        for worker in self.workers:
            await worker.start()
        for task in self.tasks:
            self._running[task.name] = asyncio.create_task(self._loop(task), name=task.name)

    async def stop(self) -> None:
        for worker in self.workers:
            await worker.stop()
        self._stopping.set()
        tasks = list(self._running.values())
        if tasks:
            _, stuck = await asyncio.wait(tasks, timeout=self.stop_timeout_s)
            for task in stuck:
                log.warning(
                    "background task %s still in a round after %g s; abandoned",
                    task.get_name(),
                    self.stop_timeout_s,
                )
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        await self._release_leases()

    async def _release_leases(self) -> None:
        """Give up the leases of leased tasks that ran here, within RELEASE_S in all."""
        held = [
            task.round
            for task in self.tasks
            if isinstance(task.round, LeasedRound) and task.round.rounds
        ]
        if not held:
            return

        def release_all() -> None:
            for leased_round in held:
                with contextlib.suppress(Exception):
                    leased_round.release()

        with contextlib.suppress(Exception):
            await asyncio.wait_for(in_daemon_thread(release_all, "release-leases"), RELEASE_S)

    async def _loop(self, task: PeriodicTask) -> None:
        while not self._stopping.is_set():
            try:
                await in_daemon_thread(task.round, task.name)
            except Exception as error:
                # By type only: the message of an SQLite or HTTP error can quote what it handled.
                log.warning(
                    "background task %s: round failed (%s); next in %g s",
                    task.name,
                    type(error).__name__,
                    task.period_s,
                )
            # Sleep out the period, or less if stop() is called meanwhile.
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), timeout=task.period_s)
