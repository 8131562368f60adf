"""JsonView: a navigable tree of a JSON value, built lazily one level per expansion.

Nothing is built below a node until it is opened, so a value nested 10,000 deep or an object of
100,000 keys costs only what is on screen; a node shows at most MAX_CHILDREN children.
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from tui.text import safe_text

MAX_CHILDREN = 500
MAX_VALUE = 200


def _scalar(value: Any) -> Text:
    if isinstance(value, str):
        return safe_text(json.dumps(value, ensure_ascii=False)[1:-1], MAX_VALUE, style="green")
    if value is None or isinstance(value, bool):
        return Text(json.dumps(value), style="italic")
    return safe_text(
        repr(value) if isinstance(value, float) else str(value), MAX_VALUE, style="cyan"
    )


def _summary(value: Any) -> str:
    if isinstance(value, dict):
        return f"{{{len(value)}}}"
    return f"[{len(value)}]"


class JsonView(Tree[Any]):
    """Shows one JSON value; containers open on demand."""

    DEFAULT_CSS = "JsonView { height: auto; max-height: 100%; }"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("attributes", **kwargs)
        self.show_root = False
        self.guide_depth = 2

    def show(self, value: Any, label: str = "attributes") -> None:
        self.clear()
        self.root.set_label(Text(label))
        self.root.data = value
        self._populate(self.root, value)
        self.root.expand()

    def _label(self, key: str, value: Any) -> Text:
        label = safe_text(key, 60, style="bold")
        label.append(": ")
        if isinstance(value, (dict, list)):
            label.append(_summary(value), style="dim")
        else:
            label.append_text(_scalar(value))
        return label

    def _populate(self, node: TreeNode[Any], value: Any) -> None:
        if isinstance(value, dict):
            items = list(value.items())
        elif isinstance(value, list):
            items = [(f"[{n}]", v) for n, v in enumerate(value)]
        else:
            node.add_leaf(_scalar(value))
            return
        for key, child in items[:MAX_CHILDREN]:
            if isinstance(child, (dict, list)) and child:
                node.add(self._label(str(key), child), data=child)
            else:
                node.add_leaf(self._label(str(key), child))
        if len(items) > MAX_CHILDREN:
            node.add_leaf(Text(f"… {len(items) - MAX_CHILDREN} more not shown", style="dim"))

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[Any]) -> None:
        node = event.node
        if node is not self.root and not node.children and node.data is not None:
            self._populate(node, node.data)
