"""VerdictLine: the annotate form's line of quick verdicts (`1 correctness: correct · 2 …`), the
first thing the form focuses: one digit writes its verdict (or, for one without a label or a
score, fills the form's name and asks for the label). Tab goes on to the fields.

The digits are the config's (`[verdicts]`, tui/model/verdicts.py), not bindings of a keymap:
the line itself shows each one, and a digit without a verdict does nothing."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual import events
from textual.message import Message
from textual.widgets import Static

from tui.model.text import safe_text
from tui.model.verdicts import Verdict


class VerdictLine(Static, can_focus=True):
    """The verdicts by digit; posts Chosen when one is pressed."""

    DEFAULT_CSS = """
    VerdictLine { height: auto; padding: 0 1; background: $boost; }
    VerdictLine:focus { background: $primary 30%; }
    """

    class Chosen(Message):
        def __init__(self, verdict: Verdict) -> None:
            super().__init__()
            self.verdict = verdict

    def __init__(self, verdicts: Sequence[Verdict], **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.verdicts = {verdict.key: verdict for verdict in verdicts}

    def on_mount(self) -> None:
        line = Text()
        for verdict in self.verdicts.values():
            if line.plain:
                line.append("  ·  ", style="dim")
            line.append(verdict.key, style="bold reverse")
            line.append(" ")
            line.append_text(safe_text(verdict.title, 40))
        line.append("   (tab: write your own)", style="dim")
        self.update(line)

    def on_key(self, event: events.Key) -> None:
        verdict = self.verdicts.get(event.character or "")
        if verdict is not None:
            event.stop()
            event.prevent_default()
            self.post_message(self.Chosen(verdict))
