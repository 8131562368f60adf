"""Lenient readers of untrusted scalars: numbers, text and times as real servers (and users)
write them. Each returns None for what it cannot read instead of raising, so one odd field never
costs a whole record. Used by the client's tolerant models and by the time-range prompt.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta, timezone
from typing import Any

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_ISO = re.compile(
    r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})(?:[Tt ](\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?"
    r"\s*(Z|z|UTC|[+-]\d{2}(?::?\d{2})?)?\s*$"
)


# -- lenient scalar readers ----------------------------------------------------------------------


def finite_number(value: Any) -> float | None:
    """A finite float from a number or numeric string; bools, NaN and junk give None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip().replace("_", ""))
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def to_float(value: Any) -> float | None:
    return finite_number(value)


def to_int(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    number = finite_number(value)
    if number is None or abs(number) > 2**63:
        return None
    return int(number)


def to_str(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return None


def _from_epoch(number: float) -> datetime | None:
    """Epoch seconds, ms, µs or ns, told apart by magnitude (any date from 1973 to 5138)."""
    magnitude = abs(number)
    if magnitude < 1e11:
        seconds = number
    elif magnitude < 1e14:
        seconds = number / 1e3
    elif magnitude < 1e17:
        seconds = number / 1e6
    else:
        seconds = number / 1e9
    try:
        return _EPOCH + timedelta(seconds=seconds)
    except OverflowError:
        return None


def _from_iso(text: str) -> datetime | None:
    match = _ISO.match(text)
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    micros = int((fraction or "0")[:6].ljust(6, "0"))
    tz = timezone.utc
    if zone and zone not in ("Z", "z", "UTC"):
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        tz = timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0)))
    try:
        return datetime(
            int(year),
            int(month),
            int(day),
            int(hour or 0),
            int(minute or 0),
            int(second or 0),
            micros,
            tzinfo=tz,
        ).astimezone(timezone.utc)
    except (ValueError, OverflowError):
        return None


def to_datetime(value: Any) -> datetime | None:
    """A UTC datetime from ISO 8601 text or an epoch number in s/ms/µs/ns; None if unreadable."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    number = finite_number(value)
    if number is not None:
        return _from_epoch(number)
    if isinstance(value, str):
        return _from_iso(value)
    return None
