"""The write path: a repeat is merged into what is stored (pure rules), and `remember` answers with what is
now on disk; repeats cost no row and no embedding."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pytest

from tests.helpers import T0, count_rows
from tiers.memory import Memory
from tiers.model.embedder import FastEmbedder
from tiers.namespace.writes import Prepared, merge, prepare, stronger_kind
from tiers.records import Kind, MemoryIn, Record, Tier
from tiers.text.terms import document_terms

TEXT = "the blue folder holds the lease papers"
LATER = T0 + timedelta(days=1)


def stored(**fields: Any) -> Record:
    base: dict[str, Any] = {
        "id": "0000000000aa",
        "content": TEXT,
        "tier": Tier.WARM,
        "kind": Kind.NOTE,
        "protected": False,
        "occurred_at": T0,
        "created_at": T0,
    }
    return Record(**(base | fields))


def repeat(**fields: Any) -> Prepared:
    return prepare(MemoryIn(content=TEXT.upper(), **fields), LATER, "0000000000bb")


# merge and stronger_kind, as pure functions


def test_a_repeat_that_adds_nothing_changes_nothing() -> None:
    assert merge(stored(tags=("home",), metadata={"room": "study"}), repeat(tags=["home"])) == {}


def test_a_repeat_joins_its_tags_after_the_stored_ones_without_doubles() -> None:
    assert merge(stored(tags=("home", "papers")), repeat(tags=["lease", "home"])) == {
        "tags": ("home", "papers", "lease")
    }


def test_a_repeat_joins_its_metadata_and_wins_on_a_key_given_twice() -> None:
    changes = merge(stored(metadata={"room": "study", "shelf": 2}), repeat(metadata={"shelf": 3, "box": "red"}))

    assert changes == {"metadata": {"room": "study", "shelf": 3, "box": "red"}}


def test_a_durable_kind_beats_a_passing_one_whichever_comes_first_and_an_explicit_kind_wins_between_equals() -> None:
    assert stronger_kind(Kind.NOTE, Kind.HEALTH, explicit=False) is Kind.HEALTH
    assert stronger_kind(Kind.HEALTH, Kind.NOTE, explicit=True) is Kind.HEALTH
    assert stronger_kind(Kind.NOTE, Kind.EVENT, explicit=True) is Kind.EVENT
    assert stronger_kind(Kind.NOTE, Kind.EVENT, explicit=False) is Kind.NOTE
    assert stronger_kind(Kind.PREFERENCE, Kind.HEALTH, explicit=True) is Kind.HEALTH
    assert stronger_kind(Kind.HISTORY, Kind.NOTE, explicit=True) is Kind.HISTORY  # an old value stays history


def test_protection_is_only_ever_added_by_a_repeat() -> None:
    assert merge(stored(), repeat(kind=Kind.HEALTH)) == {"kind": Kind.HEALTH, "protected": True}
    assert merge(stored(kind=Kind.HEALTH, protected=True), repeat(kind=Kind.NOTE)) == {}


def test_a_deadline_given_by_the_repeat_replaces_the_stored_one_and_none_given_keeps_it() -> None:
    deadline = T0 + timedelta(days=10)

    assert merge(stored(forget_after=deadline), repeat(forget_after="P30D")) == {
        "forget_after": LATER + timedelta(days=30)
    }
    assert merge(stored(forget_after=deadline), repeat()) == {}


def test_a_repeat_gives_a_source_only_to_a_record_that_had_none() -> None:
    assert merge(stored(), repeat(source="mail:7")) == {"source": "mail:7"}
    assert merge(stored(source="mail:1"), repeat(source="mail:7")) == {}


# through Memory: what is answered is what is stored


def test_a_repeat_with_a_stronger_kind_new_tags_and_a_deadline_is_stored_and_answered_as_now_stored(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    memory = Memory(tmp_path / "ns", embedder)
    [first] = memory.remember([MemoryIn(content=TEXT, tags=["home"], metadata={"room": "study"})], T0)
    assert (first.kind, first.protected) == (Kind.NOTE, False)

    [again] = memory.remember(
        [MemoryIn(content=TEXT, kind=Kind.HEALTH, tags=["lease"], metadata={"room": "attic"}, forget_after="P90D")],
        LATER,
    )

    assert (again.id, again.duplicate_of, again.kind, again.protected) == (first.id, first.id, Kind.HEALTH, True)
    record = memory.get(first.id)
    assert (record.kind, record.protected, record.tags) == (Kind.HEALTH, True, ("home", "lease"))
    assert record.metadata == {"room": "attic"}
    assert record.forget_after == LATER + timedelta(days=90)
    assert record.content == TEXT and record.occurred_at == T0
    memory.close()

    reopened = Memory(tmp_path / "ns", embedder)  # on disk, not only in this process's warm index
    assert reopened.get(first.id) == record
    reopened.sweep(T0 + timedelta(days=60))
    assert reopened.get(first.id).tier is Tier.WARM  # protected now: heat does not send it cold
    assert count_rows(tmp_path / "ns") == 1
    reopened.close()


def test_a_repeat_of_a_cold_record_merges_into_it_brings_it_back_warm_and_logs_repeated(memory: Memory) -> None:
    [first] = memory.remember([MemoryIn(content=TEXT)], T0)
    memory.sweep(T0 + timedelta(days=60))
    assert memory.get(first.id).tier is Tier.COLD

    [again] = memory.remember([MemoryIn(content=TEXT, tags=["lease"])], T0 + timedelta(days=61))

    assert (again.duplicate_of, again.tier) == (first.id, Tier.WARM)
    record = memory.get(first.id)
    assert (record.tier, record.tags) == (Tier.WARM, ("lease",))
    newest = memory.moves(first.id)[0]
    assert (newest.src, newest.dst, newest.rule) == ("cold", "warm", "repeated")
    assert (count_rows(memory.folder, "warm"), count_rows(memory.folder, "cold")) == (1, 0)
    assert (
        "lease papers" in memory.recall("where are the lease papers", T0 + timedelta(days=61), tiers=[Tier.WARM]).text
    )


def test_a_batch_holding_the_same_text_twice_stores_one_row_with_what_both_said(memory: Memory) -> None:
    results = memory.remember(
        [MemoryIn(content=TEXT, tags=["home"]), MemoryIn(content=f"  {TEXT.title()} ", tags=["lease"])], T0
    )

    assert results[0].id == results[1].id == results[1].duplicate_of
    assert results[0].duplicate_of is None
    assert count_rows(memory.folder) == 1
    assert memory.get(results[0].id).tags == ("home", "lease")


class CountingEmbedder:
    """The real model, counting the texts it is asked to embed."""

    def __init__(self, inner: FastEmbedder) -> None:
        self.inner = inner
        self.texts: list[str] = []

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts += texts
        return self.inner.embed(texts)


@pytest.mark.parametrize("cold", [False, True])
def test_a_repeat_costs_no_embedding_warm_or_cold(tmp_path: Path, embedder: FastEmbedder, cold: bool) -> None:
    counting = CountingEmbedder(embedder)
    memory = Memory(tmp_path / "ns", counting)
    memory.remember([MemoryIn(content=TEXT), MemoryIn(content="the bike lock code is 4512")], T0)
    assert len(counting.texts) == 2
    if cold:
        memory.sweep(T0 + timedelta(days=60))
        assert memory.store.count(Tier.COLD) == 2
    counting.texts.clear()

    memory.remember([MemoryIn(content=TEXT, tags=["x"]), MemoryIn(content="a new thought about the garden")], LATER)

    assert counting.texts == ["a new thought about the garden"]
    memory.close()


def test_a_large_batch_stores_each_memory_with_the_terms_of_its_own_text_and_time(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    """Each row of a batch has the terms of its own text and time, a repeat within the batch is one row, and
    the model embeds each new text once."""
    said = ["we met yesterday at 3pm", "the release moved to 2026-04-14", "ayer fuimos al mercado", "昨天下雨了"]
    texts = [f"{said[i % len(said)]} (note {i})" for i in range(100)] + ["the blue folder holds the lease"] * 2
    counting = CountingEmbedder(embedder)
    memory = Memory(tmp_path / "ns", counting)
    items = [MemoryIn(content=t, occurred_at=(T0 + timedelta(days=i)).isoformat()) for i, t in enumerate(texts)]
    results = memory.remember(items, LATER)
    memory.close()

    assert sorted(counting.texts) == sorted(set(texts))
    assert results[-1].duplicate_of == results[-2].id
    rows = lancedb.connect(tmp_path / "ns" / "lance").open_table("warm").to_arrow().to_pylist()
    assert len(rows) == 101
    for row in rows:
        assert row["terms"] == document_terms(row["content"], row["occurred_at"]), row["content"]
    when = {row["content"]: row["occurred_at"] for row in rows}
    assert when[texts[0]] == T0 and when[texts[-1]] == T0 + timedelta(days=100)
