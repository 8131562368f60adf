"""Pure (no Textual): what the diff compares of every span of a tree, read cheaply.

A big trace's spans are a SpanTable (tui/api/span_table.py): their JSON, a Span made only when
asked for, at some 10 µs each. Aligning two 10,000-span traces must not make 20,000 of them, so
here each span's few compared fields (name, kind, model, error message, tokens, cost, duration,
and its attributes kept as their JSON bytes) are decoded straight from its JSON, a few µs each.
Spans already read (the tolerant path, tests) are read as they are. Attributes are decoded only
for the pairs whose attribute bytes differ.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from operator import itemgetter
from typing import Any

import msgspec

from tui.api.models import Span, derive_span_fields
from tui.api.span_table import SpanTable
from tui.model.spans import TraceTree

NO_NAME = "(no name)"


class _Compared(msgspec.Struct):
    """A span's compared fields in the spec's spelling (the only one a SpanTable holds)."""

    name: str | None = None
    kind: str | None = None
    model: str | None = None
    status: str | None = None
    error_message: str | None = None
    duration_ms: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    attributes: msgspec.Raw = msgspec.Raw(b"null")  # its JSON (a read span's: its value)


_DECODER = msgspec.json.Decoder(_Compared)
_DECODE_ALL = msgspec.json.Decoder(list[_Compared]).decode

# Attribute keys that differ between any two runs and say nothing about what changed: ids of
# responses, calls and sessions, and times. Compared by their last dotted segment.
_VOLATILE = re.compile(r"(^|[._])(id|ids|uuid)$|_id$|Id$|(^|[._])(timestamp|time_unix_nano)$")


@lru_cache(maxsize=4096)
def is_volatile(key: str) -> bool:
    """Whether an attribute key names an id or a time (left out of the comparison)."""
    return _VOLATILE.search(key) is not None


@dataclass
class TreeFacts:
    """The compared fields of every span of a tree, by tree position."""

    tree: TraceTree
    names: list[str]
    kinds: list[str | None]
    models: list[str | None]
    error_messages: list[str | None]
    durations: list[float | None]
    inputs: list[int | None]
    outputs: list[int | None]
    costs: list[float | None]
    _attributes: list[Any]  # bytes (JSON) from a SpanTable, else the Span's value

    @property
    def errors(self) -> list[bool]:
        return self.tree.errors

    def attribute_bytes(self, i: int) -> bytes | None:
        value = self._attributes[i]
        return value if isinstance(value, bytes) else None

    def attributes(self, i: int) -> Any:
        """Span i's attributes as Python values."""
        value = self._attributes[i]
        if isinstance(value, bytes):
            try:
                return msgspec.json.decode(value)
            except (msgspec.DecodeError, RecursionError):  # nested past msgspec's depth
                return None
        return value


def read_facts(tree: TraceTree) -> TreeFacts:
    """The compared fields of `tree`'s spans."""
    spans = tree.spans
    if isinstance(spans, SpanTable):
        return _from_table(tree, spans)
    return _from_spans(tree, list(spans))


def _from_spans(tree: TraceTree, spans: list[Span]) -> TreeFacts:
    return TreeFacts(
        tree=tree,
        names=[s.name or NO_NAME for s in spans],
        kinds=[s.kind for s in spans],
        models=[s.model for s in spans],
        error_messages=[s.error_message for s in spans],
        durations=[s.duration_ms for s in spans],
        inputs=[s.input_tokens for s in spans],
        outputs=[s.output_tokens for s in spans],
        costs=[s.cost_usd for s in spans],
        _attributes=[s.attributes for s in spans],
    )


def _from_table(tree: TraceTree, table: SpanTable) -> TreeFacts:
    """The columns of a SpanTable's spans, decoded from their JSON in one pass (C, not a
    Python loop a span): some 1 µs a span."""
    raws = [table.json_of(i) for i in range(len(table))]
    try:
        heads = _DECODE_ALL(b"[" + b",".join(raws) + b"]")
    except msgspec.DecodeError:  # some span not in the spec's spelling: one by one
        heads = [_head(table, i, raw) for i, raw in enumerate(raws)]
    attributes: list[Any] = [
        bytes(h.attributes) if isinstance(h.attributes, msgspec.Raw) else h.attributes
        for h in heads
    ]
    durations = [h.duration_ms for h in heads]
    if None in durations:  # derived from its end: as the Span says (made for those alone)
        durations = [table[i].duration_ms if d is None else d for i, d in enumerate(durations)]
    return TreeFacts(
        tree,
        names=[h.name or NO_NAME for h in heads],
        kinds=[_kind(h.kind) for h in heads],
        models=[h.model for h in heads],
        error_messages=[h.error_message for h in heads],
        durations=durations,
        inputs=[h.input_tokens for h in heads],
        outputs=[h.output_tokens for h in heads],
        costs=[h.cost_usd for h in heads],
        _attributes=attributes,
    )


def _head(table: SpanTable, i: int, raw: bytes) -> _Compared:
    try:
        return _DECODER.decode(raw)
    except msgspec.DecodeError:  # read whole, as the screen reads it
        span = table[i]
        head = _Compared(
            span.name,
            span.kind,
            span.model,
            span.status,
            span.error_message,
            span.duration_ms,
            span.input_tokens,
            span.output_tokens,
            span.cost_usd,
        )
        head.attributes = span.attributes  # a value, not JSON: kept as it is
        return head


@lru_cache(maxsize=256)
def _kind(kind: str | None) -> str | None:
    """A kind as the Span model reads it ("SPAN_KIND_CLIENT" -> "client")."""
    if not kind:
        return kind
    values = dict.fromkeys(("duration_ms", "started_at", "ended_at", "status", "error_message"))
    return derive_span_fields(values | {"kind": kind})["kind"]  # type: ignore[no-any-return]


def _keeper(keys: tuple[Any, ...]) -> Callable[[Mapping[Any, Any]], Any]:
    """What of a mapping with these keys is compared: the values of its keys that are not ids
    or times, fetched in one C call. Kept per key tuple: spans of a kind share their keys."""
    getter = _KEEPERS.get(keys)
    if getter is None:
        kept = [k for k in keys if not (isinstance(k, str) and is_volatile(k))]
        if len(_KEEPERS) > 4096:
            _KEEPERS.clear()
        getter = _KEEPERS[keys] = itemgetter(*kept) if kept else _nothing
    return getter


def _nothing(mapping: Mapping[Any, Any]) -> tuple[()]:
    return ()


_KEEPERS: dict[tuple[Any, ...], Callable[[Mapping[Any, Any]], Any]] = {}


def comparable(attributes: Any) -> Any:
    """Attributes as compared: top-level id and time keys left out (see is_volatile)."""
    if isinstance(attributes, Mapping):
        return {k: v for k, v in attributes.items() if not (isinstance(k, str) and is_volatile(k))}
    return attributes


def same_attributes(a: TreeFacts, i: int, b: TreeFacts, j: int) -> bool:
    """Whether span i of `a` and span j of `b` hold the same attributes, ids and times aside."""
    raw_a, raw_b = a.attribute_bytes(i), b.attribute_bytes(j)
    if raw_a is not None and raw_a == raw_b:
        return True
    before, after = a.attributes(i), b.attributes(j)
    if isinstance(before, dict) and isinstance(after, dict):
        keys = tuple(before)
        if keys == tuple(after):  # the usual case: the same keys in the same order
            keep = _keeper(keys)
            return bool(keep(before) == keep(after))
    return bool(comparable(before) == comparable(after))
