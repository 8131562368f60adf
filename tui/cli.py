"""The command line: `tracetui [demo|serve|keys|trace|diff|annotate|export] ...`. Heavy imports
happen inside the subcommands; the service's options (tui.server.config, the standard library
alone) are read here, where serve's flags are made from them."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from tui.diff_command import add_diff_parser
from tui.server.config import (
    DEFAULT_DB,
    OPTIONS,
    InvalidOption,
    ServerConfig,
    add_serve_arguments,
)

if TYPE_CHECKING:
    from tui.api.source import TraceSource
    from tui.demo.data import DemoKeys
    from tui.server.store.protocol import TraceStore
    from tui.ui.start import StartAt

DB_OPTION = next(option for option in OPTIONS if option.name == "db")
SERVE_DEMO_SEED = 7  # the demo data `serve --demo` fills a database with (open_demo_store's)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tracetui",
        description="Browse the traces of LLM applications in the terminal.",
    )
    parser.add_argument("--base-url", help="server base URL ending in /v1 (overrides the profile)")
    parser.add_argument(
        "--kind",
        choices=("spec", "phoenix"),
        help="the server's API: spec (default) or phoenix (Arize Phoenix, e.g. "
        "--base-url http://localhost:6006); overrides the profile's kind",
    )
    parser.add_argument("--profile", help="profile of the config file to use")
    parser.add_argument("--no-mouse", action="store_true", help="do not capture the mouse")
    parser.add_argument("--project", metavar="ID", help="open this project's traces")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = sub.add_parser("demo", help="open the app on a local service with demo data")
    demo.add_argument("--db", help="demo database file (default: a fresh temporary one)")
    demo.add_argument("--seed", type=int, default=7, help="seed of the demo data (default 7)")
    demo.add_argument(
        "--no-feed",
        action="store_true",
        help="no live traces (by default a simulated app sends some over OTLP every few seconds)",
    )

    trace = sub.add_parser("trace", help="open one trace (for the link in an alert)")
    trace.add_argument("trace_id", metavar="ID")

    serve = sub.add_parser(
        "serve",
        help="run the local tracing service",
        description="Run the local tracing service. Every option can also be set by its "
        "environment variable; a flag wins over its variable. See docs/serve.md.",
    )
    add_serve_arguments(serve)
    serve.add_argument("--demo", action="store_true", help="fill an empty database with demo data")
    add_keys_parser(sub)
    add_diff_parser(sub)
    from tui.annotate_cli import add_annotate_parser
    from tui.export_cli import add_export_parser

    add_annotate_parser(sub)
    add_export_parser(sub)
    return parser


def add_keys_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`tracetui keys ...` (run by tui.server.keys_cli; parsed here so the app's start-up never
    imports the service)."""
    keys = sub.add_parser("keys", help="create, list and revoke the local service's API keys")
    actions = keys.add_subparsers(dest="keys_command", metavar="ACTION", required=True)
    db_help = f"the service's database (default: ${DB_OPTION.env} or ./{DEFAULT_DB}, as serve)"

    create = actions.add_parser("create", help="make a key; prints it alone on stdout")
    target = create.add_mutually_exclusive_group(required=True)
    target.add_argument("--project", metavar="ID", help="a key for this project only")
    target.add_argument("--workspace", action="store_true", help="a key for every project")
    create.add_argument("--label", help="a name to know it by (default: the project and date)")
    create.add_argument("--db", default=None, help=db_help)

    listing = actions.add_parser("list", help="ids, projects, creation times, labels (no keys)")
    listing.add_argument("--db", default=None, help=db_help)

    revoke = actions.add_parser("revoke", help="delete a key by its id (or prefix) or label")
    revoke.add_argument("ref", metavar="ID_OR_LABEL")
    revoke.add_argument("--db", default=None, help=db_help)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "serve":
        return run_serve(args)
    if args.command == "keys":
        from tui.server.keys_cli import run as run_keys

        if args.db is None:  # the database serve would open
            args.db = os.environ.get(DB_OPTION.env) or DEFAULT_DB
        return run_keys(args)
    if args.command == "diff":
        from tui.diff_command import run_diff

        return run_diff(args)
    if args.command == "annotate":
        from tui.annotate_cli import run as run_annotate

        return run_annotate(args)
    if args.command == "export":
        from tui.export_cli import run as run_export

        return run_export(args)
    if args.command == "demo":
        from tui.demo.run import run_demo

        return run_demo(args.db, args.seed, mouse=not args.no_mouse, feed=not args.no_feed)
    from tui.ui.start import StartAt  # not the app's module: an error is said before it loads

    start = StartAt(args.project, args.trace_id if args.command == "trace" else None)
    return run_app(
        args.profile, args.base_url, mouse=not args.no_mouse, start=start, kind=args.kind
    )


def run_serve(args: argparse.Namespace) -> int:
    """`tracetui serve`: its config from the environment and the flags given."""
    from tui.server.run import serve

    try:
        config = ServerConfig.from_sources(vars(args), os.environ)
    except InvalidOption as error:
        print(f"tracetui: {error}", file=sys.stderr)
        return 2
    opened = None
    if args.demo and config.host not in ("127.0.0.1", "localhost", "::1"):
        # The demo's keys are derived from a fixed seed: anyone can compute them.
        print(
            "tracetui: --demo's keys are public (the same in every demo): it listens on "
            "loopback only; drop --host, or serve without --demo",
            file=sys.stderr,
        )
        return 2
    if args.demo:  # the demo's data is no part of the service: it is filled in here
        from functools import partial

        opened = partial(open_demo_database, config.db)
    return serve(config, opened)


def open_demo_database(db: str | None) -> tuple[TraceStore, DemoKeys]:
    """`serve --demo`'s database: a SQLite file as `open_demo_store` makes it, or the database
    of a PostgreSQL URL, filled with the same demo data when it has no project yet."""
    from tui.demo.data import open_demo_store
    from tui.server.store.url import is_postgres

    if db is None or not is_postgres(db):
        return open_demo_store(db)
    from tui.demo.data import demo_keys, populate
    from tui.server.store.errors import StoreUnreachable
    from tui.server.store.opening import open_store
    from tui.server.store.sqlite.store import Store

    store = open_store(db)
    if store.list_projects():
        keys = demo_keys(SERVE_DEMO_SEED)
        if store.key_scope(keys.workspace) is None:
            store.close()
            raise StoreUnreachable(
                "--demo fills an empty database only, and this one holds other data: "
                "serve it without --demo"
            )
        return store, keys
    # The PostgreSQL store has the SQLite store's bulk writes, with the same signatures.
    return store, populate(cast(Store, store), seed=SERVE_DEMO_SEED)


def run_app(
    profile: str | None, base_url: str | None, mouse: bool, start: StartAt, kind: str | None = None
) -> int:
    """The app against the configured server; configuration problems end with a clear message.

    Nothing here imports httpx or pydantic: the app draws its first frame while the client
    loads in a thread (see TraceTuiApp.on_mount)."""
    import asyncio
    from urllib.parse import urlsplit

    from tui.api.base_url import InvalidBaseUrl
    from tui.api.kinds import checked_address
    from tui.config import ConfigError, load_settings

    try:
        settings = load_settings(profile=profile, base_url=base_url, kind=kind)
        if not settings.base_url:
            raise ConfigError(
                f"No server configured. Set TRACETUI_BASE_URL, pass --base-url, or add a profile "
                f"to {settings.config_path}. To try tracetui without a server: tracetui demo"
            )
        server_kind, url, note = checked_address(settings.kind, settings.base_url)
        if server_kind != settings.kind:
            # Recognised by its answers: read the settings again as that kind (a Phoenix's
            # key may come from PHOENIX_API_KEY, as its own clients take it).
            settings = load_settings(profile=profile, base_url=base_url, kind=server_kind)
    except (ConfigError, InvalidBaseUrl) as error:
        print(f"tracetui: {error.message}", file=sys.stderr)
        return 2
    for warning in settings.warnings:
        print(f"tracetui: warning: {warning}", file=sys.stderr)

    from tui.ui.app import TraceTuiApp

    if note:
        print(f"tracetui: {note}", file=sys.stderr)

    def make_client() -> TraceSource:
        from tui.api.kinds import open_source

        return open_source(server_kind, url, settings.api_key, settings.project_keys)

    async def main() -> str | None:
        app = TraceTuiApp(
            make_client,
            start,
            settings.profile,
            settings.profiles,
            settings.keymap,
            settings.config_path,
            server_label=urlsplit(url).netloc,
            verdicts=settings.verdicts,
        )
        try:
            return await app.run_async(mouse=mouse)
        finally:
            await app.close_client()

    result = asyncio.run(main())
    if isinstance(result, str) and result.startswith("profile:"):
        return run_app(result.removeprefix("profile:"), None, mouse, start)
    return 0
