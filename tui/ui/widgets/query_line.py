"""The trace list's query line: an Input that completes the word being typed (field names, then
`field:value` for the models, names, users, sessions and tags of the loaded rows; → takes the
completion), and the words it offers."""

from __future__ import annotations

from collections.abc import Iterable

from textual.suggester import Suggester
from textual.widgets import Input

from tui.api import Trace
from tui.model.query import FIELD_WORDS, completions
from tui.model.text import visible

# Values remembered per field for completion: enough for any real list, bounded for a hostile one.
MAX_VALUES = 200
PLACEHOLDER = "error model:gpt-4o latency>2s cost>0.01 user:alice tag:prod sort:-latency refund"


class LastWordSuggester(Suggester):
    """Completes the last word of the line from `words` (case-insensitively; what was typed
    stays as typed)."""

    def __init__(self) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.words: list[str] = list(FIELD_WORDS)

    async def get_suggestion(self, value: str) -> str | None:
        if not value or value[-1].isspace():
            return None
        typed = value.split()[-1]
        folded = typed.casefold()
        for word in self.words:
            if len(word) > len(typed) and word.casefold().startswith(folded):
                return value + word[len(typed) :]
        return None


class QueryLine(Input):
    """The line itself; `remember` feeds it the values of newly loaded rows."""

    def __init__(self, **kwargs: object) -> None:
        self.suggester_of_words = LastWordSuggester()
        super().__init__(placeholder=PLACEHOLDER, suggester=self.suggester_of_words, **kwargs)  # type: ignore[arg-type]
        self.seen: dict[str, set[str]] = {
            "model": set(),
            "name": set(),
            "user": set(),
            "session": set(),
            "tag": set(),
        }

    def remember(self, traces: Iterable[Trace]) -> None:
        grew = False
        for trace in traces:
            for field, values in (
                ("name", [trace.name]),
                ("user", [trace.user_id]),
                ("session", [trace.session_id]),
                ("tag", trace.tags),
                ("model", list(trace.models) if isinstance(trace.models, dict) else []),
            ):
                known = self.seen[field]
                for value in values:
                    if (
                        isinstance(value, str)
                        and value
                        and value not in known
                        and len(known) < MAX_VALUES
                        and '"' not in value
                        # Drawn and typed as they are: only values with nothing to make
                        # visible (no control, bidi or escape characters) are offered.
                        and visible(value) == value
                    ):
                        known.add(value)
                        grew = True
        if grew:
            self.suggester_of_words.words = completions(self.seen)
