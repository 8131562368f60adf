"""Quick verdicts: the annotations one digit writes from the annotate form (pure). The config
file's `[verdicts]` table names them (docs/configuration.md); without one, `1` marks the target
correct, `2` wrong, and `3` opens the form on a root cause, whose label is to be typed.

    [verdicts]
    "1" = { name = "correctness", label = "correct", score = 1 }
    "2" = { name = "correctness", label = "wrong", score = 0 }
    "3" = { name = "root_cause" }        # no label or score: the form asks for the label
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

DIGITS = "1234567890"
MAX_NAME = 64
MAX_LABEL = 200


@dataclass(frozen=True)
class Verdict:
    """The annotation a digit writes: `name` with `label` and/or `score`. One with neither is
    not written at once: the form opens on it, its name filled in, for the label."""

    key: str
    name: str
    label: str | None = None
    score: float | None = None

    @property
    def complete(self) -> bool:
        return self.label is not None or self.score is not None

    @property
    def title(self) -> str:
        """`correctness: wrong`, `root cause…`: what the form's verdict line says of it."""
        if self.label is not None:
            return f"{self.name}: {self.label}"
        if self.score is not None:
            return f"{self.name}: {self.score:g}"
        return f"{self.name.replace('_', ' ')}…"


DEFAULT_VERDICTS = (
    Verdict("1", "correctness", "correct", 1.0),
    Verdict("2", "correctness", "wrong", 0.0),
    Verdict("3", "root_cause"),
)


def read_verdicts(table: Any) -> tuple[Verdict, ...]:
    """The verdicts of a `[verdicts]` table (digit -> {name, label, score}), by digit; the
    defaults for None. ValueError, naming the entry, for anything else."""
    if table is None:
        return DEFAULT_VERDICTS
    if not isinstance(table, Mapping):
        raise ValueError('[verdicts] must be a table of digits, e.g. "1" = { name = ... }')
    verdicts = []
    for key, entry in table.items():
        where = f"[verdicts] {key!r}"
        if not isinstance(key, str) or len(key) != 1 or key not in DIGITS:
            raise ValueError(f"{where}: a verdict's key is one digit, 0 to 9")
        if not isinstance(entry, Mapping):
            raise ValueError(f'{where} must be a table: {{ name = "...", label = "..." }}')
        unknown = set(entry) - {"name", "label", "score"}
        if unknown:
            raise ValueError(f"{where}: unknown field {sorted(unknown)[0]!r} (name, label, score)")
        name, label, score = entry.get("name"), entry.get("label"), entry.get("score")
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
            raise ValueError(f"{where}: name is 1 to {MAX_NAME} characters")
        if label is not None and (not isinstance(label, str) or not 1 <= len(label) <= MAX_LABEL):
            raise ValueError(f"{where}: label is 1 to {MAX_LABEL} characters")
        if score is not None and (
            isinstance(score, bool)
            or not isinstance(score, (int, float))
            or not math.isfinite(score)
        ):
            raise ValueError(f"{where}: score is a number")
        verdicts.append(Verdict(key, name, label, None if score is None else float(score)))
    return tuple(sorted(verdicts, key=lambda verdict: DIGITS.index(verdict.key)))
