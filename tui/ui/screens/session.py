"""One session: its notes (session_annotating.py), then its traces in order, read as one conversation (each trace's conversation after
a divider that names the trace; `o` opens the trace the cursor is in). A chat app sends the
whole conversation so far with every call: what an earlier trace showed is not shown again
(a dim line counts it), so each turn reads once."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from tui.api import ApiError, NextPage, Trace
from tui.api.annotation_records import Annotation
from tui.api.models import Session, TraceFilter
from tui.model import formatting as fmt
from tui.model.chat import Conversation
from tui.model.chat.text import only_what_is_new, remember
from tui.model.spans import build_tree, conversation_at
from tui.model.text import safe_text
from tui.ui.screens.annotation_actions import annotation_bindings
from tui.ui.screens.base import AppScreen, error_line
from tui.ui.screens.session_annotating import OneSessionAnnotating, note_blocks
from tui.ui.widgets.blocks import Block, piece
from tui.ui.widgets.conversation import conversation_blocks
from tui.ui.widgets.document import DocumentView
from tui.ui.widgets.key_footer import KeyFooter
from tui.ui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from tui.api import TraceSource

SESSION_TRACES = 200  # traces of one session read into its conversation, at most


def trace_conversation(trace: Trace) -> Conversation | None:
    """What a trace said: its root's conversation when that holds messages, else the last
    span's that does (the model call that gave the answer)."""
    tree = build_tree(trace.spans)
    found: Conversation | None = None
    for position in range(tree.size):
        conv = conversation_at(tree, position)
        if conv is None or not (conv.input or conv.output):
            continue
        if tree.parent[position] == -1:
            return conv
        found = conv
    return found


def trace_divider(number: int, count: int, trace: Trace, now: datetime) -> Block:
    """The line above each trace's part of the conversation: which trace, when, how it went."""
    pieces = [
        (f"── {number}/{count} ", "dim"),
        piece(trace.name or trace.id or "?", "key", 60),
        (f" · {fmt.local_time(trace.started_at)} ({fmt.ago(trace.started_at, now)})", "dim"),
        (f" · {fmt.duration(trace.duration_ms)}", "dim"),
    ]
    if trace.is_error:
        pieces.append((" · ✗ error", "error"))
    return Block(pieces, rule=True, copy=trace.id or "", what="trace")


class SessionScreen(OneSessionAnnotating, AppScreen):
    """One session: its notes, then its traces in order (GET /v1/traces with session_id,
    oldest first), each read whole, as one conversation."""

    BINDINGS = [
        Binding("escape", "back", "Back", id="session.back"),
        Binding("o", "open_trace", "Open trace", id="session.open_trace"),
        *annotation_bindings("session", "this session"),
    ]
    DEFAULT_CSS = """
    SessionScreen #header { height: auto; background: $boost; padding: 0 1; }
    SessionScreen DocumentView { height: 1fr; }
    """

    def __init__(self, project_id: str, session: Session) -> None:
        super().__init__()
        self.project_id = project_id
        self.session = session
        self.traces: list[Trace] = []
        self.blocks: list[Block] = []
        self.dividers: dict[int, str] = {}  # id(divider block) -> trace id
        # The messages shown so far: each trace's call repeats the conversation before it.
        self.read: set[tuple[str, str]] = set()
        self.notes: list[Annotation] = []  # the session's annotations, newest first
        self.state = "loading…"

    def compose(self) -> ComposeResult:
        yield Static(id="header")
        yield DocumentView()
        yield StatusBar()
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one(DocumentView).focus()
        self.update_header()
        self.load_notes()
        self.call_api(
            self._read,
            self._read_done,
            group="session",
            failed=self._failed,
            project_id=self.project_id,
        )

    def action_back(self) -> None:
        self.dismiss()

    def _failed(self, error: ApiError) -> None:
        self.state = error_line(error)  # the traces read so far stay
        self.update_header()

    async def _read(self, client: TraceSource) -> None:
        """The session's traces in order, then each one whole, shown as it arrives."""
        first, last = self.session.first_seen, self.session.last_seen
        listed: list[Trace] = []
        after: NextPage | None = None
        query = TraceFilter(session_id=self.session.id, sort="started_at", order="asc")
        while len(listed) < SESSION_TRACES:
            page = await client.list_traces(
                self.project_id,
                start=first,
                end=last + timedelta(milliseconds=1) if last else None,
                limit=min(100, SESSION_TRACES - len(listed)),
                after=after,
                filters=query,
            )
            # A server that ignores session_id would list every trace: keep the session's.
            listed += [t for t in page.items if t.session_id in (None, self.session.id)]
            after = page.next_page
            if after is None or not page.items:
                break
        now = self.tui.now()
        for number, row in enumerate(listed, 1):
            if not row.id:
                continue
            self.state = f"reading trace {number} of {len(listed)}…"
            self.update_header()
            trace = await client.get_trace(row.id, self.project_id)
            self._add(number, len(listed), trace, now)
        self.state = (
            fmt.counted(len(self.traces), "trace") if self.traces else "no traces in this session"
        )

    def _add(self, number: int, count: int, trace: Trace, now: datetime) -> None:
        if not self.still_open:
            return
        self.traces.append(trace)
        divider = trace_divider(number, count, trace, now)
        if trace.id:
            self.dividers[id(divider)] = trace.id
        conv = trace_conversation(trace)
        parts: list[Block] = []
        if conv is None:
            parts.append(Block([("(no conversation in this trace)", "dim")]))
        else:
            new, skipped = only_what_is_new(conv, self.read)
            remember(conv, self.read)
            if skipped:
                said = "message" if skipped == 1 else "messages"
                parts.append(Block([(f"({skipped} earlier {said}, as above)", "dim")]))
            parts += conversation_blocks(new)
        self.blocks += [divider, *parts]
        self.show_document()

    def show_document(self) -> None:
        """The notes, then the conversation so far; where the reader is stays, while the rest
        arrives."""
        document = self.query_one(DocumentView)
        cursor = document.cursor
        document.show([*note_blocks(self.notes, self.tui.now()), *self.blocks])
        if cursor:
            document.move_to(cursor)

    def _read_done(self, _result: Any) -> None:
        self.update_header()

    def update_header(self) -> None:
        session = self.session
        text = Text()
        text.append("Session ", style="bold")
        text.append_text(safe_text(session.id or "?", 50))
        if session.user_id:
            text.append(" · user ")
            text.append_text(safe_text(session.user_id, 30))
        text.append(
            f" · {fmt.local_time(session.first_seen)} → {fmt.local_time(session.last_seen)}"
        )
        text.append(" · ")
        text.append_text(safe_text(self.state, 80, style="italic"))
        self.query_one("#header", Static).update(text)

    def action_open_trace(self) -> None:
        """The trace whose part of the conversation the cursor is in."""
        block = self.query_one(DocumentView).cursor_block
        while block is not None and block.parent is not None:
            block = block.parent
        if block is None:
            return
        trace_id = None
        for each in self.blocks:
            trace_id = self.dividers.get(id(each), trace_id)
            if each is block:  # (a note above the conversation is no trace's)
                if trace_id:
                    self.tui.open_trace(trace_id, self.project_id)
                return
