"""Search over a large warm tier: past POOL_ALL_UP_TO rows only those that can rank join the pool, same answer;
past signs.EXACT_UP_TO only the rows the sign codes choose are scored by meaning, nearly the same answer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from tiers.index import samples, signs
from tiers.memory import Memory
from tiers.model.embedder import FastEmbedder
from tiers.namespace import search
from tiers.recall import rank as recall
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


def test_past_the_exact_size_the_sign_codes_choose_what_meaning_scores_and_the_answers_hold(
    tmp_path: Path, embedder: FastEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = Memory(tmp_path / "ns", embedder)
    try:
        memory.remember(notes(), NOW)
        monkeypatch.setattr(recall, "DEPTH", 20)
        monkeypatch.setattr(search, "POOL_ALL_UP_TO", 50)
        monkeypatch.setattr(search, "WARM_DEPTH", 40)
        every = [[r.record.id for r in memory.rank(query, 10)] for query in QUERIES]

        monkeypatch.setattr(signs, "EXACT_UP_TO", 50)
        monkeypatch.setattr(search, "NEAR_KEEP", 60)  # a quarter of the rows, by codes, in scope and among the durable
        monkeypatch.setattr(samples, "MEDIAN_SAMPLE", 40)
        by_codes = [[r.record.id for r in memory.rank(query, 10)] for query in QUERIES]

        query = memory._search.parse(QUERIES[0], None)
        with memory.store.warm() as index:
            part = search._WarmPart(index, query, True, 2)
            exact = index.cosine(query.vectors)
            assert part.near is not None and len(part.near) < index.live  # the premise: not every row was scored
            assert part.chosen is not None
            # what joins the pool carries its exact cosine, whichever way it joined
            assert part.cosine[part.chosen] == pytest.approx(exact[part.chosen], abs=1e-6)
            sample = part.scored[0] if part.scored is not None else np.zeros(0)
            assert abs(float(np.median(sample)) - float(np.median(exact))) < 0.05
    finally:
        memory.close()

    for mine, theirs in zip(by_codes, every, strict=True):
        assert mine[0] == theirs[0]
        assert len(set(mine) & set(theirs)) >= 8
