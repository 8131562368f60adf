"""What differs between the SQL of the two stores, in one place.

Every statement both stores run is written once, in SQL both accept, with `?` placeholders and
`column = ANY(?)` for "column is one of a bound list of values"; `Dialect.sql` renders it for a
store (PostgreSQL: `%s`; SQLite: the list as a JSON array walked by json_each), and
`Dialect.values` binds the list as that store takes it. No such statement holds a literal `?`
or `%`. The rest that differs is named here: a function or two, how a cost is rounded, and
search's text and containment clauses (SQLite: FTS5 trigram and json_each; PostgreSQL: a GIN
index over trigrams, strpos, jsonb containment).
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from tui.server.search.text import part_pattern

ANY = "= ANY(?)"
Parts = tuple[tuple[str, str], ...]  # (mark, term): a term a string of one kind must hold
SQLITE_ANY = "IN (SELECT value FROM json_each(?))"


@dataclass(frozen=True)
class Dialect:
    """One store's SQL, where it is not the other's."""

    name: str
    placeholder: str
    # A bound list of values, as `column = ANY(?)` takes it.
    values: Callable[[Iterable[Any]], Any]
    find: str  # find(text, part): where `part` starts in `text` (1-based), 0 if it is not there
    rounded: Callable[[str, int], str]  # (expression, digits): a float rounded to `digits`
    # (every term, the (mark, term) of `input:` and `output:`, whether they are common): the
    # text search's (clause, args)
    text: Callable[[tuple[str, ...], Parts, bool], tuple[str, list[Any]]]
    contains: Callable[[str, str], tuple[str, list[Any]]]  # (column, value): (clause, args)
    # Put before a column to keep the planner from using its index (SQLite's unary +): the
    # window's bound on listed_at, when the traces are ordered by another column, so that the
    # order's index is walked instead of sorting the whole window.
    unindexed: str = ""

    def sql(self, text: str) -> str:
        """`text` (`?` placeholders, `= ANY(?)` lists) as this store takes it."""
        return _rendered(self.name, text)


@functools.lru_cache(maxsize=1024)
def _rendered(dialect: str, text: str) -> str:
    if dialect == "sqlite":
        return text.replace(ANY, SQLITE_ANY)
    return text.replace("?", "%s")


def fts_match(terms: tuple[str, ...]) -> str:
    """FTS5 trigram: every term a quoted phrase (a substring, case-insensitive)."""
    return " ".join('"' + term.replace('"', '""') + '"' for term in terms)


def sqlite_text(
    terms: tuple[str, ...], parts: Parts = (), common: bool = False
) -> tuple[str, list[Any]]:
    """Rare terms: the traces the index finds, then ordered (the cost grows with the matches).
    Common ones: the traces in order, each looked up in the index until the page is full
    (the cost grows with the rows walked past, few when most rows match). A term of `parts`
    is found by the index too, then checked in its kind of string (search.text.in_part, the
    function the store's connections have as tracetui_in_part)."""
    matched = fts_match((*terms, *(term for _, term in parts)))
    checks = "".join(" AND tracetui_in_part(f.body, ?, ?)" for _ in parts)
    args: list[Any] = [matched, *(value for part in parts for value in part)]
    if common:
        return (
            "EXISTS (SELECT 1 FROM trace_text_keys k JOIN trace_texts f ON f.rowid = k.id"
            " WHERE k.project_id = traces.project_id AND k.trace_id = traces.id"
            f" AND trace_texts MATCH ?{checks})",
            args,
        )
    return (
        "(project_id, id) IN (SELECT k.project_id, k.trace_id FROM trace_texts f"
        f" JOIN trace_text_keys k ON k.id = f.rowid WHERE trace_texts MATCH ?{checks})",
        args,
    )


def sqlite_contains(column: str, value: str) -> tuple[str, list[Any]]:
    return f"EXISTS (SELECT 1 FROM json_each(traces.{column}) WHERE value = ?)", [value]


def like_pattern(term: str) -> str:
    """`term` as an ILIKE substring pattern, its own %, _ and \\ taken literally."""
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def postgres_text(
    terms: tuple[str, ...], parts: Parts = (), common: bool = False
) -> tuple[str, list[Any]]:
    """The terms' trigrams, all held by the trace's (its GIN index), then each term found in
    the text by strpos, and a term of `parts` matched in its kind of string (`~*`,
    search.text.part_pattern); `common`: no trigrams (rows walked in order, no index). The
    terms come folded (search.text.folded), as texts are stored; lower() on both sides folds
    the ASCII of texts stored before they were (and is the same on each side otherwise).
    strpos takes time linear in the text, where ILIKE '%term%' took text length times term
    length (a 498-character term over 8,000 characters of "a": 15 ms per trace)."""
    found = "strpos(lower(search_text), lower(?::text)) > 0"
    each = (
        found if common else f"tracetui_grams(search_text) @> tracetui_grams(?::text) AND {found}"
    )
    clauses: list[str] = []
    args: list[Any] = []
    for term in (*terms, *(term for _, term in parts)):
        clauses.append(each)
        args += [term] if common else [term, term]
    return _in_parts(clauses, args, parts)


def postgres_trgm_text(
    terms: tuple[str, ...], parts: Parts = (), common: bool = False
) -> tuple[str, list[Any]]:
    """Where the server has pg_trgm (postgres.migrations, version 8): ILIKE per term, which
    pg_trgm's GIN index (gin_trgm_ops) serves itself, its rows then checked by strpos as on
    the other index (texts and terms are folded alike, so both agree), and `parts` as there;
    `common`: strpos alone, rows walked in order."""
    if common:
        return postgres_text(terms, parts, common=True)
    each = "search_text ILIKE ? AND strpos(lower(search_text), lower(?::text)) > 0"
    clauses: list[str] = []
    args: list[Any] = []
    for term in (*terms, *(term for _, term in parts)):
        clauses.append(each)
        args += [like_pattern(term), term]
    return _in_parts(clauses, args, parts)


def _in_parts(clauses: list[str], args: list[Any], parts: Parts) -> tuple[str, list[Any]]:
    """`clauses` and, for each of `parts`, its term matched in its kind of string."""
    for mark, term in parts:
        clauses.append("search_text ~* ?")
        args.append(part_pattern(mark, term))
    return " AND ".join(clauses), args


def postgres_contains(column: str, value: str) -> tuple[str, list[Any]]:
    return f"({column}::jsonb) @> ?::jsonb", [json.dumps([value])]


SQLITE = Dialect(
    name="sqlite",
    placeholder="?",
    values=lambda values: json.dumps(list(values)),
    find="instr",
    rounded=lambda expression, digits: f"round({expression}, {digits})",
    text=sqlite_text,
    contains=sqlite_contains,
    unindexed="+",
)
POSTGRES = Dialect(
    name="postgres",
    placeholder="%s",
    values=list,
    find="strpos",
    # round() of a double precision takes no digits in PostgreSQL: numeric's does.
    rounded=lambda expression, digits: f"round(({expression})::numeric, {digits})::float8",
    text=postgres_text,
    contains=postgres_contains,
)
# PostgreSQL whose text index is pg_trgm's: the same SQL, but the text search (above).
POSTGRES_TRGM = dataclasses.replace(POSTGRES, text=postgres_trgm_text)
