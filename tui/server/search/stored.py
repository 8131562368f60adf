"""A stored trace's user, session, tags, output preview, models and text when more of its spans
arrive: what the batch's spans say merged into what is stored, by ingest's rules (a root's user,
session and output win; another span's fill in what is missing; tags and models add up; the
text grows to its bound).
"""

from __future__ import annotations

import json
from typing import NamedTuple

from tui.server.ingest.associations import union
from tui.server.ingest.summaries import json_list
from tui.server.search.text import joined
from tui.server.store.rows import TraceSums


class Extras(NamedTuple):
    user_id: str | None
    session_id: str | None
    tags: str  # JSON lists as stored
    output_preview: str | None
    models: str
    search_text: str | None


def listed(text: str | None) -> list[str]:
    try:
        value = json.loads(text or "[]")
    except ValueError:
        return []
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def merged(stored: Extras, new: TraceSums) -> Extras:
    root = new.associations_from_root
    return Extras(
        (new.user_id if root and new.user_id else None) or stored.user_id or new.user_id,
        (new.session_id if root and new.session_id else None)
        or stored.session_id
        or new.session_id,
        json_list(union(listed(stored.tags), new.tags)),
        (new.output_preview if new.output_from_root and new.output_preview else None)
        or stored.output_preview
        or new.output_preview,
        json_list(sorted(set(listed(stored.models)) | set(new.models))),
        joined(stored.search_text, new.search_text),
    )
