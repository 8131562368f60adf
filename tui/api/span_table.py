"""SpanTable: a trace's spans kept as their JSON, Span objects made only for the spans asked for.

A 100,000-span trace is some 50 MB of JSON (the demo's: 54 MB). Made into Span objects it is millions of Python objects:
a second and a half to build and several hundred megabytes to hold, when the screen shows fifty
rows. So a trace written in the spec's spelling is read by msgspec in two quick passes over its
bytes: one checks every span against the spec's fields and types (exactly those, nothing else)
and yields the few columns the tree needs (ids, parents, times, status, tokens, cost), the other
keeps each span's bytes as a slice of the body (msgspec.Raw: no copy). A span becomes a Span
(through readers.read_span_json, the same reading as ever) when someone asks for it, and the
last few hundred asked for are kept.

The columns must be what the Span objects would say: they are read with the same rules
(readers.py and models.derive_span_fields), and tests/client/test_fast_spans.py checks both
against the tolerant models. Whatever is not in the spec's spelling makes `read_span_table`
answer None, and the caller reads the trace the tolerant way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from operator import attrgetter, itemgetter
from typing import overload

import msgspec

from tui.api.models import Span, normal_status

SPANS_KEPT = 512  # Span objects kept: a few screens' worth of rows, the detail pane's span
_INF = math.inf


class _Head(msgspec.Struct, forbid_unknown_fields=True):
    """A span in the spec's spelling: these fields, these types, nothing else (as the strict
    schema of readers.py). Read only to make the columns, then dropped."""

    id: str | None = None
    trace_id: str | None = None
    parent_id: str | None = None
    name: str | None = None
    kind: str | None = None
    model: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    duration_ms: float | None = None
    status: str | None = None
    error_message: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    attributes: msgspec.Raw = msgspec.Raw(b"null")  # any JSON; skipped, not read
    annotations: msgspec.Raw = msgspec.Raw(b"null")  # an extension, as attributes


class _HeadsInBody(msgspec.Struct):
    """A trace's spans read as heads; its other fields skipped."""

    spans: list[_Head] | None = None


_RawOrUnset = msgspec.Raw | msgspec.UnsetType


class _SpecTrace(msgspec.Struct, forbid_unknown_fields=True):
    """A trace with the spec's fields only, each kept unread, and its spans' bytes."""

    id: _RawOrUnset = msgspec.UNSET
    project_id: _RawOrUnset = msgspec.UNSET
    name: _RawOrUnset = msgspec.UNSET
    started_at: _RawOrUnset = msgspec.UNSET
    ended_at: _RawOrUnset = msgspec.UNSET
    duration_ms: _RawOrUnset = msgspec.UNSET
    status: _RawOrUnset = msgspec.UNSET
    error_message: _RawOrUnset = msgspec.UNSET
    span_count: _RawOrUnset = msgspec.UNSET
    error_count: _RawOrUnset = msgspec.UNSET
    input_tokens: _RawOrUnset = msgspec.UNSET
    output_tokens: _RawOrUnset = msgspec.UNSET
    total_tokens: _RawOrUnset = msgspec.UNSET
    total_cost_usd: _RawOrUnset = msgspec.UNSET
    attributes: _RawOrUnset = msgspec.UNSET
    annotations: _RawOrUnset = msgspec.UNSET  # an extension: the annotations' summary
    spans: list[msgspec.Raw] = []


_TRACE_FIELDS = tuple(f for f in _SpecTrace.__struct_fields__ if f != "spans")
_HEADS_IN_BODY = msgspec.json.Decoder(_HeadsInBody)
_SPEC_TRACE = msgspec.json.Decoder(_SpecTrace)
_TOP = msgspec.json.Decoder(dict[str, msgspec.Raw])
_RAWS = msgspec.json.Decoder(list[msgspec.Raw])


@dataclass
class SpanColumns:
    """What the tree needs of every span, one list per field, in the spans' order."""

    ids: list[str | None]
    parent_ids: list[str | None]
    starts: list[float]  # unix seconds; inf when unknown
    durations: list[float | None]  # milliseconds, derived from the end when not sent
    errors: list[bool]
    input_tokens: list[int | None]
    output_tokens: list[int | None]
    costs: list[float | None]


def seconds(moment: datetime | None) -> float:
    """A moment as unix seconds; inf when there is none (or it is out of range)."""
    if moment is None:
        return _INF
    try:
        return moment.timestamp()
    except (OverflowError, OSError, ValueError):
        return _INF


def columns_of(spans: Sequence[Span]) -> SpanColumns:
    """The columns of spans already read (the tolerant path, and tests)."""
    return SpanColumns(
        ids=[s.id for s in spans],
        parent_ids=[s.parent_id for s in spans],
        starts=[seconds(s.started_at) for s in spans],
        durations=[s.duration_ms for s in spans],
        errors=[s.is_error for s in spans],
        input_tokens=[s.input_tokens for s in spans],
        output_tokens=[s.output_tokens for s in spans],
        costs=[s.cost_usd for s in spans],
    )


def _moment(text: str) -> datetime | None:
    """An ISO 8601 time as readers.fast_time reads it (naive means UTC); None if that reader
    would not take it."""
    if len(text) < 19 or text[4] != "-" or text[10] not in "Tt ":
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if not 1 < moment.year < 9999:
        return None  # fast_time's move to UTC could overflow: the tolerant path decides
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def _columns(heads: list[_Head]) -> SpanColumns | None:
    """The columns, read as the fast reader reads each span; None when a start time (or an
    end time a duration comes from) is not ISO 8601: the tolerant path reads other forms.
    (Numbers are finite: msgspec refuses those out of range, as the strict schema does.)

    This runs for every span of the trace, so each column is made by one C-level pass where it
    can be (map, set, list comprehensions) rather than by Python code per span."""
    moments = _start_moments([h.started_at for h in heads])
    if moments is None:
        return None
    inf, stamp = _INF, datetime.timestamp
    present = [m for m in moments if m is not None]
    if len(present) == len(moments):
        starts = list(map(stamp, present))
    else:
        stamps = iter(map(stamp, present))
        starts = [inf if m is None else next(stamps) for m in moments]
    durations = [h.duration_ms for h in heads]
    if None in durations and not _derive_durations(heads, moments, durations):
        return None
    statuses = [h.status for h in heads]
    if _PLAIN_STATUSES.issuperset(statuses):
        errors = list(map("error".__eq__, statuses))
    else:  # as _finish and derive_span_fields: normalised, or an error message and no status
        errors = [
            bool(h.error_message)
            if status is None
            else status == "error" or normal_status(status) == "error"
            for h, status in zip(heads, statuses, strict=True)
        ]
    return SpanColumns(
        ids=[h.id for h in heads],
        parent_ids=[h.parent_id for h in heads],
        starts=starts,
        durations=durations,
        errors=errors,
        input_tokens=[h.input_tokens for h in heads],
        output_tokens=[h.output_tokens for h in heads],
        costs=[h.cost_usd for h in heads],
    )


_PLAIN_STATUSES = frozenset(("ok", "error", "unset"))
_SEPARATORS = frozenset("Tt ")
_FIFTH, _ELEVENTH = itemgetter(4), itemgetter(10)
_YEAR, _ZONE = attrgetter("year"), attrgetter("tzinfo")


def _start_moments(texts: list[str | None]) -> list[datetime | None] | None:
    """The start times as readers.fast_time reads them (extended ISO 8601 with seconds; naive
    means UTC), None where there is none; None if any is not in that form, or is in year 1 or
    9999 (fast_time's move to UTC could overflow there: the tolerant path decides)."""
    given = [t for t in texts if t is not None]
    if not given:
        return [None] * len(texts)
    if (
        min(map(len, given)) < 19
        or set(map(_FIFTH, given)) != {"-"}
        or not _SEPARATORS.issuperset(map(_ELEVENTH, given))
    ):
        return None
    try:
        moments = list(map(datetime.fromisoformat, given))
    except ValueError:
        return None
    years = set(map(_YEAR, moments))
    if min(years) <= 1 or max(years) >= 9999:
        return None
    if None in map(_ZONE, moments):
        utc = timezone.utc
        moments = [m if m.tzinfo is not None else m.replace(tzinfo=utc) for m in moments]
    if len(given) == len(texts):
        return list(moments)
    found = iter(moments)
    return [None if t is None else next(found) for t in texts]


def _derive_durations(
    heads: list[_Head], moments: list[datetime | None], durations: list[float | None]
) -> bool:
    """derive_span_fields, in place: the duration of a span sent without one, from its start
    and end. False if such an end is not ISO 8601. (The end of a span sent with its duration
    is read only when the span itself is.)"""
    for i, duration in enumerate(durations):
        if duration is None and heads[i].ended_at is not None:
            ended = _moment(heads[i].ended_at)  # type: ignore[arg-type]
            if ended is None:
                return False
            started = moments[i]
            if started is not None:
                durations[i] = (ended - started).total_seconds() * 1000
    return True


def read_span_table(
    body: bytes, read_span_json: Callable[[bytes], Span]
) -> tuple[dict[str, msgspec.Raw], SpanTable] | None:
    """(the trace's other fields, still JSON; its spans) if `body` is a trace object whose spans
    are all in the spec's spelling, else None. `read_span_json` makes one span's bytes a Span."""
    try:
        heads = _HEADS_IN_BODY.decode(body).spans
        if heads is None:
            return None
        try:  # one pass for the trace's fields and its spans' bytes, when all are the spec's
            whole = _SPEC_TRACE.decode(body)
            fields = {
                name: value
                for name in _TRACE_FIELDS
                if (value := getattr(whole, name)) is not msgspec.UNSET
            }
            raws = whole.spans
        except msgspec.ValidationError:  # fields beyond the spec: kept for the tolerant model
            fields = _TOP.decode(body)
            raws = _RAWS.decode(fields.pop("spans"))
    except (msgspec.DecodeError, RecursionError):  # ValidationError is a DecodeError
        return None
    columns = _columns(heads)
    if columns is None:
        return None
    return fields, SpanTable(raws, read_span_json, columns)


class SpanTable(Sequence[Span]):
    """The spans of a trace as their JSON; `table[i]` is span i as a Span, made when first asked
    for and kept while it is among the last SPANS_KEPT made."""

    def __init__(
        self,
        raws: list[msgspec.Raw],
        read_span_json: Callable[[bytes], Span],
        columns: SpanColumns | None = None,
    ) -> None:
        self._raws = raws
        self._read = read_span_json
        self.columns = columns  # in this table's order; None once reordered
        self._kept: dict[int, Span] = {}
        self.made = 0  # Spans made so far (tests and benchmarks count them)

    @property
    def kept(self) -> int:
        """How many Spans are kept now."""
        return len(self._kept)

    def __len__(self) -> int:
        return len(self._raws)

    @overload
    def __getitem__(self, index: int) -> Span: ...

    @overload
    def __getitem__(self, index: slice) -> list[Span]: ...

    def __getitem__(self, index: int | slice) -> Span | list[Span]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self._raws)))]
        kept = self._kept
        span = kept.get(index)
        if span is not None:
            return span
        if index < 0:
            index += len(self._raws)
            if index < 0:
                raise IndexError("span index out of range")
            return self[index]
        span = self._read(bytes(self._raws[index]))  # IndexError past the end
        self.made += 1
        if len(kept) >= SPANS_KEPT:
            del kept[next(iter(kept))]  # the oldest made
        kept[index] = span
        return span

    def __iter__(self) -> Iterator[Span]:
        # Every span once (an export, a test), without pushing the kept ones out.
        kept, read = self._kept, self._read
        for index, raw in enumerate(self._raws):
            span = kept.get(index)
            yield span if span is not None else read(bytes(raw))

    def json_of(self, index: int) -> bytes:
        """Span `index` exactly as the server sent it."""
        return bytes(self._raws[index])

    def reordered(self, order: list[int]) -> SpanTable:
        """The same spans in another order: position k holds span order[k]."""
        raws = self._raws
        return SpanTable([raws[i] for i in order], self._read)

    def __repr__(self) -> str:
        return f"SpanTable({len(self._raws)} spans, {len(self._kept)} read)"
