"""A span's conversation (tui/model/chat/) as document blocks: every role named in words and a
symbol (never by colour alone), text whole and wrapped, tool calls with their name and
pretty-printed arguments, tool results, documents with ids and scores, finish reasons."""

from __future__ import annotations

from typing import Any

from tui.model.chat import (
    Conversation,
    Document,
    Message,
    OtherPart,
    Part,
    TextPart,
    ToolCall,
    ToolResult,
    message_text,
    part_text,
)
from tui.model.formatting import counted
from tui.ui.widgets.blocks import Block, Piece, piece
from tui.ui.widgets.json_view import pretty
from tui.ui.widgets.json_view import tree as json_tree

SYSTEM_FOLD = 3  # a system prompt is the same call after call: its first rows are enough
DOCUMENT_FOLD = 6
HISTORY_SHOWN = 4  # more messages before the last user message than this: they start closed

# Symbol, word and style of each role; an unknown role shows its own name.
ROLES = {
    "system": ("■", "system", "system"),
    "developer": ("■", "developer", "system"),
    "user": ("●", "user", "user"),
    "assistant": ("◆", "assistant", "assistant"),
    "tool": ("◇", "tool", "tool"),
}


def role_pieces(role: str, name: str | None = None) -> list[Piece]:
    symbol, word, style = ROLES.get(role, ("○", role, "dim"))
    pieces = [(f"{symbol} ", style), piece(word, style, 40)]
    if name:
        pieces += [(" · ", "dim"), piece(name, "dim", 60)]
    return pieces


def _value_block(header: list[Piece], value: Any, depth: int, what: str, **kwargs: Any) -> Block:
    """A value under a header: text as it is (markdown styled), anything else as JSON code."""
    if value is None:
        return Block(header, depth=depth, what=what, copy="", **kwargs)
    text = value if isinstance(value, str) else pretty(value)
    return Block(header, text, code=not isinstance(value, str), depth=depth, what=what, **kwargs)


def part_block(part: Part, depth: int, indent: int = 0) -> Block:
    if isinstance(part, TextPart):
        if part.kind == "reasoning":
            return Block(
                [("… thinking", "dim")],
                part.text,
                depth=depth,
                indent=indent,
                fold_rows=4,
                what="thinking",
            )
        return Block((), part.text, depth=depth, indent=indent, what="text")
    if isinstance(part, ToolCall):
        header: list[Piece] = [("→ call ", "tool"), piece(part.name or "(no name)", "key", 80)]
        if part.id:
            header += [("  ", ""), piece(part.id, "dim", 60)]
        block = _value_block(
            header, part.arguments, depth, "tool call", indent=indent, body_indent=2
        )
        block.copy = part_text(part)
        return block
    if isinstance(part, ToolResult):
        header = [("← result", "tool")]
        if part.name:
            header += [(" of ", "dim"), piece(part.name, "key", 80)]
        if part.id:
            header += [("  ", ""), piece(part.id, "dim", 60)]
        return _value_block(
            header, part.content, depth, "tool result", indent=indent, body_indent=2
        )
    assert isinstance(part, OtherPart)
    return _value_block(
        [("◦ ", "dim"), piece(part.kind, "dim", 40)],
        part.value,
        depth,
        part.kind,
        indent=indent,
        fold_rows=6,
    )


def message_block(
    message: Message, output: bool = False, reasons: tuple[str, ...] = (), depth: int = 0
) -> Block:
    tail: list[Piece] = []
    if output:
        tail.append(("output", "dim"))
        finish = message.finish_reason or ", ".join(reasons)
        if finish:
            tail += [(" · ", "dim"), piece(f"finish: {finish}", "dim", 60)]
    header = role_pieces(message.role, message.name)
    fold = SYSTEM_FOLD if message.role in ("system", "developer") else None
    parts = message.parts
    what = f"{message.role} message"
    kwargs: dict[str, Any] = {"fold_rows": fold} if fold else {}
    indent = 2 * depth  # nested in the earlier messages: indented under them
    kwargs["depth"], kwargs["indent"] = depth, indent
    if len(parts) == 1 and isinstance(parts[0], TextPart) and parts[0].kind == "text":
        return Block(header, parts[0].text, rule=True, tail=tail, what=what, **kwargs)
    if len(parts) == 1 and isinstance(parts[0], (ToolCall, ToolResult)):
        # One call or one result: on the message's own row, its value below.
        part = part_block(parts[0], depth, indent)
        block = Block(
            [*header, ("  ", ""), *part.header],
            part.body,
            code=part.code,
            body_indent=2,
            rule=True,
            tail=tail,
            copy=part.copy_text(),
            what=part.what,
            **kwargs,
        )
        return block
    blocks = [part_block(part, depth + 1, indent) for part in parts]
    if fold:
        for block in blocks:
            block.fold_rows = fold
    if not blocks:
        blocks = [Block([("(empty)", "dim")], depth=depth + 1, indent=indent)]
    return Block(
        header,
        rule=True,
        tail=tail,
        children=blocks,
        expanded=True,
        copy=message_text(message),
        what=what,
        depth=depth,
        indent=indent,
    )


def history_blocks(messages: tuple[Message, ...]) -> list[Block]:
    """The input messages. In a long conversation, what came before the last user message
    (the turn this call answers) is one closed block, so that turn shows first; enter opens
    it, and / finds what it holds."""
    last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
    earlier = [m for m in messages[: max(0, last_user)] if m.role not in ("system", "developer")]
    if len(earlier) <= HISTORY_SHOWN:
        return [message_block(m) for m in messages]
    blocks = [message_block(m) for m in messages[:last_user] if m.role in ("system", "developer")]
    blocks.append(
        Block(
            [("⋯ ", "dim"), (counted(len(earlier), "earlier message"), "label")],
            children=lambda: [message_block(m, depth=1) for m in earlier],
            copy="\n\n".join(f"{m.role}: {message_text(m)}" for m in earlier),
            what="earlier messages",
        )
    )
    return blocks + [message_block(m) for m in messages[last_user:]]


def document_blocks(number: int, document: Document) -> list[Block]:
    """A retrieved document: its number, id and score, its content, and its metadata (closed)."""
    header: list[Piece] = [("▤ ", "tool"), (f"document {number}", "tool")]
    if document.id:
        header += [(" · ", "dim"), piece(document.id, "key", 120)]
    if document.score is not None:
        header += [(" · ", "dim"), (f"score {document.score:.4g}", "dim")]
    content = document.content
    blocks = [
        Block(
            header,
            content,
            rule=True,
            fold_rows=DOCUMENT_FOLD,
            copy=content if content is not None else document.id or "",
            what="document",
        )
    ]
    if content is None:
        blocks.append(Block([("(no content was sent)", "note")]))
    if document.metadata not in (None, {}, [], ""):
        metadata = json_tree(document.metadata, "metadata", depth=1)
        metadata.expanded = False
        blocks.append(metadata)
    return blocks


def conversation_blocks(conv: Conversation) -> list[Block]:
    """The blocks of a conversation, in reading order."""
    blocks: list[Block] = []
    if conv.system:
        text = "\n\n".join(part_text(p) for p in conv.system)
        blocks.append(
            Block(
                role_pieces("system"), text, rule=True, fold_rows=SYSTEM_FOLD, what="system prompt"
            )
        )
    if conv.tools:
        names = [_tool_name(t) for t in conv.tools[:8]]
        label = ", ".join(n for n in names if n) + (", …" if len(conv.tools) > 8 else "")
        blocks.append(
            Block(
                [
                    ("⚒ ", "tool"),
                    (f"tools ({len(conv.tools)})", "tool"),
                    (": ", "dim"),
                    piece(label, "dim"),
                ],
                children=[
                    json_tree(t, _tool_name(t) or f"[{i}]", depth=1)
                    for i, t in enumerate(conv.tools)
                ],
                copy=pretty(list(conv.tools)),
                what="tool definitions",
            )
        )
    blocks += history_blocks(conv.input)
    for index, message in enumerate(conv.output):
        last = index == len(conv.output) - 1
        blocks.append(message_block(message, True, conv.finish_reasons if last else ()))
    if conv.finish_reasons and not conv.output:
        blocks.append(Block([("finish: ", "dim"), piece(", ".join(conv.finish_reasons), "dim")]))
    if conv.tool_call is not None:
        call = conv.tool_call
        header = [
            ("◇ ", "tool"),
            ("tool call", "tool"),
            (" · ", "dim"),
            piece(call.name or "?", "key", 80),
        ]
        if call.id:
            header += [("  ", ""), piece(call.id, "dim", 60)]
        block = _value_block(header, call.arguments, 0, "tool arguments", rule=True)
        if call.arguments is None:
            block.body = "(no arguments were sent)"
        blocks.append(block)
    if conv.tool_result is not None:
        blocks.append(
            _value_block(
                [("◇ ", "tool"), ("result", "tool")],
                conv.tool_result.content,
                0,
                "tool result",
                rule=True,
            )
        )
    if conv.query is not None:
        blocks.append(
            Block([("? ", "user"), ("query", "user")], conv.query, rule=True, what="query")
        )
    for number, document in enumerate(conv.documents, 1):
        blocks += document_blocks(number, document)
    for name, value in (("input", conv.input_value), ("output", conv.output_value)):
        if value is not None:
            blocks.append(_value_block([("▹ ", "dim"), (name, "label")], value, 0, name, rule=True))
    if conv.truncated:
        blocks.append(
            Block(
                [
                    (
                        "… more than the app reads of one list: the fields view (c) has them all",
                        "note",
                    )
                ]
            )
        )
    if conv.conventions:
        blocks.append(Block([("read as " + ", ".join(conv.conventions), "note")]))
    return blocks


def _tool_name(definition: Any) -> str | None:
    if isinstance(definition, dict):
        for holder in (definition, definition.get("function")):
            if isinstance(holder, dict) and isinstance(holder.get("name"), str):
                return str(holder["name"])[:80]
    return None
