"""The command line: `tracetui [demo|serve] ...`. Heavy imports happen inside the subcommands."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui.api.client import ApiClient
    from tui.app import StartAt


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tracetui",
        description="Browse the traces of LLM applications in the terminal.",
    )
    parser.add_argument("--base-url", help="server base URL ending in /v1 (overrides the profile)")
    parser.add_argument("--profile", help="profile of the config file to use")
    parser.add_argument("--no-mouse", action="store_true", help="do not capture the mouse")
    parser.add_argument("--project", metavar="ID", help="open this project's traces")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = sub.add_parser("demo", help="open the app on a local service with demo data")
    demo.add_argument("--db", help="demo database file (default: a fresh temporary one)")
    demo.add_argument("--seed", type=int, default=7, help="seed of the demo data (default 7)")

    trace = sub.add_parser("trace", help="open one trace (for the link in an alert)")
    trace.add_argument("trace_id", metavar="ID")

    serve = sub.add_parser("serve", help="run the local tracing service")
    serve.add_argument("--db", help="SQLite database file (default: ./tracetui.sqlite3)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default loopback)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    serve.add_argument("--demo", action="store_true", help="fill an empty database with demo data")
    serve.add_argument(
        "--rate-limit", type=int, default=1000, help="requests per minute per key (default 1000)"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "serve":
        from tui.server.run import serve

        return serve(args.db, args.host, args.port, args.demo, args.rate_limit)
    if args.command == "demo":
        from tui.demo import run_demo

        return run_demo(args.db, args.seed, mouse=not args.no_mouse)
    from tui.app import StartAt

    start = StartAt(args.project, args.trace_id if args.command == "trace" else None)
    return run_app(args.profile, args.base_url, mouse=not args.no_mouse, start=start)


def run_app(profile: str | None, base_url: str | None, mouse: bool, start: StartAt) -> int:
    """The app against the configured server; configuration problems end with a clear message.

    Nothing here imports httpx or pydantic: the app draws its first frame while the client
    loads in a thread (see TraceTuiApp.on_mount)."""
    import asyncio
    from urllib.parse import urlsplit

    from tui.api.base_url import InvalidBaseUrl, normalize_base_url
    from tui.config import ConfigError, load_settings

    try:
        settings = load_settings(profile=profile, base_url=base_url)
        if not settings.base_url:
            raise ConfigError(
                f"No server configured. Set TRACETUI_BASE_URL, pass --base-url, or add a profile "
                f"to {settings.config_path}. To try tracetui without a server: tracetui demo"
            )
        url = normalize_base_url(settings.base_url)
    except (ConfigError, InvalidBaseUrl) as error:
        print(f"tracetui: {error.message}", file=sys.stderr)
        return 2
    for warning in settings.warnings:
        print(f"tracetui: warning: {warning}", file=sys.stderr)

    from tui.app import TraceTuiApp

    def make_client() -> ApiClient:
        from tui.api.client import ApiClient

        return ApiClient(url, settings.api_key, settings.project_keys)

    async def main() -> str | None:
        app = TraceTuiApp(
            make_client,
            start,
            settings.profile,
            settings.profiles,
            settings.keymap,
            settings.config_path,
            server_label=urlsplit(url).netloc,
        )
        try:
            return await app.run_async(mouse=mouse)
        finally:
            await app.close_client()

    result = asyncio.run(main())
    if isinstance(result, str) and result.startswith("profile:"):
        return run_app(result.removeprefix("profile:"), None, mouse, start)
    return 0
