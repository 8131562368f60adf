"""Pure (no Textual): the diff's summary, in sentences, most telling first.

"`answer` failed: … · the model changed gpt-4o → gpt-4o-mini in `answer` · the system prompt
(12 words) changed in `answer` · 2 `lookup` tool calls added · B took 6.2 s more (5.8 s more
in `retrieve`)": what B broke first, then what changed in it, then time and money.

A sentence is a tuple of pieces, each with a kind: NAME (a span's name), ERROR (an error
message) or plain, so the screen styles them and the command line quotes names in backticks. The pieces are the servers' strings as they came: whoever shows them makes them
visible (tui/model/text.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from tui.model.chat import Conversation, message_text, part_text
from tui.model.diff import numbers
from tui.model.diff.align import MISSING
from tui.model.diff.deltas import ADDED, MODEL, REMOVED, TraceDiff
from tui.model.diff.words import one_line
from tui.model.spans import conversation_at

PLAIN, NAME, ERROR = "", "name", "error"
Sentence = tuple[tuple[str, str], ...]

NOTABLE_MS = 100.0  # a whole trace's duration change worth a sentence (and NOTABLE_SHARE of it)
NOTABLE_SHARE = 0.05
CULPRIT_SHARE = 0.5  # a child holding this share of its parent's delta is where the time went
PROMPT_CHECKS = 12  # changed model calls whose prompts are read for the summary
MODEL_SENTENCES = 3
ERROR_CHARS = 160
NAMES_LISTED = 3

KIND_NOUNS = {
    "tool": ("tool call", "tool calls"),
    "llm": ("model call", "model calls"),
    "retrieval": ("retrieval", "retrievals"),
    "retriever": ("retrieval", "retrievals"),
    "agent": ("agent step", "agent steps"),
}


def summary(
    diff: TraceDiff, a_duration: float | None = None, b_duration: float | None = None
) -> list[Sentence]:
    """The sentences that say what differs between A and B, or that nothing does. The traces'
    own durations (`a_duration`, `b_duration`, in ms) are the servers' when given."""
    sentences = [
        *_failures(diff),
        *_models(diff),
        *_prompts(diff),
        *_structure(diff, ADDED),
        *_structure(diff, REMOVED),
        *_duration(diff, a_duration, b_duration),
        *_spend(diff),
    ]
    if not sentences:
        if diff.counts.get("changed", 0):
            return [((f"{diff.counts['changed']:,} spans differ in their attributes", PLAIN),)]
        return [((f"No differences in {diff.size:,} spans (durations within noise)", PLAIN),)]
    return sentences


def plain(sentence: Sentence, quote: str = "`") -> str:
    """A sentence as plain text, names in `quote`s."""
    return "".join(f"{quote}{text}{quote}" if kind == NAME else text for text, kind in sentence)


# -- duration ------------------------------------------------------------------------------------


def _total(diff: TraceDiff, side: str) -> float | None:
    """A trace's duration from its tree: its roots' span, first start to last end."""
    tree = (diff.a if side == "a" else diff.b).tree
    if tree.size == 0 or tree.finish <= tree.start:
        return None
    return (tree.finish - tree.start) * 1000


def _duration(diff: TraceDiff, a_ms: float | None, b_ms: float | None) -> Iterator[Sentence]:
    a_ms = a_ms if a_ms is not None else _total(diff, "a")
    b_ms = b_ms if b_ms is not None else _total(diff, "b")
    if a_ms is None or b_ms is None:
        return
    delta = b_ms - a_ms
    if abs(delta) < NOTABLE_MS or abs(delta) < NOTABLE_SHARE * max(a_ms, b_ms):
        return
    more = "more" if delta > 0 else "less"
    pieces: list[tuple[str, str]] = [(f"B took {numbers.seconds_phrase(delta)} {more}", PLAIN)]
    culprit = where_the_time_went(diff, delta)
    if culprit is not None:
        share = numbers.seconds_phrase(diff.delta("durations", culprit) or 0.0)
        pieces += [(f" ({share} {more} in ", PLAIN), (diff.name(culprit), NAME)]
        if diff.status[culprit] in (ADDED, REMOVED):
            pieces.append((f", {diff.status[culprit]}", PLAIN))
        pieces.append((")", PLAIN))
    yield tuple(pieces)


def where_the_time_went(diff: TraceDiff, delta: float) -> int | None:
    """The deepest row that holds most of the trace's change in duration: from the top, into
    the child whose delta (same sign) is at least CULPRIT_SHARE of its parent's; None when
    that is a root (the time went in the trace as a whole)."""
    sign = 1 if delta > 0 else -1
    rows = diff.rows

    def moved(row: int) -> float:
        return sign * (diff.delta("durations", row) or 0.0)

    tops = [row for row in range(diff.size) if rows.parent[row] == -1]
    if not tops:
        return None
    current = max(tops, key=moved)
    if moved(current) <= 0:
        return None
    while True:
        kids = _children(diff, current)
        if not kids:
            break
        best = max(kids, key=moved)
        if moved(best) < CULPRIT_SHARE * moved(current):
            break
        current = best
    return current if rows.parent[current] != -1 or len(tops) > 1 else None


def _children(diff: TraceDiff, row: int) -> list[int]:
    rows = diff.rows
    kids, child = [], row + 1
    while child < rows.end[row]:
        kids.append(child)
        child = rows.end[child]
    return kids


# -- models and prompts --------------------------------------------------------------------------


def _models(diff: TraceDiff) -> Iterator[Sentence]:
    changed: dict[tuple[str, str], list[int]] = {}
    for row, found in enumerate(diff.changes):
        if MODEL in found:
            i, j = diff.rows.a_pos[row], diff.rows.b_pos[row]
            key = (one_line(diff.a.models[i]) or "none", one_line(diff.b.models[j]) or "none")
            changed.setdefault(key, []).append(row)
    for (before, after), rows in list(changed.items())[:MODEL_SENTENCES]:
        yield (
            (f"the model changed {before} → {after} in ", PLAIN),
            (diff.name(rows[0]), NAME),
            *_more(len(rows) - 1),
        )


def _more(count: int) -> tuple[tuple[str, str], ...]:
    if count <= 0:
        return ()
    return ((f" and {count:,} more span{'s' if count > 1 else ''}", PLAIN),)


def _is_model_call(diff: TraceDiff, row: int) -> bool:
    j = diff.rows.b_pos[row]
    return (diff.b.kinds[j] or "") in ("llm", "generation", "chat") or bool(diff.b.models[j])


def _prompt_texts(conv: Conversation) -> tuple[str, str]:
    """(the system prompt, the rest of the input) of a model call: system messages among the
    input (OpenInference sends them so) count as the system prompt."""
    system = [part_text(p) for p in conv.system]
    system += [message_text(m) for m in conv.input if m.role == "system"]
    rest = [message_text(m) for m in conv.input if m.role != "system"]
    return "\n".join(system), "\n".join(rest)


def _prompts(diff: TraceDiff) -> Iterator[Sentence]:
    """The prompts (system prompt, input) of the changed model calls that differ: one sentence
    for the first such call, counting the others."""
    checked = 0
    found: list[tuple[int, list[str]]] = []
    for row, status in enumerate(diff.status):
        if status != "changed" or not _is_model_call(diff, row):
            continue
        checked += 1
        if checked > PROMPT_CHECKS:
            break
        i, j = diff.rows.a_pos[row], diff.rows.b_pos[row]
        a_conv, b_conv = conversation_at(diff.a.tree, i), conversation_at(diff.b.tree, j)
        if a_conv is None or b_conv is None:
            continue
        parts = []
        for what, before, after in zip(
            ("system prompt", "input"), _prompt_texts(a_conv), _prompt_texts(b_conv), strict=True
        ):
            if before != after:
                words = _words_changed(before, after)
                parts.append(f"the {what} ({words:,} word{'' if words == 1 else 's'})")
        if parts:
            found.append((row, parts))
    if found:
        row, parts = found[0]
        yield (
            (" and ".join(parts) + " changed in ", PLAIN),
            (diff.name(row), NAME),
            *_more(len(found) - 1),
        )


def _words_changed(before: str, after: str) -> int:
    """How many words one text has that the other has not (the larger side), counted as a
    multiset: linear, where a word diff of every changed prompt would not be (the pair's own
    diff, when it is selected, shows which)."""
    a, b = Counter(before.split()), Counter(after.split())
    return max(sum((a - b).values()), sum((b - a).values()), 1)


# -- structure, spend and failures ---------------------------------------------------------------


def _noun(kinds: set[str | None], count: int) -> str:
    kind = next(iter(kinds)) if len(kinds) == 1 else None
    one, many = KIND_NOUNS.get(kind or "", ("span", "spans"))
    return one if count == 1 else many


def _structure(diff: TraceDiff, status: str) -> Iterator[Sentence]:
    heads = [
        row for row in range(diff.size) if diff.status[row] == status and diff.is_difference(row)
    ]
    if not heads:
        return
    facts = diff.b if status == ADDED else diff.a
    positions = [(diff.rows.b_pos if status == ADDED else diff.rows.a_pos)[r] for r in heads]
    noun = _noun({facts.kinds[p] for p in positions}, len(heads))
    names = Counter(diff.name(row) for row in heads)
    inside = sum(diff.rows.end[row] - row for row in heads)
    pieces: list[tuple[str, str]] = []
    if len(names) == 1:
        pieces += [
            (f"{len(heads):,} ", PLAIN),
            (diff.name(heads[0]), NAME),
            (f" {noun} {status}", PLAIN),
        ]
    else:
        pieces.append((f"{len(heads):,} {noun} {status}: ", PLAIN))
        for n, (name, count) in enumerate(names.most_common(NAMES_LISTED)):
            if n:
                pieces.append((", ", PLAIN))
            pieces.append((name, NAME))
            if count > 1:
                pieces.append((f" ×{count}", PLAIN))
        if len(names) > NAMES_LISTED:
            pieces.append((", …", PLAIN))
    if inside > len(heads):
        pieces.append((f" ({inside:,} spans in all)", PLAIN))
    yield tuple(pieces)


def _spend(diff: TraceDiff) -> Iterator[Sentence]:
    """Cost and tokens over the whole trace, when they moved by a tenth or more."""
    a_cost = sum(c for c in diff.a.costs if c)
    b_cost = sum(c for c in diff.b.costs if c)
    a_tokens = sum(t for t in diff.a.inputs if t) + sum(t for t in diff.a.outputs if t)
    b_tokens = sum(t for t in diff.b.inputs if t) + sum(t for t in diff.b.outputs if t)
    parts = []
    if abs(b_cost - a_cost) >= max(0.0001, 0.1 * a_cost):
        share = (
            f" ({(b_cost - a_cost) / a_cost:+.0%})".replace("-", numbers.MINUS) if a_cost else ""
        )
        parts.append(f"cost {numbers.cost(b_cost - a_cost)}{share}")
    if abs(b_tokens - a_tokens) >= max(1, 0.1 * a_tokens):
        parts.append(f"tokens {numbers.count(b_tokens - a_tokens)}")
    if parts:
        yield ((", ".join(parts), PLAIN),)


def _deepest(diff: TraceDiff, failed: list[bool]) -> list[int]:
    """The rows that `failed` with no failing row below them: where the errors start."""
    below = [False] * diff.size  # some row below this one failed
    parent = diff.rows.parent
    for row in range(diff.size - 1, -1, -1):
        if parent[row] != -1 and (failed[row] or below[row]):
            below[parent[row]] = True
    return [row for row in range(diff.size) if failed[row] and not below[row]]


def _failures(diff: TraceDiff) -> Iterator[Sentence]:
    new, same, other = [], [], []
    for row in _deepest(diff, [diff.b_error(row) for row in range(diff.size)]):
        j, i = diff.rows.b_pos[row], diff.rows.a_pos[row]
        if i == MISSING or not diff.a.errors[i]:
            new.append(row)
        elif (diff.a.error_messages[i] or "") == (diff.b.error_messages[j] or ""):
            same.append(row)
        else:
            other.append(row)
    for rows, verb in ((new, "failed"), (other, "fails differently"), (same, "fails in both")):
        if rows:
            row = rows[0]
            message = one_line(diff.b.error_messages[diff.rows.b_pos[row]]) or "(no message)"
            if len(message) > ERROR_CHARS:
                message = message[: ERROR_CHARS - 1] + "…"
            yield (
                (diff.name(row), NAME),
                (f" {verb}: ", PLAIN),
                (message, ERROR),
                *_more(len(rows) - 1),
            )
    healed = [
        row
        for row in _deepest(diff, [diff.a_error(row) for row in range(diff.size)])
        if diff.rows.b_pos[row] != MISSING and not diff.b_error(row)
    ]
    if healed:
        yield ((diff.name(healed[0]), NAME), (" no longer fails", PLAIN), *_more(len(healed) - 1))
