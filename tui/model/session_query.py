"""The sessions screen's query line: `user:alice last:7d refund "order number"` read into a
SessionQuery (`parse_session_query`), written back (`format_session_query`), made from a trace
list's query (`from_trace_filter`), and applied to loaded sessions (`session_matches`).

The language, word by word (whitespace apart; a "quoted phrase" is one word):
- `user:NAME`: one user's sessions (exact, as the server reads it);
- `last:7d`: sessions seen within that long before now (m, h, d or w; the server's default,
  without it, is the last 24 hours);
- any other word or "phrase": text the session's traces must say (words of three characters
  or more go to the server's trace search when it has one; else the session's id and user).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from tui.api.models import TraceFilter
from tui.model.query import MIN_WORD, QueryError, text_terms

LAST_UNITS = {"m": timedelta(minutes=1), "h": timedelta(hours=1), "d": timedelta(days=1)}
LAST_UNITS["w"] = timedelta(weeks=1)
LAST_MAX = timedelta(days=366)
PLACEHOLDER = 'user:alice last:7d refund "order number"'
FIELD_WORDS = ("user:", "last:1h", "last:24h", "last:7d", "last:30d")

_LAST = re.compile(r"^(\d{1,6})([mhdw])$", re.IGNORECASE)
_FIELD = re.compile(r"^([A-Za-z_]+):(.*)$", re.DOTALL)
_WORD = re.compile(r'(?:"[^"]*"|[^\s"])+')


@dataclass(frozen=True)
class SessionQuery:
    """Whose sessions (`user_id`), how recent (`last`, as typed: "7d"), and what their traces
    say (`text`: words and phrases, each a case-insensitive substring)."""

    user_id: str | None = None
    last: str | None = None
    text: tuple[str, ...] = ()

    @property
    def is_empty(self) -> bool:
        return self == SessionQuery()

    @property
    def window(self) -> timedelta | None:
        """How far back `last` reaches (None: the server's default)."""
        if self.last is None:
            return None
        found = _LAST.match(self.last)
        assert found is not None  # parse_session_query checked it
        return int(found.group(1)) * LAST_UNITS[found.group(2).lower()]

    def bounds(self, now: datetime) -> tuple[datetime | None, datetime | None]:
        """The from/to of the sessions listing (by last seen): None for the server's default."""
        window = self.window
        return (now - window, now) if window is not None else (None, None)

    @property
    def text_searchable(self) -> bool:
        """Whether a server's trace search can take the text: every word long enough."""
        return bool(self.text) and all(len(word) >= MIN_WORD for word in self.text)

    @property
    def trace_q(self) -> str | None:
        """The text as GET /v1/traces's `q` holds it (a phrase with spaces keeps its quotes)."""
        if not self.text:
            return None
        return " ".join(f'"{word}"' if re.search(r"\s", word) else word for word in self.text)


def _words(text: str) -> list[str]:
    if text.count('"') % 2:
        raise QueryError('a quote (") is not closed')
    return _WORD.findall(text)


def parse_session_query(text: str) -> SessionQuery:
    """The SessionQuery a query line says; QueryError (only) for anything it cannot read."""
    user: str | None = None
    last: str | None = None
    words: list[str] = []
    for word in _words(text):
        plain = word.replace('"', "")
        field = None if word.startswith('"') else _FIELD.match(word)
        if field is None:
            if not plain:
                raise QueryError('"": an empty phrase finds nothing; put words between the quotes')
            if plain not in words:
                words.append(plain)
            continue
        name, value = field.group(1).lower(), field.group(2).replace('"', "")
        if name not in ("user", "last"):
            raise QueryError(
                f"{field.group(1)}: is not a field here (the fields are user and last); "
                f'to search for the text, quote it: "{plain}"'
            )
        if not value:
            raise QueryError(f"{word} needs a value ({name}:something)")
        if name == "user":
            if user is not None and user != value:
                raise QueryError(f"{word}: user: is given twice")
            user = value
        else:
            found = _LAST.match(value)
            if found is None:
                raise QueryError(f"{word}: last: takes a number and m, h, d or w (last:7d)")
            if last is not None and last != value.lower():
                raise QueryError(f"{word}: last: is given twice")
            if int(found.group(1)) * LAST_UNITS[found.group(2).lower()] > LAST_MAX:
                raise QueryError(f"{word}: at most a year back (last:52w)")
            last = value.lower()
    return SessionQuery(user, last, tuple(words))


def _value(value: str) -> str:
    return value if value and not re.search(r"\s", value) else f'"{value}"'


def format_session_query(query: SessionQuery) -> str:
    """The query line that reads back as `query`."""
    parts: list[str] = []
    if query.user_id is not None:
        parts.append(f"user:{_value(query.user_id)}")
    if query.last is not None:
        parts.append(f"last:{query.last}")
    for word in query.text:
        special = _FIELD.match(word) or re.search(r'[\s"]', word)
        parts.append(f'"{word}"' if special else word)
    return " ".join(parts)


def from_trace_filter(trace_filter: TraceFilter) -> SessionQuery:
    """The sessions a trace list's query points at: its user's, saying its text (the rest of
    a trace query, a model or a latency, is about single traces, not sessions)."""
    return SessionQuery(user_id=trace_filter.user_id, text=tuple(text_terms(trace_filter.q)))


def session_matches(session: Any, query: SessionQuery, now: datetime) -> bool:
    """Whether a loaded session passes the query on what a session row carries: its user, its
    last seen, and the text in its id or user (a server that cannot search traces)."""
    if query.user_id is not None and session.user_id != query.user_id:
        return False
    window = query.window
    if window is not None and (session.last_seen is None or session.last_seen < now - window):
        return False
    haystack = " ".join(v for v in (session.id, session.user_id) if isinstance(v, str)).casefold()
    return all(word.casefold() in haystack for word in query.text)
