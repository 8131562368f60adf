"""Pure (no Textual): two span trees aligned, span by span.

A span of A and a span of B are the same step when their paths from the root match: the names
of their ancestors and their own, each with its ordinal among the siblings of that name (in
start order). So an agent's third tool call matches the other run's third, and a loop that ran
3 times in A and 5 in B gives 3 pairs and 2 spans added, not 5 changed. Spans with no partner
are added (in B only) or removed (in A only), and so is everything below them.

The aligned rows come in display order (pre-order): B's order, with the spans only A has put
back where A had them. Like tui/model/spans.py, everything is iterative and kept in parallel
lists, so a subtree is the slice `row:end[row]` and 10,000-level traces cost nothing special.
"""

from __future__ import annotations

from dataclasses import dataclass

from tui.model.spans import TraceTree

MISSING = -1  # a row's position on the side that has no such span


@dataclass
class Alignment:
    """The rows of two aligned trees, in display order, as parallel lists."""

    a_pos: list[int]  # tree A's position of the row's span, or MISSING (added)
    b_pos: list[int]  # tree B's position, or MISSING (removed)
    depth: list[int]
    parent: list[int]  # the parent row, -1 for a root
    ordinal: list[int]  # 1 for the first sibling of its name, 2 for the second...
    end: list[int]  # the rows below row r are r+1 .. end[r]-1

    @property
    def size(self) -> int:
        return len(self.a_pos)

    def has_children(self, row: int) -> bool:
        return self.end[row] > row + 1


def children_of(tree: TraceTree, position: int) -> list[int]:
    """The children of a tree position (-1: the roots), in tree (start) order: in pre-order
    the first child follows its parent and each next one follows the last one's subtree."""
    end = tree.end
    child, stop = (0, tree.size) if position == -1 else (position + 1, end[position])
    kids = []
    while child < stop:
        kids.append(child)
        child = end[child]
    return kids


def ordinals(siblings: list[int], names: list[str]) -> list[int]:
    """Each sibling's ordinal among those of its name (1-based)."""
    seen: dict[str, int] = {}
    out = []
    for position in siblings:
        count = seen.get(names[position], 0) + 1
        seen[names[position]] = count
        out.append(count)
    return out


def align(a: TraceTree, a_names: list[str], b: TraceTree, b_names: list[str]) -> Alignment:
    """Align tree `a` (the one before) with tree `b` (the one after), by path of names."""
    rows = Alignment([], [], [], [], [], [])
    add_a, add_b = rows.a_pos.append, rows.b_pos.append
    add_depth, add_parent, add_ordinal = rows.depth.append, rows.parent.append, rows.ordinal.append
    # Work: (a position, b position, depth, parent row, ordinal), popped in display order.
    stack: list[tuple[int, int, int, int, int]] = []
    stack += reversed(_merged(children_of(a, -1), a_names, children_of(b, -1), b_names, 0, -1))
    pop, push = stack.pop, stack.extend
    a_end, b_end = a.end, b.end
    while stack:
        i, j, depth, parent, ordinal = pop()
        row = len(rows.a_pos)
        add_a(i)
        add_b(j)
        add_depth(depth)
        add_parent(parent)
        add_ordinal(ordinal)
        if i != MISSING and j != MISSING:
            a_kids = children_of(a, i) if a_end[i] > i + 1 else []
            b_kids = children_of(b, j) if b_end[j] > j + 1 else []
            if a_kids or b_kids:
                push(reversed(_merged(a_kids, a_names, b_kids, b_names, depth + 1, row)))
        else:
            one_side = children_of(a, i) if i != MISSING else children_of(b, j)
            if one_side:
                push(
                    _one_side(
                        one_side, a_names if i != MISSING else b_names, i != MISSING, depth + 1, row
                    )
                )
    rows.end = _ends(rows.depth)
    return rows


def _one_side(
    kids: list[int], names: list[str], in_a: bool, depth: int, parent: int
) -> list[tuple[int, int, int, int, int]]:
    """The children of a span only one side has, last first (they go on the stack)."""
    ordinal = ordinals(kids, names)
    if in_a:
        return [(k, MISSING, depth, parent, o) for k, o in zip(kids, ordinal, strict=True)][::-1]
    return [(MISSING, k, depth, parent, o) for k, o in zip(kids, ordinal, strict=True)][::-1]


def _merged(
    a_siblings: list[int],
    a_names: list[str],
    b_siblings: list[int],
    b_names: list[str],
    depth: int,
    parent: int,
) -> list[tuple[int, int, int, int, int]]:
    """The children of one aligned pair (or the roots), paired by (name, ordinal): in B's
    order, each span only A has placed before the first of A's later siblings that B kept."""
    a_ordinals = ordinals(a_siblings, a_names)
    b_ordinals = ordinals(b_siblings, b_names)
    a_index = {
        (a_names[k], o): n for n, (k, o) in enumerate(zip(a_siblings, a_ordinals, strict=True))
    }
    matched = [False] * len(a_siblings)
    partner: list[int] = []
    for k, o in zip(b_siblings, b_ordinals, strict=True):
        n = a_index.get((b_names[k], o), MISSING)
        partner.append(n)
        if n != MISSING:
            matched[n] = True
    out: list[tuple[int, int, int, int, int]] = []
    next_a = 0  # A's siblings up to here are placed (or matched)

    def place_removed(until: int) -> None:
        nonlocal next_a
        while next_a < until:
            if not matched[next_a]:
                out.append((a_siblings[next_a], MISSING, depth, parent, a_ordinals[next_a]))
            next_a += 1

    for k, o, n in zip(b_siblings, b_ordinals, partner, strict=True):
        if n == MISSING:
            out.append((MISSING, k, depth, parent, o))
            continue
        place_removed(n)
        next_a = max(next_a, n + 1)
        out.append((a_siblings[n], k, depth, parent, o))
    place_removed(len(a_siblings))
    return out


def _ends(depth: list[int]) -> list[int]:
    """Where each row's subtree ends, from the depths in pre-order."""
    n = len(depth)
    end = [n] * n
    open_rows: list[int] = []
    for row, level in enumerate(depth):
        while open_rows and depth[open_rows[-1]] >= level:
            end[open_rows.pop()] = row
        open_rows.append(row)
    return end
