"""ISO 8601 times and durations, parsed strictly, always as aware UTC datetimes."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from tiers.errors import InvalidInput

_DURATION = re.compile(
    r"^P(?!$)(?:(?P<y>\d+(?:\.\d+)?)Y)?(?:(?P<mo>\d+(?:\.\d+)?)M)?(?:(?P<w>\d+(?:\.\d+)?)W)?"
    r"(?:(?P<d>\d+(?:\.\d+)?)D)?(?:T(?=\d)(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<mi>\d+(?:\.\d+)?)M)?"
    r"(?:(?P<s>\d+(?:\.\d+)?)S)?)?$"
)


def parse_time(text: str, field: str = "time") -> datetime:
    """Parse an ISO 8601 date or datetime; a time without zone is taken as UTC."""
    raw = text.strip()
    try:
        value = datetime.fromisoformat(raw.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise InvalidInput(
            f"{field} {text!r} is not an ISO 8601 time; use e.g. 2026-11-30 or 2026-11-30T14:05:00Z"
        ) from None
    return as_utc(value)


def parse_duration(text: str, field: str = "duration") -> timedelta:
    """Parse an ISO 8601 duration such as P30D or PT12H (a year is 365 days, a month 30)."""
    match = _DURATION.match(text.strip().upper())
    if not match:
        raise InvalidInput(f"{field} {text!r} is not an ISO 8601 duration; use e.g. P30D, P1Y or PT12H")
    parts = {k: float(v) for k, v in match.groupdict().items() if v}
    days = parts.get("y", 0) * 365 + parts.get("mo", 0) * 30 + parts.get("w", 0) * 7 + parts.get("d", 0)
    return timedelta(days=days, hours=parts.get("h", 0), minutes=parts.get("mi", 0), seconds=parts.get("s", 0))


def parse_deadline(text: str, now: datetime, field: str = "forget_after") -> datetime:
    """A duration counted from `now`, or an absolute time."""
    if text.strip().upper().startswith("P"):
        return now + parse_duration(text, field)
    return parse_time(text, field)


def as_utc(value: datetime) -> datetime:
    """The same instant as an aware UTC datetime (naive means UTC)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def iso(value: datetime | None) -> str | None:
    """Compact ISO 8601 in UTC with a Z, seconds precision."""
    if value is None:
        return None
    return as_utc(value).replace(microsecond=0).isoformat().replace("+00:00", "Z")
