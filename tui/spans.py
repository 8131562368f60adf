"""Pure (no Textual): flat spans -> an ordered tree with subtree rollups, and what is visible.

Everything here is iterative: traces 10,000 levels deep must not touch the recursion limit. The
tree is kept as parallel lists indexed by pre-order position, so a subtree is the slice
`i:end[i]`, and collapsing or expanding a node splices the visible list instead of rebuilding it.
Spans whose parent is missing (orphans) and spans caught in parent cycles become roots with a
flag, so nothing is lost and nothing is looped over. Duplicate and missing ids get their own keys.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from tui.api.models import Span
from tui.chat import Conversation, conversation, conversation_text
from tui.gcpause import gc_paused

ORPHAN = "orphan"  # names a parent that is not in the trace
CYCLE = "cycle"  # its parent chain loops; cut here
DUPLICATE = "duplicate id"
NO_ID = "no id"


def _timestamp(moment: datetime | None) -> float:
    if moment is None:
        return math.inf
    try:
        return moment.timestamp()
    except (OverflowError, OSError, ValueError):
        return math.inf


def _count(value: int | None) -> int:
    return value if value is not None and value > 0 else 0


def _money(value: float | None) -> float:
    return value if value is not None and math.isfinite(value) and value > 0 else 0.0


@dataclass
class TraceTree:
    """The spans of one trace in display (pre-)order, with structure and rollups per position."""

    spans: list[Span]
    keys: list[str]
    depth: list[int]
    parent: list[int]  # -1 for a root
    end: list[int]  # the subtree of i is positions i .. end[i]-1
    flags: list[tuple[str, ...]]
    errors: list[bool]  # the span itself is an error
    sub_input: list[int]
    sub_output: list[int]
    sub_cost: list[float]
    sub_errors: list[int]
    start: float  # earliest start (unix seconds), for the waterfall
    finish: float  # latest end
    # Read on demand: the conversations of the spans last shown (a few hundred), and the
    # case-folded message text of each span searched so far.
    conversations: dict[int, Conversation | None] = field(default_factory=dict, repr=False)
    texts: dict[int, str] = field(default_factory=dict, repr=False)

    @property
    def size(self) -> int:
        return len(self.spans)

    def has_children(self, i: int) -> bool:
        return self.end[i] > i + 1

    @property
    def max_depth(self) -> int:
        return max(self.depth, default=0)

    @property
    def error_count(self) -> int:
        return sum(self.errors)

    def ancestors(self, i: int) -> list[int]:
        chain = []
        while self.parent[i] != -1:
            i = self.parent[i]
            chain.append(i)
        return chain

    def offset_and_length(self, i: int) -> tuple[float, float]:
        """Where span i starts and how long it runs, as fractions of the whole trace (0..1)."""
        total = self.finish - self.start
        span = self.spans[i]
        begin = _timestamp(span.started_at)
        if total <= 0 or not math.isfinite(total) or not math.isfinite(begin):
            return 0.0, 0.0
        duration = max(0.0, (span.duration_ms or 0.0) / 1000)
        offset = min(1.0, max(0.0, (begin - self.start) / total))
        return offset, min(1.0 - offset, duration / total)


def build_tree(spans: Sequence[Span]) -> TraceTree:
    """Order `spans` as a tree: children by start time, orphans and cycles as flagged roots."""
    with gc_paused():  # lists of 50,000 entries each: see tui/api/gcpause.py
        return _build_tree(spans)


def _build_tree(spans: Sequence[Span]) -> TraceTree:
    # One pass per concern over plain lists; about 1.5 µs a span (a 50,000-span trace is a
    # quarter of a second of this if done carelessly). Sorting by start alone is enough for
    # "by start, then by arrival": Python's sort is stable and indices are appended in order.
    n = len(spans)
    starts = [_timestamp(s.started_at) for s in spans]
    flags: dict[int, list[str]] = {}
    keys: list[str] = []
    first_index: dict[str, int] = {}
    for i, span in enumerate(spans):
        key = span.id
        if not key:
            key = f"#{i}"
            flags.setdefault(i, []).append(NO_ID)
        elif key in first_index:
            flags.setdefault(i, []).append(DUPLICATE)
            key = f"{key}#{i}"
        first_index.setdefault(key, i)
        keys.append(key)

    parent_of = [-1] * n
    children: dict[int, list[int]] = {}
    roots: list[int] = []
    for i, span in enumerate(spans):
        ref = span.parent_id
        found = first_index.get(ref) if ref else -1
        if found is None:
            flags.setdefault(i, []).append(ORPHAN)
            found = -1
        elif found == i:
            flags.setdefault(i, []).append(CYCLE)
            found = -1
        if found == -1:
            roots.append(i)
        else:
            parent_of[i] = found
            kids = children.get(found)
            if kids is None:
                children[found] = [i]
            else:
                kids.append(i)
    by_start = starts.__getitem__
    for kids in children.values():
        if len(kids) > 1:
            kids.sort(key=by_start)

    order: list[int] = []
    depth_of = [0] * n
    visited = [False] * n
    no_children: list[int] = []

    def walk(root: int) -> None:
        stack = [root]
        depth_of[root] = 0
        while stack:
            i = stack.pop()
            if visited[i]:
                continue
            visited[i] = True
            order.append(i)
            kids = children.get(i, no_children)
            if kids:
                below = depth_of[i] + 1
                for child in reversed(kids):
                    if not visited[child]:
                        depth_of[child] = below
                        stack.append(child)

    for root in sorted(roots, key=by_start):
        walk(root)
    if len(order) < n:
        # Whatever is left hangs off a parent cycle: cut each cycle at its earliest span.
        for i in sorted((i for i in range(n) if not visited[i]), key=by_start):
            if not visited[i]:
                flags.setdefault(i, []).append(CYCLE)
                parent_of[i] = -1
                walk(i)

    position = [0] * n
    for pos, i in enumerate(order):
        position[i] = pos
    ordered = [spans[i] for i in order]
    depth = [depth_of[i] for i in order]
    # The parent in the walk, which differs from parent_of only where a cycle was cut.
    parent = [
        -1 if parent_of[i] == -1 or depth_of[i] == 0 else position[parent_of[i]] for i in order
    ]

    end = [n] * n
    open_nodes: list[int] = []
    for pos, level in enumerate(depth):
        while open_nodes and depth[open_nodes[-1]] >= level:
            end[open_nodes.pop()] = pos
        open_nodes.append(pos)

    errors = [s.is_error for s in ordered]
    sub_input = [_count(s.input_tokens) for s in ordered]
    sub_output = [_count(s.output_tokens) for s in ordered]
    sub_cost = [_money(s.cost_usd) for s in ordered]
    sub_errors = [int(e) for e in errors]
    for pos in range(n - 1, 0, -1):
        p = parent[pos]
        if p != -1:
            sub_input[p] += sub_input[pos]
            sub_output[p] += sub_output[pos]
            sub_cost[p] += sub_cost[pos]
            sub_errors[p] += sub_errors[pos]

    start = min((s for s in starts if s != math.inf), default=0.0)
    finish = start
    for begin, span in zip(starts, spans, strict=True):
        duration = span.duration_ms
        if begin != math.inf and duration is not None and math.isfinite(duration):
            end_time = begin + duration / 1000 if duration > 0 else begin
            if end_time > finish:
                finish = end_time
    no_flags: tuple[str, ...] = ()
    return TraceTree(
        spans=ordered,
        keys=[keys[i] for i in order],
        depth=depth,
        parent=parent,
        end=end,
        flags=[tuple(flags[i]) if i in flags else no_flags for i in order],
        errors=errors,
        sub_input=sub_input,
        sub_output=sub_output,
        sub_cost=sub_cost,
        sub_errors=sub_errors,
        start=start,
        finish=finish,
    )


@dataclass
class Visibility:
    """Which positions of a tree show, given the collapsed nodes; splices instead of rebuilding."""

    tree: TraceTree
    collapsed: set[int] = field(default_factory=set)
    rows: list[int] = field(default_factory=list)

    @classmethod
    def initial(cls, tree: TraceTree, expand_up_to: int = 1000) -> Visibility:
        """Small trees open fully; big ones show their first two levels, collapsed below."""
        view = cls(tree)
        if tree.size > expand_up_to:
            depth, end = tree.depth, tree.end
            view.collapsed = {i for i in range(tree.size) if depth[i] >= 1 and end[i] > i + 1}
        view.rebuild()
        return view

    def rebuild(self) -> None:
        rows, end, collapsed = [], self.tree.end, self.collapsed
        i, n = 0, self.tree.size
        while i < n:
            rows.append(i)
            i = end[i] if i in collapsed else i + 1
        self.rows = rows

    def row_of(self, position: int) -> int | None:
        """The visible row showing tree position `position`, if it shows."""
        row = bisect_left(self.rows, position)
        return row if row < len(self.rows) and self.rows[row] == position else None

    def is_collapsed(self, position: int) -> bool:
        return position in self.collapsed

    def collapse(self, position: int) -> None:
        row = self.row_of(position)
        if row is None or not self.tree.has_children(position) or position in self.collapsed:
            return
        self.collapsed.add(position)
        stop = bisect_left(self.rows, self.tree.end[position], lo=row + 1)
        del self.rows[row + 1 : stop]

    def expand(self, position: int) -> None:
        if position not in self.collapsed:
            return
        self.collapsed.discard(position)
        row = self.row_of(position)
        if row is None:
            return
        shown, end, collapsed = [], self.tree.end, self.collapsed
        i, stop = position + 1, end[position]
        while i < stop:
            shown.append(i)
            i = end[i] if i in collapsed else i + 1
        self.rows[row + 1 : row + 1] = shown

    def toggle(self, position: int) -> None:
        if position in self.collapsed:
            self.expand(position)
        else:
            self.collapse(position)

    def expand_all(self) -> None:
        self.collapsed = set()
        self.rows = list(range(self.tree.size))

    def collapse_all(self) -> None:
        tree = self.tree
        self.collapsed = {i for i in range(tree.size) if tree.has_children(i)}
        self.rows = [i for i in range(tree.size) if tree.depth[i] == 0]

    def reveal(self, position: int) -> int:
        """Expand the ancestors of `position` so that it shows; returns its row."""
        hidden = [a for a in self.tree.ancestors(position) if a in self.collapsed]
        for ancestor in reversed(hidden):
            self.expand(ancestor)
        row = self.row_of(position)
        assert row is not None
        return row


def find_next(
    tree: TraceTree,
    after: int,
    matches: Sequence[bool] | Callable[[int], bool] | None = None,
    backwards: bool = False,
) -> int | None:
    """The next position (wrapping) after `after` where `matches` is true (default: errors);
    `matches` may be a function, asked only until one matches."""
    flags = matches if matches is not None else tree.errors
    test = flags if callable(flags) else flags.__getitem__
    for i in search_order(tree, after, backwards):
        if test(i):
            return i
    return None


def search_order(tree: TraceTree, after: int, backwards: bool = False) -> Iterator[int]:
    """Every position, from the one after `after` onwards (wrapping), `after` itself last."""
    n = tree.size
    step = -1 if backwards else 1
    for k in range(1, n + 1):
        yield (after + step * k) % n


CONVERSATIONS_KEPT = 256
SEARCH_TEXT_MAX = 1_000_000  # message text searched per span


def conversation_at(tree: TraceTree, position: int) -> Conversation | None:
    """The conversation span `position` records (tui/chat.py), read once while it is recent."""
    cache = tree.conversations
    if position in cache:
        return cache[position]
    span = tree.spans[position]
    found = conversation(span.attributes, span.model_extra, span.kind)
    if len(cache) >= CONVERSATIONS_KEPT:
        del cache[next(iter(cache))]
    cache[position] = found
    return found


def message_text(tree: TraceTree, position: int) -> str:
    """The case-folded text of span `position`'s messages, tool calls and documents."""
    text = tree.texts.get(position)
    if text is None:
        span = tree.spans[position]
        found = conversation(span.attributes, span.model_extra, span.kind)
        text = conversation_text(found)[:SEARCH_TEXT_MAX].casefold() if found else ""
        tree.texts[position] = text
    return text


def span_matcher(tree: TraceTree, query: str) -> Callable[[int], bool]:
    """Whether span i matches `query` (case-insensitive) in its name, kind, model, id or error,
    or in its message text (read on demand, span by span, so the first match is found without
    reading every span's messages)."""
    needle = query.casefold()

    def matches(i: int) -> bool:
        s = tree.spans[i]
        for value in (s.name, s.kind, s.model, s.id, s.error_message):
            if value and needle in value.casefold():
                return True
        return needle in message_text(tree, i)

    return matches


def search_flags(tree: TraceTree, query: str) -> list[bool]:
    """Which spans match `query` (see span_matcher), for every span at once."""
    matches = span_matcher(tree, query)
    return [matches(i) for i in range(tree.size)]
