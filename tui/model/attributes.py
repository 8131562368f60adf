"""Pure (no Textual): reading attributes in any spelling, for tui/model/chat/.

OTel attributes come flattened (`llm.input_messages.0.message.role`), nested
(`{"llm": {"input_messages": [...]}}`), as JSON strings (`gen_ai.input.messages`), or a mix.
`Reader.tree` merges them into one tree of nodes, numbered keys read as lists in numeric order
(10 after 9, indices of any length). Every read of one extraction shares a budget of keys
looked at and a cache of parsed JSON, and nothing recurses: hostile attributes (100,000 keys,
10,000 levels, absurd indices) cost a bounded amount of work.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

MAX_KEYS = 200_000  # attribute keys and flattened segments looked at
MAX_ITEMS = 2_000  # items read from one list
MAX_JSON_CHARS = 16_000_000  # a JSON string longer than this stays a string

ABSENT: Any = object()


class Node:
    """One dotted path of the attributes: the value sent there, and the paths below it."""

    __slots__ = ("children", "value")

    def __init__(self) -> None:
        self.children: dict[str, Node] = {}
        self.value: Any = ABSENT


def index_key(key: str) -> tuple[int, str]:
    """Numeric order for digit strings of any length (no int(): it refuses 5,000 digits)."""
    digits = key.lstrip("0")
    return len(digits), digits


def is_index(key: str) -> bool:
    return key.isascii() and key.isdigit()


class Reader:
    """The reads of one extraction, sharing one budget and one cache of parsed JSON."""

    def __init__(self) -> None:
        self.budget = MAX_KEYS
        self.parsed: dict[str, Any] = {}
        self.truncated = False

    def spend(self, amount: int = 1) -> bool:
        self.budget -= amount
        return self.budget >= 0

    def tree(self, mapping: Mapping[Any, Any], heads: frozenset[str] | None = None) -> Node:
        """Flattened keys (`a.b.0.c`) and nested objects merged into one tree of nodes.

        With `heads`, only top-level keys whose first segment is one of them are read."""
        root = Node()
        stack: list[tuple[Node, Mapping[Any, Any]]] = [(root, mapping)]
        while stack:
            node, current = stack.pop()
            for key, value in current.items():
                if not isinstance(key, str):
                    continue
                if heads is not None and node is root and key.split(".", 1)[0] not in heads:
                    continue
                if not self.spend(key.count(".") + 1):
                    self.truncated = True
                    return root
                target = node
                for segment in key.split("."):
                    child = target.children.get(segment)
                    if child is None:
                        child = target.children[segment] = Node()
                    target = child
                if target.value is ABSENT:
                    target.value = value
                if isinstance(value, dict) and value:
                    stack.append((target, value))
        return root

    def json(self, value: Any) -> Any:
        """A JSON object or array sent as a string, parsed; anything else as it is."""
        if not isinstance(value, str) or len(value) > MAX_JSON_CHARS:
            return value
        if value[:64].lstrip()[:1] not in ("{", "["):
            return value
        if value not in self.parsed:
            try:
                self.parsed[value] = json.loads(value)
            except (ValueError, RecursionError):
                self.parsed[value] = value
        return self.parsed[value]

    def node(self, item: Any) -> Node | None:
        """An object, however it came (a node, a dict, a JSON object string), as a node."""
        if isinstance(item, Node):
            if item.children or item.value is ABSENT:
                return item
            item = item.value
        item = self.json(item)
        if isinstance(item, dict):
            return self.tree(item)
        return None

    def raw(self, node: Node | None) -> Any:
        """The value at a node as sent, or rebuilt from flattened keys below it (a list when
        they are numbered); None when there is nothing."""
        if node is None:
            return None
        if node.value is not ABSENT:
            return node.value
        if not node.children:
            return None

        def empty(n: Node) -> Any:
            return [] if all(is_index(k) for k in n.children) else {}

        out = empty(node)
        stack: list[tuple[Node, Any]] = [(node, out)]
        while stack:
            current, box = stack.pop()
            keys: Iterable[str] = (
                sorted(current.children, key=index_key)
                if isinstance(box, list)
                else list(current.children)
            )
            for key in keys:
                if not self.spend():
                    self.truncated = True
                    return out
                child = current.children[key]
                if child.value is not ABSENT:
                    value = child.value
                elif child.children:
                    value = empty(child)
                    stack.append((child, value))
                else:
                    value = None
                if isinstance(box, list):
                    box.append(value)
                else:
                    box[key] = value
        return out

    def value(self, node: Node | None, path: str) -> Any:
        return self.raw(at(node, path))

    def first(self, node: Node | None, *paths: str) -> Any:
        """The value at the first of `paths` that holds one."""
        for path in paths:
            value = self.raw(at(node, path))
            if value is not None:
                return value
        return None

    def string(self, node: Node | None, *paths: str) -> str | None:
        """The first of `paths` holding text (a number is written as text)."""
        for path in paths:
            value = self.raw(at(node, path))
            if isinstance(value, str) and value:
                return value
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return str(value)
        return None

    def items(self, value: Any) -> list[Any]:
        """The items of a list however it was sent: a list, a JSON array string, or numbered
        keys below a node (in numeric order). At most MAX_ITEMS."""
        children: dict[str, Node] = {}
        if isinstance(value, Node):
            children = value.children
            value = value.value if value.value is not ABSENT else None
        value = self.json(value)
        found: list[Any] = []
        if isinstance(value, list):
            found = value
        else:
            numbered = [k for k in children if is_index(k)]
            if numbered:
                numbered.sort(key=index_key)
                found = [children[k] for k in numbered[: MAX_ITEMS + 1]]
        if len(found) > MAX_ITEMS:
            self.truncated = True
            found = found[:MAX_ITEMS]
        return found


def leaf(item: Any) -> Any:
    """A node holding only a value (a flattened list's item) as that value."""
    if isinstance(item, Node) and not item.children and item.value is not ABSENT:
        return item.value
    return item


def at(node: Node | None, path: str) -> Node | None:
    """The node at a dotted path below `node`."""
    for segment in path.split("."):
        if node is None:
            return None
        node = node.children.get(segment)
    return node
