"""A JSON value as document blocks: a tree whose nodes open on demand, values shown whole.

Nothing is built below a node until it is opened (small objects, such as tool arguments, open
by default), so a value nested 10,000 deep or an object of 100,000 keys costs only what shows;
a node lists at most MAX_CHILDREN children. A string is shown whole, wrapped, newlines kept: on
its key's row when it fits, below it otherwise (folded when long). A string holding a JSON
object or array (as OTel attributes often do) opens as one.
"""

from __future__ import annotations

import json
from typing import Any

from tui.ui.widgets.blocks import Block, Piece, piece

MAX_CHILDREN = 500
SMALL_LEAVES = 12  # an object or array with at most this many values opens by default...
SMALL_DEPTH = 3  # ... if it nests no deeper than this
SMALL_CHARS = 2000  # ... and its strings are this short together
PARSE_MAX = 1_000_000  # a string longer than this is not parsed as JSON


PRETTY_WIDTH = 72  # an object or array whose JSON fits in this many characters stays on one line
PRETTY_SMART_MAX = 200_000  # larger values are indented plainly (one pass)
PRETTY_DEPTH = 40  # deeper levels are written compactly


def _dumps(value: Any, indent: int | None = None) -> str:
    return json.dumps(
        value,
        indent=indent,
        ensure_ascii=False,
        default=str,
        separators=(",", ": ") if indent else (", ", ": "),
    )


def _smart(value: Any, indent: int, depth: int) -> str:
    """Indented JSON whose small objects and arrays stay on one line."""
    flat = _dumps(value)
    if not isinstance(value, (dict, list)) or not value or len(flat) + indent <= PRETTY_WIDTH:
        return flat
    if depth >= PRETTY_DEPTH:
        return flat
    inner = " " * (indent + 2)
    if isinstance(value, dict):
        items = [
            f"{inner}{_dumps(str(k))}: {_smart(v, indent + 2, depth + 1)}" for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [inner + _smart(v, indent + 2, depth + 1) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def pretty(value: Any) -> str:
    """A value as readable JSON (Unicode as it is): indented, small parts on one line; written
    compactly, or as a note, when it nests too deep to indent."""
    if isinstance(value, str):
        return value
    try:
        flat = _dumps(value)
    except (ValueError, TypeError, RecursionError):
        return "(nested too deeply to show as JSON)"
    try:
        if len(flat) > PRETTY_SMART_MAX:
            return _dumps(value, 2)
        return _smart(value, 0, 0)
    except (ValueError, TypeError, RecursionError):
        return flat


def parsed_json(value: str) -> Any:
    """The object or array a string holds as JSON, else None."""
    if len(value) > PARSE_MAX or value[:64].lstrip()[:1] not in ("{", "["):
        return None
    try:
        found = json.loads(value)
    except (ValueError, RecursionError):
        return None
    return found if isinstance(found, (dict, list)) and found else None


def is_small(value: Any) -> bool:
    """Whether a container is small enough to open by default (a bounded look)."""
    leaves, chars = 0, 0
    stack = [(value, 0)]
    while stack:
        current, depth = stack.pop()
        if isinstance(current, (dict, list)):
            if depth >= SMALL_DEPTH:
                return False
            children = current.values() if isinstance(current, dict) else current
            for child in children:
                stack.append((child, depth + 1))
                if len(stack) > SMALL_LEAVES * 2:
                    return False
        else:
            leaves += 1
            chars += len(current) if isinstance(current, str) else 4
            if leaves > SMALL_LEAVES or chars > SMALL_CHARS:
                return False
    return True


def summary(value: Any) -> str:
    return f"{{{len(value)}}}" if isinstance(value, dict) else f"[{len(value)}]"


def scalar(value: Any) -> tuple[str, str]:
    """A scalar as shown (its text and style name): strings quoted, numbers, literals."""
    if isinstance(value, str):
        return f'"{value}"', "string"
    if value is None or isinstance(value, bool):
        return json.dumps(value), "literal"
    if isinstance(value, float):
        return repr(value), "number"
    if isinstance(value, int):
        return str(value), "number"
    return str(value), "string"


def node(
    key: str, value: Any, depth: int, *, open_small: bool = True, label_style: str = "key"
) -> Block:
    """The block of one key and its value."""
    label: list[Piece] = [piece(key, label_style, 200)]
    if isinstance(value, str):
        inner = parsed_json(value)
        if inner is not None:
            return Block(
                [*label, (f" {summary(inner)} JSON text", "dim")],
                depth=depth,
                children=lambda: children(inner, depth + 1),
                expanded=open_small and is_small(inner),
                copy=value,
                what="value",
            )
    if isinstance(value, (dict, list)) and value:
        return Block(
            [*label, (f" {summary(value)}", "dim")],
            depth=depth,
            children=lambda: children(value, depth + 1),
            expanded=open_small and is_small(value),
            copy=lambda: pretty(value),
            what="value",
        )
    if isinstance(value, (dict, list)):
        return Block(
            [*label, (": ", ""), ("{}" if isinstance(value, dict) else "[]", "dim")], depth=depth
        )
    text, style = scalar(value)
    return Block(
        [*label, (": ", "")],
        text,
        depth=depth,
        body_indent=2,
        inline=style,
        copy=value if isinstance(value, str) else text,
        what="value",
    )


def children(value: Any, depth: int) -> list[Block]:
    """The blocks of a container's first MAX_CHILDREN children, and a note of the rest."""
    if isinstance(value, dict):
        items = (
            list(value.items())[: MAX_CHILDREN + 1]
            if len(value) > MAX_CHILDREN
            else list(value.items())
        )
        total = len(value)
    else:
        items = [(f"[{n}]", v) for n, v in enumerate(value[: MAX_CHILDREN + 1])]
        total = len(value)
    blocks = [node(str(key), child, depth) for key, child in items[:MAX_CHILDREN]]
    if total > MAX_CHILDREN:
        blocks.append(
            Block(
                [
                    (
                        f"… {total - MAX_CHILDREN:,} more not shown: y on the object above copies all",
                        "note",
                    )
                ],
                depth=depth,
            )
        )
    return blocks


def tree(value: Any, label: str, depth: int = 0) -> Block:
    """A whole value as one open node (the attributes of a span, say)."""
    if isinstance(value, (dict, list)) and value:
        return Block(
            [piece(label, "label"), (f" {summary(value)}", "dim")],
            depth=depth,
            children=lambda: children(value, depth + 1),
            expanded=True,
            copy=lambda: pretty(value),
            what=label,
        )
    return node(label, value, depth, label_style="label")
