"""A project's sessions (conversations of many traces, on servers that offer them), newest first
and paged by cursor; Enter opens one (tui/ui/screens/session.py), read as one conversation.

`/` filters them by user, time and text (`user:alice last:7d refund`: tui/model/session_query.py):
the user and time by the server's listing, the text by its trace search where it has one, else
over the loaded rows' id and user, which the header says (tui/ui/session_search.py). A screen can
start with a query (SessionsScreen's `query`), or with a filtered trace list's sessions
(`of`: tui.model.trace_list.SessionsOf, what the trace list's `S` passes): its user's, or only
those of the traces it showed, over its range.

A server that does not list sessions (offers.sessions is False) gets a screen that says so."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Input, Static

from tui.api import ApiError, NextPage
from tui.api.models import Session
from tui.api.source import missing_feature
from tui.model import formatting as fmt
from tui.model.query import MIN_WORD, QueryError
from tui.model.session_query import (
    PLACEHOLDER,
    SessionQuery,
    format_session_query,
    parse_session_query,
    session_matches,
)
from tui.model.text import safe_text
from tui.model.trace_list import SessionsOf
from tui.ui.screens.annotation_actions import annotation_bindings
from tui.ui.screens.base import AppScreen, error_line
from tui.ui.screens.session_annotating import SessionAnnotating
from tui.ui.session_search import (
    MATCHED_TRACES_MAX,
    Look,
    Matched,
    look_for_sessions,
    matched_sessions,
    searches_text,
)
from tui.ui.widgets.key_footer import KeyFooter
from tui.ui.widgets.status_bar import StatusBar
from tui.ui.widgets.table import Column, Table

if TYPE_CHECKING:
    from tui.api import TraceSource

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
        Binding("slash", "filter", "Filter", id="sessions.filter"),
        Binding("x", "clear_query", "Clear filter", id="sessions.clear_query"),
        Binding("r", "refresh", "Refresh", id="sessions.refresh"),
        *annotation_bindings("sessions", "the selected session"),
    ]
    DEFAULT_CSS = """
    SessionsScreen #header { height: auto; background: $boost; padding: 0 1; }
    SessionsScreen Table { height: 1fr; }
    SessionsScreen #query { dock: bottom; display: none; }
    SessionsScreen #query.-open { display: block; }
    """

    def __init__(
        self,
        project_id: str,
        project_name: str | None = None,
        query: SessionQuery | None = None,
        of: SessionsOf | None = None,
    ) -> None:
        """`query`: the sessions to start with; `of`: a filtered trace list's sessions only
        (until the query is changed)."""
        super().__init__()
        self.project_id = project_id
        self.project_name = project_name or project_id
        self.of = of
        if of is not None and query is None:
            query = SessionQuery(user_id=of.user_id)
        self.session_query = query or SessionQuery()
        self.loaded: list[Session] = []  # as listed (and kept by the server's trace search)
        self.sessions: list[Session] = []  # the rows shown
        self.next_page: NextPage | None = None
        # The sessions whose traces say the query's text, when the server searched it (None:
        # no text, or the text applies to the loaded rows).
        self.matched: Matched | None = None
        self.text_here = False  # the text applies to the loaded rows' id and user
        self.listed = 0  # sessions the listing returned (kept or not)
        self.state = "loading…"

    def compose(self) -> ComposeResult:
        yield Static(id="header")
        yield Table(COLUMNS)
        yield Input(format_session_query(self.session_query), placeholder=PLACEHOLDER, id="query")
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
        line = self.query_one("#query", Input)
        if line.has_class("-open"):  # esc leaves the line open with nothing changed
            self._close_line()
            return
        self.dismiss()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "clear_query":
            return not self.session_query.is_empty
        return super().check_action(action, parameters)

    # -- the query line ------------------------------------------------------------------------

    def action_filter(self) -> None:
        line = self.query_one("#query", Input)
        line.add_class("-open")
        line.focus()

    def _close_line(self) -> None:
        self.query_one("#query", Input).remove_class("-open")
        self.query_one(Table).focus()

    @on(Input.Submitted, "#query")
    def _query_done(self, event: Input.Submitted) -> None:
        try:
            query = parse_session_query(event.value)
        except QueryError as error:
            # The line stays open with what was typed, to be put right.
            self.notify(str(error), title="Sessions query", severity="error", timeout=6)
            return
        self._close_line()
        self.set_query(query)

    def action_clear_query(self) -> None:
        line = self.query_one("#query", Input)
        line.value = ""
        self._close_line()
        self.set_query(SessionQuery())

    def set_query(self, query: SessionQuery) -> None:
        """List the sessions of `query` (the same query again: listed again, from the top)."""
        self.session_query = query
        self.of = None  # a query of the user's own replaces the trace list's
        line = self.query_one("#query", Input)
        if line.value != format_session_query(query):
            line.value = format_session_query(query)
        self.refresh_bindings()
        self.action_refresh()

    # -- loading ---------------------------------------------------------------------------------

    def action_refresh(self) -> None:
        self.loaded, self.sessions, self.next_page = [], [], None
        self.matched, self.text_here, self.listed = None, False, 0
        self.load_page(first=True)

    def load_page(self, first: bool = False) -> None:
        after = self.next_page
        query = self.session_query
        now = self.tui.now()
        of = self.of
        bounds = (of.start, of.end) if of is not None else None

        async def call(client: TraceSource) -> Look | None:
            offers = await client.discover_offers()
            if not offers.sessions:
                return None
            wanted: set[str] | None = None
            if of is not None and of.session_ids is not None:
                # Only the sessions of the traces the list showed.
                self.matched = Matched(set(of.session_ids))
                wanted = set(of.session_ids) - {s.id for s in self.loaded if s.id}
                if not wanted:
                    return Look([], None, 0)
            elif query.text:
                if first:
                    self.text_here = not searches_text(query, offers)
                    if not self.text_here:
                        self.matched = await matched_sessions(
                            client, self.project_id, query, offers, now
                        )
                if self.matched is not None:
                    wanted = self.matched.ids - {s.id for s in self.loaded if s.id}
                    if not wanted:
                        return Look([], None, 0)
            return await look_for_sessions(
                client, self.project_id, query, now, after, wanted, bounds=bounds
            )

        self.state = "loading…"
        self.update_header()
        self.call_api(
            call,
            self._loaded,
            group="sessions",
            failed=self._failed,
            retry=lambda: self.load_page(first=first),
            project_id=self.project_id,
        )

    def _failed(self, error: ApiError) -> None:
        self.state = error_line(error)  # what was loaded stays
        self.update_header()

    def _loaded(self, look: Look | None) -> None:
        if look is None:
            self.state = missing_feature(self.tui.client, "sessions") + " (esc goes back)"
            self.update_header()
            return
        known = {session.id for session in self.loaded}
        self.loaded += [s for s in look.kept if s.id not in known]
        self.listed += look.listed
        self.next_page = look.next_page
        if self.matched is not None and self.matched.ids <= {s.id for s in self.loaded}:
            self.next_page = None  # every session the search found is listed
        query = self.session_query
        if self.text_here:
            words = SessionQuery(text=query.text)
            self.sessions = [s for s in self.loaded if session_matches(s, words, self.tui.now())]
        else:
            self.sessions = list(self.loaded)
        if self.next_page:
            self.state = "more below"
        elif self.sessions:
            self.state = "all loaded"
        else:
            self.state = self.nothing_found()
        self.show_rows()
        self.update_header()

    def nothing_found(self) -> str:
        """Why there are no rows, in the query's words."""
        query = self.session_query
        if self.of is not None and self.of.session_ids is not None:
            return "none for these traces"
        window = f"the last {query.last}" if query.last else "the last 24 hours"
        if self.matched is not None and not self.matched.ids:
            return f"no trace of {window} says {self.said()}"
        return f"none in {window}"

    def said(self) -> str:
        return " ".join(f'"{word}"' for word in self.session_query.text)

    def show_rows(self) -> None:
        """The rows from the sessions held (also every AGE_TICK_S: "last seen 3m ago")."""
        now = self.tui.now()
        table = self.query_one(Table)
        # Each row's key is its id: a refresh keeps the cursor on its session.
        table.set_rows([(session_cells(session, now), session.id) for session in self.sessions])
        if self.session_query.is_empty:
            table.empty_text = EMPTY  # said where sessions come from, not just that there are none
        else:
            table.empty_text = Text(
                "No session matches the query. / changes it, x clears it (every session of "
                "the last 24 hours)."
            )

    def update_header(self) -> None:
        text = Text()
        text.append_text(safe_text(self.project_name, 40, style="bold"))
        text.append(" · sessions")
        query = self.session_query
        of = self.of
        if of is not None:
            text.append(" · of ")
            text.append_text(safe_text(of.words, 60, style="bold italic"))
            if of.session_ids is not None:  # the sessions of the traces it showed
                some = "loaded " if of.partial else ""
                text.append(f" ({fmt.counted(of.traces, some + 'trace')})")
            text.append(f" · {len(self.sessions):,} · ")
            text.append_text(safe_text(self.state, 100, style="italic"))
            self.query_one("#header", Static).update(text)
            return
        if query.user_id is not None:
            text.append(" of ")
            text.append_text(safe_text(query.user_id, 30, style="bold"))
        text.append(f" · last {query.last}" if query.last else "")
        if query.text and self.text_here:
            text.append(" · ")
            text.append_text(safe_text(self.said(), 40, style="bold"))
            text.append(
                f" in id or user, filtering loaded rows: {len(self.sessions):,} of "
                f"{len(self.loaded):,} ({self.why_here()})"
            )
        elif query.text:
            text.append(" · whose traces say ")
            text.append_text(safe_text(self.said(), 40, style="bold"))
            text.append(f" · {len(self.sessions):,}")
            if self.matched is not None and self.matched.cut:
                text.append(f" (of the first {MATCHED_TRACES_MAX:,} traces that say it)")
        else:
            text.append(f", newest first · {len(self.sessions):,}")
        if not query.is_empty:
            text.append(" · x clears", style="dim")
        text.append(" · ")
        text.append_text(safe_text(self.state, 100, style="italic"))
        self.query_one("#header", Static).update(text)

    def why_here(self) -> str:
        if any(len(word) < MIN_WORD for word in self.session_query.text):
            return f"the server searches words of {MIN_WORD} characters or more"
        return "this server cannot search the traces' text"

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        # The next page once the cursor nears the end of what is loaded.
        if self.next_page is not None and event.cursor_row >= len(self.sessions) - 10:
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
            self.tui.open_session(self.project_id, self.sessions[table.cursor_row])


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
