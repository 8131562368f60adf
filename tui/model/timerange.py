"""Time ranges for the trace list: presets relative to now, or a custom from/to (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from tui.core.lenient import to_datetime

PRESETS = {
    "15m": timedelta(minutes=15),
    "1h": timedelta(hours=1),
    "6h": timedelta(hours=6),
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
    "30d": timedelta(days=30),
}


@dataclass(frozen=True)
class TimeRange:
    """A preset ("24h": the last 24 hours, moving with now) or a fixed custom range."""

    preset: str | None = "24h"
    start: datetime | None = None
    end: datetime | None = None

    def bounds(self, now: datetime | None = None) -> tuple[datetime, datetime]:
        now = now or datetime.now(timezone.utc)
        if self.preset is not None:
            return now - PRESETS[self.preset], now
        assert self.start is not None and self.end is not None
        return self.start, self.end

    @property
    def label(self) -> str:
        if self.preset is not None:
            return f"last {self.preset}"
        assert self.start is not None and self.end is not None
        fmt = "%Y-%m-%d %H:%M"
        return f"{self.start.astimezone():{fmt}} → {self.end.astimezone():{fmt}}"


def parse_custom(start_text: str, end_text: str) -> tuple[TimeRange | None, dict[str, str]]:
    """A custom range from two ISO times (local time if no offset), or field errors."""
    errors: dict[str, str] = {}
    values: dict[str, datetime] = {}
    for field, text in (("from", start_text), ("to", end_text)):
        text = text.strip()
        if not text and field == "to":
            values[field] = datetime.now(timezone.utc)
            continue
        has_zone = text.endswith(("Z", "z")) or "+" in text[10:] or "-" in text[10:]
        moment = to_datetime(text) if text else None
        if moment is None:
            errors[field] = "use a time like 2026-11-21 09:30 (local) or 2026-11-21T09:30Z"
            continue
        if not has_zone:  # typed without an offset: the user's own local time
            moment = moment.replace(tzinfo=None).astimezone(timezone.utc)
        values[field] = moment
    if not errors and values["from"] >= values["to"]:
        errors["from"] = "must be before to"
    if errors:
        return None, errors
    return TimeRange(None, values["from"], values["to"]), {}
