"""`tracetui diff [A] B`: what differs between two traces, on the command line, for incident
channels and scripts. With one id, B is compared with its last good trace (the newest earlier
trace of its root name with no error; tui/model/diff/last_good.py). It prints the summary and
the spans that differ as text (colour only on a terminal, never with NO_COLOR), or with
`--json` the whole diff (tui/model/diff/export.py). Errors (an unknown id, two projects, a
server down) are one line on stderr and a non-zero exit.

The server, its key and its kind are resolved as for the app and `tracetui trace ID`: the
profile, the environment and --base-url/--kind (tui/config.py, tui/api/source.py). Only
argparse is imported at start: the rest loads when the command runs.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from tui.api.source import TraceSource
    from tui.model.diff import TraceDiff
    from tui.ui.trace_pair import LoadedPair

EXIT_FAILED = 1  # the server said no, or there is nothing to compare
EXIT_USAGE = 2  # the command line or the configuration is wrong
ROWS_LISTED = 200  # differing spans listed in the text output (all of them in --json)
ERROR_CHARS = 120


def add_diff_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    diff = sub.add_parser(
        "diff",
        help="what differs between two traces (B alone: against its last good trace)",
        description="Compare trace B with trace A (the one that worked), or B alone with its "
        "last good trace: the newest earlier trace of the same root name without an error.",
    )
    diff.add_argument("ids", metavar="ID", nargs="+", help="A B, or B alone")
    diff.add_argument("--json", action="store_true", help="the whole diff as JSON")
    diff.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the text: auto (on a terminal, unless NO_COLOR is set), always, never",
    )
    diff.add_argument(
        "--project", metavar="ID", dest="diff_project", help="the project of the traces"
    )


def run_diff(args: argparse.Namespace) -> int:
    """The command: resolve the server as the app does, fetch, diff, print."""
    ids: list[str] = list(args.ids)
    if len(ids) > 2:
        return _fail("diff takes two trace ids (A B) or one (B)", EXIT_USAGE)
    resolved = _resolve(args)
    if isinstance(resolved, int):
        return resolved
    kind, url, settings = resolved
    import asyncio

    from tui.api import ApiError

    project = args.diff_project or args.project
    a_id, b_id = (ids[0], ids[1]) if len(ids) == 2 else (None, ids[0])
    try:
        loaded = asyncio.run(_load(_open(kind, url, settings), b_id, a_id, project))
    except ApiError as error:
        return _fail(f"{error.title}: {error.message}", EXIT_FAILED)
    if args.json:
        _print_json(loaded)
    else:
        _print_text(loaded, _console(args.color))
    return 0


def _fail(message: str, code: int) -> int:
    from tui.model.text import visible

    print(f"tracetui: {visible(message)}", file=sys.stderr)
    return code


def _resolve(args: argparse.Namespace) -> tuple[str, str, Any] | int:
    """(the server's kind, its base URL, the settings), as `run_app` resolves them; or the exit
    code after saying what is wrong."""
    from tui.api.base_url import InvalidBaseUrl
    from tui.api.kinds import checked_address
    from tui.config import ConfigError, load_settings

    try:
        settings = load_settings(profile=args.profile, base_url=args.base_url, kind=args.kind)
        if not settings.base_url:
            raise ConfigError(
                "No server configured. Set TRACETUI_BASE_URL, pass --base-url, or add a profile "
                f"to {settings.config_path}"
            )
        kind, url, note = checked_address(settings.kind, settings.base_url)
        if kind != settings.kind:  # recognised by its answers: its settings as that kind
            settings = load_settings(profile=args.profile, base_url=args.base_url, kind=kind)
    except (ConfigError, InvalidBaseUrl) as error:
        return _fail(error.message, EXIT_USAGE)
    for warning in settings.warnings:
        print(f"tracetui: warning: {warning}", file=sys.stderr)
    if note:
        print(f"tracetui: {note}", file=sys.stderr)
    return kind, url, settings


def _open(kind: str, url: str, settings: Any) -> TraceSource:
    """The client, opened outside the event loop: asking an address what it is runs a loop of
    its own (tui/api/kinds.py)."""
    from tui.api.kinds import open_source

    return open_source(kind, url, settings.api_key, settings.project_keys)


async def _load(
    client: TraceSource, b_id: str, a_id: str | None, project: str | None
) -> LoadedPair:
    from tui.ui.trace_pair import load_pair

    async with client:
        return await load_pair(client, b_id, a_id, project)


# -- output ---------------------------------------------------------------------------------------


def _print_json(loaded: LoadedPair) -> None:
    import json

    from tui.model.diff import summary
    from tui.model.diff.export import diff_json

    sentences = summary(loaded.diff, loaded.a.duration_ms, loaded.b.duration_ms)
    chosen = loaded.found.sentence() if loaded.found is not None else None
    data = diff_json(loaded.diff, loaded.a, loaded.b, sentences, chosen)
    text = json.dumps(data, ensure_ascii=False, indent=2)
    # JSON escapes the C0 controls itself; C1 controls (a terminal's CSI), bidi overrides and
    # zero-width characters are escaped too, so the output is safe to read in a terminal.
    sys.stdout.write(_UNSAFE.sub(lambda found: f"\\u{ord(found.group()):04x}", text) + "\n")


def _console(color: str) -> Console:
    from rich.console import Console

    if color == "always":
        return Console(force_terminal=True, highlight=False, soft_wrap=True)
    if color == "never" or os.environ.get("NO_COLOR"):
        return Console(no_color=True, highlight=False, soft_wrap=True, color_system=None)
    return Console(highlight=False, soft_wrap=True)  # colour when stdout is a terminal


_UNSAFE = re.compile("[\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")
STATUS_SIGNS = {"changed": ("~", "yellow"), "added": ("+", "green"), "removed": ("-", "red")}


def _print_text(loaded: LoadedPair, console: Console) -> None:
    from rich.text import Text

    from tui.model.diff import summary
    from tui.model.diff.summary import ERROR, NAME
    from tui.model.text import safe_text

    diff = loaded.diff
    for label, trace in (("A", loaded.a), ("B", loaded.b)):
        console.print(_trace_line(label, trace))
    if loaded.found is not None:
        hint = "tracetui diff OTHER_ID B compares B with another"
        console.print(safe_text(loaded.found.sentence(hint), style="dim"))
    console.print()
    for sentence in summary(diff, loaded.a.duration_ms, loaded.b.duration_ms):
        line = Text("· ")
        for text, kind in sentence:
            if kind == NAME:
                line.append_text(safe_text(f"`{text}`", style="bold"))
            else:
                line.append_text(safe_text(text, style="red" if kind == ERROR else ""))
        console.print(line)
    rows = [row for row in range(diff.size) if diff.is_difference(row)]
    console.print()
    if not rows:
        console.print(Text(f"No span differs ({diff.size:,} spans)."))
        return
    console.print(Text(f"Spans that differ ({len(rows):,} of {diff.size:,}):", style="bold"))
    for row in rows[:ROWS_LISTED]:
        console.print(_row_line(diff, row))
    if len(rows) > ROWS_LISTED:
        console.print(Text(f"… {len(rows) - ROWS_LISTED:,} more (--json lists all)", style="dim"))


def _trace_line(label: str, trace: Any) -> Text:
    from rich.text import Text

    from tui.model import formatting as fmt
    from tui.model.text import safe_text

    line = Text(f"{label} ", style="bold")
    line.append_text(safe_text(trace.id or "?", 40))
    line.append("  ")
    line.append_text(safe_text(trace.name or "", 60, style="bold"))
    line.append(f"  {fmt.local_time(trace.started_at)}  {fmt.duration(trace.duration_ms)}  ")
    line.append("✗ error" if trace.is_error else "✓ ok", style="red" if trace.is_error else "green")
    return line


def _row_line(diff: TraceDiff, row: int) -> Text:
    """One differing span: its sign, its name indented to its depth (with its ordinal among
    same-named siblings past the first), its deltas and what changed."""
    from rich.text import Text

    from tui.model.diff import numbers
    from tui.model.diff.align import MISSING
    from tui.model.diff.deltas import ERROR, MODEL
    from tui.model.text import safe_text

    status = diff.status[row]
    sign, colour = STATUS_SIGNS[status]
    line = Text(f"{sign} ", style=colour)
    line.append("  " * min(diff.rows.depth[row], 12))
    ordinal = diff.rows.ordinal[row]
    line.append_text(safe_text(diff.name(row), 60, style="bold"))
    if ordinal > 1:
        line.append(f" #{ordinal}", style="dim")
    for column, signed in (
        ("durations", numbers.duration),
        ("inputs", numbers.count),
        ("outputs", numbers.count),
        ("costs", numbers.cost),
    ):
        delta = diff.delta(column, row)
        if delta:
            suffix = {"inputs": " in", "outputs": " out"}.get(column, "")
            line.append(f"  {signed(delta)}{suffix}")
    i, j = diff.rows.a_pos[row], diff.rows.b_pos[row]
    changes = diff.changes[row]
    if MODEL in changes:
        line.append("  model ")
        line.append_text(safe_text(f"{diff.a.models[i]} → {diff.b.models[j]}", 80))
    others = [c for c in changes if c not in (MODEL, ERROR, "duration", "tokens", "cost")]
    if others:
        line.append(f"  ({', '.join(others)})", style="dim")
    if (
        j != MISSING
        and diff.b.errors[j]
        and (i == MISSING or not diff.a.errors[i] or ERROR in changes)
    ):
        line.append("  ✗ ", style="red")
        line.append_text(safe_text(diff.b.error_messages[j] or "error", ERROR_CHARS, style="red"))
    return line
