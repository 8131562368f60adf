"""Running the local service: in a background thread (demo, tests) or in the foreground (serve)."""

from __future__ import annotations

import contextlib
import faulthandler
import logging
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import Protocol

import uvicorn

from tui.server.alerts.service import Alerts
from tui.server.alerts.targets import Resolver, system_resolver
from tui.server.api_keys import new_api_key
from tui.server.app import create_app
from tui.server.background import PeriodicTask
from tui.server.config import IN_PROCESS, LOOPBACK, ServerConfig
from tui.server.http.limits import bounded_http_protocol
from tui.server.ingest.processes import IngestProcesses
from tui.server.store.errors import SchemaTooNew, StoreUnreachable
from tui.server.store.opening import open_store
from tui.server.store.protocol import TraceStore
from tui.server.store.rows import now_ms
from tui.server.store.url import redacted


class StoreKeys(Protocol):
    """The keys of a database filled before serving (the demo's): printed at start."""

    @property
    def workspace(self) -> str: ...

    @property
    def projects(self) -> Mapping[str, str]: ...


# Opens a database that comes with its keys (`serve --demo`), instead of the --db one.
OpenedStore = Callable[[], tuple[TraceStore, StoreKeys]]


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening socket; port 0 picks a free port, which the caller reads back."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto must be IPPROTO_TCP: asyncio only sets TCP_NODELAY on accepted sockets that say so,
    # and without it every keep-alive response waits 40 ms for a delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    return sock


# Stopping: how long the requests in hand may take to finish before the ingest workers are
# killed, then how long the answers to those left take, then how long uvicorn gets once told to
# give up on the requests still open. Their sum keeps a stop under 10 s, the time docker stop
# gives a service before it kills it (systemd gives 90 s).
REQUESTS_GRACE_S = 4.0
ANSWERS_S = 3.0
FORCED_S = 1.5
# `serve` ends this long after Ctrl-C or SIGTERM, whatever still holds it: after the stop above
# come the store's close and the interpreter's exit, which waits for threads and processes it
# cannot bound (concurrent.futures joins its executors' threads, multiprocessing its children);
# past this deadline their stacks are written to stderr and the process ends at once.
STOP_DEADLINE_S = 10.0


class QueryHidden(logging.Filter):
    """An access log line without the request's query string: a key pasted into a URL
    (`?cursor=...`, `?api_key=...`) stays out of the log."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and len(record.args) == 5:
            client, method, path, version, status = record.args
            record.args = (client, method, str(path).split("?", 1)[0], version, status)
        return True


QUERY_HIDDEN = QueryHidden()  # one instance: adding it again is a no-op


@dataclass
class LocalService:
    """The service in a daemon thread, as `config` says (by default IN_PROCESS: a free loopback
    port, alerts evaluated only when `alerts.evaluate()` is called); use as a context manager.

    `tasks` replaces the background tasks (None: background.default_tasks); they start with the
    service and stop with it (uvicorn runs the app's lifespan). `clock` (epoch ms) is what
    retention, ingest and alerts read the time from; `resolve` looks up webhook host names.
    """

    store: TraceStore
    config: ServerConfig = IN_PROCESS
    tasks: Sequence[PeriodicTask] | None = None
    clock: Callable[[], int] = now_ms
    resolve: Resolver = system_resolver
    port: int = field(init=False)  # the port bound: config.port, or the free one picked for 0

    def __post_init__(self) -> None:
        self.app = create_app(
            self.store, self.config, tasks=self.tasks, clock=self.clock, resolve=self.resolve
        )
        self._socket = bind_socket(self.host, self.config.port)
        self.port = self._socket.getsockname()[1]
        access_log = self.config.access_log
        config = uvicorn.Config(
            self.app,
            log_level="info" if access_log else "warning",
            access_log=access_log,
            lifespan="on",  # startup fails loudly; shutdown stops the background tasks
            http=bounded_http_protocol(self.config),  # head size and time, idle, connections
        )
        if access_log:
            logging.getLogger("uvicorn.access").addFilter(QUERY_HIDDEN)
        self._server = uvicorn.Server(config)
        # Set when uvicorn's thread has finished. Waiting on an Event, not on Thread.join: a
        # Ctrl-C that lands inside join() can leave the thread marked stopped while it still
        # runs (CPython gh-90882), and the socket would be closed under it.
        self._done = threading.Event()
        self._thread = threading.Thread(
            target=self._run,
            daemon=True,
            name="tracetui-local-service",
        )

    @property
    def host(self) -> str:
        return self.config.host

    def _run(self) -> None:
        try:
            self._server.run(sockets=[self._socket])
        finally:
            self._done.set()

    @property
    def alerts(self) -> Alerts:
        """The evaluator and the webhook worker: `alerts.evaluate()` runs a round now."""
        alerts: Alerts = self.app.state.alerts
        return alerts

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"

    def start(self, timeout: float = 10.0) -> LocalService:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if self._done.is_set() or time.monotonic() > deadline:
                raise RuntimeError("the local service did not start")
            time.sleep(0.005)
        return self

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the service has stopped (at most `timeout` seconds); True if it has."""
        deadline = None if timeout is None else time.monotonic() + timeout
        # Short waits, so that Ctrl-C reaches a foreground `tracetui serve` promptly.
        while not self._done.is_set():
            left = 0.5 if deadline is None else min(0.5, deadline - time.monotonic())
            if left <= 0:
                return False
            self._done.wait(left)
        return True

    def stop(self) -> None:
        """Stop serving in under 10 seconds, whatever the ingest workers do. The requests in
        hand get REQUESTS_GRACE_S seconds to finish; then the ingest workers are killed
        (a stopped or stuck worker would hold its request for ever; the requests whose bodies
        they held answer 503 with Retry-After, which exporters retry) and, if a request still
        holds on after that, uvicorn is told to give up on it."""
        self._server.should_exit = True
        started = self._thread.ident is not None  # then wait for uvicorn to let the socket go
        if started and not self._done.wait(REQUESTS_GRACE_S):
            self._ingest_processes.stop(grace_s=0)
            if not self._done.wait(ANSWERS_S):
                self._server.force_exit = True  # its lifespan's shutdown is skipped
                self._done.wait(FORCED_S)
        # Whatever the lifespan did not end: no worker outlives the service's stop.
        self._ingest_processes.stop(grace_s=0)
        self._socket.close()

    @property
    def _ingest_processes(self) -> IngestProcesses:
        processes: IngestProcesses = self.app.state.ingest.processes
        return processes

    def __enter__(self) -> LocalService:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def print_otlp_lines(service: LocalService, key: str | None, db: str | None) -> None:
    """The two lines to paste into an instrumented app's environment, and the app's own. `db`
    is the database as the hint to make a key names it, None for a URL with a password (never
    printed, not even hidden: the hint points at TRACETUI_DB instead)."""
    host = service.host
    if host in ("0.0.0.0", "::", ""):  # noqa: S104 - every interface: loopback reaches it
        host = LOOPBACK
    root = f"http://{f'[{host}]' if ':' in host else host}:{service.port}"
    shown = key or "<KEY>"
    tracetui = runnable_command()
    print("  send your app's traces here (OTLP/HTTP): paste these two lines into its shell,")
    print(f"    export OTEL_EXPORTER_OTLP_ENDPOINT={root}")
    print(f'    export OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer {shown}"')
    if key is None:
        if db is None:
            print(
                f"  with a key from: {tracetui} keys create --workspace  (its URL in TRACETUI_DB)"
            )
        else:
            print(f"  with a key from: {tracetui} keys create --workspace --db {db}")
    print(
        f"  and browse them: TRACETUI_BASE_URL={root}/v1 TRACETUI_API_KEY={shown} {tracetui}",
        flush=True,
    )


def runnable_command() -> str:
    """How to run tracetui from another shell, as the banner prints it: `tracetui` when that is
    on PATH and is this one, else the path of the script that was run (a virtualenv's bin, not
    activated), else `python -m tui` with this interpreter."""
    import shlex
    import shutil

    script = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    on_path = shutil.which("tracetui")
    if on_path and (not script or os.path.realpath(on_path) == os.path.realpath(script)):
        return "tracetui"
    if os.path.basename(script) == "tracetui" and os.access(script, os.X_OK):
        return shlex.quote(script)
    return f"{shlex.quote(sys.executable)} -m tui"


def stop_on_sigterm() -> None:
    """SIGTERM (kill, docker stop, systemd) stops the service as Ctrl-C does: what the ingest
    writer holds is written and the ingest worker processes end, instead of dying where it
    stands."""

    def interrupt(signum: int, frame: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second one must not cut the stop short
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)


def end_within(seconds: float, code: int = 1) -> None:
    """End the process `seconds` from now if it has not ended by itself: write every thread's
    stack to stderr (what held it) and exit with `code` at once, without the interpreter's
    exit, which would wait for them. Nothing acknowledged is lost: an ingest batch is answered
    only once committed, and a webhook claimed but not sent is sent by the next service once
    its claim expires (a webhook sent but not yet recorded is sent again, under the same
    webhook-id: at least once)."""

    def watch() -> None:
        time.sleep(seconds)
        with contextlib.suppress(Exception):  # stderr closed or gone: end all the same
            print(
                f"tracetui: still stopping {seconds:g} s after it was asked to; ending now. "
                "Its threads:",
                file=sys.stderr,
                flush=True,
            )
            faulthandler.dump_traceback(sys.stderr, all_threads=True)
        os._exit(code)

    threading.Thread(target=watch, name="tracetui-stop-deadline", daemon=True).start()


def stacks_on_sigusr1() -> None:
    """SIGUSR1 writes every thread's stack to stderr and the service goes on: what a service
    that does not stop, or answers slowly, is doing (file and function names only: no value
    of a request, key or span is printed)."""
    if hasattr(signal, "SIGUSR1"):
        faulthandler.register(signal.SIGUSR1, all_threads=True)


def print_banner(
    service: LocalService,
    store: TraceStore,
    config: ServerConfig,
    keys: StoreKeys | None,
    new_key: str | None,
) -> None:
    """What serve prints as it starts: where it is, its keys (the demo's), how to send traces
    to it and browse them, and how it runs."""
    print(f"tracetui local service on {service.base_url}  (database: {store.location})", flush=True)
    if keys is not None:
        print(f"  workspace key: {keys.workspace}")
        for project_id, key in keys.projects.items():
            print(f"  {project_id:<14} key: {key}")
        print(
            f'  try: curl -H "Authorization: Bearer {keys.workspace}" {service.base_url}/projects',
            flush=True,
        )
    secret = redacted(config.database) != config.database  # a URL with a password
    print_otlp_lines(
        service, keys.workspace if keys else new_key, None if secret else store.location
    )
    if config.host not in (LOOPBACK, "localhost", "::1"):
        print(f"  warning: listening on {config.host}, reachable from other machines", flush=True)
    if config.alert_interval_s:
        private = " (private addresses allowed)" if config.allow_private_webhooks else ""
        print(f"  alerts evaluated every {config.alert_interval_s:g} s; webhooks signed{private}")
    else:
        print("  alerts not evaluated (--alert-interval 0)")
    if workers := config.workers:
        plural = "es" if workers > 1 else ""
        print(f"  OTLP bodies ingested by {workers} worker process{plural}", flush=True)
    else:
        print("  OTLP bodies ingested in the service's threads (--ingest-processes 0)", flush=True)


def serve(config: ServerConfig, opened: OpenedStore | None = None) -> int:
    """`tracetui serve`: run in the foreground until interrupted, over `config.database` (or
    what `opened` opens)."""
    config = replace(config, ingest_processes=config.workers)  # what is printed is what runs
    try:
        store, keys = opened() if opened else (open_store(config.database), None)
    except (SchemaTooNew, StoreUnreachable) as error:
        # One line, naming the database without its password (StoreUnreachable's message).
        print(f"tracetui: {error}", file=sys.stderr)
        return 2
    new_key = None
    if keys is None and not store.has_workspace_key():
        # A new database needs one key to be usable at all; it is shown this once only.
        new_key = new_api_key("ws")
        store.add_key(new_key, None, "workspace key")
        print(f"  new workspace key (shown once, store it now): {new_key}")
    service = LocalService(store, config)
    # Ctrl-C and SIGTERM are caught from before the first line printed: a user who stops the
    # service as soon as it says where it is gets the same clean stop as later.
    stop_on_sigterm()
    stacks_on_sigusr1()
    try:
        print_banner(service, store, config, keys, new_key)
        service.start()
        service.wait()
    except KeyboardInterrupt:
        pass
    finally:
        # The stop is bounded (LocalService.stop): a second Ctrl-C or SIGTERM must not cut it
        # short, which would leave the interpreter's exit waiting on workers that were not ended.
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, signal.SIG_IGN)
        end_within(STOP_DEADLINE_S)
        service.stop()
        store.close()  # a PostgreSQL pool's connections end cleanly, not cut at the exit
    return 0
