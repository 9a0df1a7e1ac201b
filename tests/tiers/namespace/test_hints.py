"""The later memory `remember` named as a possible update of an older one joins a recall that found only the older
one (Search._hinted): kept in the ledger, paired by the same rule as any update among the hits, and gone with it."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.helpers import AT_WORK, JOB, JOB_CHANGED
from tiers.memory import Memory, MemorySettings
from tiers.model.embedder import FastEmbedder
from tiers.recall.rank import RecallSettings
from tiers.records import MemoryIn

NOW = datetime(2026, 7, 1, 12, tzinfo=UTC)
QUESTION = "Where do I work?"


@pytest.fixture
def told(tmp_path: Path, embedder: FastEmbedder) -> Iterator[tuple[Memory, str, str]]:
    """A store of the fact, the notes and the later memory, each said in its own write: (memory, fact, later)."""
    memory = Memory(tmp_path / "ns", embedder, MemorySettings(recall=RecallSettings(updates=True)))
    [fact] = memory.remember([MemoryIn(content=JOB, occurred_at="2026-01-10T09:00:00Z", tags=["job"])], NOW)
    for i, note in enumerate(AT_WORK):
        memory.remember([MemoryIn(content=note, occurred_at=f"2026-02-{1 + i:02d}T12:00:00Z", tags=["job"])], NOW)
    [joined] = memory.remember([MemoryIn(content=JOB_CHANGED, occurred_at="2026-06-20T09:00:00Z")], NOW)
    assert fact.id in [e.id for e in joined.may_update]
    yield memory, fact.id, joined.id
    memory.close()


def ids(memory: Memory, query: str, **asked: object) -> list[str]:
    return [h.record.id for h in memory.recall(query, NOW, limit=10, **asked).hits]  # type: ignore[arg-type]


def test_the_named_later_memory_joins_above_the_fact_and_marks_it_where_the_query_alone_misses_it(
    told: tuple[Memory, str, str],
) -> None:
    memory, fact, joined = told
    hits = memory.recall(QUESTION, NOW, limit=10).hits
    found = [h.record.id for h in hits]
    assert found.index(joined) < found.index(fact)
    later = hits[found.index(fact)].later
    assert later is not None and later.id == joined
    assert [h.record.id for h in memory.recall(QUESTION, NOW, limit=1).hits] == [joined]

    # Without the ledger's hint the query finds the fact and not the later memory: the hint is what brings it.
    with sqlite3.connect(memory.ledger.path) as db:
        db.execute("DELETE FROM hints")
    alone = ids(memory, QUESTION)
    assert fact in alone and joined not in alone


def test_a_question_about_the_past_keeps_the_first_places_and_a_scoped_recall_takes_no_hint(
    told: tuple[Memory, str, str],
) -> None:
    memory, fact, joined = told
    past = "Where did I work before?"
    with_hints = memory.recall(past, NOW, limit=10).hits
    with sqlite3.connect(memory.ledger.path) as db:
        rows = db.execute("SELECT older, newer, at FROM hints").fetchall()
        db.execute("DELETE FROM hints")
    without = ids(memory, past)
    assert fact in without[:5]
    # The fact keeps its place, and is marked.
    assert [h.record.id for h in with_hints].index(fact) == without.index(fact)
    assert next(h for h in with_hints if h.record.id == fact).later.id == joined  # type: ignore[union-attr]

    with sqlite3.connect(memory.ledger.path) as db:
        db.executemany("INSERT INTO hints(older, newer, at) VALUES (?, ?, ?)", rows)
    assert joined not in ids(memory, QUESTION, tags=["job"])  # scoped by tags: what it asked for is what it found


def test_a_forgotten_later_memory_leaves_the_hints(told: tuple[Memory, str, str]) -> None:
    memory, fact, joined = told
    memory.forget(joined, NOW)
    assert memory.ledger.hinted([fact]) == {}
    found = memory.recall(QUESTION, NOW, limit=10).hits
    assert joined not in [h.record.id for h in found] and all(h.later is None or h.later.id != joined for h in found)


def test_a_later_memory_stored_among_others_is_named_but_joins_no_recall(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    """Turns of a conversation stored together: `remember` still names the earlier memory, the ledger keeps no
    hint, so recall pairs them only where it finds both."""
    memory = Memory(tmp_path / "ns", embedder, MemorySettings(recall=RecallSettings(updates=True)))
    [fact] = memory.remember([MemoryIn(content=JOB, occurred_at="2026-01-10T09:00:00Z")], NOW)
    joined, _ = memory.remember(
        [
            MemoryIn(content=JOB_CHANGED, occurred_at="2026-06-20T09:00:00Z"),
            MemoryIn(content="We talked about the weather in Porto.", occurred_at="2026-06-20T09:00:00Z"),
        ],
        NOW,
    )
    assert fact.id in [e.id for e in joined.may_update]
    assert memory.ledger.hinted([fact.id]) == {}
    memory.close()
