"""Reading JSON nested deeper than Python's parser allows, keeping everything else.

json.loads recurses once per level and fails near 1,000 levels; a span's attributes can be
nested 10,000 deep (whatever the traced application logged). Rather than lose the whole trace,
each value nested deeper than MAX_DEPTH is replaced by a short string saying so, found by a flat
scan over the text (strings skipped whole), and the rest is parsed as usual.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DEPTH = 200


def cut_note(max_depth: int = MAX_DEPTH) -> str:
    """What stands in for a value nested deeper than `max_depth` levels."""
    return f"… nested deeper than {max_depth} levels (not shown)"


# A string (escapes included) or one bracket: everything else cannot change the depth.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


def loads_with_depth_cut(text: str, max_depth: int = MAX_DEPTH) -> Any:
    """json.loads(text), with every value deeper than `max_depth` replaced by `cut_note`."""
    pieces: list[str] = []
    depth, kept_until, cut_from = 0, 0, -1
    for match in _TOKEN.finditer(text):
        part = match.group()
        if part in "[{":
            depth += 1
            if depth == max_depth + 1 and cut_from < 0:
                cut_from = match.start()
        elif part in "]}":
            if depth == max_depth + 1 and cut_from >= 0:
                pieces += [text[kept_until:cut_from], json.dumps(cut_note(max_depth))]
                kept_until, cut_from = match.end(), -1
            depth -= 1
    pieces.append(text[kept_until:])
    return json.loads("".join(pieces))
