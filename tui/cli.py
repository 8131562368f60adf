"""The command line: `tracetui [demo|serve] ...`. Heavy imports happen inside the subcommands."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tracetui",
        description="Browse the traces of LLM applications in the terminal.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = sub.add_parser("demo", help="open the app on a local service with demo data")
    demo.add_argument("--db", help="demo database file (default: a fresh temporary one)")
    demo.add_argument("--seed", type=int, default=7, help="seed of the demo data (default 7)")

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

        return run_demo(args.db, args.seed)
    build_parser().print_help(sys.stderr)
    return 2
