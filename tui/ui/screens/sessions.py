"""A project's sessions (conversations of many traces, on servers that offer them), newest first
and paged by cursor; Enter opens one: its traces in order, read as one conversation (each
trace's conversation after a divider that names the trace; Enter on a divider opens the trace).

A server that does not list sessions (offers.sessions is False) gets a screen that says so."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Static

from tui.api import ApiError, NextPage, Page, Trace
from tui.api.annotation_records import Annotation
from tui.api.models import Session, TraceFilter
from tui.api.source import missing_feature
from tui.model import formatting as fmt
from tui.model.chat import Conversation
from tui.model.spans import build_tree, conversation_at
from tui.model.text import safe_text
from tui.model.trace_list import SessionsOf
from tui.ui.screens.annotation_actions import annotation_bindings
from tui.ui.screens.base import AppScreen, error_line
from tui.ui.screens.session_annotating import (
    OneSessionAnnotating,
    SessionAnnotating,
    note_blocks,
)
from tui.ui.widgets.blocks import Block, piece
from tui.ui.widgets.conversation import conversation_blocks
from tui.ui.widgets.document import DocumentView
from tui.ui.widgets.key_footer import KeyFooter
from tui.ui.widgets.status_bar import StatusBar
from tui.ui.widgets.table import Column, Table

if TYPE_CHECKING:
    from tui.api import TraceSource

PAGE_SIZE = 100
SESSION_TRACES = 200  # traces of one session read into its conversation, at most
COLUMNS = (
    Column("Session", least=10, most=40, share=3),
    Column("User", least=6, most=24, share=2, optional=True),
    Column("Last seen", least=9),
    Column("Traces", least=6),
    Column("Tokens", least=6, optional=True),
    Column("Cost", least=7, optional=True),
    Column("Errors", least=6),
)
# In place of rows when there are none: where sessions come from (no key makes one).
EMPTY = Text(
    "A trace joins a session by its session.id attribute (or gen_ai.conversation.id, "
    "langfuse.session.id): send traces that carry one."
)


def session_cells(session: Session, now: datetime) -> tuple[str, ...]:
    errors = session.error_count or 0
    return (
        session.id or "?",
        session.user_id or "–",
        fmt.ago(session.last_seen, now),
        str(session.trace_count) if session.trace_count is not None else "–",
        fmt.tokens(session.total_tokens),
        fmt.cost(session.total_cost_usd),
        f"✗ {errors}" if errors else "0",
    )


class SessionsScreen(SessionAnnotating, AppScreen):
    BINDINGS = [
        Binding("escape", "back", "Back", id="sessions.back"),
        Binding("enter", "open", "Open", id="sessions.open", priority=False),
        Binding("r", "refresh", "Refresh", id="sessions.refresh"),
        *annotation_bindings("sessions", "the selected session"),
    ]
    DEFAULT_CSS = """
    SessionsScreen #header { height: auto; background: $boost; padding: 0 1; }
    SessionsScreen Table { height: 1fr; }
    """

    def __init__(
        self, project_id: str, project_name: str | None = None, of: SessionsOf | None = None
    ) -> None:
        super().__init__()
        self.project_id = project_id
        self.project_name = project_name or project_id
        self.of = of  # a filtered trace list's sessions only (None: every session)
        self.sessions: list[Session] = []
        self.next_page: NextPage | None = None
        self.state = "loading…"

    def compose(self) -> ComposeResult:
        yield Static(id="header")
        yield Table(COLUMNS)
        yield StatusBar()
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one(Table).focus()
        self.action_refresh()
        self.keep_ages_current(self._redraw_ages)

    def _redraw_ages(self) -> None:
        if self.sessions:
            self.show_rows()

    def action_back(self) -> None:
        self.dismiss()

    def action_refresh(self) -> None:
        self.sessions, self.next_page = [], None
        self.load_page()

    def load_page(self) -> None:
        after, of = self.next_page, self.of

        async def call(client: TraceSource) -> Page | None:
            offers = await client.discover_offers()
            if not offers.sessions:
                return None
            if of is None:
                return await client.list_sessions(self.project_id, limit=PAGE_SIZE, after=after)
            if of.session_ids is not None and not of.session_ids:
                return Page([], None)  # the traces shown have no session: nothing to ask
            return await client.list_sessions(
                self.project_id,
                start=of.start,
                end=of.end,
                limit=PAGE_SIZE,
                after=after,
                user_id=of.user_id,
            )

        self.state = "loading…"
        self.update_header()
        self.call_api(
            call,
            self._loaded,
            group="sessions",
            failed=self._failed,
            retry=self.load_page,
            project_id=self.project_id,
        )

    def _failed(self, error: ApiError) -> None:
        self.state = error_line(error)  # what was loaded stays
        self.update_header()

    def _loaded(self, page: Page | None) -> None:
        if page is None:
            self.state = missing_feature(self.tui.client, "sessions") + " (esc goes back)"
            self.update_header()
            return
        known = {session.id for session in self.sessions}
        kept = self.of.keep(page.items) if self.of is not None else page.items
        self.sessions += [s for s in kept if s.id and s.id not in known]
        self.next_page = page.next_page if page.items else None
        only_some = self.of is not None and self.of.session_ids is not None
        if self.next_page and only_some and self.may_be_further:
            self.load_page()  # those of the traces shown are further on
            return
        if self.next_page and self.may_be_further:
            self.state = "more below"
        elif self.sessions:
            self.state = "all loaded"
        elif self.of is not None:
            self.state = "none for these traces"
        else:
            self.state = "none in the last 24 hours"
        self.show_rows()
        self.update_header()

    def show_rows(self) -> None:
        """The rows from the sessions held (also every AGE_TICK_S: "last seen 3m ago")."""
        now = self.tui.now()
        table = self.query_one(Table)
        # Each row's key is its id: a refresh keeps the cursor on its session.
        table.set_rows([(session_cells(session, now), session.id) for session in self.sessions])
        table.empty_text = EMPTY  # said where sessions come from, not just that there are none

    def update_header(self) -> None:
        text = Text()
        text.append_text(safe_text(self.project_name, 40, style="bold"))
        if self.of is not None:
            text.append(" · of ")
            text.append_text(safe_text(self.of.words, 60, style="bold italic"))
            if self.of.session_ids is not None:  # the sessions of the traces it showed
                some = "loaded " if self.of.partial else ""
                plural = "" if self.of.traces == 1 else "s"
                text.append(f" ({self.of.traces:,} {some}trace{plural})")
        text.append(f" · sessions, newest first · {len(self.sessions):,} · ")
        text.append_text(safe_text(self.state, 100, style="italic"))
        self.query_one("#header", Static).update(text)

    @property
    def may_be_further(self) -> bool:
        """Whether the next page may hold sessions wanted: yes, unless only those of some
        traces are, and all of them are here."""
        wanted = self.of.session_ids if self.of is not None else None
        return wanted is None or len(self.sessions) < len(wanted)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        # The next page once the cursor nears the end of what is loaded (and could hold more).
        near_the_end = event.cursor_row >= len(self.sessions) - 10
        if self.next_page is not None and near_the_end and self.may_be_further:
            workers = self.workers
            if not any(w.group == "sessions" and w.is_running for w in workers):
                self.load_page()

    def on_data_table_row_selected(self, _event: DataTable.RowSelected) -> None:
        self.action_open()  # Enter on the table (the table takes the key first)

    def chosen_session(self) -> Session | None:
        row = self.query_one(Table).cursor_row
        return self.sessions[row] if 0 <= row < len(self.sessions) else None

    def action_open(self) -> None:
        table = self.query_one(Table)
        if 0 <= table.cursor_row < len(self.sessions):
            self.tui.push_screen(SessionScreen(self.project_id, self.sessions[table.cursor_row]))


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
    """One session: its notes (session_annotating.py), then its traces in order (GET
    /v1/traces with session_id, oldest first), each read whole, as one conversation."""

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
        self.state = f"{len(self.traces)} traces" if self.traces else "no traces in this session"

    def _add(self, number: int, count: int, trace: Trace, now: datetime) -> None:
        if not self.still_open:
            return
        self.traces.append(trace)
        divider = trace_divider(number, count, trace, now)
        if trace.id:
            self.dividers[id(divider)] = trace.id
        conv = trace_conversation(trace)
        parts: Sequence[Block] = (
            conversation_blocks(conv)
            if conv is not None
            else [Block([("(no conversation in this trace)", "dim")])]
        )
        self.blocks += [divider, *parts]
        self.show_document()

    def show_document(self) -> None:
        """The notes, then the conversation so far; where the reader is stays."""
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
            if each is block:
                if trace_id:
                    self.tui.open_trace(trace_id, self.project_id)
                return


def search_commands(app: Any, screen: Any) -> list[tuple[str, Callable[[], Any], str]]:
    """The palette's entries for sessions (each project's, unless the server is known to have
    none) and, over the trace list, its optional columns."""
    commands: list[tuple[str, Callable[[], Any], str]] = []
    try:
        client = app.client
    except RuntimeError:  # the client is still loading
        return commands
    if not client.offers_known or client.offers.sessions:
        for project in app.projects:
            if project.id:
                name = safe_text(project.name or project.id, 80).plain
                commands.append(
                    (
                        f"Sessions: {name}",
                        partial(app.open_sessions, project.id, project.name),
                        "Conversations of many traces, each read as one",
                    )
                )
    toggle = getattr(screen, "action_who_columns", None)
    if toggle is not None:
        commands.append(
            ("Trace list: user, session and tags columns", toggle, "Show or hide them (c)")
        )
    return commands
