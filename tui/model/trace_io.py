"""A whole trace's input and output as text (pure): what `tracetui export` writes beside each
trace's annotations, a data set from triage.

The input is what the user asked: the last user message of the root's conversation (else of the
first model call's), else the root's input value; the output is the final answer: the root's
output, else the last model call's. Both whole, as the spans recorded them (no cut); None when
the trace records neither.
"""

from __future__ import annotations

from typing import Any

from tui.model.chat import Conversation, message_text
from tui.model.chat.text import dump
from tui.model.spans import TraceTree, conversation_at

MODEL_CALLS = ("llm", "generation")


def _roots(tree: TraceTree) -> list[int]:
    return [i for i in range(tree.size) if tree.parent[i] == -1]


def _model_calls(tree: TraceTree) -> list[int]:
    return [i for i in range(tree.size) if tree.spans[i].kind in MODEL_CALLS or tree.spans[i].model]


def _value_text(value: Any) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else dump(value)
    return text if text.strip() else None


def _asked(conv: Conversation | None) -> str | None:
    if conv is None:
        return None
    users = [m for m in conv.input if m.role == "user"]
    if users:
        text = message_text(users[-1])
        if text.strip():
            return text
    return _value_text(conv.input_value)


def _answered(conv: Conversation | None) -> str | None:
    if conv is None:
        return None
    if conv.output:
        text = message_text(conv.output[-1])
        if text.strip():
            return text
    return _value_text(conv.output_value)


def trace_input(tree: TraceTree) -> str | None:
    """What the trace was asked, whole."""
    calls = _model_calls(tree)
    for position in _roots(tree)[:1] + calls[:1]:
        asked = _asked(conversation_at(tree, position))
        if asked is not None:
            return asked
    return None


def trace_output(tree: TraceTree) -> str | None:
    """The trace's final answer, whole."""
    calls = _model_calls(tree)
    for position in _roots(tree)[:1] + calls[-1:]:
        answered = _answered(conversation_at(tree, position))
        if answered is not None:
            return answered
    return None
