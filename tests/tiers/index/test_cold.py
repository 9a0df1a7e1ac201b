"""The cold tier's index in memory: ids as numbers, bit preselection, int8 cosine, BM25, links, scopes, changes.

Pure logic, so the rows are made by hand with random unit vectors.
"""

from __future__ import annotations

import mmap
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from tests.helpers import T0
from tests.tiers.index.test_warm import TEXTS, reference_bm25
from tiers.index import signs
from tiers.index.cold import COLUMNS, ColdIndex, ColdScope, id_numbers, id_text
from tiers.index.columns import rows_table as _table
from tiers.index.saved import open_cold, save_cold
from tiers.index.warm import Row
from tiers.records import Kind, Record, Tier

DIM = 64


def rid(n: int) -> str:
    return f"{n:012x}"


def rows(
    numbers: range | list[int],
    rng: np.random.Generator,
    *,
    terms: dict[int, str] | None = None,
    tags: tuple[str, ...] = (),
    day: int = 0,
    vectors: np.ndarray | None = None,
    before: dict[int, tuple[str, ...]] | None = None,
    protected: bool = False,
    kind: Kind = Kind.NOTE,
) -> pa.Table:
    out = []
    for i, n in enumerate(numbers):
        vector = vectors[i] if vectors is not None else rng.normal(size=DIM).astype(np.float32)
        text = (terms or {}).get(n, f"word{n % 7} common")
        record = Record(
            id=rid(n),
            content=text,
            tier=Tier.COLD,
            kind=kind,
            protected=protected,
            occurred_at=T0 + timedelta(days=day),
            created_at=T0,
            tags=tags,
        )
        links = (before or {}).get(n, ())
        out.append(Row(record, f"h{n}", text, vector / np.linalg.norm(vector), before=links))
    return _table(out, DIM).select(COLUMNS)


def mapped(array: np.ndarray) -> bool:
    """Whether the array's memory is a mapped file."""
    base = array
    while base is not None and not isinstance(base, mmap.mmap):
        base = getattr(base, "base", None)
    return base is not None


def batches(table: pa.Table, size: int) -> list[pa.RecordBatch]:
    return table.to_batches(max_chunksize=size)


def test_ids_become_48_bit_numbers_and_back() -> None:
    ids = ["000000000000", "0123456789ab", "ffffffffffff", "a1b2c3d4e5f6"]
    numbers = id_numbers(ids)
    assert numbers.dtype == np.uint64
    assert [id_text(n) for n in numbers] == ids
    assert int(numbers[1]) == 0x0123456789AB
    sliced = pa.array(["zz", *ids]).slice(1)  # an offset into the array's buffers
    assert [id_text(n) for n in id_numbers(sliced)] == ids


def test_search_by_meaning_ranks_by_int8_cosine_within_a_hundredth_of_the_exact_one() -> None:
    rng = np.random.default_rng(1)
    table = rows(range(500), rng)
    index = ColdIndex(DIM)
    index.load(batches(table, 128))
    vectors = np.asarray(table["vector"].to_pylist(), dtype=np.float32)
    query = vectors[17] + 0.3 * rng.normal(size=DIM).astype(np.float32)
    query /= np.linalg.norm(query)

    hits = index.search(query[None, :], [], 10, ColdScope())

    exact = vectors @ query
    best = [rid(int(i)) for i in np.argsort(-exact)[:10]]
    ranked = [c.id for c in sorted(hits.candidates, key=lambda c: -c.cosine)]
    assert ranked[0] == best[0] == rid(17)
    assert len(set(ranked) & set(best)) >= 9  # int8 rounding may swap rows a thousandth apart at the edge
    for candidate in hits.candidates:
        assert candidate.cosine == pytest.approx(float(exact[int(candidate.id, 16)]), abs=0.01)
        assert candidate.words == 0.0


def test_past_the_exact_size_the_bits_preselect_rows_and_keep_most_of_the_exact_top(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(signs, "EXACT_UP_TO", 100)
    monkeypatch.setattr(signs, "PRESELECT", 400)
    rng = np.random.default_rng(2)
    centres = rng.normal(size=(40, DIM)).astype(np.float32)
    vectors = centres[rng.integers(0, 40, 4_000)] + 0.6 * rng.normal(size=(4_000, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = ColdIndex(DIM)
    index.load(batches(rows(range(4_000), rng, vectors=vectors), 1_000))

    found = []
    for q in range(20):
        query = vectors[q * 97]
        hits = index.search(query[None, :], [], 20, ColdScope())
        exact = {rid(int(i)) for i in np.argsort(-(vectors @ query))[:20]}
        found.append(len(exact & {c.id for c in hits.candidates}) / 20)
    assert np.mean(found) >= 0.9  # 400 of 4,000 rows read by cosine, one in ten


def test_bits_counted_block_by_block_find_what_one_pass_over_every_row_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(signs, "EXACT_UP_TO", 100)
    monkeypatch.setattr(signs, "PRESELECT", 200)
    rng = np.random.default_rng(5)
    index = ColdIndex(DIM)
    index.load(batches(rows(range(3_000), rng), 700))
    index.remove([rid(n) for n in range(0, 3_000, 7)])
    queries = rng.normal(size=(2, DIM)).astype(np.float32)  # two forms of one query

    def found() -> list[tuple[str, float]]:
        hits = index.search(queries, [], 50, ColdScope())
        return sorted((c.id, round(c.cosine, 6)) for c in hits.candidates)

    whole = found()
    monkeypatch.setattr(signs, "BLOCK", 256)  # many blocks, the last one short
    assert found() == whole and len(whole) == 50


def test_bm25_of_cold_rows_is_the_textbook_formula_as_for_warm_ones() -> None:
    rng = np.random.default_rng(3)
    index = ColdIndex(DIM)
    numbers = sorted(TEXTS)
    index.load(batches(rows(numbers[:3], rng, terms=TEXTS), 2))
    index.put(rows(numbers[3:], rng, terms=TEXTS))  # some in bulk, the rest added after
    query = ["tomato", "water", "greenhous", "absent"]

    hits = index.search(rng.normal(size=(1, DIM)).astype(np.float32), query, 50, ColdScope())

    expected = reference_bm25({rid(n): TEXTS[n] for n in numbers}, query)
    got = {c.id: c.words for c in hits.candidates}
    for doc, score in expected.items():
        assert got.get(doc, 0.0) == pytest.approx(score, rel=1e-5)


def test_bm25_stays_the_textbook_formula_as_rows_leave_and_join_between_searches() -> None:
    # Each row's length term is kept between searches: made again when a row leaves or joins (and with no
    # dead position the postings are not looked up in the scope's mask at all).
    rng = np.random.default_rng(5)
    index = ColdIndex(DIM)
    numbers = sorted(TEXTS)
    index.load(batches(rows(numbers, rng, terms=TEXTS), 3))
    query = ["tomato", "water", "greenhous"]
    live = {rid(n): TEXTS[n] for n in numbers}

    def searched() -> dict[str, float]:
        hits = index.search(rng.normal(size=(1, DIM)).astype(np.float32), query, 50, ColdScope())
        return {c.id: c.words for c in hits.candidates if c.words > 0}

    for change in ("none", "remove", "put"):
        if change == "remove":
            index.remove([rid(numbers[0]), rid(numbers[1])])
            del live[rid(numbers[0])], live[rid(numbers[1])]
        if change == "put":
            index.put(rows([500], rng, terms={500: "tomato tomato water"}))
            live[rid(500)] = "tomato tomato water"
        expected = {d: s for d, s in reference_bm25(live, query).items() if s > 0}
        got = searched()
        assert got.keys() == expected.keys(), change
        assert all(got[d] == pytest.approx(expected[d], rel=1e-5) for d in expected), change


def test_rows_put_after_the_load_replace_their_id_and_removed_ones_are_never_found() -> None:
    rng = np.random.default_rng(4)
    index = ColdIndex(DIM)
    index.load(batches(rows(range(10), rng), 4))
    target = rng.normal(size=DIM).astype(np.float32)
    index.put(rows([3], rng, vectors=target[None, :], terms={3: "replaced words"}))
    assert index.live == 10

    hits = index.search(target[None, :] / np.linalg.norm(target), ["replaced"], 3, ColdScope())
    assert max(hits.candidates, key=lambda c: c.cosine).id == rid(3)
    assert {c.id for c in hits.candidates if c.words > 0} == {rid(3)}

    index.remove([rid(3), rid(4), rid(99)])
    assert index.live == 8
    assert index.position(rid(3)) == index.position(rid(4)) == -1
    found = index.search(target[None, :], ["replaced", "word3"], 20, ColdScope())
    assert {rid(3), rid(4)}.isdisjoint(c.id for c in found.candidates)
    assert len(found.candidates) == 8


def test_a_lookup_scores_ids_the_search_did_not_return_and_carries_their_links() -> None:
    rng = np.random.default_rng(5)
    index = ColdIndex(DIM)
    links = {1: (rid(0),), 2: (rid(1), rid(0))}
    index.load(batches(rows(range(3), rng, before=links, protected=True, kind=Kind.HEALTH), 8))
    query = rng.normal(size=(1, DIM)).astype(np.float32)
    hits = index.search(query, ["word1"], 1, ColdScope())

    found = hits.lookup([rid(2), rid(1), rid(77)])
    looked_up = {c.id: c for c in found.candidates()}

    assert set(looked_up) == {rid(1), rid(2)}
    assert looked_up[rid(2)].before == (rid(1), rid(0))
    assert looked_up[rid(2)].after == ()
    assert looked_up[rid(1)].words > 0 and looked_up[rid(2)].words == 0
    assert looked_up[rid(1)].kind == "health" and looked_up[rid(1)].durable
    at = found.ids.index(rid(2))
    assert found.links(at, 1) == [rid(1)] and found.links(at, 2) == [rid(1), rid(0)]
    assert found.first_links()[0][at] == rid(1) and found.first_links()[1][at] is None
    assert [found.ids[i] for i in (1, 0)] == found.take(np.asarray([1, 0])).ids


def test_records_take_a_hinted_position_only_while_it_still_holds_that_record() -> None:
    rng = np.random.default_rng(8)
    index = ColdIndex(DIM)
    index.load(batches(rows(range(6), rng), 8))
    first = index.position(rid(3))

    assert [r.id for r in index.records([rid(3)], [first])] == [rid(3)]
    assert [r.id for r in index.records([rid(3)], [index.position(rid(4))])] == [rid(3)]  # a wrong hint: by id
    assert [r.id for r in index.records([rid(3)], [10_000])] == [rid(3)]  # past the end: by id
    index.put(rows([3], rng))  # the same id again, at a new position: the old one is dead
    again = index.position(rid(3))
    assert again != first
    assert [r.id for r in index.records([rid(3)], [first])] == [rid(3)]
    index.remove([rid(3)])
    assert index.records([rid(3)], [again]) == []


def test_a_scope_keeps_to_its_tags_and_its_time_span() -> None:
    rng = np.random.default_rng(6)
    index = ColdIndex(DIM)
    index.load(batches(rows(range(5), rng, tags=("bills",), day=0), 8))
    index.put(rows(range(5, 10), rng, tags=("garden",), day=10))
    query = rng.normal(size=(1, DIM)).astype(np.float32)
    day5 = int((T0 + timedelta(days=5)).timestamp() * 1_000_000)

    def ids(scope: ColdScope) -> set[str]:
        return {c.id for c in index.search(query, ["common"], 50, scope).candidates}

    assert ids(ColdScope(tags=("bills",))) == {rid(n) for n in range(5)}
    assert ids(ColdScope(since_us=day5)) == {rid(n) for n in range(5, 10)}
    assert ids(ColdScope(until_us=day5)) == {rid(n) for n in range(5)}
    assert ids(ColdScope(tags=("garden",), until_us=day5)) == set()


def test_loading_in_batches_finds_what_adding_row_by_row_finds() -> None:
    rng = np.random.default_rng(8)
    table = rows(range(300), rng, terms={n: f"w{n % 11} w{n % 5} shared" for n in range(300)})
    loaded, added = ColdIndex(DIM), ColdIndex(DIM)
    loaded.load(batches(table, 64))
    for start in range(0, 300, 50):
        added.put(table.slice(start, 50))
    query = rng.normal(size=(2, DIM)).astype(np.float32)

    def found(index: ColdIndex) -> list[tuple[str, float, float]]:
        hits = index.search(query, ["w3", "w4", "shared"], 25, ColdScope())
        return sorted((c.id, round(c.cosine, 5), round(c.words, 5)) for c in hits.candidates)

    assert found(loaded) == found(added)


def test_an_empty_index_finds_nothing() -> None:
    index = ColdIndex(DIM)
    index.load([])
    assert index.search(np.ones((1, DIM), np.float32), ["x"], 5, ColdScope()).candidates == []
    assert index.position(rid(1)) == -1
    assert replace(ColdScope(), tags=("a",)).tags == ("a",)


def test_records_come_whole_from_the_index_and_a_forget_takes_their_fields_out_of_memory_and_off_the_map(
    tmp_path: Path,
) -> None:
    rng = np.random.default_rng(4)
    index = ColdIndex(DIM)
    index.load(batches(rows(range(50), rng, tags=("trip", "boat")), 20))
    [record] = index.records([rid(7)])
    assert record == Record(
        id=rid(7), content="word0 common", tier=Tier.COLD, kind=Kind.NOTE, protected=False,
        occurred_at=T0, created_at=T0, tags=("trip", "boat"),
    )  # fmt: skip
    assert save_cold(index, tmp_path / "saved", {"seen": 1})
    opened = open_cold(tmp_path / "saved", {})
    assert opened is not None and mapped(opened.bits)
    position = opened.position(rid(7))
    opened.forget([rid(7)])
    assert opened.mapped_from is None and not mapped(opened.bits)  # the file can go now
    assert opened.records([rid(7)]) == [] and opened.fields()["content"][position].as_py() is None
    assert opened.records([rid(8)]) == index.records([rid(8)])  # the others are whole
    for n in range(100, 170):  # one row at a time, as the change feed brings them: kept in a few batches
        opened.put(rows([n], rng, terms={n: f"added {n}"}))
    assert [(r.id, r.content) for r in opened.records([rid(169), rid(8), rid(100)])] == [
        (rid(169), "added 169"), (rid(8), "word1 common"), (rid(100), "added 100"),
    ]  # fmt: skip
    assert opened.fields().num_rows == opened.size and len(opened.fields().to_batches()) < 10
    query = rng.normal(size=(1, DIM)).astype(np.float32)
    found = {c.id for c in opened.search(query, ["word0"], 200, ColdScope()).candidates}
    assert rid(7) not in found and rid(14) in found  # word0 common, as 7 was
