"""Browsing a namespace: a tier's records by time, their heat, and the tiers week by week from the move log."""

from __future__ import annotations

from datetime import timedelta

from tests.helpers import T0
from tiers.browse import heats, listing, tier_history, weekly
from tiers.memory import Memory
from tiers.records import MemoryIn, Tier
from tiers.storage.ledger import Move


def test_a_tier_lists_newest_first_in_pages_and_says_where_the_next_page_starts(memory: Memory) -> None:
    items = [MemoryIn(content=f"note number {i} about boats", occurred_at=(T0 + timedelta(days=i)).isoformat())
             for i in range(5)]  # fmt: skip
    stored = memory.remember(items, T0 + timedelta(days=10))

    first = listing(memory, Tier.WARM, limit=3)
    rest = listing(memory, Tier.WARM, before=first.next_before, limit=3)

    assert [r.id for r in first.records] == [s.id for s in reversed(stored)][:3]
    assert [r.id for r in rest.records] == [stored[1].id, stored[0].id]
    assert rest.next_before is None
    assert first.total == 5
    assert listing(memory, Tier.COLD).records == []


def test_browsing_counts_no_use_and_shows_the_heat_the_timer_sees(memory: Memory) -> None:
    [stored] = memory.remember([MemoryIn(content="the kayak is blue")], T0)
    record = memory.get(stored.id)

    before = heats(memory, [record], T0 + timedelta(days=30))
    listing(memory, Tier.WARM)

    assert before[stored.id] == memory.heat_of(stored.id, T0 + timedelta(days=30))
    assert (
        memory.ledger.usage([stored.id]).get(stored.id) is None or memory.ledger.usage([stored.id])[stored.id].uses == 0
    )


def test_the_weekly_picture_places_each_record_by_its_moves_and_counts_the_moves_of_each_week() -> None:
    now = T0 + timedelta(days=21)
    present = [("a" * 12, Tier.COLD, T0), ("b" * 12, Tier.WARM, T0 + timedelta(days=8))]
    moves = [
        Move(T0 + timedelta(days=10), "a" * 12, "warm", "cold", "warm_stale"),
        Move(T0 + timedelta(days=2), "c" * 12, "new", "hot", "profile", key="name"),
    ]

    weeks = weekly(present, moves, now, weeks=3)

    assert [w.counts for w in weeks] == [
        {"hot": 1, "warm": 1, "cold": 0},  # week ending T0+7: a still warm, b not yet stored
        {"hot": 1, "warm": 1, "cold": 1},  # a went cold on day 10, b stored on day 8
        {"hot": 1, "warm": 1, "cold": 1},
    ]
    assert weeks[0].moves == {"new>hot": 1}
    assert weeks[1].moves == {"warm>cold": 1}


def test_the_tier_history_of_a_real_namespace_counts_what_is_stored(memory: Memory) -> None:
    stored = memory.remember([MemoryIn(content="the tent has two poles"), MemoryIn(content="rain on Tuesday")], T0)
    memory.demote(stored[1].id, T0 + timedelta(days=1))

    weeks = tier_history(memory, T0 + timedelta(days=2), weeks=2)

    assert weeks[-1].counts == {"hot": 0, "warm": 1, "cold": 1}
    assert weeks[-1].moves.get("warm>cold") == 1
