"""Search over a large warm tier: past POOL_ALL_UP_TO rows only those that can rank join the pool, same answer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tiers import recall, search
from tiers.embedder import FastEmbedder
from tiers.memory import Memory
from tiers.records import MemoryIn

NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)
TOPICS = ["garden", "invoices", "the boat", "my sister", "the dentist", "train times", "the roof", "chess club"]


def notes() -> list[MemoryIn]:
    out = []
    for i in range(240):
        topic = TOPICS[i % len(TOPICS)]
        out.append(
            MemoryIn(
                content=f"Session note {i} about {topic}: item {i % 13} was discussed, then {TOPICS[(i * 5) % 8]}",
                occurred_at=(NOW - timedelta(days=i // 20)).isoformat(),
                source=f"chat-{i // 20}",
            )
        )
    out.append(MemoryIn(content="I am allergic to penicillin", occurred_at=(NOW - timedelta(days=30)).isoformat()))
    return out


QUERIES = [
    "what was said about the dentist?",
    "invoices item 7",
    "am I allergic to anything?",
    "chess club and the boat",
    "what did we discuss in session 117",
]


def test_a_pool_of_the_rows_that_can_rank_answers_as_the_pool_of_every_row(
    tmp_path: Path, embedder: FastEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = Memory(tmp_path / "ns", embedder)
    try:
        memory.remember(notes(), NOW)
        assert memory.store.count() == 241

        def answers() -> list[list[tuple[str, float]]]:
            out = []
            for query in QUERIES:
                ranked = memory.rank(query, 10)
                out.append([(r.record.id, round(r.score, 6)) for r in ranked])
            return out

        # Ranks past DEPTH add nothing, so WARM_DEPTH >= DEPTH keeps every rank that counts exact.
        monkeypatch.setattr(recall, "DEPTH", 20)
        whole = answers()
        monkeypatch.setattr(search, "POOL_ALL_UP_TO", 50)
        monkeypatch.setattr(search, "WARM_DEPTH", 40)  # 40 by meaning, by words and durable, of 241
        chosen = answers()
    finally:
        memory.close()

    # The same records in the same order; a score may differ in the third decimal where a row left out
    # (below every cut) would have lent a share of its score to a neighbour.
    assert [[rid for rid, _ in ranked] for ranked in chosen] == [[rid for rid, _ in ranked] for ranked in whole]
    for mine, theirs in zip(chosen, whole, strict=True):
        assert [score for _, score in mine] == pytest.approx([score for _, score in theirs], abs=0.005)
    assert all(len(ranked) == 10 for ranked in whole)
