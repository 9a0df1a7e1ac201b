"""ISO 8601 times and durations, parsed strictly into aware UTC datetimes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from tiers.errors import InvalidInput
from tiers.text.timeparse import as_utc, iso, parse_deadline, parse_duration, parse_time


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("P30D", timedelta(days=30)),
        ("PT12H", timedelta(hours=12)),
        ("P1Y", timedelta(days=365)),
        ("P2M", timedelta(days=60)),
        ("P1W", timedelta(days=7)),
        ("P1DT2H30M15S", timedelta(days=1, hours=2, minutes=30, seconds=15)),
        ("PT0.5H", timedelta(minutes=30)),
        (" p3d ", timedelta(days=3)),
    ],
)
def test_a_duration_parses_to_its_length(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["P", "PT", "30D", "P30", "P1H", "PT1D", "P-1D", "1 month", "", "P1DT"])
def test_a_bad_duration_is_refused_with_examples(text: str) -> None:
    with pytest.raises(
        InvalidInput, match=r"forget_after .* is not an ISO 8601 duration; use e\.g\. P30D, P1Y or PT12H"
    ):
        parse_duration(text, "forget_after")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-30", datetime(2026, 11, 30, tzinfo=UTC)),
        ("2026-11-30T14:05:00Z", datetime(2026, 11, 30, 14, 5, tzinfo=UTC)),
        ("2026-11-30T14:05:00z", datetime(2026, 11, 30, 14, 5, tzinfo=UTC)),
        ("2026-11-30T14:05:00+02:00", datetime(2026, 11, 30, 12, 5, tzinfo=UTC)),
        ("2026-11-30 14:05", datetime(2026, 11, 30, 14, 5, tzinfo=UTC)),
    ],
)
def test_a_time_parses_to_aware_utc_and_a_naive_one_is_taken_as_utc(text: str, expected: datetime) -> None:
    parsed = parse_time(text)

    assert parsed == expected
    assert parsed.tzinfo is UTC


@pytest.mark.parametrize("text", ["yesterday", "30/11/2026", "2026-13-01", "", "P30D"])
def test_a_bad_time_is_refused_naming_the_field_and_an_example(text: str) -> None:
    with pytest.raises(InvalidInput, match=r"^since .* is not an ISO 8601 time; use e\.g\. 2026-11-30"):
        parse_time(text, "since")


def test_a_deadline_is_a_duration_from_now_or_an_absolute_time() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)

    assert parse_deadline("P30D", now) == datetime(2026, 1, 31, tzinfo=UTC)
    assert parse_deadline("2026-06-01", now) == datetime(2026, 6, 1, tzinfo=UTC)
    with pytest.raises(InvalidInput, match="forget_after"):
        parse_deadline("next week", now)


def test_iso_writes_compact_utc_with_a_z_and_no_microseconds() -> None:
    lisbon_summer = timezone(timedelta(hours=1))

    assert iso(datetime(2026, 7, 1, 10, 0, 0, 123456, tzinfo=lisbon_summer)) == "2026-07-01T09:00:00Z"
    assert iso(None) is None
    assert as_utc(datetime(2026, 7, 1, 10, 0)) == datetime(2026, 7, 1, 10, 0, tzinfo=UTC)
