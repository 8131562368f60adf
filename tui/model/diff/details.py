"""Pure (no Textual): everything that differs in one aligned pair, for the selected row.

The pair's fields side by side with their deltas (kind, model, status, duration, tokens,
cost), then a word-level diff of each text: the error message, and the span's conversation as
tui/model/chat reads it in every convention (system prompt, tool definitions, each input and
output message, the tool's arguments and result, the retrieval query and each document, plain
input and output values), then each attribute that differs. Messages and documents are paired
as the lines of a text are (difflib over the list), so one message inserted in the middle shows
as one added, not as every later one changed. A span on one side only shows its texts as all
added or all removed.

Attributes a conversation reader already showed (the messages' own keys) are not shown twice
when the conversation differs; ids and times (facts.is_volatile) are counted, not shown.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from tui.model import formatting as fmt
from tui.model.chat import Conversation, Document, Message, message_text, part_text
from tui.model.chat.text import dump
from tui.model.diff import numbers
from tui.model.diff.align import MISSING
from tui.model.diff.deltas import ADDED, CHANGED, REMOVED, SAME, TraceDiff
from tui.model.diff.facts import TreeFacts, is_volatile
from tui.model.diff.words import Budget, TextDiff, diff_text, one_line
from tui.model.spans import conversation_at

PRETTY_JSON_MAX = 2_000_000  # characters of a JSON string value pretty-printed for its diff
FLATTEN_MAX = 5_000  # attribute leaves compared

# The attributes the conversation readers take messages, tool calls and documents from: shown
# as the conversation, not again as attributes, when the conversation differs.
CONVERSATION_KEYS = (
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.prompt",
    "gen_ai.completion",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "gen_ai.retrieval.documents",
    "gen_ai.retrieval.query.text",
    "llm.input_messages",
    "llm.output_messages",
    "llm.prompt",
    "llm.completion",
    "input.value",
    "output.value",
    "tool.arguments",
    "tool.result",
    "retrieval.documents",
    "ai.prompt",
    "ai.response",
    "ai.toolCall",
)


@dataclass(frozen=True)
class Fact:
    """One field of the pair: its label, A's and B's value as text, the delta, and whether it
    differs."""

    label: str
    before: str
    after: str
    delta: str = ""
    changed: bool = False


@dataclass(frozen=True)
class Section:
    """One text of the pair (a message, the error, an attribute) and its diff."""

    title: str
    status: str  # SAME, CHANGED, ADDED (in B only) or REMOVED (in A only)
    diff: TextDiff


@dataclass(frozen=True)
class PairDetail:
    """What the detail pane shows of one row."""

    status: str
    name: str
    facts: tuple[Fact, ...]
    sections: tuple[Section, ...]  # the texts that differ
    unchanged: tuple[str, ...]  # titles of the texts both sides hold alike
    volatile: int  # attributes left out: ids and times that differ


def pair_detail(diff: TraceDiff, row: int) -> PairDetail:
    """The fields and text diffs of aligned row `row`."""
    rows = diff.rows
    i, j = rows.a_pos[row], rows.b_pos[row]
    sections: list[Section] = []
    unchanged: list[str] = []
    budget = Budget()  # the word-by-word work of all the pair's texts together

    def add(title: str, before: str | None, after: str | None) -> None:
        section = text_section(title, before, after, budget)
        if section is None:
            return
        if section.status == SAME:
            unchanged.append(title)
        else:
            sections.append(section)

    add("error", _error(diff.a, i), _error(diff.b, j))
    a_conv = conversation_at(diff.a.tree, i) if i != MISSING else None
    b_conv = conversation_at(diff.b.tree, j) if j != MISSING else None
    before_conversation = len(sections)
    for title, before, after in conversation_texts(a_conv, b_conv):
        add(title, before, after)
    conversation_differs = len(sections) > before_conversation
    volatile = 0
    a_attrs = flat_attributes(diff.a.attributes(i)) if i != MISSING else {}
    b_attrs = flat_attributes(diff.b.attributes(j)) if j != MISSING else {}
    has_conversation = a_conv is not None or b_conv is not None
    for key in sorted(a_attrs.keys() | b_attrs.keys()):
        before, after = a_attrs.get(key), b_attrs.get(key)
        if before == after:
            continue
        if is_volatile(key):
            volatile += 1
        elif has_conversation and conversation_differs and _read_as_conversation(key):
            continue  # the conversation above shows it
        else:
            add(f"attribute {key}", before, after)
    status = diff.status[row]
    return PairDetail(
        status, diff.name(row), pair_facts(diff, row), tuple(sections), tuple(unchanged), volatile
    )


def _error(facts: TreeFacts, position: int) -> str | None:
    return facts.error_messages[position] if position != MISSING else None


def _read_as_conversation(key: str) -> bool:
    return any(key == k or key.startswith(k + ".") for k in CONVERSATION_KEYS)


def text_section(
    title: str, before: str | None, after: str | None, budget: Budget | None = None
) -> Section | None:
    """The diff of one text (None on a side that has no such text); None when neither has it."""
    if before is None and after is None:
        return None
    if before is None:
        return Section(title, ADDED, diff_text("", after or ""))
    if after is None:
        return Section(title, REMOVED, diff_text(before, ""))
    found = diff_text(before, after, budget=budget)
    return Section(title, CHANGED if found.changed else SAME, found)


# -- the fields ----------------------------------------------------------------------------------


def pair_facts(diff: TraceDiff, row: int) -> tuple[Fact, ...]:
    rows = diff.rows
    i, j = rows.a_pos[row], rows.b_pos[row]

    def text(facts: TreeFacts, position: int, read: Callable[[TreeFacts, int], str]) -> str:
        return read(facts, position) if position != MISSING else "–"

    def fact(label: str, read: Callable[[TreeFacts, int], str], delta: str = "") -> Fact:
        before, after = text(diff.a, i, read), text(diff.b, j, read)
        return Fact(label, before, after, delta, before != after)

    facts = [
        fact("kind", lambda f, p: one_line(f.kinds[p]) or "–"),
        fact("model", lambda f, p: one_line(f.models[p]) or "–"),
        fact("status", lambda f, p: "✗ error" if f.errors[p] else "✓ ok"),
    ]
    for label, column, show, signed in (
        ("duration", "durations", fmt.duration, numbers.duration),
        ("tokens in", "inputs", fmt.tokens, numbers.count),
        ("tokens out", "outputs", fmt.tokens, numbers.count),
        ("cost", "costs", fmt.cost, numbers.cost),
    ):
        delta = diff.delta(column, row)
        reader = _column_text(column, show)
        found = fact(label, reader, signed(delta) if delta else "")
        # Figures that differ by rounding alone (a cost's last digit) are the same on screen.
        changed = bool(delta) and found.before != found.after
        facts.append(Fact(found.label, found.before, found.after, found.delta, changed))
    return tuple(facts)


def _column_text(column: str, show: Callable[[Any], str]) -> Callable[[TreeFacts, int], str]:
    def read(facts: TreeFacts, position: int) -> str:
        return show(getattr(facts, column)[position])

    return read


# -- the conversation ----------------------------------------------------------------------------


def conversation_texts(
    a: Conversation | None, b: Conversation | None
) -> list[tuple[str, str | None, str | None]]:
    """(title, A's text, B's text) of every part of two conversations, paired."""
    out: list[tuple[str, str | None, str | None]] = []
    empty = Conversation()
    a_conv, b_conv = a or empty, b or empty
    a_side, b_side = a is not None, b is not None

    def both(title: str, read: Callable[[Conversation], str | None]) -> None:
        before = read(a_conv) if a_side else None
        after = read(b_conv) if b_side else None
        if before is not None or after is not None:
            out.append((title, before, after))

    both("system prompt", lambda c: _joined([part_text(p) for p in c.system]))
    both("tool definitions", lambda c: _joined([_pretty(t) for t in c.tools]))
    out += _paired("input", a_conv.input, b_conv.input, _message_text, _message_text)
    out += _paired("output", a_conv.output, b_conv.output, _message_text, _message_text)
    both("tool call", lambda c: _tool_call(c))
    both("tool result", lambda c: _pretty(c.tool_result.content) if c.tool_result else None)
    both("query", lambda c: c.query)
    out += _paired("document", a_conv.documents, b_conv.documents, _document_key, _document_text)
    both("input value", lambda c: None if c.input_value is None else _pretty(c.input_value))
    both("output value", lambda c: None if c.output_value is None else _pretty(c.output_value))
    return out


def _joined(texts: Sequence[str]) -> str | None:
    return "\n\n".join(texts) if texts else None


def _tool_call(conv: Conversation) -> str | None:
    call = conv.tool_call
    if call is None:
        return None
    arguments = "" if call.arguments is None else _pretty(call.arguments)
    return f"{call.name or ''}\n{arguments}".strip("\n")


def _message_text(message: Message) -> tuple[str, str]:
    """(its role, its text): what pairs two messages, and what is shown."""
    return message.role, message_text(message)


def _document_key(document: Document) -> tuple[str, str]:
    return document.id or "", document.content or ""


def _document_text(document: Document) -> tuple[str, str]:
    score = "" if document.score is None else f"score {document.score:g}"
    head = " · ".join(x for x in (document.id or "", score) if x)
    return (
        document.id or "",
        f"{head}\n{document.content or ''}" if head else document.content or "",
    )


def _paired(
    title: str,
    a: Sequence[Any],
    b: Sequence[Any],
    key: Callable[[Any], Any],
    text: Callable[[Any], tuple[str, str]],
) -> list[tuple[str, str | None, str | None]]:
    """Two lists (messages, documents) paired as lines are (difflib): equal items pair, a block
    that changed pairs one to one and its extras are added or removed."""
    out: list[tuple[str, str | None, str | None]] = []

    def label(n: int, tag: str) -> str:
        return f"{title} {n + 1}" + (f" · {tag}" if tag else "")

    matcher = SequenceMatcher(None, [key(x) for x in a], [key(x) for x in b], autojunk=False)
    for _tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for k in range(max(i2 - i1, j2 - j1)):
            i, j = i1 + k, j1 + k
            before = text(a[i]) if i < i2 else None
            after = text(b[j]) if j < j2 else None
            tag = (after or before or ("", ""))[0]
            n = j if after is not None else i
            out.append((label(n, tag), before[1] if before else None, after[1] if after else None))
    return out


def _pretty(value: Any) -> str:
    """A value as text to diff: text as it is (a JSON object or list in it pretty-printed, one
    key a line), anything else as pretty JSON."""
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("{", "[") and len(stripped) <= PRETTY_JSON_MAX:
            try:
                value = json.loads(stripped)
            except ValueError:
                return str(value)
        else:
            return str(value)
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError, RecursionError):
        return dump(value)


# -- attributes ----------------------------------------------------------------------------------


def flat_attributes(attributes: Any) -> dict[str, str]:
    """Attributes as dotted keys and text values (nested objects flattened, bounded; lists and
    other values as pretty JSON)."""
    out: dict[str, str] = {}
    if not isinstance(attributes, Mapping):
        return {} if attributes is None else {"(attributes)": _pretty(attributes)}
    stack: list[tuple[str, Mapping[Any, Any]]] = [("", attributes)]
    while stack and len(out) < FLATTEN_MAX:
        prefix, node = stack.pop()
        for key, value in node.items():
            name = f"{prefix}{key}"
            if isinstance(value, Mapping) and value:
                stack.append((name + ".", value))
            elif len(out) < FLATTEN_MAX:
                out[name] = _pretty(value)
    return out


__all__ = ["ADDED", "CHANGED", "REMOVED", "SAME", "Fact", "PairDetail", "Section", "pair_detail"]
