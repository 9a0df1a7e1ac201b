"""The update rule and recall's order for updates, as pure logic on records and vectors given by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from tiers import updates
from tiers.records import Kind, Record, Tier

JAN = datetime(2026, 1, 1, tzinfo=UTC)


def record(rid: str, content: str, at: datetime, stored: datetime | None = None, by: str | None = None) -> Record:
    return Record(rid, content, Tier.WARM, Kind.NOTE, False, at, stored or at, superseded_by=by)


def unit(*values: float) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_a_newer_memory_sharing_a_word_may_update_an_older_one_when_close_or_saying_it_changed() -> None:
    old = record("a" * 12, "I live in Berlin", JAN)
    moved = record("b" * 12, "I moved to Lisbon; I live there now", JAN + timedelta(days=90))
    plain = record("c" * 12, "I live near the river", JAN + timedelta(days=90))

    assert updates.may_update(moved, old, 0.41)  # not close, but it says it changed
    assert not updates.may_update(plain, old, 0.41)  # as far, and saying nothing changed
    assert updates.may_update(plain, old, 0.7)  # close enough alone
    assert not updates.may_update(old, moved, 0.7)  # never the older as the later word
    assert not updates.may_update(record("d" * 12, "Lunch was great", moved.occurred_at), old, 0.9)  # no shared word
    assert not updates.may_update(plain, old, 0.99)  # the same thing said again


def test_dates_that_move_the_same_day_follow_the_order_they_were_stored_in() -> None:
    day = JAN + timedelta(days=30)
    planned = record("a" * 12, "The launch is on April 2", day, day)
    moved = record("b" * 12, "The launch moved to April 14", day, day + timedelta(hours=3))

    assert updates.may_update(moved, planned, 0.8) and not updates.may_update(planned, moved, 0.8)


def test_later_first_puts_the_newest_of_a_group_in_its_best_place_and_leaves_the_rest() -> None:
    old = record("a" * 12, "Our database is MySQL", JAN)
    other = record("b" * 12, "The offsite is in Porto", JAN + timedelta(days=10))
    new = record("c" * 12, "We migrated the database to PostgreSQL", JAN + timedelta(days=100))
    vectors = np.stack([unit(1, 0.2, 0), unit(0, 0, 1), unit(1, 0.8, 0)])  # old and new close, other apart

    placed, marks = updates.later_first([old, other, new], vectors)

    assert placed == [2, 1, 0]  # the group's places (0 and 2) go newest first; the other keeps place 1
    assert marks == {0: updates.Later(new.id, new.occurred_at)}
    # Asked about the past, the order is recall's, the older still marked.
    assert updates.later_first([old, other, new], vectors, past=True) == ([0, 1, 2], marks)
    assert updates.asks_past("Which database did we use before PostgreSQL?")
    assert not updates.asks_past("Which database do we use?")


def test_a_confirmed_update_groups_whatever_the_words() -> None:
    old = record("a" * 12, "Standup at nine", JAN, by="b" * 12)
    new = record("b" * 12, "Daily sync at ten", JAN + timedelta(days=5))
    vectors = np.stack([unit(1, 0), unit(0, 1)])  # nothing in common but the agent's word

    placed, marks = updates.later_first([old, new], vectors)

    assert placed == [1, 0] and marks[0].id == new.id
    assert updates.later_first([old], vectors[:1]) == ([0], {})
