"""SpanDetail: every field of the selected span, whole, and its attributes as a JSON tree."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from tui import formatting as fmt
from tui.api import Span
from tui.spans import TraceTree
from tui.text import safe_text
from tui.widgets.json_view import JsonView

# A field longer than this is cut with an ellipsis: wrapping a megabyte of text froze the app for
# 11 s. `e` exports the whole span.
FIELD_MAX_CHARS = 4000


def field_table(rows: list[tuple[str, Any]]) -> Table:
    table = Table.grid(padding=(0, 1))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    for label, value in rows:
        table.add_row(
            Text(label),
            value if isinstance(value, Text) else safe_text(value, FIELD_MAX_CHARS, multiline=True),
        )
    return table


class SpanDetail(VerticalScroll):
    DEFAULT_CSS = """
    SpanDetail { border-top: solid $primary-darken-2; padding: 0 1; }
    SpanDetail #span-fields { height: auto; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="span-fields")
        yield JsonView(id="span-attributes")

    def show(self, tree: TraceTree, position: int | None) -> None:
        fields = self.query_one("#span-fields", Static)
        attributes = self.query_one(JsonView)
        if position is None:
            fields.update(Text("No span selected."))
            attributes.clear()
            return
        span: Span = tree.spans[position]
        tokens = f"{fmt.tokens(span.input_tokens)} in / {fmt.tokens(span.output_tokens)} out"
        rows: list[tuple[str, Any]] = [
            ("name", span.name or ""),
            ("kind", " · ".join(v for v in (span.kind, span.model) if v)),
            ("tokens", tokens),
            ("cost", fmt.cost(span.cost_usd)),
        ]
        if tree.has_children(position):
            spans = tree.end[position] - position
            subtree = (
                f"{spans} spans · {fmt.tokens(tree.sub_input[position])} in / "
                f"{fmt.tokens(tree.sub_output[position])} out · {fmt.cost(tree.sub_cost[position])}"
                f" · {tree.sub_errors[position]} errors"
            )
            rows.append(("subtree Σ", Text(subtree, style="bold")))
        when = f"{fmt.duration(span.duration_ms)} from {fmt.local_time(span.started_at)}"
        rows += [("duration", when), ("status", span.status or "")]
        if span.error_message:
            rows.append(
                (
                    "error",
                    safe_text(
                        span.error_message, FIELD_MAX_CHARS, style="red bold", multiline=True
                    ),
                )
            )
        rows += [("id", tree.keys[position]), ("parent", span.parent_id or "(root)")]
        if tree.flags[position]:
            rows.append(("warning", ", ".join(tree.flags[position])))
        for key, value in span.extras.items():
            rows.append((fmt.fit(key, 20).rstrip(), str(value)))
        fields.update(field_table(rows))
        attributes.show(span.attributes if span.attributes is not None else {})
