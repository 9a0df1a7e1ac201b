"""The reranker: the real cross-encoder from its package, fused with recall's order, off unless asked."""

from __future__ import annotations

import importlib.util
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from tiers.errors import StorageError
from tiers.memory import Memory, MemorySettings
from tiers.model import rerank
from tiers.model.embedder import FastEmbedder
from tiers.namespace.search import _as_read
from tiers.recall.rank import RecallSettings
from tiers.records import MemoryIn

ANSWER = "When things get too much, Melanie goes to her pottery class; she says shaping clay is like therapy"
# Lines that share the question's name and its theme's words, none of them the answer.
AROUND = [
    "Melanie said work has been really stressful this month",
    "Melanie is stressed about the deadline for the school fundraiser",
    "Melanie complained that her commute stresses her out",
    "Melanie's kids were stressed about their exams",
    "Melanie said the stress of moving house kept her up at night",
    "Melanie does the grocery shopping on Saturdays",
    "Melanie bought a new car last spring",
    "Melanie's sister visited in June",
    "Melanie said the stress of her tax return ruined her week",
]
QUESTION = "What hobby helps Melanie calm down?"
BASE = datetime(2024, 1, 1, tzinfo=UTC)


def test_fusion_keeps_every_item_and_moves_one_both_orders_favour() -> None:
    items = ["a", "b", "c", "d"]

    # The cross-encoder puts d first: it rises, and what both put high stays ahead of what one put low.
    fused = rerank.fuse(items, np.array([0.5, 0.1, 0.0, 3.0]))
    assert sorted(fused) == items
    assert fused[:2] == ["a", "d"]
    assert fused.index("b") < fused.index("c")
    # Agreement changes nothing; equal scores leave recall's order.
    assert rerank.fuse(items, np.array([4.0, 3.0, 2.0, 1.0])) == items
    assert rerank.fuse(items, np.zeros(4)) == items
    with pytest.raises(ValueError, match="one score per item"):
        rerank.fuse(items, np.zeros(3))


def test_the_packaged_cross_encoder_reads_the_question_beside_each_memory() -> None:
    scores = rerank.CrossEncoder().scores(QUESTION, [*AROUND, ANSWER])

    assert scores.shape == (len(AROUND) + 1,)
    assert int(np.argmax(scores)) == len(AROUND)  # the answer, which shares only the name with the question
    assert rerank.CrossEncoder().scores(QUESTION, []).shape == (0,)


def test_a_memorys_score_does_not_depend_on_the_memories_scored_beside_it() -> None:
    # The model's int8 layers scale each run by its largest value: scored in one batch, a memory's score
    # would move with its neighbours (and a short one would be padded to the longest).
    encoder = rerank.CrossEncoder()
    alone = encoder.scores(QUESTION, [ANSWER])[0]
    long_neighbour = " ".join(AROUND * 4)
    beside = encoder.scores(QUESTION, [AROUND[0], ANSWER, long_neighbour])

    assert beside[1] == alone
    assert beside[0] == encoder.scores(QUESTION, [AROUND[0]])[0]


def test_a_memory_said_in_other_words_is_recalled_when_recall_reranks(tmp_path: Path, embedder: FastEmbedder) -> None:
    found = {}
    later = BASE + timedelta(days=40)
    for depth in (0, 20):
        memory = Memory(tmp_path / f"ns{depth}", embedder, MemorySettings(recall=RecallSettings(rerank=depth)))
        for day, text in enumerate([*AROUND[:8], ANSWER, AROUND[8]]):
            memory.remember([MemoryIn(content=text, occurred_at=(BASE + timedelta(days=3 * day)).isoformat())], BASE)
        packed = memory.recall(QUESTION, later, limit=3)
        assert len(packed.hits) == 3
        found[depth] = [hit.record.content for hit in packed.hits]
        # Reranking reorders what recall found; it never returns more than asked or a memory twice.
        wide = [hit.record.content for hit in memory.recall(QUESTION, later, limit=10).hits]
        assert sorted(wide) == sorted([*AROUND, ANSWER])
        if depth == 0:
            # A thorough recall reranks though the settings do not.
            found["thorough"] = [hit.record.content for hit in memory.recall(QUESTION, later, 3, thorough=True).hits]
        memory.close()

    assert ANSWER not in found[0]  # by words and meaning alone the stressed lines come first
    assert ANSWER in found[20]
    assert ANSWER in found["thorough"] and len(found["thorough"]) == 3


def test_without_the_package_reranking_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None if name == rerank.PACKAGE else real(name))

    with pytest.raises(StorageError, match=r"without `thorough`.*pip install 'memtiers\[rerank\]'.*MEMTIERS_RERANK=0"):
        rerank.model_folder()


def test_a_long_memory_is_read_by_its_piece_nearest_the_query(memory: Memory) -> None:
    filler = " ".join(
        f"Item {n}: the team went through the sprint board and moved ticket {n} along." for n in range(40)
    )
    note = f"Weekly meeting minutes. {filler} Last point: the office router password is kept by Priya in the safe."
    memory.remember([MemoryIn(content=note)], BASE)

    [hit] = [h for h in memory.rank("who keeps the router password?", 5) if h.record.content == note]
    read = _as_read(hit)

    assert hit.piece_cosines is not None and len(hit.piece_cosines) > 2
    assert "kept by Priya in the safe" in read and read != note
    assert _as_read(replace(hit, piece_cosines=None)) == note  # a memory without pieces is read whole
