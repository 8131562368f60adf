"""SpanDetail: the selected span, as its conversation or as its fields and attributes.

A span that records a conversation (a model call's messages, a tool's arguments and result, a
retriever's documents, or plain input and output) shows it first; every other span shows its
fields and its attributes as a JSON tree. `switch_view` goes from one to the other for any
span, and the choice holds for the next spans until switched back. Both are one DocumentView,
which draws only what is on screen and starts at the top for each span.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical

from tui.api import Span
from tui.model import formatting as fmt
from tui.model.chat import Conversation
from tui.model.spans import TraceTree, conversation_at
from tui.model.text import safe_text
from tui.ui.widgets.blocks import Block, Piece, piece
from tui.ui.widgets.conversation import conversation_blocks
from tui.ui.widgets.document import DocumentView
from tui.ui.widgets.json_view import node as json_node
from tui.ui.widgets.json_view import tree as json_tree

LABEL = 10  # the width of a field's label


def field(label: str, value: object, style: str = "", **kwargs: Any) -> Block:
    """One field: its label, and its value whole (on the same row when it fits)."""
    text = value if isinstance(value, str) else str(value)
    return Block(
        [(f"{label:<{LABEL}}", "label")],
        text,
        inline=style,
        body_indent=LABEL,
        fold_rows=6,
        copy=text,
        what=label,
        **kwargs,
    )


def facts(span: Span, started: bool = False) -> list[Piece]:
    """The span at a glance: kind, model, tokens, cost, duration (and start), status."""
    pieces: list[Piece] = []
    for value, style in ((span.kind, "label"), (span.model, "")):
        if value:
            pieces += [piece(value, style, 60), (" · ", "dim")]
    pieces.append(
        (f"{fmt.tokens(span.input_tokens)} in / {fmt.tokens(span.output_tokens)} out", "")
    )
    known = not fmt.cost_is_unknown(span.attributes)
    shown_cost = fmt.cost(span.cost_usd, known) + (
        "" if known else " cost (no price for its model)"
    )
    pieces += [(" · ", "dim"), (shown_cost, ""), (" · ", "dim")]
    pieces.append((fmt.duration(span.duration_ms), ""))
    if started:
        pieces.append((f" from {fmt.local_time(span.started_at)}", ""))
    pieces.append((" · ", "dim"))
    pieces.append(
        ("✗ error", "error") if span.is_error else piece(f"✓ {span.status or 'ok'}", "dim", 40)
    )
    return pieces


def error_block(span: Span) -> list[Block]:
    if not span.error_message:
        return []
    return [field("error", span.error_message, "error")]


def field_blocks(tree: TraceTree, position: int) -> list[Block]:
    """The span's fields, its extra fields and its attributes as a JSON tree."""
    span = tree.spans[position]
    blocks = [
        field("name", span.name or ""),
        Block(facts(span, started=True), copy=span.kind or ""),
    ]
    if tree.has_children(position):
        blocks.append(
            field(
                "subtree Σ",
                f"{fmt.counted(tree.end[position] - position, 'span')} · {fmt.tokens(tree.sub_input[position])} in"
                f" / {fmt.tokens(tree.sub_output[position])} out · "
                f"{fmt.cost(tree.sub_cost[position])} · {fmt.counted(tree.sub_errors[position], 'error')}",
                "key",
            )
        )
    blocks += error_block(span)
    blocks.append(field("id", f"{tree.keys[position]} · parent {span.parent_id or '(root)'}"))
    if tree.flags[position]:
        blocks.append(field("warning", ", ".join(tree.flags[position]), "error"))
    for key, value in span.extras.items():
        blocks.append(json_node(key, value, 0, label_style="label"))
    attributes = span.attributes if span.attributes is not None else {}
    blocks.append(json_tree(attributes, "attributes"))
    return blocks


def chat_blocks(span: Span, conv: Conversation | None) -> list[Block]:
    """The span at a glance, its error, then its conversation (or why there is none)."""
    blocks = [Block(facts(span), copy=span.kind or ""), *error_block(span)]
    if conv is None:
        blocks.append(
            Block(
                [("No messages, tool call or documents found in this span.", "note")],
                "Read: OTel GenAI, OpenInference, Langfuse input/output, tool.* and retrieval.*"
                " attributes. Switch back to the fields to see everything it holds.",
                fold_rows=None,
            )
        )
        return blocks
    return blocks + conversation_blocks(conv)


class SpanDetail(Vertical):
    """The detail pane of the trace screen."""

    DEFAULT_CSS = """
    SpanDetail { border-top: solid $primary-darken-2; border-title-color: $text-muted; border-title-align: left; }
    SpanDetail > DocumentView { height: 1fr; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.prefer_fields = False  # the user switched to the fields: they stay
        self.view = "fields"  # what shows: "chat" or "fields"
        self._shown: tuple[TraceTree, int] | None = None

    def compose(self) -> ComposeResult:
        yield DocumentView(id="span-document")

    def on_unmount(self) -> None:
        # A closed screen may linger until the collector finds it; the trace need not.
        self._shown = None

    @property
    def document(self) -> DocumentView:
        return self.query_one(DocumentView)

    def show(self, tree: TraceTree, position: int | None, view: str | None = None) -> None:
        """Show span `position` of `tree` from its top, as `view` or as it suits the span."""
        document = self.document
        if position is None or not 0 <= position < tree.size:
            self._shown = None
            self.border_title = Text("Span")
            document.show([Block([("No span selected.", "note")])])
            return
        self._shown = (tree, position)
        conv = conversation_at(tree, position)
        if view is None:
            view = "chat" if conv is not None and not self.prefer_fields else "fields"
        self.view = view
        span = tree.spans[position]
        if view == "chat":
            document.show(chat_blocks(span, conv))
        else:
            document.show(field_blocks(tree, position))
        self._title(conv is not None, span.name or span.id or "")

    def switch_view(self) -> None:
        """From the conversation to the fields or back, for this span and the next ones."""
        if self._shown is None:
            return
        view = "fields" if self.view == "chat" else "chat"
        self.prefer_fields = view == "fields"
        self.show(*self._shown, view=view)

    def _title(self, has_chat: bool, span_name: str) -> None:
        """Which view shows (and that the other exists), and of which span: the tree may be
        out of sight (zoomed)."""
        title = Text()
        for view, label in (("chat", "Conversation"), ("fields", "Fields")):
            if title:
                title.append(" │ ", style="dim")
            if view == self.view:
                title.append(f"▸ {label}", style="bold")
            else:
                title.append(
                    label if view == "fields" or has_chat else f"{label} (none)", style="dim"
                )
        if span_name:
            title.append(" · ", style="dim")
            title.append_text(safe_text(span_name, 40, style="dim"))
        self.border_title = title
