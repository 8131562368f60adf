"""`tracetui export --project P [--query '...'] [--range 7d] --format jsonl [--output FILE]`: the
traces a query matches, one JSON line each, with what each was asked, what it answered and its
annotations: a data set from triage.

    {"trace_id", "name", "started_at", "status", "input", "output", "annotations": [records]}

The query is the app's query line (tui/model/query.py, the same parser): what the server can
filter is asked of it, the rest applied to each page as the trace list applies it, and a
condition neither can judge is said on stderr. Every page of the result is read; each trace
whole (its input and output are its spans', tui/model/trace_io.py) and its annotations where its
row says it has some. Lines go to stdout, or to a new file (never over an existing one).
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import ExitStack
from typing import IO, Any

from tui.cli_source import NoServer, error_words, open_configured

PAGE = 500


def add_export_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    export = sub.add_parser(
        "export",
        help="write the traces a query matches, with their annotations, as JSON lines",
        description="One JSON line per trace: trace_id, name, started_at, status, input, "
        "output and annotations.",
    )
    export.add_argument(
        "--project", dest="export_project", metavar="ID", required=True, help="the project"
    )
    export.add_argument(
        "--query", default="", help="the query line's words, e.g. 'label:root_cause=retriever'"
    )
    export.add_argument(
        "--range", dest="time_range", default="24h", help="15m, 1h, 6h, 24h, 7d or 30d"
    )
    export.add_argument("--format", required=True, choices=("jsonl",), help="jsonl")
    export.add_argument("--output", metavar="FILE", help="a new file (default: stdout)")


def run(args: argparse.Namespace) -> int:
    from tui.model.query import QueryError
    from tui.model.timerange import PRESETS, TimeRange
    from tui.model.trace_list import TraceListState

    if args.time_range not in PRESETS:
        return _usage(f"--range is one of {', '.join(PRESETS)}")
    try:
        state = TraceListState(TimeRange(args.time_range)).submitted(args.query)
    except QueryError as error:
        return _usage(f"--query: {error}")
    import asyncio

    try:
        source = open_configured(args.profile, args.base_url, args.kind)
    except NoServer as error:
        return _usage(str(error))
    with ExitStack() as stack:
        if args.output:
            try:
                out: IO[str] = stack.enter_context(open(args.output, "x", encoding="utf-8"))
            except OSError as error:
                asyncio.run(source.aclose())
                why = "it already exists" if isinstance(error, FileExistsError) else error.strerror
                return _usage(f"cannot write {args.output}: {why}")
        else:
            out = sys.stdout
        return asyncio.run(_export(source, args.export_project, state, out, args.output))


async def _export(source: Any, project_id: str, state: Any, out: IO[str], path: str | None) -> int:
    from datetime import datetime, timezone

    from tui.api.errors import ApiError
    from tui.api.pages import every_page
    from tui.model.trace_list_rows import filtered, row_texts
    from tui.model.trace_list_text import judged_note

    written = 0
    said_unjudged = False
    async with source:
        try:
            offers = await source.discover_offers()
            asked = state.wanted(offers.trace_filters)
            here = None if asked is not None else state.query
            start, end = state.time_range.bounds(datetime.now(timezone.utc))
            pages = every_page(
                lambda after: source.list_traces(
                    project_id, start=start, end=end, limit=PAGE, after=after, filters=asked
                )
            )
            async for page in pages:
                rows, unjudged = filtered(page.items, row_texts(page.items), here)
                if unjudged and not said_unjudged:
                    said_unjudged = True
                    print(
                        f"tracetui export: warning: {judged_note(unjudged)}: this server "
                        "neither filters by it nor says it of its traces; they are exported",
                        file=sys.stderr,
                    )
                for row in rows:
                    if row.id:
                        out.write(json.dumps(await _line(source, project_id, row)) + "\n")
                        out.flush()
                        written += 1
        except ApiError as error:
            print(f"tracetui export: {error_words(error)}", file=sys.stderr)
            return 1
    where = path or "stdout"
    print(f"tracetui export: {written:,} traces written to {where}", file=sys.stderr)
    return 0


async def _line(source: Any, project_id: str, row: Any) -> dict[str, Any]:
    """One trace's line: whole, with its annotations (asked only where its row says it has some,
    or says nothing of them)."""
    from tui.api.annotation_records import AnnotationTarget
    from tui.api.errors import NotOffered
    from tui.model.annotations import summary_of
    from tui.model.spans import build_tree
    from tui.model.trace_io import trace_input, trace_output

    trace = await source.get_trace(row.id, project_id)
    tree = build_tree(trace.spans)
    annotations: list[Any] = []
    if summary_of(row) != {}:
        try:
            listed = await source.list_annotations(project_id, AnnotationTarget.trace(row.id))
        except NotOffered:
            listed = []
        annotations = [annotation.model_dump(mode="json") for annotation in listed]
    started = trace.started_at or row.started_at
    return {
        "trace_id": row.id,
        "name": trace.name or row.name,
        "started_at": started.isoformat().replace("+00:00", "Z") if started else None,
        "status": trace.status or row.status,
        "input": trace_input(tree),
        "output": trace_output(tree),
        "annotations": annotations,
    }


def _usage(message: str) -> int:
    print(f"tracetui export: {message}", file=sys.stderr)
    return 2
