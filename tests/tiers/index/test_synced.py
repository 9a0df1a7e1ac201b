"""Each tier's index kept in step with its table: a restarted process opens the copy the last full read saved
and catches up from the change feed, a damaged copy is read past, and what a full read loads is frozen."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.helpers import T0
from tests.tiers.index.test_store import PLACES, move, remember
from tiers.index.cold import id_text
from tiers.index.warm import WarmIndex
from tiers.memory import Memory
from tiers.model.embedder import FastEmbedder
from tiers.records import MemoryIn, Tier


@pytest.fixture
def copies_from_three(monkeypatch: pytest.MonkeyPatch) -> None:
    """A full read of 3 or more rows saves its copy (1,000 in use), so small stores exercise the copies."""
    from tiers.index import synced as synced_module

    monkeypatch.setattr(synced_module, "SAVED_FROM", 3)


@pytest.mark.usefixtures("copies_from_three")
def test_a_second_process_opens_the_saved_cold_index_and_catches_up_with_the_feed(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    from tiers.index.cold_reads import ColdScope

    folder = tmp_path / "ns"
    first = Memory(folder, embedder)
    texts = PLACES
    ids = [remember(first, text) for text in texts]
    for rid in ids[:4]:
        move(first, rid, "warm", "cold")
    first.recall("where is the key", T0)  # reads the cold index whole, and saves it
    assert (folder / "cold-index" / "current").exists()
    first.close()

    writer = Memory(folder, embedder)
    move(writer, ids[4], "warm", "cold")  # after the copy was saved: only in the feed
    move(writer, ids[0], "cold", "warm")
    writer.close()

    reader = Memory(folder, embedder)
    try:
        with reader.store.cold() as index:
            assert index.saved_seen > 0  # opened from the copy, then caught up from the feed
            alive = index.alive[: index.size]
            live = {id_text(n) for n, keep in zip(index.ids[: index.size], alive, strict=True) if keep}
        assert live == {ids[1], ids[2], ids[3], ids[4]}
        hits = reader.store.cold_reads.search(embedder.embed(["ferry departure"]), ["ferri"], 5, ColdScope())
        assert hits is not None and ids[4] in {c.id for c in hits.candidates}
        assert ids[0] not in {c.id for c in hits.candidates}
        assert "ferry" in reader.recall("when does the ferry leave", T0, tiers=[Tier.COLD]).text

        [kept] = reader.store.cold_reads.records([ids[3]])  # taken from the index: what LanceDB holds, field for field
        assert kept == reader.store.get([ids[3]])[ids[3]]

        other = Memory(folder, embedder)  # a second server on the same copy
        try:
            other.recall("where is the key", T0)
            with other.store.cold() as index:
                assert index.mapped_from is not None
            reader.forget(ids[2], T0)
            assert not (folder / "cold-index").exists()  # a forget removes the copy, which held its words
            assert texts[2] not in other.recall("Marta's phone number", T0, tiers=[Tier.COLD]).text
            with other.store.cold() as index:  # the other one let go of the removed file and of the words
                assert index.mapped_from is None
                assert texts[2] not in index.fields()["content"].to_pylist()
        finally:
            other.close()
    finally:
        reader.close()


def test_what_a_full_read_loads_is_frozen_so_the_collector_never_scans_it_again(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    import gc

    memory = Memory(tmp_path / "ns", embedder)
    try:
        remember(memory, "the canoe paddles hang in the shed")
        memory.close()
        memory = Memory(tmp_path / "ns", embedder)
        gc.unfreeze()
        assert gc.get_freeze_count() == 0
        memory.recall("paddles", T0)  # the first read of the warm tier
        assert gc.get_freeze_count() > 0
        with memory.store.warm() as index:
            assert index.live == 1
    finally:
        gc.unfreeze()
        memory.close()


def _same_index(opened: WarmIndex, read: WarmIndex, terms: list[str], query: np.ndarray) -> None:
    """Two warm indexes of the same rows answer alike, whatever their positions."""
    ids = sorted(read.positions)
    assert sorted(opened.positions) == ids and opened.live == read.live
    at_opened = [opened.positions[rid] for rid in ids]
    at_read = [read.positions[rid] for rid in ids]
    for rid in ids:
        a, b = opened.get(rid), read.get(rid)
        assert a is not None and b is not None
        assert (a.record, a.hash, a.terms, a.before, a.after) == (b.record, b.hash, b.terms, b.before, b.after)
        np.testing.assert_array_equal(a.vector, b.vector)
        assert opened.neighbours(rid, 2) == read.neighbours(rid, 2)
    np.testing.assert_allclose(opened.cosine(query)[at_opened], read.cosine(query)[at_read], rtol=1e-6)
    np.testing.assert_allclose(opened.bm25(terms)[at_opened], read.bm25(terms)[at_read], rtol=1e-5)
    assert opened.by_hash == read.by_hash
    assert opened.durable[at_opened].tolist() == read.durable[at_read].tolist()


@pytest.mark.usefixtures("copies_from_three")
def test_a_restarted_process_opens_the_saved_warm_index_catches_up_and_answers_as_a_full_read_would(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    from tiers.index.indexes import ROW_COLUMNS
    from tiers.text.terms import words

    folder = tmp_path / "ns"
    first = Memory(folder, embedder)
    texts = PLACES
    ids = [remember(first, text, source="chat-1") for text in texts]
    remember(first, "I am allergic to peanuts", kind="health")
    first.close()
    first = Memory(folder, embedder)
    first.recall("where is the key", T0)  # the full read of warm, saved for the next process
    assert (folder / "warm-index" / "current").exists()
    first.close()

    writer = Memory(folder, embedder)  # after the copy was saved: only in the feed
    added = remember(writer, "the boat trailer lights need new bulbs", source="chat-1")
    move(writer, ids[0], "warm", "cold")
    writer.forget(ids[2], T0)
    writer.close()
    assert not (folder / "warm-index").exists()  # a forget removes the copies, which held its words

    first = Memory(folder, embedder)  # a full read again, and a new copy without the forgotten words
    first.recall("where is the key", T0)
    first.close()
    writer = Memory(folder, embedder)
    later = remember(writer, "the ferry timetable changes in May", source="chat-1")
    writer.close()

    reader = Memory(folder, embedder)
    try:
        with reader.store.warm() as opened:
            assert opened.saved_seen > 0  # opened from the copy, then caught up from the feed
            assert added in opened.positions and later in opened.positions
            assert ids[0] not in opened.positions and ids[2] not in opened.positions
            read = WarmIndex(opened.dim)
            read.load(reader.store.warm_table.get(sorted(opened.positions), ROW_COLUMNS))
            terms = [*words("ferry key boat peanuts trailer"), "missing"]
            _same_index(opened, read, terms, embedder.embed(["when does the ferry leave"]))
        assert "ferry timetable" in reader.recall("when does the ferry timetable change", T0).text
        assert [s.duplicate_of for s in reader.remember([MemoryIn(content=texts[1])], T0)] == [ids[1]]
    finally:
        reader.close()


@pytest.mark.usefixtures("copies_from_three")
@pytest.mark.parametrize("damage", ["meta", "array", "base", "current"])
def test_a_damaged_saved_warm_index_is_read_past_and_the_table_read_whole(
    tmp_path: Path, embedder: FastEmbedder, damage: str
) -> None:
    folder = tmp_path / "ns"
    first = Memory(folder, embedder)
    texts = ["the canoe paddles hang in the shed", "the spare key is under the blue pot", "ferry leaves at 7"]
    for text in texts:
        remember(first, text)
    first.close()
    first = Memory(folder, embedder)
    first.recall("where is the key", T0)
    first.close()
    saved = folder / "warm-index"
    copy = saved / (saved / "current").read_text()
    target = {"meta": copy / "meta.json", "array": copy / "vectors.npy", "base": copy / "base.arrow",
              "current": saved / "current"}[damage]  # fmt: skip
    target.write_bytes(target.read_bytes()[: len(target.read_bytes()) // 2])

    reader = Memory(folder, embedder)
    try:
        with reader.store.warm() as index:
            assert index.saved_seen == 0 and index.live == 3  # read from the table
        assert "spare key" in reader.recall("where is the spare key", T0).text
    finally:
        reader.close()
