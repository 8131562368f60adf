"""Pure (no Textual): what differs between two traces, A (the one that worked) and B.

The modules, by concern:
  facts.py    what is compared of every span, read cheaply (a big trace's spans from their JSON)
  align.py    the two trees aligned by path of names and ordinal among same-named siblings
  deltas.py   every row's status (same, changed, added, removed), its changes and deltas
  words.py    a word-level text diff, folded to the changed lines
  details.py  everything that differs in one pair: fields, conversation, error, attributes
  summary.py  the summary in sentences ("B took 6.2 s more, 5.8 s of it in `retrieve` · ...")
  export.py   the whole diff as JSON (`tracetui diff --json`)
  numbers.py  signed deltas (+1.2s, −$0.0031)
  last_good.py  which earlier trace is "the last good one", and how to ask a server for it
"""

from tui.model.diff.deltas import ADDED, CHANGED, REMOVED, SAME, STATUSES, TraceDiff, diff_trees
from tui.model.diff.details import Fact, PairDetail, Section, pair_detail
from tui.model.diff.summary import Sentence, plain, summary
from tui.model.diff.words import Line, TextDiff, diff_text

__all__ = [
    "ADDED",
    "CHANGED",
    "REMOVED",
    "SAME",
    "STATUSES",
    "Fact",
    "Line",
    "PairDetail",
    "Section",
    "Sentence",
    "TextDiff",
    "TraceDiff",
    "diff_text",
    "diff_trees",
    "pair_detail",
    "plain",
    "summary",
]
