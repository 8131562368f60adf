"""The service's one configuration: every option of `tracetui serve` with its default, its flag
and its environment variable, written here once.

`ServerConfig.from_sources` builds it from the environment and the command line (a flag wins
over its variable, a variable over the default); the CLI's serve flags are made from `OPTIONS`
by `add_serve_arguments`, and docs/serve.md is `options_table()` (a test keeps them equal). The
config is passed whole: `serve(config)`, `LocalService(store, config)`, `create_app(store,
config)`. What is not configuration (background tasks, the clock, the resolver) travels beside
it as keyword arguments.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

DEFAULT_DB = "tracetui.sqlite3"  # the database file without --db (serve and keys)
MAX_INGEST_PROCESSES = 64
LOOPBACK = "127.0.0.1"


class InvalidOption(ValueError):
    """A value an option does not take; its message says what it takes."""


@dataclass(frozen=True)
class ServerConfig:
    """Every option of the service; see OPTIONS for what each means."""

    # Out of the repr: a PostgreSQL URL may hold a password, and a repr ends up in logs.
    db: str | None = field(default=None, repr=False)
    host: str = LOOPBACK
    port: int = 8000
    rate_limit: int = 1000
    window_s: float = 60.0
    ingest_rate_limit: int = 10_000
    alert_interval_s: float = 60.0
    allow_private_webhooks: bool = False
    webhook_timeout_s: float = 10.0
    ingest_processes: int | None = None
    access_log: bool = True
    max_header_bytes: int = 64 * 1024
    header_timeout_s: float = 10.0
    # Longer than clients keep an idle connection (httpx: 5 s), so that the client is the one
    # to close it and never sends a request on a connection the service is closing.
    idle_timeout_s: float = 15.0
    max_connections: int = 1000
    # What one search (a filtered trace list, sessions, users) may take: http/searches.py.
    query_timeout_s: float = 5.0
    searches_per_key: int = 3
    # A project's keys together: two keys of one project cannot fill the replica's places.
    searches_per_project: int = 3
    # Below the PostgreSQL pool's 10 connections: other requests always find one.
    searches: int = 6
    # Alerts one project may have: one more is refused (routes/alerts.py).
    alerts_per_project: int = 100

    @property
    def database(self) -> str:
        """The database to open: `db` (a SQLite file's path or a PostgreSQL URL), or
        ./tracetui.sqlite3."""
        return self.db or DEFAULT_DB

    @property
    def workers(self) -> int:
        """How many ingest worker processes to run: `ingest_processes`, or one per CPU."""
        if self.ingest_processes is None:
            return default_ingest_processes()
        return self.ingest_processes

    @classmethod
    def from_sources(
        cls, flags: Mapping[str, Any], environ: Mapping[str, str] = os.environ
    ) -> ServerConfig:
        """The defaults, overridden by the environment's TRACETUI_* variables, overridden by
        the flags given (`flags` holds a value per field, None for a flag not given). A bad
        variable raises InvalidOption naming it."""
        changes: dict[str, Any] = {}
        for option in OPTIONS:
            text = environ.get(option.env, "").strip()
            if text:
                try:
                    changes[option.name] = option.parse(text)
                except InvalidOption as error:
                    raise InvalidOption(f"{option.env}={text!r}: {error}") from None
            if flags.get(option.name) is not None:
                changes[option.name] = flags[option.name]
        return replace(cls(), **changes)


# The service started inside another program (the demo, the tests): a free loopback port, no
# access log, ingest in its own threads, alerts evaluated only when asked (Alerts.evaluate).
IN_PROCESS = ServerConfig(port=0, alert_interval_s=0, ingest_processes=0, access_log=False)


def default_ingest_processes() -> int:
    """An ingest worker per CPU, at most four: while one writes (SQLite takes one writer at a
    time) the others decode, and past four they would mostly wait for the write lock. On two
    CPUs, two workers ingested 50,000 spans in 4.9 s against one's 7.5 s, beside the service's
    own process (which runs above them: workers are niced)."""
    try:
        cpus = len(os.sched_getaffinity(0))  # the CPUs this process may use (containers)
    except AttributeError:  # not on every platform
        cpus = os.cpu_count() or 1
    return min(4, max(1, cpus))


def text(value: str) -> str:
    return value


def port_number(value: str) -> int:
    number = whole_number(value)
    if not 0 <= number <= 65535:
        raise InvalidOption("must be from 0 to 65535 (0: any free port)")
    return number


def whole_number(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise InvalidOption(f"{value!r} is not a whole number") from None


def positive_number(value: str) -> int:
    number = whole_number(value)
    if number < 1:
        raise InvalidOption("must be 1 or more")
    return number


def ingest_process_count(value: str) -> int:
    number = whole_number(value)
    if not 0 <= number <= MAX_INGEST_PROCESSES:
        raise InvalidOption(f"must be from 0 to {MAX_INGEST_PROCESSES}")
    return number


def seconds(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise InvalidOption(f"{value!r} is not a number of seconds") from None
    if not number >= 0 or number == float("inf"):
        raise InvalidOption("must be 0 or a positive number of seconds")
    return number


def positive_seconds(value: str) -> float:
    number = seconds(value)
    if number == 0:
        raise InvalidOption("must be a positive number of seconds")
    return number


def yes_or_no(value: str) -> bool:
    lowered = value.lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise InvalidOption(f"{value!r} is not one of 1/0, true/false, yes/no, on/off")


@dataclass(frozen=True)
class Option:
    """How one field of ServerConfig is set: its flag (`--no-x` for a switch that turns a
    default on off), its environment variable, how its text is read, and what it means."""

    name: str
    flag: str
    env: str
    parse: Callable[[str], Any]
    help: str
    metavar: str | None = None
    unset: str = ""  # what a default of None stands for

    @property
    def shown_default(self) -> str:
        return self.unset if self.default is None else str(self.default)

    @property
    def default(self) -> Any:
        return getattr(ServerConfig(), self.name)

    @property
    def switch(self) -> bool:
        """A flag without a value (its presence flips the default)."""
        return self.parse is yes_or_no


OPTIONS: tuple[Option, ...] = (
    Option(
        "db",
        "--db",
        "TRACETUI_DB",
        text,
        "a SQLite database file, or a PostgreSQL URL: postgresql://USER[:PASSWORD]@HOST[:PORT]/DB "
        "or postgresql://USER@/DB?host=/socket/dir (set a password through TRACETUI_DB or "
        "PGPASSWORD, not on the command line; it is never printed)",
        "FILE_OR_URL",
        unset=f"./{DEFAULT_DB} (with --demo: a fresh temporary file)",
    ),
    Option(
        "host",
        "--host",
        "TRACETUI_HOST",
        text,
        "address to bind (anything but loopback is reachable from other machines)",
    ),
    Option("port", "--port", "TRACETUI_PORT", port_number, "port to listen on (0: any free one)"),
    Option(
        "rate_limit",
        "--rate-limit",
        "TRACETUI_RATE_LIMIT",
        positive_number,
        "API requests per rate window per key",
        "N",
    ),
    Option(
        "window_s",
        "--rate-window",
        "TRACETUI_RATE_WINDOW",
        positive_seconds,
        "the rate limits' window, in seconds",
        "SECONDS",
    ),
    Option(
        "ingest_rate_limit",
        "--ingest-rate-limit",
        "TRACETUI_INGEST_RATE_LIMIT",
        positive_number,
        "OTLP export requests per rate window per key, apart from --rate-limit",
        "N",
    ),
    Option(
        "alert_interval_s",
        "--alert-interval",
        "TRACETUI_ALERT_INTERVAL",
        seconds,
        "evaluate every alert this often, in seconds (0: never)",
        "SECONDS",
    ),
    Option(
        "allow_private_webhooks",
        "--allow-private-webhooks",
        "TRACETUI_ALLOW_PRIVATE_WEBHOOKS",
        yes_or_no,
        "let webhooks go to loopback, private and link-local addresses (local use, tests)",
    ),
    Option(
        "webhook_timeout_s",
        "--webhook-timeout",
        "TRACETUI_WEBHOOK_TIMEOUT",
        positive_seconds,
        "how long one webhook attempt may take, in seconds",
        "SECONDS",
    ),
    Option(
        "ingest_processes",
        "--ingest-processes",
        "TRACETUI_INGEST_PROCESSES",
        ingest_process_count,
        "worker processes that decode and write OTLP bodies (0: in the service's own "
        f"threads; at most {MAX_INGEST_PROCESSES})",
        "N",
        unset="one per CPU, at most 4",
    ),
    Option(
        "access_log",
        "--no-access-log",
        "TRACETUI_ACCESS_LOG",
        yes_or_no,
        "a line per request on stdout (the flag turns it off)",
    ),
    Option(
        "max_header_bytes",
        "--max-header-bytes",
        "TRACETUI_MAX_HEADER_BYTES",
        positive_number,
        "largest request line and headers of one request, in bytes; more is answered 431 and "
        "the connection closed",
        "BYTES",
    ),
    Option(
        "header_timeout_s",
        "--header-timeout",
        "TRACETUI_HEADER_TIMEOUT",
        positive_seconds,
        "how long a client may take to send a request's line and headers, from its connection "
        "or its first byte, in seconds; then it is answered 408 and closed",
        "SECONDS",
    ),
    Option(
        "idle_timeout_s",
        "--idle-timeout",
        "TRACETUI_IDLE_TIMEOUT",
        positive_seconds,
        "how long a connection may wait for its next request after an answer, in seconds",
        "SECONDS",
    ),
    Option(
        "max_connections",
        "--max-connections",
        "TRACETUI_MAX_CONNECTIONS",
        positive_number,
        "open connections at most; one more closes the connection waiting longest for a "
        "request (itself if every one is being answered)",
        "N",
    ),
    Option(
        "query_timeout_s",
        "--query-timeout",
        "TRACETUI_QUERY_TIMEOUT",
        positive_seconds,
        "how long one search (a filtered trace list, sessions, users) may read the database, "
        "in seconds; then it is stopped and answered 422 query_timeout",
        "SECONDS",
    ),
    Option(
        "searches_per_key",
        "--searches-per-key",
        "TRACETUI_SEARCHES_PER_KEY",
        positive_number,
        "searches one key may have under way at once; one more is answered 429 with Retry-After",
        "N",
    ),
    Option(
        "searches_per_project",
        "--searches-per-project",
        "TRACETUI_SEARCHES_PER_PROJECT",
        positive_number,
        "searches one project may have under way at once, all its keys together; one more is "
        "answered 429 with Retry-After",
        "N",
    ),
    Option(
        "searches",
        "--searches",
        "TRACETUI_SEARCHES",
        positive_number,
        "searches under way at once in all, per replica (keep it below the PostgreSQL pool's "
        "10 connections); one more is answered 503 with Retry-After",
        "N",
    ),
    Option(
        "alerts_per_project",
        "--alerts-per-project",
        "TRACETUI_ALERTS_PER_PROJECT",
        positive_number,
        "alerts one project may have; creating one more is answered 409 too_many_alerts",
        "N",
    ),
)


def argparse_type(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """`parse` for argparse, which shows an ArgumentTypeError's message after the flag."""

    def parse_flag(value: str) -> Any:
        try:
            return parse(value)
        except InvalidOption as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    parse_flag.__name__ = parse.__name__
    return parse_flag


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """A flag per option. Each defaults to None (not given), so that from_sources can tell a
    flag given from its variable's value; the help shows the effective default."""
    for option in OPTIONS:
        help_text = f"{option.help} (default: {option.shown_default}; env {option.env})"
        if option.switch:
            action = "store_false" if option.flag.startswith("--no-") else "store_true"
            parser.add_argument(
                option.flag, dest=option.name, action=action, default=None, help=help_text
            )
        else:
            parser.add_argument(
                option.flag,
                dest=option.name,
                type=argparse_type(option.parse),
                default=None,
                metavar=option.metavar,
                help=help_text,
            )


def options_table() -> str:
    """The options as a Markdown table: docs/serve.md holds it (tests/service/test_config.py)."""
    rows = [
        "| option | flag | environment | default | meaning |",
        "|---|---|---|---|---|",
    ]
    for option in OPTIONS:
        default = option.unset if option.default is None else f"`{option.default}`"
        meaning = option.help.replace("|", "\\|")
        rows.append(
            f"| `{option.name}` | `{option.flag}` | `{option.env}` | {default} | {meaning} |"
        )
    return "\n".join(rows) + "\n"
