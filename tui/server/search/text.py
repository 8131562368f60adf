"""The text a trace is found by with `q`: its spans' names, error messages, inputs and outputs.

One text per trace, bounded: each value is cut to MAX_VALUE characters and the trace's text to
MAX_TRACE characters (a word past that is not found). Inputs and outputs are the string values
(nested lists and objects walked, keys left out) of the attributes whose names say input,
output, prompt, completion, message or response; the service's own `tracetui.*` are left out.

Each string starts with a mark that says what it is: INPUT (an attribute named for input,
prompt or query), OUTPUT (for output, completion or response) or OTHER (a name, an error, a
message of neither), so that `input:` and `output:` find a text in one kind of string only
(store/io_text.py), with the same index as `q`. A string's own marks become spaces. Traces
stored before the marks have none (their strings are joined by newlines): `q` finds their
text, `input:` and `output:` do not.

The text is stored folded (`folded`: Unicode's full case folding, str.casefold, which leaves
the marks as they are), and a query's words are folded the same way, so both stores find a
word exactly where its folded form is a substring of the folded text: case-insensitive in
every script, and the same answers whatever the database's locale (PostgreSQL's ILIKE under
the C locale folded ASCII only). Texts stored before they were folded are folded by a
migration (`needs_folding` says which).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

MAX_VALUE = 2_000
MAX_TRACE = 8_000
MAX_DEPTH = 6
TEXT_NAMES = ("input", "output", "prompt", "completion", "message", "response", "query")
OUTPUT_NAMES = ("output", "completion", "response")
INPUT_NAMES = ("input", "prompt", "query")
INPUT, OUTPUT, OTHER = "\x1c", "\x1d", "\x1e"  # the marks: what the string after one is
MARKS = INPUT + OUTPUT + OTHER
_UNMARKED = str.maketrans(MARKS, "   ")


def folded(text: str) -> str:
    """`text` as it is stored and searched: casefolded ("ÉCOLE" and "école" are "école",
    "Straße" "strasse", "ΟΔΥΣΣΕΑΣ" "οδυσσεασ")."""
    return text.casefold()


def needs_folding(stored: str) -> bool:
    """Whether a text stored before texts were folded is to be folded: one with a character
    past ASCII, that folding changes (in an ASCII text, both stores' matching folds the case
    itself)."""
    return not stored.isascii() and folded(stored) != stored


# Remembered: the same few keys come in every span, and this ran for each key of each span
# (28% of decoding a span, where it now takes a third of that). Bounded, as keys are a sender's.
@functools.lru_cache(maxsize=4096)
def is_text_name(key: str) -> bool:
    return not key.startswith("tracetui.") and any(name in key for name in TEXT_NAMES)


@functools.lru_cache(maxsize=4096)
def mark_of(key: str) -> str:
    """What an attribute's strings are, by its name: OUTPUT, INPUT or OTHER (the output words
    first: `llm.output_messages.0.message.content` is an output)."""
    if any(name in key for name in OUTPUT_NAMES):
        return OUTPUT
    if any(name in key for name in INPUT_NAMES):
        return INPUT
    return OTHER


def strings_in(
    value: Any,
    found: list[str],
    budget: int,
    seen: set[str],
    depth: int = 0,
    mark: str = OTHER,
) -> int:
    """Append the strings of `value` (walking lists and objects) to `found`, each after `mark`,
    up to `budget` characters in all, leaving out those in `seen` (and adding the others to
    it); returns the budget left."""
    if budget <= 0 or depth > MAX_DEPTH:
        return budget
    if isinstance(value, str):
        text = value[: min(MAX_VALUE, budget - 1)]
        if text.strip() and text not in seen:
            seen.add(text)
            found.append(mark + text.translate(_UNMARKED))
            budget -= len(text) + 1
    elif isinstance(value, list):
        for item in value[:200]:
            budget = strings_in(item, found, budget, seen, depth + 1, mark)
            if budget <= 0:
                break
    elif isinstance(value, dict):
        for item in list(value.values())[:200]:
            budget = strings_in(item, found, budget, seen, depth + 1, mark)
            if budget <= 0:
                break
    return budget


def span_text(
    name: str,
    error_message: str | None,
    attributes: dict[str, Any] | None,
    budget: int,
    seen: set[str],
) -> list[str]:
    """One span's parts of its trace's text, `budget` characters at most, without the strings
    in `seen` (taken by earlier spans)."""
    found: list[str] = []
    budget = strings_in(name, found, budget, seen)
    if error_message:
        budget = strings_in(error_message, found, budget, seen)
    if attributes:
        for key, value in attributes.items():
            if budget <= 0:
                break
            if is_text_name(key):
                budget = strings_in(value, found, budget, seen, mark=mark_of(key))
    return found


def searched_text(parts: Iterable[tuple[str, str | None, dict[str, Any] | None]]) -> str:
    """A trace's text from its spans' (name, error message, attributes), folded, MAX_TRACE at
    most.
    A string already taken is left out before it counts against the bound: each model call of
    an agent carries the conversation so far, and the same span names repeat, so the bound
    goes to what is new (and the index has less to read)."""
    found: list[str] = []
    seen: set[str] = set()
    budget = MAX_TRACE
    for name, error, attributes in parts:
        if budget <= 0:
            break
        more = span_text(name, error, attributes, budget, seen)
        budget -= sum(len(t) for t in more)
        found += more
    return folded("".join(found))[:MAX_TRACE]


def joined(stored: str | None, more: str) -> str:
    """A stored trace's text with a later batch's added, still MAX_TRACE at most: the later
    text's first mark separates the two (a newline, as before the marks, if it has none)."""
    if not stored:
        return more[:MAX_TRACE]
    if not more:
        return stored
    between = "" if more[0] in MARKS else "\n"
    return (stored + between + more)[:MAX_TRACE]


_PARTS = {mark: re.compile(re.escape(mark) + "[^" + MARKS + "]*") for mark in MARKS}


def in_part(body: str | None, mark: str, term: str) -> bool:
    """Whether a string of `body` (a trace's text) after `mark` holds `term`, case-insensitive
    (folded both, as the text is stored and `q` searches it): what `input:` and `output:`
    check of the traces their index finds."""
    if not body or mark not in _PARTS:
        return False
    wanted = folded(term)
    return any(wanted in part for part in _PARTS[mark].findall(folded(body)))


def part_pattern(mark: str, term: str) -> str:
    """A PostgreSQL regular expression (for `~*`) that finds `term` in a string after `mark`:
    the mark, no other mark, then the term, its ASCII punctuation escaped (a backslash before
    any other character would start an escape)."""
    escaped = "".join("\\" + c if c.isascii() and not c.isalnum() and c != " " else c for c in term)
    return mark + "[^" + MARKS + "]*" + escaped
