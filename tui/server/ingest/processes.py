"""Ingest in worker processes: each decodes, maps and writes a whole body, beside the service.

Decoding and mapping a span is pure Python (~20-40 us each) and so is much of writing it, and
Python runs one thread at a time in a process. Done in the service's own threads (the writer
thread of ingest.writer), ingest and the API took turns: while ingesting at full speed the
trace list's p95 went from 9 to 106 ms, and the writer thread, which lets go of the
interpreter at every row SQLite stores, waited for it again behind the event loop each time.
So a body goes to a worker process that decodes, maps, sums and writes it in one transaction of
its own; the service keeps the HTTP, the key check and the reads. With two workers one decodes
while the other writes (SQLite's write lock takes turns between them: store.sqlite.begin_write).
The request is answered after the worker's commit, so a trace is listable when its request
returns, as with the writer thread.

The pool starts in the background when the service starts (a worker imports protobuf, the store
and the price table: about a second on a small machine): until it is ready, and with
`processes=0`, a body is decoded in a thread and written by the writer thread, so the service
answers at once and needs no pool to be right.

A worker that dies (killed, out of memory) breaks the pool: every request the pool held is
answered 503 with Retry-After (SQLite rolled back whatever was not committed, and a batch sent
again replaces itself, never counts twice: not retried here, in case the body is what killed
the worker). A thread watching the workers notices at once, even with no body coming; it kills
the pool's other workers and starts a new pool, the writer thread serving meanwhile; a body
that comes once the pool is known broken goes to the writer thread at once. (The pool's own
teardown sends the other workers SIGTERM, which they ignore, and waits for them to take their
leave from its queue: for ever, when the dead worker held the queue's lock.)

Workers ignore Ctrl-C and SIGTERM sent to the whole process group (a terminal, systemd): the
service ends them when it stops. stop() lets them finish what they hold for a grace period,
then kills (SIGKILL) those still running, stopped or stuck, and their requests answer 503 with
Retry-After: a stop is bounded whatever the workers do (LocalService.stop bounds the wait for
the requests in hand, see tui/server/run.py). A service that is killed never stops its pool:
each worker watches it and exits with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from typing import NamedTuple

from tui.server.ingest import otlp_json, otlp_proto
from tui.server.ingest.body import PROTOBUF
from tui.server.ingest.conventions import counted_once
from tui.server.ingest.costs import PRICES, PriceBook
from tui.server.ingest.summaries import summarize
from tui.server.ingest.types import Decoded, TooLarge, Unreadable
from tui.server.store.errors import StoreBusy, StoreUnavailable, StoreUnreachable
from tui.server.store.protocol import TraceStore
from tui.server.store.rows import SpanGroup

log = logging.getLogger("tracetui.server")


class WorkerLost(Exception):
    """The worker process holding this body died: nothing of it was stored (or all of it was,
    if it died after its commit: sent again, the spans replace themselves)."""


class Refusals(NamedTuple):
    """What a request is answered once its body is stored: the spans the decoder refused, and
    the first reason (the store refuses none it is given: a trace id is its project's)."""

    spans: int
    reason: str | None


def refusals_of(decoded: Decoded) -> Refusals:
    return Refusals(decoded.rejected, decoded.first_reason)


def decode(media: str, body: bytes, prices: PriceBook, now_ms: int) -> Decoded:
    """Decode `body` of `media` type in this thread, and sum its traces (a new trace's row is
    its batch's sums: the writer only inserts them)."""
    if media == PROTOBUF:
        decoded = otlp_proto.decode(body, prices, now_ms)
    else:
        decoded = otlp_json.decode(body, prices, now_ms)
    # Each model call counted once (conventions.counted_once), before the trace's sums.
    drafts = [replace(draft, spans=counted_once(draft.spans)) for draft in decoded.drafts]
    decoded.drafts = [
        replace(draft, traces=summarize(draft.spans, draft.attributes), attributes=None)
        for draft in drafts
    ]
    return decoded


def groups_of(decoded: Decoded, project_id: str | None) -> list[SpanGroup]:
    """The decoded spans bound for a project key's project, or (None) for the one each
    resource names (a workspace key)."""
    return [
        SpanGroup(
            project_id,
            None if project_id else draft.project_name,
            draft.resource,
            draft.spans,
            draft.traces,
        )
        for draft in decoded.drafts
    ]


# -- in a worker process ------------------------------------------------------------------------

# As the service's background rounds (background.lower_priority). At 5, the trace list's p95
# while ingesting at full speed was 15-19.5 ms (idle: 5-6.5); at 10, 11.7-12.6 ms, with the
# same ingest speed (the workers get every cycle the service leaves).
WORKER_NICENESS = 10
_store: TraceStore | None = None  # the worker's own, on the service's (see worker_store)
_open_store: Callable[[], TraceStore] | None = None  # how to open it (set by start_worker)


def start_worker(open_store: Callable[[], TraceStore]) -> None:
    """Run once by each worker as it starts: it ends with the service, opens the database and
    loads the price table before the first body. Workers run at a lower priority than the
    service: a flood of spans must not slow the reads of someone triaging (nor the service's
    start: the workers load beside it); an idle machine gives them every spare cycle anyway."""
    global _open_store
    for ignored in (signal.SIGINT, signal.SIGTERM):
        signal.signal(ignored, signal.SIG_IGN)
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICENESS)
    threading.Thread(target=_exit_with_parent, name="tracetui-parent", daemon=True).start()
    _open_store = open_store
    # A database that cannot be reached now (a PostgreSQL restarting) is opened by the first
    # body instead: a worker that failed here would break its pool and print a traceback.
    with contextlib.suppress(StoreBusy):
        worker_store()
    PRICES.warm()


def worker_store() -> TraceStore:
    """This worker's store, opened now if its database could not be reached before; raises
    StoreUnavailable (503, retried by the sender) while it still cannot."""
    global _store
    if _store is None:
        assert _open_store is not None, "start_worker says how to open the store"
        try:
            _store = _open_store()
        except StoreUnreachable:
            raise StoreUnavailable("the database cannot be reached for now") from None
    return _store


def _exit_with_parent() -> None:
    """End this worker when the service's process ends, however it ended: a service killed
    (SIGKILL) never shuts its pool down, and a worker waiting on the pool's queue would wait
    for ever (it holds the queue's write end itself)."""
    parent = multiprocessing.parent_process()
    if parent is not None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(0)


class IngestFailed(Exception):
    """A worker's unforeseen error, by its type's name only: plain to send back to the service
    (any exception may not be), and no message that could quote the data it choked on."""


def ingest_in_worker(media: str, body: bytes, now_ms: int, project_id: str | None) -> Refusals:
    """Decode, map and write one body in this worker (one transaction). Raises Unreadable for a
    body that is not OTLP, TooLarge for one that holds too much, StoreBusy when other writers
    held the store too long, IngestFailed for anything else."""
    try:
        return _ingest(media, body, now_ms, project_id)
    except (Unreadable, TooLarge, StoreBusy):
        raise
    except Exception as error:
        log.warning("ingest: a batch failed (%s)", type(error).__name__)
        raise IngestFailed(type(error).__name__) from None


def _ingest(media: str, body: bytes, now_ms: int, project_id: str | None) -> Refusals:
    store = worker_store()
    decoded = decode(media, body, PRICES, now_ms)
    groups = groups_of(decoded, project_id)
    # Workers write in turns under SQLite's write lock, each waiting one tried every
    # millisecond (sqlite.store.begin_write), as every writer of the service does.
    if groups:
        store.ingest([groups])
    return refusals_of(decoded)


def worker_ready() -> bool:
    """A job that returns once a worker is up (start_worker has run in it)."""
    return _open_store is not None


# -- in the service -------------------------------------------------------------------------------

# How long stop() lets the workers finish the bodies they hold and exit before it kills them.
# By then the HTTP server has waited for its requests (LocalService.stop bounds that wait), so
# what is left is a worker that does not end by itself: stopped, or stuck.
STOP_GRACE_S = 2.0
# How long stop() waits for a killed worker to be gone, and for a pool's manager thread to
# notice and end (the interpreter joins that thread as it exits).
REAP_S = 2.0


@dataclass
class Started:
    """A pool's worker processes and manager thread, as started: a pool forgets them once shut
    down, and the workers ignore SIGTERM, so only IngestProcesses can end them for sure."""

    workers: list[multiprocessing.process.BaseProcess]
    manager: threading.Thread | None
    shut_down: bool = False


class IngestProcesses:
    """`processes` worker processes, each writing through a store `open_store` opens; 0 (or no
    opener: a store other processes cannot open) leaves ingest to the service's threads."""

    def __init__(
        self, processes: int = 0, open_store: Callable[[], TraceStore] | None = None
    ) -> None:
        self.processes = processes if open_store else 0
        self.open_store = open_store
        self._pool: ProcessPoolExecutor | None = None  # set once its workers are up
        self._pools: dict[ProcessPoolExecutor, Started] = {}  # every pool not yet ended
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self.bodies = 0  # bodies ingested by worker processes (tests and logs read it)

    @property
    def ready(self) -> bool:
        """True while bodies go to worker processes."""
        return self._pool is not None

    def start(self) -> None:
        """Start the worker processes in the background (returns at once)."""
        if self.processes > 0 and self.open_store is not None:
            threading.Thread(
                target=self._start_pool,
                args=(self.open_store,),
                name="tracetui-ingest-pool",
                daemon=True,
            ).start()

    def _start_pool(self, open_store: Callable[[], TraceStore]) -> None:
        with self._lock:  # a stop() from now on sees this pool and ends it
            if self._stopped.is_set():
                return
            pool = ProcessPoolExecutor(
                self.processes,
                mp_context=multiprocessing.get_context("spawn"),  # fork copies no threads safely
                initializer=functools.partial(start_worker, open_store),
            )
            # One job each: a spawning pool starts a process for each job it cannot give to an
            # idle one, so all of them start here (a quick worker may still take two jobs).
            ups = [pool.submit(worker_ready) for _ in range(self.processes)]
            manager: threading.Thread | None
            manager = pool._executor_manager_thread  # type: ignore[assignment]
            self._pools[pool] = Started(list(pool._processes.values()), manager)
        try:
            for up in ups:  # wait until the workers are up
                up.result()
        except Exception as error:  # no processes here: ingest stays in the service's threads
            if not self._stopped.is_set():
                log.warning("ingest: worker processes did not start (%s)", type(error).__name__)
            self._end([pool], grace_s=0)
            return
        with self._lock:
            if self._stopped.is_set():
                return  # stop() ends it
            self._pool = pool
        threading.Thread(
            target=self._watch, args=(pool,), name="tracetui-ingest-watch", daemon=True
        ).start()

    def _watch(self, pool: ProcessPoolExecutor) -> None:
        """Replace `pool` as soon as one of its workers dies, even while no body is coming:
        its other workers are ended at once, not left waiting for a pool that is broken."""
        with self._lock:
            started = self._pools.get(pool)
        if started is not None:
            multiprocessing.connection.wait([p.sentinel for p in started.workers])
        self._replace(pool)  # a no-op for a pool already replaced or stopped

    def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """Let the workers finish what they hold for up to `grace_s` seconds, then kill those
        still running: the requests whose bodies they held are answered 503 (WorkerLost).
        Returns once they are gone. Safe to call more than once, from any thread."""
        with self._lock:
            self._stopped.set()
            ready, self._pool = self._pool, None
            others = [pool for pool in self._pools if pool is not ready]
        self._end(others, grace_s=0)  # starting, or broken: they hold no body worth waiting for
        self._end([ready] if ready else [], grace_s)

    def _end(self, pools: list[ProcessPoolExecutor], grace_s: float) -> None:
        """Let `pools` finish the bodies they hold for up to `grace_s` seconds, kill the workers
        still running, and wait (boundedly) for them to be gone and for each pool's manager
        thread. Another thread may be ending the same pools: each caller returns once they are
        gone, or after its own bounded waits."""
        with self._lock:
            ending = {pool: self._pools[pool] for pool in pools if pool in self._pools}
            first = [pool for pool, started in ending.items() if not started.shut_down]
            for pool in first:
                ending[pool].shut_down = True
                # Any worker the pool started since (it forgets them all once shut down).
                known = ending[pool].workers
                known += [p for p in (pool._processes or {}).values() if p not in known]
        if grace_s > 0:
            for pool in first:
                pool.shutdown(wait=False)  # queued bodies go on; each worker exits once idle
        workers = [p for started in ending.values() for p in started.workers]
        for worker in _running(workers, grace_s):
            # SIGKILL: workers ignore SIGTERM, and a stopped one every other signal. The pool
            # sees them die and fails the jobs they held (BrokenProcessPool: 503).
            with contextlib.suppress(OSError, ValueError):
                worker.kill()
        if _running(workers, REAP_S):
            log.warning("ingest: a worker process did not end when killed")
        deadline = time.monotonic() + REAP_S
        for started in ending.values():
            # The interpreter joins a pool's manager thread as it exits: it must have ended.
            if started.manager is not None and started.manager.ident is not None:
                started.manager.join(max(0.0, deadline - time.monotonic()))
        for pool, started in ending.items():
            if grace_s <= 0 and pool in first:
                # Only now: asked to shut down while its workers die, a pool may take the
                # shutdown for the cause and never mark itself broken.
                pool.shutdown(wait=False)
            # A body submitted while the pool was failing its jobs may have missed the failure
            # (the pool marks itself broken unlocked): its request must not wait for ever.
            # Only once the manager thread, which sets the jobs' outcomes, has ended.
            if started.manager is None or not started.manager.is_alive():
                for item in list(pool._pending_work_items.values()):
                    with contextlib.suppress(InvalidStateError):
                        item.future.set_exception(BrokenProcessPool("the pool was ended"))
        with self._lock:
            for pool in ending:
                self._pools.pop(pool, None)

    async def ingest(
        self, media: str, body: bytes, now_ms: int, project_id: str | None
    ) -> Refusals | None:
        """Ingest `body` in a worker: the spans it refused, or None when no worker is ready (the caller
        ingests it in the service). Raises Unreadable for a body that is not OTLP, WorkerLost
        if the worker died holding it (or was killed by stop())."""
        pool = self._pool
        if pool is None:
            return None
        try:
            job: Future[Refusals] = pool.submit(ingest_in_worker, media, body, now_ms, project_id)
        except (BrokenProcessPool, RuntimeError):  # broke while idle, or shut down: nothing sent
            self._replace(pool)
            return None
        try:
            refusals = await asyncio.wrap_future(job)
        except BrokenProcessPool:
            self._replace(pool)
            raise WorkerLost("an ingest worker process stopped") from None
        except Exception:
            raise
        except BaseException:  # a signal's exception in the worker, or the job cancelled
            raise WorkerLost("an ingest worker process was interrupted") from None
        self.bodies += 1
        return refusals

    def _replace(self, broken: ProcessPoolExecutor) -> None:
        """Let go of a broken pool (once, whichever of the watcher and the requests saw it
        first), and end it and start another in the background (this may be the event loop)."""
        with self._lock:
            if self._pool is not broken:
                return
            self._pool = None
        log.warning("ingest: a worker process stopped; starting another pool")
        threading.Thread(
            target=self._end_and_restart, args=(broken,), name="tracetui-ingest-pool", daemon=True
        ).start()

    def _end_and_restart(self, broken: ProcessPoolExecutor) -> None:
        # The pool's own teardown signals its other workers with SIGTERM, which they ignore,
        # and then waits for them for ever: they are killed instead (what they hold is lost
        # with the pool anyway, its requests answered 503).
        self._end([broken], grace_s=0)
        if self.open_store is not None:
            self._start_pool(self.open_store)  # unless stopped meanwhile


def _running(
    workers: list[multiprocessing.process.BaseProcess], timeout_s: float
) -> list[multiprocessing.process.BaseProcess]:
    """Those of `workers` still running after waiting up to `timeout_s` seconds for them all to
    exit. Reads their sentinels, never waitpid: the pool's manager thread reaps them."""
    deadline = time.monotonic() + timeout_s
    running = list(workers)
    while running:
        ended = multiprocessing.connection.wait(
            [p.sentinel for p in running], max(0.0, deadline - time.monotonic())
        )
        running = [p for p in running if p.sentinel not in ended]
        if time.monotonic() >= deadline:
            break
    return running
