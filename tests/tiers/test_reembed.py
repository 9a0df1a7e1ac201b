"""Opening a store with another model is refused; `reembed` switches models without losing a record."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from tiers.embedder import FastEmbedder
from tiers.errors import ModelMismatch
from tiers.ledger import Move
from tiers.memory import Memory
from tiers.records import MemoryIn, Tier
from tiers.reembed import reembed

NOW = datetime(2026, 3, 1, tzinfo=UTC)


class LetterEmbedder:
    """A deterministic stand-in model of another dimension: the subject here is bookkeeping, not meaning."""

    name = "test/letters-32"
    dim = 32

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = []
        for text in texts:
            digest = hashlib.sha256(text.encode()).digest()
            rows.append(np.frombuffer(digest, dtype=np.uint8).astype(np.float32) + 1)
        vectors = np.stack(rows) if rows else np.zeros((0, self.dim), np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_opening_a_store_with_another_model_is_refused_with_how_to_reembed(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    memory = Memory(tmp_path / "ns", embedder)
    memory.remember([MemoryIn(content="the deploy runs on Fridays")], NOW)
    memory.close()

    other = Memory(tmp_path / "ns", LetterEmbedder())
    with pytest.raises(ModelMismatch, match="memtiers reembed"):
        other.store.count()
    other.close()


def test_reembed_keeps_every_record_its_tier_and_id_and_search_works_with_the_new_model(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    memory = Memory(tmp_path / "ns", embedder)
    stored = memory.remember(
        [MemoryIn(content=f"note {i} about the garden", tags=["g"]) for i in range(30)]
        + [MemoryIn(content="I am allergic to peanuts")],
        NOW,
    )
    with memory.parts.locked():
        memory.store.move([Move(NOW, stored[0].id, "warm", "cold", "test")])
    memory.close()

    assert reembed(tmp_path / "ns", LetterEmbedder()) == 31

    switched = Memory(tmp_path / "ns", LetterEmbedder())
    records = switched.store.get([s.id for s in stored])
    assert set(records) == {s.id for s in stored}
    assert records[stored[0].id].tier is Tier.COLD
    assert records[stored[-1].id].protected
    found = switched.recall("note 7 about the garden", NOW, tiers=[Tier.WARM, Tier.COLD])
    assert "note 7 about the garden" in found.text
    switched.close()

    with pytest.raises(ModelMismatch):
        Memory(tmp_path / "ns", embedder).store.count()
