"""The text a trace is found by with `q`: its spans' names, error messages, inputs and outputs.

One text per trace, bounded: each value is cut to MAX_VALUE characters and the trace's text to
MAX_TRACE characters (a word past that is not found). Inputs and outputs are the string values
(nested lists and objects walked, keys left out) of the attributes whose names say input,
output, prompt, completion, message or response; the service's own `tracetui.*` are left out.

The text is stored folded (`folded`: Unicode's full case folding, str.casefold), and a query's
words are folded the same way, so both stores find a word exactly where its folded form is a
substring of the folded text: case-insensitive in every script, and the same answers whatever
the database's locale (PostgreSQL's ILIKE under the C locale folded ASCII only). Texts stored
before they were folded are folded by a migration (`needs_folding` says which).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

MAX_VALUE = 2_000
MAX_TRACE = 8_000
MAX_DEPTH = 6
TEXT_NAMES = ("input", "output", "prompt", "completion", "message", "response", "query")


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


def strings_in(value: Any, found: list[str], budget: int, seen: set[str], depth: int = 0) -> int:
    """Append the strings of `value` (walking lists and objects) to `found`, up to `budget`
    characters in all, leaving out those in `seen` (and adding the others to it); returns the
    budget left."""
    if budget <= 0 or depth > MAX_DEPTH:
        return budget
    if isinstance(value, str):
        text = value[: min(MAX_VALUE, budget)]
        if text.strip() and text not in seen:
            seen.add(text)
            found.append(text)
            budget -= len(text) + 1
    elif isinstance(value, list):
        for item in value[:200]:
            budget = strings_in(item, found, budget, seen, depth + 1)
            if budget <= 0:
                break
    elif isinstance(value, dict):
        for item in list(value.values())[:200]:
            budget = strings_in(item, found, budget, seen, depth + 1)
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
                budget = strings_in(value, found, budget, seen)
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
        budget -= sum(len(t) + 1 for t in more)
        found += more
    return folded("\n".join(found))[:MAX_TRACE]


def joined(stored: str | None, more: str) -> str:
    """A stored trace's text with a later batch's added, still MAX_TRACE at most."""
    if not stored:
        return more[:MAX_TRACE]
    if not more:
        return stored
    return (stored + "\n" + more)[:MAX_TRACE]
