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
from typing import Any, TypeVar, overload

from tui.api.models import Span
from tui.api.span_table import SpanColumns, SpanTable, columns_of, seconds
from tui.core.gcpause import gc_paused
from tui.model.chat import Conversation, conversation, conversation_text

Number = TypeVar("Number", int, float)
ORPHAN = "orphan"  # names a parent that is not in the trace
CYCLE = "cycle"  # its parent chain loops; cut here
DUPLICATE = "duplicate id"
NO_ID = "no id"


@dataclass
class TraceTree:
    """The spans of one trace in display (pre-)order, with structure and rollups per position."""

    spans: Sequence[Span]  # by position; a SpanTable makes each Span when it is first drawn
    keys: list[str]
    depth: list[int]
    parent: list[int]  # -1 for a root
    end: list[int]  # the subtree of i is positions i .. end[i]-1
    flags: list[tuple[str, ...]]
    errors: list[bool]  # the span itself is an error
    # Each subtree's totals, summed as they are asked for (SubtreeSums).
    sub_input: Sequence[int]
    sub_output: Sequence[int]
    sub_cost: Sequence[float]
    sub_errors: Sequence[int]
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

    def hidden_errors(self, i: int) -> int:
        """How many spans below i (not i itself) are errors: what collapsing i hides."""
        return self.sub_errors[i] - bool(self.errors[i])

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
        begin = seconds(span.started_at)
        if total <= 0 or not math.isfinite(total) or not math.isfinite(begin):
            return 0.0, 0.0
        duration = max(0.0, (span.duration_ms or 0.0) / 1000)
        offset = min(1.0, max(0.0, (begin - self.start) / total))
        return offset, min(1.0 - offset, duration / total)


def build_tree(spans: Sequence[Span]) -> TraceTree:
    """Order `spans` as a tree: children by start time, orphans and cycles as flagged roots.
    The tree is built from the spans' columns: a SpanTable's own, read without making Spans."""
    with gc_paused():  # lists of 100,000 entries each: see tui/core/gcpause.py
        columns = spans.columns if isinstance(spans, SpanTable) else None
        return _build_tree(spans, columns or columns_of(spans))


def _build_tree(spans: Sequence[Span], columns: SpanColumns) -> TraceTree:
    # A few passes over plain lists, each as much in C as it can be (sorted, dict(zip()),
    # list comprehensions): about 1 µs a span, and a 100,000-span trace is a tenth of a
    # second of this. Sorting the indices by start once gives every parent its children in
    # start order, then by arrival (Python's sort is stable), and the roots likewise.
    n = len(spans)
    starts, ids = columns.starts, columns.ids
    flags: dict[int, list[str]] = {}
    first_index: dict[Any, int] = dict(zip(ids, range(n), strict=True))
    if len(first_index) == n and None not in first_index and "" not in first_index:
        keys: list[str] = ids  # type: ignore[assignment]  # every id is there, once
    else:
        keys, first_index = _unique_keys(ids, flags)

    get_index = first_index.get
    parent_of = [get_index(ref, -2) if ref else -1 for ref in columns.parent_ids]
    children: dict[int, list[int]] = {}
    roots: list[int] = []
    for i in sorted(range(n), key=starts.__getitem__):
        p = parent_of[i]
        if p >= 0 and p != i:
            kids = children.get(p)
            if kids is None:
                children[p] = [i]
            else:
                kids.append(i)
            continue
        if p == -2:
            flags.setdefault(i, []).append(ORPHAN)
            parent_of[i] = -1
        elif p == i:
            flags.setdefault(i, []).append(CYCLE)
            parent_of[i] = -1
        roots.append(i)

    # Pre-order from the roots. Every span has one parent, so nothing is reached twice.
    order: list[int] = []
    add, get_kids = order.append, children.get
    stack = roots[::-1]
    pop, push = stack.pop, stack.extend
    while stack:
        i = pop()
        add(i)
        kids = get_kids(i)
        if kids is not None:
            push(reversed(kids))
    if len(order) < n:
        _walk_cycles(order, children, parent_of, starts, flags)

    position = [0] * n
    depth: list[int] = []
    parent: list[int] = []
    add_depth, add_parent = depth.append, parent.append
    for pos, i in enumerate(order):
        position[i] = pos
        p = parent_of[i]
        if p == -1:
            add_parent(-1)
            add_depth(0)
        else:
            p = position[p]  # placed already: a parent comes before its children
            add_parent(p)
            add_depth(depth[p] + 1)

    end = [n] * n
    open_nodes: list[int] = []
    for pos, level in enumerate(depth):
        while open_nodes and depth[open_nodes[-1]] >= level:
            end[open_nodes.pop()] = pos
        open_nodes.append(pos)

    is_error = columns.errors
    errors = [is_error[i] for i in order]
    start, finish = _time_span(starts, columns.durations)
    no_flags: tuple[str, ...] = ()
    inputs, outputs, costs = columns.input_tokens, columns.output_tokens, columns.costs
    return TraceTree(
        spans=spans.reordered(order) if isinstance(spans, SpanTable) else [spans[i] for i in order],
        keys=[keys[i] for i in order],
        depth=depth,
        parent=parent,
        end=end,
        flags=[tuple(flags[i]) if i in flags else no_flags for i in order]
        if flags
        else [no_flags] * n,
        errors=errors,
        sub_input=SubtreeSums([inputs[i] for i in order], end, 0),
        sub_output=SubtreeSums([outputs[i] for i in order], end, 0),
        sub_cost=SubtreeSums([costs[i] for i in order], end, 0.0),
        sub_errors=SubtreeSums(errors, end, 0),
        start=start,
        finish=finish,
    )


def _time_span(starts: list[float], durations: list[float | None]) -> tuple[float, float]:
    """(the earliest start, the latest end) in unix seconds: (0, 0) when no span has a start.
    A span's end is its start plus its duration when that is a positive finite number."""
    inf = math.inf
    start = min(starts, default=inf)
    if start == inf:
        return 0.0, 0.0
    ends = [
        begin + duration / 1000 if duration > 0 else begin
        for begin, duration in zip(starts, durations, strict=True)
        if duration is not None and begin != inf and -inf < duration < inf
    ]
    return start, max(start, max(ends, default=start))


def _unique_keys(
    ids: list[str | None], flags: dict[int, list[str]]
) -> tuple[list[str], dict[str, int]]:
    """A key for every span (its id, or one made up for a missing or repeated id, flagged),
    and the first span of each key."""
    keys: list[str] = []
    first_index: dict[str, int] = {}
    for i, key in enumerate(ids):
        if not key:
            key = f"#{i}"
            flags.setdefault(i, []).append(NO_ID)
        elif key in first_index:
            flags.setdefault(i, []).append(DUPLICATE)
            key = f"{key}#{i}"
        first_index.setdefault(key, i)
        keys.append(key)
    return keys, first_index


def _walk_cycles(
    order: list[int],
    children: dict[int, list[int]],
    parent_of: list[int],
    starts: list[float],
    flags: dict[int, list[str]],
) -> None:
    """Whatever the walk from the roots left hangs off a parent cycle: cut each cycle at its
    earliest span, and walk on from there (skipping what was placed: the cycle leads back)."""
    visited = [False] * len(parent_of)
    for i in order:
        visited[i] = True
    for i in sorted((i for i, seen in enumerate(visited) if not seen), key=starts.__getitem__):
        if visited[i]:
            continue
        flags.setdefault(i, []).append(CYCLE)
        parent_of[i] = -1
        stack = [i]
        while stack:
            node = stack.pop()
            if visited[node]:
                continue
            visited[node] = True
            order.append(node)
            stack.extend(kid for kid in reversed(children.get(node, ())) if not visited[kid])


class SubtreeSums(Sequence[Number]):
    """The total of one column over each subtree, summed when first asked for: the screen asks
    for the few on screen (collapsed rows, the selected span), not for all of them. Counts
    below zero, missing or not finite count as nothing."""

    def __init__(self, own: list[Any], end: list[int], zero: Number) -> None:
        self._own = own  # by position
        self._end = end
        self._zero: Number = zero
        self._cleaned = False
        self._sums: dict[int, Number] = {}

    def __len__(self) -> int:
        return len(self._own)

    @overload
    def __getitem__(self, index: int) -> Number: ...

    @overload
    def __getitem__(self, index: slice) -> list[Number]: ...

    def __getitem__(self, index: int | slice) -> Number | list[Number]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self._own)))]
        total = self._sums.get(index)
        if total is None:
            if index < 0:
                index += len(self._own)
            if not self._cleaned:
                self._clean()
            total = sum(self._own[index : self._end[index]], self._zero)  # IndexError past end
            self._sums[index] = total
        return total

    def _clean(self) -> None:
        """Once: what does not count made zero, so that each sum is a plain one (in C)."""
        own, inf = self._own, math.inf
        if own and (None in own or not 0 <= min(own) <= max(own) < inf):
            zero = self._zero
            self._own = [v if v is not None and 0 < v < inf else zero for v in own]
        self._cleaned = True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SubtreeSums({list(self)!r})"


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
    """The conversation span `position` records (tui/model/chat/), read once while it is recent."""
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
