"""The diff of two traces: A (the one that worked) and B. At the top, the two traces and the
summary's first sentences; then the aligned span tree with its marks (= ~ + −) and deltas, and
the selected pair's fields and text diffs below it (beside it when the terminal is wide).

Opened from the trace list (`m` marks A, `D` diffs the trace under the cursor against it) or
from a trace (`D`: against its last good one, the newest earlier trace of its name without an
error; the header says which one was chosen, or that there is none, and `p` picks another).
The two traces are fetched and found through tui/ui/trace_pair.py, the same as `tracetui diff`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, Vertical
from textual.widgets import Input, Static

from tui.api import ApiError, NotFound
from tui.core.gcpause import gc_paused
from tui.model.diff import TraceDiff, diff_trees, pair_detail, summary
from tui.model.diff.summary import ERROR, NAME, Sentence
from tui.model.text import safe_text
from tui.ui.screens.base import AppScreen, error_line
from tui.ui.trace_pair import LoadedPair, NoLastGood, NotComparable, load_pair
from tui.ui.widgets.blocks import Block, piece
from tui.ui.widgets.diff_detail import (
    DiffDocument,
    WrappedBlock,
    detail_blocks,
    sentence_text,
    trace_line,
)
from tui.ui.widgets.diff_tree import DiffTreeView, header_line
from tui.ui.widgets.key_footer import KeyFooter
from tui.ui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from tui.api import TraceSource
    from tui.model.diff.last_good import Found

SUMMARY_LINES_NARROW = 4  # the summary's sentences at the top at 80x24; all in the first row's
SUMMARY_LINES_TALL = 8  # detail. More on a terminal this tall:
TALL = 40
PICK_HINT = "p picks another"


class DiffScreen(AppScreen):
    """Two traces compared. Opened through the app (navigation.open_diff)."""

    AUTO_FOCUS = None
    BINDINGS = [
        Binding("escape", "back", "Back", id="diff.back"),
        Binding(
            "tab",
            "switch_pane",
            "Pane",
            id="diff.focus_next",
            tooltip="Move between the aligned tree and the selected pair's diff",
        ),
        Binding("shift+tab", "switch_pane", "Pane", show=False, id="diff.focus_previous"),
        Binding(
            "p",
            "pick",
            "Other A",
            id="diff.pick",
            tooltip="Compare B with another trace: an earlier one of its name, or the marked one",
        ),
        Binding(
            "x",
            "swap",
            "Swap",
            show=False,
            id="diff.swap",
            tooltip="Swap A and B (what B added becomes what A has alone)",
        ),
        Binding(
            "z",
            "zoom",
            "Zoom",
            show=False,
            id="diff.zoom",
            tooltip="Give the pair's diff the whole screen (again to go back)",
        ),
        Binding(
            "slash",
            "search",
            "Find",
            show=False,
            id="diff.search",
            tooltip="Search the selected pair's diff",
        ),
        Binding("o", "open_b", "Open B", show=False, id="diff.open_b", tooltip="Open trace B"),
        Binding("O", "open_a", "Open A", show=False, id="diff.open_a", tooltip="Open trace A"),
        Binding("r", "reload", "Reload", show=False, id="diff.reload"),
    ]
    FOOTER_WHEN_ROOM = ("diff.swap", "diff.zoom", "diff.search", "difftree.previous")
    DEFAULT_CSS = """
    DiffScreen #traces { height: auto; padding: 0 1; background: $boost; }
    DiffScreen #summary { height: auto; padding: 0 1; background: $boost; }
    DiffScreen #tree-header { height: 1; color: $text-muted; text-style: bold; }
    DiffScreen #panes { layout: vertical; height: 1fr; }
    DiffScreen #tree-pane { height: 1fr; min-height: 4; }
    DiffScreen DiffDocument { height: 1fr; min-height: 6; border-top: solid $primary-darken-2; }
    DiffScreen.-wide #panes { layout: horizontal; }
    DiffScreen.-wide #tree-pane { width: 3fr; height: 1fr; }
    DiffScreen.-wide DiffDocument { width: 2fr; height: 1fr; border-top: none; border-left: solid $primary-darken-2; }
    DiffScreen.-zoom #traces, DiffScreen.-zoom #summary, DiffScreen.-zoom #tree-pane { display: none; }
    DiffScreen.-zoom DiffDocument { width: 1fr; height: 1fr; border-left: none; }
    DiffScreen #message { padding: 1 2; }
    DiffScreen #search { dock: bottom; display: none; }
    DiffScreen #search.-open { display: block; }
    DiffScreen.-failed DiffDocument, DiffScreen.-failed #tree-header { display: none; }
    """

    def __init__(self, b_id: str, project_id: str | None = None, a_id: str | None = None) -> None:
        super().__init__()
        self.b_id = b_id
        self.a_id = a_id  # None: B's last good trace
        self.project_id = project_id
        self.loaded: LoadedPair | None = None
        self.found: Found | None = None  # how A was looked for, when it was
        self.sentences: list[Sentence] = []

    def compose(self) -> ComposeResult:
        yield Static(Text("Loading the two traces…"), id="traces")
        yield Static(id="summary")
        with Container(id="panes"):
            with Vertical(id="tree-pane"):
                yield Static(id="tree-header")
                yield Static(id="message")
            yield DiffDocument(id="detail")
        yield Input(
            placeholder="search the pair's diff (Enter: next match; esc closes)", id="search"
        )
        yield StatusBar()
        yield KeyFooter()

    def on_mount(self) -> None:
        self.load()

    def on_resize(self) -> None:
        self.set_class(self.size.width >= 120, "-wide")
        self.call_after_refresh(self._update_header)
        self._show_summary()

    # -- loading ---------------------------------------------------------------------------------

    def load(self) -> None:
        what = "its last good trace" if self.a_id is None else "the two traces"
        self.query_one("#traces", Static).update(Text(f"Loading trace {self.b_id} and {what}…"))
        self.call_api(self._read, self._loaded, group="diff", failed=self._failed, retry=self.load)

    async def _read(self, client: TraceSource) -> LoadedPair:
        with gc_paused():  # two big traces are a million fresh objects: tui/core/gcpause.py
            return await load_pair(client, self.b_id, self.a_id, self.project_id)

    def _failed(self, error: ApiError) -> bool:
        """Nothing to compare: the screen says why in place (and what to do); a diff already
        shown stays, and the app says what failed (a server down: ctrl+r retries)."""
        if isinstance(error, NoLastGood):
            self.found = error.found
        if self.loaded is not None:  # another A was asked for: the pair shown stays
            self.a_id, self.b_id = self.loaded.a.id, self.loaded.b.id or self.b_id
            return False
        self.add_class("-failed")
        text = Text()
        text.append_text(safe_text(error_line(error), 600, style="bold", multiline=True))
        if isinstance(error, NoLastGood):
            text.append(
                "\n\nPress p to compare it with another trace (an earlier one of its name, "
                "the one marked with m on the trace list, or any id); esc goes back."
            )
        self.query_one("#message", Static).update(text)
        self.query_one("#traces", Static).update(Text(f"B {self.b_id}", style="bold"))
        self.refresh_bindings()
        return isinstance(error, (NoLastGood, NotComparable, NotFound))

    def _loaded(self, loaded: LoadedPair) -> None:
        self.loaded = loaded
        self.a_id = loaded.a.id
        if loaded.found is not None:
            self.found = loaded.found
        self.remove_class("-failed")
        self._show(loaded.diff)

    def _show(self, diff: TraceDiff) -> None:
        assert self.loaded is not None
        self.sentences = summary(diff, self.loaded.a.duration_ms, self.loaded.b.duration_ms)
        self._show_traces()
        self._show_summary()
        pane = self.query_one("#tree-pane")
        for old in pane.query(DiffTreeView):
            old.remove()
        self.query_one("#message").display = False
        view = DiffTreeView(diff)
        pane.mount(view)
        view.focus()
        self.call_after_refresh(self._update_header)
        self._show_row(0)
        self.refresh_bindings()

    def _show_traces(self) -> None:
        loaded = self.loaded
        if loaded is None:
            return
        text = trace_line("A", loaded.a)
        text.append("\n")
        text.append_text(trace_line("B", loaded.b))
        found = self.found
        if found is not None and found.chosen is not None and found.chosen.id == loaded.a.id:
            text.append("\n")
            text.append_text(safe_text(found.sentence(PICK_HINT, short=True), style="dim"))
        self.query_one("#traces", Static).update(text)

    def _summary_lines(self) -> int:
        return SUMMARY_LINES_TALL if self.size.height >= TALL else SUMMARY_LINES_NARROW

    def _summary_cut(self) -> bool:
        """Whether the top shows less than the whole summary (the first row's detail has it)."""
        return len(self.sentences) > self._summary_lines()

    def _show_summary(self) -> None:
        """The summary's first sentences, each on one line, cut to the width; the rest are in
        the first row's detail, which the cursor starts on."""
        if not self.sentences:
            return
        room = self._summary_lines()
        shown = self.sentences if len(self.sentences) <= room else self.sentences[: room - 1]
        width = max(20, self.size.width - 2)
        lines = []
        for sentence in shown:
            line = Text("· ", style="dim")
            line.append_text(sentence_text(sentence))
            line.truncate(width, overflow="ellipsis")
            lines.append(line)
        left = len(self.sentences) - len(shown)
        if left:
            more = f"· {left} more: the whole summary is the first row's detail"
            lines.append(Text(more[:width], style="dim"))
        text = Text("\n").join(lines)
        self.query_one("#summary", Static).update(text)

    def _update_header(self) -> None:
        for view in self.query(DiffTreeView):
            self.query_one("#tree-header", Static).update(Text(header_line(view.content_width)))
            view.refresh()

    @on(DiffTreeView.Resized)
    def _tree_resized(self) -> None:
        self._update_header()

    # -- the selected pair -----------------------------------------------------------------------

    @on(DiffTreeView.RowHighlighted)
    def _highlighted(self, event: DiffTreeView.RowHighlighted) -> None:
        for view in self.query(DiffTreeView):
            if view.row != event.row:
                return  # the cursor moved on: the newer move shows its pair
        if event.row is not None:
            self._show_row(event.row)

    def _show_row(self, row: int) -> None:
        loaded = self.loaded
        if loaded is None:
            return
        views = list(self.query(DiffTreeView))
        diff = views[0].diff if views else loaded.diff
        if not 0 <= row < diff.size:
            return
        blocks = self._first_row_blocks() if row == 0 else []
        blocks += detail_blocks(pair_detail(diff, row))
        self.query_one(DiffDocument).show(blocks)

    def _first_row_blocks(self) -> list[Block]:
        """Above the first row's pair: the whole summary when the top has no room for it, and
        how A was found, with how far the search looked."""
        blocks: list[Block] = []
        if self._summary_cut():
            blocks.append(Block([("Summary", "heading")]))
            for sentence in self.sentences:
                pieces = [("· ", "dim")]
                for part, kind in sentence:
                    style = "key" if kind == NAME else "error" if kind == ERROR else ""
                    pieces.append(piece(part, style, 2000))
                blocks.append(WrappedBlock(pieces))
        if self.found is not None and self.found.chosen is not None:
            blocks.append(WrappedBlock([piece(self.found.sentence(PICK_HINT), "dim", 2000)]))
        if blocks:
            blocks[-1].gap = True
        return blocks

    # -- actions ---------------------------------------------------------------------------------

    NEED_A_DIFF = frozenset(["switch_pane", "swap", "zoom", "search", "open_a"])

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self.loaded is None and action in self.NEED_A_DIFF:
            return False
        return super().check_action(action, parameters)

    def action_back(self) -> None:
        search = self.query_one("#search", Input)
        if search.has_class("-open"):
            search.remove_class("-open")
            self.query_one(DiffDocument).focus()
        elif self.has_class("-zoom"):
            self.action_zoom()
        elif self._detail_focused() and self.query(DiffTreeView):
            self.query_one(DiffTreeView).focus()
        elif len(self.app.screen_stack) <= 2:
            self.app.exit()
        else:
            self.dismiss()

    def _detail_focused(self) -> bool:
        focused = self.focused
        return focused is not None and focused is self.query_one(DiffDocument)

    def action_switch_pane(self) -> None:
        if self._detail_focused():
            self.remove_class("-zoom")
            for view in self.query(DiffTreeView):
                view.focus()
        else:
            self.query_one(DiffDocument).focus()

    def action_zoom(self) -> None:
        zoomed = not self.has_class("-zoom")
        self.set_class(zoomed, "-zoom")
        if zoomed:
            self.query_one(DiffDocument).focus()

    def action_search(self) -> None:
        search = self.query_one("#search", Input)
        search.add_class("-open")
        search.focus()

    @on(Input.Submitted, "#search")
    def _search(self, event: Input.Submitted) -> None:
        query = event.value.strip()
        if query and not self.query_one(DiffDocument).search(query):
            self.notify("Nothing in this pair's diff matches.", timeout=3)

    def action_swap(self) -> None:
        """B against A becomes A against B: the same traces, diffed the other way."""
        loaded = self.loaded
        if loaded is None:
            return
        self.loaded = LoadedPair(
            loaded.b,
            loaded.a,
            loaded.b_tree,
            loaded.a_tree,
            diff_trees(loaded.b_tree, loaded.a_tree),
        )
        self.a_id, self.b_id = loaded.b.id, loaded.a.id or self.b_id
        self.found = None
        self._show(self.loaded.diff)

    def action_pick(self) -> None:
        """Another A: one of B's earlier traces of its name (those the search saw), or the
        trace marked on the trace list, or any trace id typed in."""
        candidates = list(self.found.candidates) if self.found is not None else []
        b = self.loaded.b if self.loaded is not None else None

        def chosen(trace_id: str | None) -> None:
            if trace_id and trace_id != self.b_id:
                self.a_id = trace_id
                self.found = None
                self.load()

        self.tui.pick_diff_base(self.b_id, b, candidates, self.project_id, chosen)

    def action_open_b(self) -> None:
        self.tui.open_trace(self.b_id, self.project_id)

    def action_open_a(self) -> None:
        if self.a_id:
            self.tui.open_trace(self.a_id, self.project_id)

    def action_reload(self) -> None:
        self.load()
