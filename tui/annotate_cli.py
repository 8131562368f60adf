"""`tracetui annotate TRACE_ID [--span ID | --session ID] --name N [--label L] [--score S]
[--note TEXT] [--identifier I] [--kind HUMAN|LLM|CODE]`: one annotation, written through the
configured server (the app's profile and keys), for scripts and evaluation jobs. It prints the
stored annotation's id alone on stdout; anything wrong is one line on stderr and a non-zero
exit (2: the command line, 1: the server).

The trace's project is `--project` when given, else the one the server says the trace is in; a
session annotation needs `--project`. A write whose outcome is unknown (the answer was lost)
is looked for once before the command says so: it is never sent twice.
"""

from __future__ import annotations

import argparse
import math
import sys

from tui.cli_source import NoServer, error_words, open_configured


def add_annotate_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    annotate = sub.add_parser(
        "annotate",
        help="write an annotation (a label, a score, a note) on a trace, a span or a session",
        description="Write one annotation through the configured server; prints its id.",
    )
    annotate.add_argument(
        "trace_id", metavar="TRACE_ID", nargs="?", help="the trace (none with --session)"
    )
    target = annotate.add_mutually_exclusive_group()
    target.add_argument("--span", metavar="ID", help="a span of the trace, not the whole trace")
    target.add_argument("--session", metavar="ID", help="a session (needs --project)")
    annotate.add_argument(
        "--project",
        dest="annotate_project",
        metavar="ID",
        help="the project (default: the trace's, as the server says)",
    )
    annotate.add_argument("--name", required=True, help="e.g. correctness, root_cause, note")
    annotate.add_argument("--label", help="a label, e.g. wrong")
    annotate.add_argument("--score", help="a number, e.g. 0.2")
    annotate.add_argument("--note", help="the note's text (the explanation)")
    annotate.add_argument("--identifier", help="a second write with it updates the first")
    annotate.add_argument(
        "--kind",
        "--annotator-kind",
        dest="annotator_kind",
        choices=("HUMAN", "LLM", "CODE"),
        default="HUMAN",
        help="who made it (default HUMAN); the server's kind is the --kind before `annotate`",
    )


def run(args: argparse.Namespace) -> int:
    from tui.api.annotation_records import AnnotationDraft, AnnotationTarget

    project = args.annotate_project or args.project

    if args.session is not None:
        if args.trace_id is not None:
            return _usage("a session annotation takes no TRACE_ID: give --session alone")
        if not project:
            return _usage("--session needs --project (the session's project)")
        target = AnnotationTarget.session(args.session)
    elif args.trace_id is None:
        return _usage("give the TRACE_ID to annotate (or --session ID)")
    elif args.span is not None:
        target = AnnotationTarget.span(args.trace_id, args.span)
    else:
        target = AnnotationTarget.trace(args.trace_id)
    score = None
    if args.score is not None:
        try:
            score = float(args.score)
        except ValueError:
            score = math.nan
    draft = AnnotationDraft(
        target,
        args.name,
        args.label,
        score,
        args.note,
        annotator_kind=args.annotator_kind,
        identifier=args.identifier,
    )
    problems = draft.problems()
    if problems:
        field, problem = next(iter(problems.items()))
        return _usage(f"--{'note' if field == 'explanation' else field}: {problem}")
    try:
        source = open_configured(args.profile, args.base_url, args.kind)
    except NoServer as error:
        return _usage(str(error))
    import asyncio

    return asyncio.run(_write(source, project, draft))


async def _write(source: object, project_id: str | None, draft: object) -> int:
    from tui.api.annotation_records import AnnotationDraft
    from tui.api.errors import ApiError
    from tui.api.source import TraceSource

    assert isinstance(source, TraceSource) and isinstance(draft, AnnotationDraft)
    async with source:
        try:
            if project_id is None:
                assert draft.target.trace_id is not None
                trace = await source.get_trace(draft.target.trace_id)
                project_id = trace.project_id
                if not project_id:
                    return _failed("the server does not say the trace's project: give --project")
            try:
                (stored,) = await source.create_annotations(project_id, [draft])
            except ApiError as error:
                if not error.outcome_unknown:
                    raise
                found = await source.find_annotation(project_id, draft)
                if found is None:
                    return _failed(
                        f"{error_words(error)} (it was not stored: run the command again)"
                    )
                stored = found
        except ApiError as error:
            return _failed(error_words(error))
    print(stored.id or "")
    return 0


def _usage(message: str) -> int:
    print(f"tracetui annotate: {message}", file=sys.stderr)
    return 2


def _failed(message: str) -> int:
    print(f"tracetui annotate: {message}", file=sys.stderr)
    return 1
