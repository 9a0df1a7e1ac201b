"""Saved copies of an index: a copy opens as the index it was saved from (warm read whole, cold mapped), a copy
of another table or none at all opens as nothing, and an index changed since its load is not saved."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.tiers.index.test_cold import batches, mapped, rid, rows
from tests.tiers.index.test_warm import DIM as WARM_DIM
from tests.tiers.index.test_warm import row
from tiers.index.cold import ColdIndex, ColdScope
from tiers.index.columns import rows_table as _table
from tiers.index.saved import open_cold, open_warm, save_cold, save_warm
from tiers.index.warm import WarmIndex

DIM = 64


def test_a_saved_warm_index_opens_whole_and_answers_as_the_index_it_was_saved_from(tmp_path: Path) -> None:
    written = [row(n, f"w{n % 5} shared", source="chat", minute=n) for n in range(30)]
    index = WarmIndex(WARM_DIM)
    index.load(_table(written, WARM_DIM))
    assert save_warm(index, tmp_path / "saved", {"table": "warm", "seen": 3})

    opened = open_warm(tmp_path / "saved", {"table": "warm"})
    assert opened is not None and opened.saved_seen == 3 and opened.live == 30
    assert not mapped(opened.vectors)  # read whole: removing the copy leaves nothing of it behind
    query = np.ones((1, WARM_DIM), np.float32) / np.sqrt(WARM_DIM)
    np.testing.assert_array_equal(opened.cosine(query), index.cosine(query))
    np.testing.assert_array_equal(opened.bm25(["w3", "shared"]), index.bm25(["w3", "shared"]))
    assert opened.neighbours(written[4].record.id, 2) == index.neighbours(written[4].record.id, 2)
    a, b = opened.get(written[7].record.id), index.get(written[7].record.id)
    assert a is not None and b is not None and (a.record, a.hash, a.terms) == (b.record, b.hash, b.terms)
    np.testing.assert_array_equal(a.vector, b.vector)

    assert open_warm(tmp_path / "saved", {"table": "other"}) is None
    index.put([row(99, "later", source="chat", minute=99)])
    assert not save_warm(index, tmp_path / "again", {})  # changed since the load: only full reads are saved
    opened.remove([written[0].record.id])
    assert not save_warm(opened, tmp_path / "again", {})


def test_a_saved_index_opens_mapped_and_finds_what_the_index_it_was_saved_from_finds(tmp_path: Path) -> None:
    rng = np.random.default_rng(9)
    table = rows(range(400), rng, terms={n: f"w{n % 13} shared" for n in range(400)}, tags=("t",))
    index = ColdIndex(DIM)
    index.load(batches(table, 100))
    index.remove([rid(5)])
    assert save_cold(index, tmp_path / "saved", {"table": "cold", "seen": 7})

    opened = open_cold(tmp_path / "saved", {"table": "cold"})
    assert opened is not None and opened.saved_seen == 7
    assert mapped(opened.codes)  # mapped, not read whole
    query = rng.normal(size=(1, DIM)).astype(np.float32)

    def found(of: ColdIndex) -> list[tuple[str, float, float]]:
        hits = of.search(query, ["w3", "shared"], 30, ColdScope(tags=("t",)))
        return sorted((c.id, round(c.cosine, 5), round(c.words, 5)) for c in hits.candidates)

    assert found(opened) == found(index)
    assert opened.position(rid(5)) == -1 and opened.position(rid(6)) >= 0
    assert opened.records([rid(1), rid(5), rid(399)]) == index.records([rid(1), rid(399)])  # 5 was removed
    assert opened.mapped_from is not None and opened.records([rid(1)])[0].content == "w1 shared"
    opened.put(rows([1_000], rng))  # grows past the mapped arrays into memory
    opened.remove([rid(6)])
    assert opened.position(rid(1_000)) >= 0 and opened.position(rid(6)) == -1
    assert [r.id for r in opened.records([rid(1_000), rid(6), rid(2)])] == [rid(1_000), rid(2)]

    assert open_cold(tmp_path / "saved", {"table": "other"}) is None  # another table's copy
    assert open_cold(tmp_path / "nothing", {"table": "cold"}) is None
    index.put(rows([2_000], rng))
    assert not save_cold(index, tmp_path / "again", {})  # rows added since the load: only full reads are saved
