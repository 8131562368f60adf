"""The trace detail screen: a summary, the span tree with rollups, and the selected span's detail."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel
from rich.console import Group
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, Vertical
from textual.widgets import Input, Static

from tui.api import ApiError, NotFound, Span, Trace, TraceSource
from tui.core.gcpause import (
    collect_garbage,
    gc_paused,
    hold_out_of_collections,
    return_to_collections,
)
from tui.model import formatting as fmt
from tui.model.annotations import annotated_positions
from tui.model.chat import message_text, trace_facts, trace_preview
from tui.model.spans import TraceTree, build_tree, conversation_at, search_order, span_matcher
from tui.model.text import safe_text
from tui.ui.screens.annotation_actions import annotation_bindings
from tui.ui.screens.base import AppScreen, error_line
from tui.ui.screens.detail_annotating import DetailAnnotating
from tui.ui.widgets.document import DocumentView
from tui.ui.widgets.key_footer import KeyFooter
from tui.ui.widgets.load_failure import trace_not_loaded
from tui.ui.widgets.span_detail import SpanDetail
from tui.ui.widgets.span_tree import SpanTreeView, header_line
from tui.ui.widgets.status_bar import StatusBar

# The service's mark on a span whose model has no price, as it appears in the span's JSON.
UNPRICED_MARK = b"unknown_model"


def unpriced_spans(spans: Sequence[Span]) -> int:
    """How many spans the service could not price (their model has no price): their $0 is not
    a cost. A big trace's spans (a SpanTable) are made only when their JSON names the mark."""
    from tui.api.span_table import SpanTable  # loaded by the read that made these spans

    table = spans if isinstance(spans, SpanTable) else None
    count = 0
    for i in range(len(spans)):
        if table is not None and UNPRICED_MARK not in table.json_of(i):
            continue
        span = spans[i]
        count += not span.cost_usd and fmt.cost_is_unknown(span.attributes)
    return count


def cost_text(total: float | None, unpriced: int) -> str:
    """`cost $0.0087`; `cost unknown (...)` when nothing was priced; else what is left out."""
    if not unpriced:
        return f"cost {fmt.cost(total)}"
    why = f"{fmt.counted(unpriced, 'span')} with a model without a price"
    if not total:
        return f"cost {fmt.UNKNOWN_COST} ({why})"
    return f"cost {fmt.cost(total)} + {fmt.UNKNOWN_COST} ({why})"


def summary_text(trace: Trace, tree: TraceTree, now: datetime, unpriced: int = 0) -> Group:
    """The trace at a glance: id and name; time, cost, tokens, spans and errors (wrapped);
    and on one row, cut to the width, its user, session, tags and input."""
    text = Text()
    text.append("Trace ", style="bold")
    text.append_text(safe_text(trace.id or "?", 40))
    if trace.name:
        text.append("  ")
        text.append_text(safe_text(trace.name, 40, style="bold"))
    text.append("\n")
    # The server's totals when it sent them, else the sum over the root spans' subtrees.
    roots = [i for i in range(tree.size) if tree.parent[i] == -1]
    inp = trace.input_tokens
    if inp is None:
        inp = sum(tree.sub_input[i] for i in roots)
    out = trace.output_tokens
    if out is None:
        out = sum(tree.sub_output[i] for i in roots)
    total = trace.total_cost_usd
    if total is None:
        total = sum(tree.sub_cost[i] for i in roots)
    errors = tree.error_count
    parts = [
        f"{fmt.local_time(trace.started_at)} ({fmt.ago(trace.started_at, now)})",
        fmt.duration(trace.duration_ms),
        cost_text(total, unpriced),
        f"tokens {fmt.tokens(inp)} in / {fmt.tokens(out)} out",
        f"{tree.size} spans, depth {tree.max_depth + 1 if tree.size else 0}",
    ]
    text.append(" · ".join(parts))
    text.append(" · ")
    text.append(
        f"✗ {fmt.counted(errors, 'error')}" if errors else "no errors",
        style="bold red" if errors else "green",
    )
    # The trace's own attributes: who, which session, tags; and what it was asked.
    attributes = trace.attributes if isinstance(trace.attributes, dict) else {}
    tags = {"tags": trace.attributes} if isinstance(trace.attributes, list) else {}
    # The server's own fields first (the search extension's user_id, session_id, tags).
    fields = {"user_id": trace.user_id, "session_id": trace.session_id, "tags": trace.tags}
    context: list[tuple[str, str]] = trace_facts(fields, attributes, trace.model_extra, tags)
    # The answer at a glance (the server's preview, else the root's or the last model call's
    # output), before the input: on a narrow terminal the row is cut from its end.
    answer = trace.output_preview or answer_of(tree)
    if answer:
        context.append(("answer", answer))
    asked = trace_preview({"input_preview": trace.input_preview}, trace.model_extra, attributes)
    if asked:
        context.append(("input", asked))
    row = Text(no_wrap=True, overflow="ellipsis")
    for n, (label, value) in enumerate(context):
        if n:
            row.append(" · ", style="dim")
        row.append(f"{label} ", style="dim")
        limit = {"input": 200, "answer": 120}.get(label, 40)
        row.append_text(safe_text(value, limit, style="bold" if label == "answer" else ""))
    return Group(text, row) if context else Group(text)


ANSWER_SPANS = 200  # model calls looked at, from the last, for a trace's answer


def answer_of(tree: TraceTree) -> str | None:
    """A trace's final answer in one line: its root's output messages, else the last model
    call's (of the last ANSWER_SPANS spans: a huge trace is not read whole for a summary)."""
    roots = [i for i in range(tree.size) if tree.parent[i] == -1][:1]
    calls = [
        i
        for i in range(tree.size - 1, max(-1, tree.size - 1 - ANSWER_SPANS), -1)
        if tree.spans[i].kind in ("llm", "generation") or tree.spans[i].model
    ]
    for position in roots + calls[:1]:
        conv = conversation_at(tree, position)
        if conv is not None and conv.output:
            text = " ".join(message_text(conv.output[-1]).split())
            if text:
                return text[:200]
        if conv is not None and isinstance(conv.output_value, str) and conv.output_value.strip():
            return " ".join(conv.output_value.split())[:200]
    return None


SEARCH_BATCH = 200  # spans a search looks at between two frames

# From this size on, an open trace is held out of garbage collections (see tui/core/gcpause.py).
HOLD_OUT_SPANS = 2000


def json_text(record: BaseModel) -> str:
    """A record as readable JSON (Unicode kept as it is) that can always be encoded: a lone half
    of a UTF-16 pair, which a server's JSON may carry, is written as its \\uXXXX escape, as
    JSON allows. (Pydantic's own JSON mode refuses such a string.) A trace's spans, which may
    be made one by one as they are asked for (tui/api/span_table.py), are dumped one by one."""
    if isinstance(record, Trace):
        data = record.model_dump(exclude={"spans"})
        data["spans"] = [span.model_dump() for span in record.spans]
    else:
        data = record.model_dump()
    text = json.dumps(data, indent=2, ensure_ascii=False, default=_json_default)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    return str(value)


class TraceDetailScreen(DetailAnnotating, AppScreen):
    """One trace. Opened from the trace list, the palette, or `tracetui trace ID`. Its
    annotations: detail_annotating.py."""

    # Nothing takes focus until the tree is shown (then the tree does): the detail pane taking
    # it while the trace loads would make the 80x24 layout jump.
    AUTO_FOCUS = None

    BINDINGS = [
        Binding("escape", "back", "Back", show=False, id="detail.back"),
        Binding(
            "tab",
            "switch_pane",
            "Pane",
            id="detail.focus_next",
            tooltip="Move between the span tree and the detail pane",
        ),
        Binding("shift+tab", "switch_pane", "Pane", show=False, id="detail.focus_previous"),
        Binding(
            "c",
            "switch_view",
            "View",
            id="detail.view",
            tooltip="Show the span's conversation, or its fields and attributes",
        ),
        Binding(
            "z",
            "zoom",
            "Zoom",
            id="detail.zoom",
            tooltip="Give the detail pane the whole screen (again to go back)",
        ),
        Binding(
            "slash",
            "search",
            "Find",
            id="detail.search",
            tooltip="Search spans (names, models, ids, message text), or the detail pane's text",
        ),
        Binding(
            "y",
            "copy",
            "Copy JSON",
            show=False,
            id="detail.copy",
            tooltip="Copy the selected span as JSON (OSC 52)",
        ),
        Binding(
            "Y",
            "copy_trace",
            "Copy trace",
            show=False,
            id="detail.copy_trace",
            tooltip="Copy the whole trace as JSON (OSC 52)",
        ),
        Binding(
            "e",
            "export",
            "Export",
            show=False,
            id="detail.export",
            tooltip="Export the whole trace as JSON",
        ),
        Binding("r", "reload", "Reload", show=False, id="detail.reload"),
        Binding(
            "D",
            "diff",
            "Diff",
            show=False,
            id="detail.diff",
            tooltip="Compare with the last good one: the newest earlier trace of its name without an error",
        ),
        *annotation_bindings(
            "detail", "the selected span, or the whole trace", listed="the trace and its spans"
        ),
    ]
    DEFAULT_CSS = """
    TraceDetailScreen #summary { height: auto; padding: 0 1; background: $boost; }
    TraceDetailScreen #tree-header { height: 1; padding: 0 0; color: $text-muted; text-style: bold; }
    TraceDetailScreen #panes { layout: vertical; height: 1fr; }
    TraceDetailScreen #tree-pane { height: 2fr; }
    TraceDetailScreen SpanDetail { height: 1fr; min-height: 9; }
    TraceDetailScreen.-narrow SpanDetail:focus-within { height: 1fr; }
    TraceDetailScreen.-narrow #panes:focus-within #tree-pane { height: 5; }
    TraceDetailScreen.-narrow #panes:focus-within #tree-pane:focus-within { height: 1fr; }
    TraceDetailScreen.-wide #panes { layout: horizontal; }
    TraceDetailScreen.-wide #tree-pane { width: 3fr; height: 1fr; max-width: 84; }
    TraceDetailScreen.-wide SpanDetail { width: 2fr; height: 1fr; border-left: solid $primary-darken-2; }
    TraceDetailScreen.-zoom #summary, TraceDetailScreen.-zoom #tree-pane { display: none; }
    TraceDetailScreen.-zoom SpanDetail { width: 1fr; height: 1fr; border-left: none; }
    TraceDetailScreen #search { dock: bottom; display: none; }
    TraceDetailScreen #search.-open { display: block; }
    TraceDetailScreen #message { padding: 1 2; }
    TraceDetailScreen.-failed SpanDetail, TraceDetailScreen.-failed #tree-header { display: none; }
    TraceDetailScreen.-failed #panes:focus-within #tree-pane { max-height: 100%; height: 1fr; }
    """

    def __init__(self, trace_id: str, project_id: str | None = None) -> None:
        super().__init__()
        self.trace_id = trace_id
        self.project_id = project_id
        self.trace: Trace | None = None
        self.trace_tree: TraceTree | None = None
        self._unpriced = 0  # spans of the trace whose model has no price
        self.marked: set[int] = set()  # the positions of annotated spans
        self._search_in = "spans"  # what the search field searches: "spans" or "detail"
        # The trace is asked for now, before the screen is built and drawn (see ask_now).
        self._early: asyncio.Task[Trace] | None = self.ask_now(
            lambda client: client.get_trace(trace_id, project_id)
        )

    def compose(self) -> ComposeResult:
        yield Static(id="summary")
        with Container(id="panes"):
            with Vertical(id="tree-pane"):
                yield Static(id="tree-header")
                yield Static(Text("Loading trace…"), id="message")
            yield SpanDetail()
        yield Input(
            placeholder="search spans: name, kind, model, id, error — Enter for next", id="search"
        )
        yield StatusBar()
        yield KeyFooter()

    def on_mount(self) -> None:
        self.load()
        self.keep_ages_current(self.show_summary)  # "(4m ago)" keeps counting

    def show_summary(self) -> None:
        if self.trace is not None and self.trace_tree is not None:
            now = self.tui.now()
            summary = summary_text(self.trace, self.trace_tree, now, self._unpriced)
            notes = self.annotation_lines(now)
            self.query_one("#summary", Static).update(Group(summary, *notes) if notes else summary)

    def on_resize(self) -> None:
        self.set_class(self.size.width >= 120, "-wide")
        self.set_class(self.size.width < 120, "-narrow")
        self.call_after_refresh(self._update_header)

    def _update_header(self) -> None:
        self.query_one("#tree-header", Static).update(Text(header_line(self._tree_width())))
        for view in self.query(SpanTreeView):
            view.refresh()

    def _tree_width(self) -> int:
        for view in self.query(SpanTreeView):
            return view.content_width
        return self.query_one("#tree-pane").size.width or self.size.width

    def load(self) -> None:
        self.call_api(
            self._read,
            self._loaded,
            group="trace",
            failed=self._failed,
            retry=self.load,
        )

    async def _read(self, client: TraceSource) -> tuple[Trace, TraceTree]:
        # The collector stays out from the read until a big trace is held out of it: see
        # tui/core/gcpause.py (a collection in between walks a million fresh objects).
        early, self._early = self._early, None
        with gc_paused():
            trace = await (early or client.get_trace(self.trace_id, self.project_id))
            tree = build_tree(trace.spans)
            # Off the event loop (tens of ms for 100,000 spans); nothing else holds the spans yet.
            self._unpriced = await asyncio.to_thread(unpriced_spans, tree.spans)
            self.marked = await asyncio.to_thread(annotated_positions, tree.spans)
            if tree.size >= HOLD_OUT_SPANS:
                hold_out_of_collections(self)
        return trace, tree

    def _failed(self, error: ApiError) -> bool:
        if self.query(SpanTreeView):
            return False  # a reload failed: the tree stays, and the app says what went wrong
        # Nothing to show but why: the panes and their keys go, esc leaves, ctrl+r retries.
        not_found = isinstance(error, NotFound)
        self.load_failed = "not found" if not_found else "retryable"
        self.add_class("-failed")
        for widget in (self.query_one(SpanDetail), self.query_one("#search")):
            widget.disabled = True  # nor focused: their keys would show
        self.set_focus(None)
        beneath = len(self.app.screen_stack) > 2  # the bottom one is Textual's empty screen
        back = "esc goes back" if beneath else "esc quits (ctrl+p opens a trace or a project)"
        self.query_one("#message", Static).update(
            trace_not_loaded(self.trace_id, error_line(error), not not_found, not_found, back)
        )
        self.refresh_bindings()
        return not_found  # said in place; there is nothing to retry

    # What a trace that did not load leaves: "not found", "retryable", or None (loading, loaded).
    load_failed: str | None = None
    # The keys that need a loaded trace: out of the footer, and not run, until there is one.
    NEED_A_TRACE = frozenset(
        [
            "switch_pane",
            "switch_view",
            "zoom",
            "search",
            "copy",
            "copy_trace",
            "export",
            "diff",
            "annotate",
        ]
    )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self.trace_tree is None and action in self.NEED_A_TRACE:
            return False
        if action == "reload" and self.trace_tree is None:
            return self.load_failed == "retryable"
        return super().check_action(action, parameters)

    def _loaded(self, loaded: tuple[Trace, TraceTree]) -> None:
        self.trace, self.trace_tree = loaded
        self.load_failed = None
        self.remove_class("-failed")
        for widget in (self.query_one(SpanDetail), self.query_one("#search")):
            widget.disabled = False
        self.refresh_bindings()
        self._show()
        self.load_notes()

    def _show(self) -> None:
        """The summary, the tree and the first span's detail, all drawn in the next frame:
        nothing here waits (an awaited mount or removal lets a frame be drawn in between, and
        one frame of this screen costs as much as building the tree of 10,000 spans)."""
        assert self.trace is not None and self.trace_tree is not None
        self.show_summary()
        pane = self.query_one("#tree-pane")
        for old in pane.query(SpanTreeView):
            old.remove()
        message = self.query_one("#message", Static)
        if self.trace_tree.size == 0:
            message.update(Text("This trace has no spans."))
            message.display = True
            return
        message.display = False
        view = SpanTreeView(self.trace_tree)
        view.marked = self.marked
        # A short trace's tree takes no more rows than it has spans: the rest go to the detail.
        pane.styles.max_height = self.trace_tree.size + 1
        pane.mount(view)  # in the DOM at once; mounted before the next frame
        self.call_after_refresh(self._update_header)
        view.focus()
        self.query_one(SpanDetail).show(self.trace_tree, view.position)

    def on_unmount(self) -> None:
        # Let go of the spans first (SpanTreeView and SpanDetail do the same), so reference
        # counting frees them without the collector's help, then give it back what `_show`
        # held out of it.
        if self._early is not None:
            self._early.cancel()
        big = self.trace_tree is not None and self.trace_tree.size >= HOLD_OUT_SPANS
        self.trace = self.trace_tree = None
        return_to_collections(self)
        if big:  # once the list beneath is drawn again
            self.app.call_after_refresh(collect_garbage)

    @on(SpanTreeView.Resized)
    def _tree_resized(self) -> None:
        self._update_header()

    @on(SpanTreeView.SpanHighlighted)
    def _highlighted(self, event: SpanTreeView.SpanHighlighted) -> None:
        if self.trace_tree is None:
            return
        for view in self.query(SpanTreeView):
            if view.position != event.position:
                return  # the cursor moved on (a key held down): the newer move shows its span
        self.query_one(SpanDetail).show(self.trace_tree, event.position)

    def action_back(self) -> None:
        search = self.query_one("#search", Input)
        if search.has_class("-open"):
            search.remove_class("-open")
            self._focus(self._search_in)
        elif self.has_class("-zoom"):
            self.action_zoom()
        elif self._detail_focused() and self.query(SpanTreeView):
            self._focus("tree")  # back a level: from the pane to the tree, then off the trace
        elif len(self.app.screen_stack) <= 2:  # nothing beneath: the trace was all there was
            self.app.exit()
        else:
            project_id = self.trace.project_id if self.trace is not None else None
            self.tui.close_trace(project_id or self.project_id)

    def _focus_tree(self) -> None:
        for view in self.query(SpanTreeView):
            view.focus()

    def _focus(self, pane: str) -> None:
        if pane == "detail":
            self.query_one(SpanDetail).document.focus()
        else:
            self.remove_class("-zoom")
            self._focus_tree()

    def _detail_focused(self) -> bool:
        focused = self.focused
        return focused is not None and self.query_one(SpanDetail) in focused.ancestors_with_self

    def action_switch_pane(self) -> None:
        """Tab: from the span tree to the detail pane's content and back, in one press."""
        self._focus("tree" if self._detail_focused() else "detail")

    def action_switch_view(self) -> None:
        self.query_one(SpanDetail).switch_view()

    def action_zoom(self) -> None:
        """The detail pane alone on screen, or back beside (or below) the span tree."""
        zoomed = not self.has_class("-zoom")
        self.set_class(zoomed, "-zoom")
        if zoomed:
            self.query_one(SpanDetail).document.focus()

    def action_reload(self) -> None:
        self.load()

    def action_search(self) -> None:
        """/ searches what has focus: the detail pane's text, or the spans."""
        self._search_in = "detail" if self._detail_focused() else "spans"
        search = self.query_one("#search", Input)
        search.placeholder = (
            "search this span's text (Enter: next match; n/N later; esc closes)"
            if self._search_in == "detail"
            else "search spans: name, kind, model, id, error, message text — Enter for next"
        )
        search.add_class("-open")
        search.focus()

    @on(Input.Submitted, "#search")
    def _search(self, event: Input.Submitted) -> None:
        query = event.value.strip()
        if self.trace_tree is None or not query:
            return
        if self._search_in == "detail":
            if not self.query_one(SpanDetail).document.search(query):
                self.notify("Nothing in this span matches.", timeout=3)
            return
        self.run_worker(
            self._find_span(self.trace_tree, query),
            name="span-search",
            group="span-search",
            exclusive=True,
            exit_on_error=False,
        )

    async def _find_span(self, tree: TraceTree, query: str) -> None:
        """Go to the next span matching `query`. Reading a span's message text for the first
        time costs some 60 µs, so the search lets the screen draw between batches (a first
        search of a 50,000-span trace reads for seconds; the next ones take milliseconds)."""
        view = self.query_one(SpanTreeView)
        matches = span_matcher(tree, query)
        if tree.size > SEARCH_BATCH * 10 and len(tree.texts) < tree.size:
            self.notify(f"Searching the message text of {tree.size:,} spans…", timeout=3)
        for count, position in enumerate(search_order(tree, view.position or 0), 1):
            if matches(position):
                if tree is self.trace_tree:
                    view.go_to(position)
                return
            if count % SEARCH_BATCH == 0:
                await asyncio.sleep(0)
        self.notify("No span matches.", timeout=3)

    @on(DocumentView.CopyRequested)
    def _copy_from_detail(self, event: DocumentView.CopyRequested) -> None:
        self.tui.copy_text(event.text, event.what)

    def action_copy(self) -> None:
        for view in self.query(SpanTreeView):
            if view.position is not None:
                span = view.trace_tree.spans[view.position]
                self.tui.copy_text(json_text(span), "span as JSON")

    def action_diff(self) -> None:
        """What differs from the last good trace of its name (the diff screen finds it)."""
        project_id = self.trace.project_id if self.trace is not None else None
        self.tui.open_diff(self.trace_id, project_id or self.project_id)

    def action_copy_trace(self) -> None:
        trace = self.trace
        if trace is not None:
            self.tui.copy_text(json_text(trace), "trace as JSON")

    def action_export(self) -> None:
        trace = self.trace
        if trace is not None:  # the app asks where (never the working directory unasked)
            self.tui.export_trace(self.trace_id, lambda: json_text(trace))
