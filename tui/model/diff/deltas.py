"""Pure (no Textual): the diff of two traces, row by row: each aligned row's status (same,
changed, added, removed), what changed in it, and the deltas of duration, tokens and cost.

What makes a pair *changed* is read from the fields every span has, so all the rows of two
10,000-span traces are marked at once: kind, model, status and error message, tokens, cost,
attributes (ids and times aside: they differ in every run), and a duration that moved by more
than noise (SLOWER_MS and SLOWER_RATIO both). What changed in its texts (prompts, answers,
tool arguments) is read for the selected pair only (details.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from tui.model.diff.align import MISSING, Alignment, align
from tui.model.diff.facts import TreeFacts, read_facts, same_attributes
from tui.model.spans import TraceTree

SAME, CHANGED, ADDED, REMOVED = "same", "changed", "added", "removed"
STATUSES = (SAME, CHANGED, ADDED, REMOVED)

# A duration counts as changed when it moved by this much and by this factor: LLM calls vary
# by tens of per cent between two runs of the same prompt.
SLOWER_MS = 500.0
SLOWER_RATIO = 1.5
COST_EPSILON = 1e-9

# What can change in a pair, as named in its list of changes.
KIND, MODEL, STATUS, ERROR, TOKENS, COST, DURATION, ATTRIBUTES = (
    "kind",
    "model",
    "status",
    "error",
    "tokens",
    "cost",
    "duration",
    "attributes",
)


@dataclass
class TraceDiff:
    """Two traces' trees aligned (`rows`), with every row's status, changes and deltas."""

    a: TreeFacts
    b: TreeFacts
    rows: Alignment
    status: list[str]
    changes: list[tuple[str, ...]]  # what changed in a pair (empty for the others)
    sub_differences: list[int]  # rows in the subtree (the row included) that are not same
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return self.rows.size

    def name(self, row: int) -> str:
        j = self.rows.b_pos[row]
        return self.b.names[j] if j != MISSING else self.a.names[self.rows.a_pos[row]]

    @property
    def names(self) -> list[str]:
        return [self.name(row) for row in range(self.size)]

    def path(self, row: int) -> list[tuple[str, int]]:
        """The row's path: (name, ordinal among same-named siblings) from the root down."""
        rows = self.rows
        out = []
        while row != -1:
            out.append((self.name(row), rows.ordinal[row]))
            row = rows.parent[row]
        return out[::-1]

    def value(self, column: str, row: int) -> tuple[float | None, float | None]:
        """(A's, B's) value of a number column ("durations", "inputs", "outputs", "costs");
        None on a side without the span."""
        i, j = self.rows.a_pos[row], self.rows.b_pos[row]
        a_values, b_values = getattr(self.a, column), getattr(self.b, column)
        return (
            a_values[i] if i != MISSING else None,
            b_values[j] if j != MISSING else None,
        )

    def delta(self, column: str, row: int) -> float | None:
        """B's value less A's (a missing side counts as 0; None when neither side has one)."""
        a, b = self.value(column, row)
        a = _number(a)
        b = _number(b)
        if a is None and b is None:
            return None
        return (b or 0.0) - (a or 0.0)

    def is_difference(self, row: int) -> bool:
        """Whether the row is a difference of its own: not same, and not inside a subtree
        that was added or removed whole (its head is the difference)."""
        if self.status[row] == SAME:
            return False
        parent = self.rows.parent[row]
        return parent == -1 or self.status[parent] not in (ADDED, REMOVED)

    def a_error(self, row: int) -> bool:
        i = self.rows.a_pos[row]
        return i != MISSING and self.a.errors[i]

    def b_error(self, row: int) -> bool:
        j = self.rows.b_pos[row]
        return j != MISSING and self.b.errors[j]


def _number(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return float(value)


def _signatures(facts: TreeFacts) -> list[tuple[object, ...]]:
    """Every span's compared fields but duration and attributes, as one tuple: two spans with
    equal tuples differ in none of them (one C-level comparison a pair)."""
    return list(
        zip(
            [k or "" for k in facts.kinds],
            [m or "" for m in facts.models],
            facts.errors,
            [e or "" for e in facts.error_messages],
            [t or 0 for t in facts.inputs],
            [t or 0 for t in facts.outputs],
            [round(c, 9) if c is not None and math.isfinite(c) else 0.0 for c in facts.costs],
            strict=True,
        )
    )


def diff_trees(a: TraceTree, b: TraceTree) -> TraceDiff:
    """The diff of tree `a` (before, the good one) and tree `b` (after)."""
    a_facts, b_facts = read_facts(a), read_facts(b)
    rows = align(a, a_facts.names, b, b_facts.names)
    a_sign, b_sign = _signatures(a_facts), _signatures(b_facts)
    a_ms, b_ms = a_facts.durations, b_facts.durations
    status: list[str] = []
    changes: list[tuple[str, ...]] = []
    for i, j in zip(rows.a_pos, rows.b_pos, strict=True):
        if i == MISSING:
            status.append(ADDED)
            changes.append(())
            continue
        if j == MISSING:
            status.append(REMOVED)
            changes.append(())
            continue
        x, y = a_ms[i], b_ms[j]
        if (
            a_sign[i] == b_sign[j]
            and x is not None
            and y is not None
            and -SLOWER_MS < x - y < SLOWER_MS
        ):
            # Only the attributes may differ: compared once, the pair's change known.
            alike = same_attributes(a_facts, i, b_facts, j)
            status.append(SAME if alike else CHANGED)
            changes.append(() if alike else (ATTRIBUTES,))
            continue
        changed = pair_changes(a_facts, i, b_facts, j)
        status.append(CHANGED if changed else SAME)
        changes.append(changed)
    sub = [0 if s == SAME else 1 for s in status]
    # Children come after their parent: summing backwards gives every subtree's count.
    parent = rows.parent
    for row in range(len(sub) - 1, -1, -1):
        if parent[row] != -1:
            sub[parent[row]] += sub[row]
    counts = dict.fromkeys(STATUSES, 0)
    for s in status:
        counts[s] += 1
    return TraceDiff(a_facts, b_facts, rows, status, changes, sub, counts)


def pair_changes(a: TreeFacts, i: int, b: TreeFacts, j: int) -> tuple[str, ...]:
    """What differs between span i of A and span j of B (nothing: the pair is the same)."""
    found = []
    if (a.kinds[i] or "") != (b.kinds[j] or ""):
        found.append(KIND)
    if (a.models[i] or "") != (b.models[j] or ""):
        found.append(MODEL)
    if a.errors[i] != b.errors[j]:
        found.append(STATUS)
    if (a.error_messages[i] or "") != (b.error_messages[j] or ""):
        found.append(ERROR)
    if (a.inputs[i] or 0) != (b.inputs[j] or 0) or (a.outputs[i] or 0) != (b.outputs[j] or 0):
        found.append(TOKENS)
    if abs((_number(a.costs[i]) or 0.0) - (_number(b.costs[j]) or 0.0)) > COST_EPSILON:
        found.append(COST)
    if duration_moved(a.durations[i], b.durations[j]):
        found.append(DURATION)
    if not same_attributes(a, i, b, j):
        found.append(ATTRIBUTES)
    return tuple(found)


def duration_moved(before: float | None, after: float | None) -> bool:
    """Whether a duration changed by more than a run's noise (SLOWER_MS and SLOWER_RATIO)."""
    x, y = _number(before), _number(after)
    if x is None or y is None:
        return (x is None) != (y is None)
    low, high = sorted((max(x, 0.0), max(y, 0.0)))
    return high - low >= SLOWER_MS and (low == 0 or high / low >= SLOWER_RATIO)


__all__ = [
    "ADDED",
    "CHANGED",
    "REMOVED",
    "SAME",
    "TraceDiff",
    "diff_trees",
    "duration_moved",
    "pair_changes",
]
