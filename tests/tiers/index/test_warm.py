"""The warm tier in memory, kept row by row: positions, hashes, BM25, episode links, masks, repacking.

Pure logic, so the rows are made by hand with small random vectors.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace
from datetime import timedelta

import numpy as np
import pytest

from tests.helpers import T0
from tiers.index import signs
from tiers.index import warm as warm_module
from tiers.index.bm25 import K1 as BM25_K1
from tiers.index.bm25 import B as BM25_B
from tiers.index.columns import rows_table as _table
from tiers.index.warm import Row, Scope, WarmIndex
from tiers.records import Kind, Record, Tier
from tiers.text.terms import length

DIM = 8
RNG = np.random.default_rng(7)


def row(
    n: int,
    terms: str,
    *,
    source: str | None = None,
    minute: int = 0,
    day: int = 0,
    tags: tuple[str, ...] = (),
    kind: Kind = Kind.NOTE,
    protected: bool = False,
) -> Row:
    vector = RNG.normal(size=DIM).astype(np.float32)
    record = Record(
        id=f"{n:012x}",
        content=terms,
        tier=Tier.WARM,
        kind=kind,
        protected=protected,
        occurred_at=T0 + timedelta(days=day),
        created_at=T0 + timedelta(minutes=minute),
        tags=tags,
        source=source,
    )
    return Row(record, f"hash{n}", terms, vector / np.linalg.norm(vector))


def rid(n: int) -> str:
    return f"{n:012x}"


def by_id(index: WarmIndex, scores: np.ndarray) -> dict[str, float]:
    return {rid: float(scores[p]) for rid, p in index.positions.items()}


def reference_bm25(docs: dict[str, str], query: list[str]) -> dict[str, float]:
    """BM25 as written in the textbook, over the live documents only."""
    lengths = {d: length(t.split()) for d, t in docs.items()}
    average = sum(lengths.values()) / len(docs)
    out = {}
    for doc, terms in docs.items():
        counts = Counter(terms.split())
        score = 0.0
        for term in dict.fromkeys(query):
            having = sum(1 for t in docs.values() if term in t.split())
            if not counts[term]:
                continue
            idf = math.log(1 + (len(docs) - having + 0.5) / (having + 0.5))
            tf = counts[term]
            score += idf * tf * (BM25_K1 + 1) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * lengths[doc] / average))
        out[doc] = score
    return out


TEXTS = {
    1: "tomato greenhous water morn",
    2: "sister ingrid live trondheim",
    3: "invoic roof repair due march invoic",
    4: "cat refus eat cheap kibbl",
    5: "tomato seed order",
}


def filled() -> WarmIndex:
    index = WarmIndex(DIM)
    index.put(row(n, t) for n, t in TEXTS.items())
    return index


def test_put_gives_each_row_the_next_position_and_finds_it_by_id_and_by_hash() -> None:
    index = filled()

    assert [index.positions[rid(n)] for n in TEXTS] == [0, 1, 2, 3, 4]
    assert (index.size, index.live) == (5, 5)
    assert index.by_hash["hash3"] == rid(3)
    got = index.get(rid(3))
    assert got is not None and got.record.content == TEXTS[3]
    assert index.get(rid(99)) is None


def test_bm25_scores_match_the_textbook_formula_over_the_live_rows() -> None:
    index = filled()
    query = ["tomato", "invoic", "trondheim", "nowher"]

    assert by_id(index, index.bm25(query)) == pytest.approx(
        reference_bm25({rid(n): t for n, t in TEXTS.items()}, query)
    )


def test_the_query_weight_is_the_idf_of_each_term_and_a_term_no_row_holds_weighs_most() -> None:
    index = filled()
    live = len(TEXTS)
    having = {t: sum(t in text.split() for text in TEXTS.values()) for t in ("tomato", "nowher")}
    assert having["tomato"] > 0 and having["nowher"] == 0

    weight = index.query_weight(["tomato", "nowher", "tomato"])  # a repeated term counts once, as in bm25

    expected = sum(math.log(1 + (live - h + 0.5) / (h + 0.5)) for h in having.values())
    assert weight == pytest.approx(expected)
    assert index.query_weight(["nowher"]) > index.query_weight(["tomato"])


def test_removed_rows_never_score_nor_pass_a_mask_and_the_rest_score_as_if_they_never_were() -> None:
    index = filled()

    index.remove([rid(1), rid(99)])

    position = 0
    assert not index.alive[position]
    assert index.bm25(["tomato", "greenhous"])[position] == 0
    assert not index.mask(Scope())[position]
    assert rid(1) not in index.positions and "hash1" not in index.by_hash
    assert index.live == 4
    rest = {rid(n): t for n, t in TEXTS.items() if n != 1}
    assert by_id(index, index.bm25(["tomato", "greenhous"])) == pytest.approx(
        reference_bm25(rest, ["tomato", "greenhous"])
    )


def test_putting_a_row_again_replaces_it_so_its_old_terms_no_longer_score() -> None:
    index = filled()

    index.put([replace(row(4, "dog love expens kibbl"), hash="hash4b")])

    assert index.live == 5
    assert index.by_hash.get("hash4") is None and index.by_hash["hash4b"] == rid(4)
    scores = by_id(index, index.bm25(["cat", "dog"]))
    assert scores[rid(4)] > 0
    assert by_id(index, index.bm25(["cat"]))[rid(4)] == 0


def test_replace_record_changes_fields_but_keeps_position_hash_terms_vector_and_links() -> None:
    index = WarmIndex(DIM)
    first, middle, last = (row(n, f"word{n}", source="chat", minute=n) for n in (1, 2, 3))
    index.put([first, middle, last])
    before = index.bm25(["word2"]).copy()

    health = replace(middle.record, kind=Kind.HEALTH, protected=True, tags=("med",))
    index.replace_record(health)

    position = index.positions[rid(2)]
    stored = index.row(position)
    assert position == 1 and stored.record == health
    assert (stored.hash, stored.terms) == (middle.hash, middle.terms)
    assert np.array_equal(stored.vector, middle.vector)
    assert (index.durable[position], index.kind[position]) == (True, "health")
    assert np.array_equal(index.bm25(["word2"]), before)
    assert index.neighbours(rid(2), 2) == ((rid(1),), (rid(3),))
    index.replace_record(replace(health, superseded_by="profile:x"))
    assert not index.durable[position]


@pytest.mark.parametrize("filled", ["row by row", "loaded whole"])
def test_episode_links_follow_the_order_rows_were_stored_in_and_heal_when_one_is_removed(filled: str) -> None:
    index = WarmIndex(DIM)
    episode = [row(n, f"word{n}", source="chat", minute=n) for n in (1, 2, 3, 4)]
    elsewhere = row(9, "word9", source="mail", minute=2)
    rows = [episode[2], elsewhere, episode[0], episode[3], episode[1]]
    if filled == "row by row":
        index.put(rows)
    else:  # links set in one pass; the episodes they are kept by are made at the first change
        index.load(_table(rows, DIM))

    assert index.neighbours(rid(3), 2) == ((rid(2), rid(1)), (rid(4),))
    assert index.neighbours(rid(9), 2) == ((), ())

    index.remove([rid(2)])
    assert index.neighbours(rid(3), 2) == ((rid(1),), (rid(4),))
    assert index.neighbours(rid(1), 2) == ((), (rid(3), rid(4)))

    index.put([row(5, "word5", source="chat", minute=2)])  # stored between 1 and 3
    assert index.neighbours(rid(5), 1) == ((rid(1),), (rid(3),))


def test_repacking_after_many_removals_keeps_every_score_and_link_as_a_fresh_index_of_the_rest_has() -> None:
    vocabulary = [f"t{i}" for i in range(40)]
    rows = [
        row(n, " ".join(RNG.choice(vocabulary, size=6)), source=f"s{n % 7}", minute=n, tags=(f"g{n % 3}",))
        for n in range(1_500)
    ]
    index = WarmIndex(DIM)
    index.put(rows)
    gone = {r.record.id for r in rows[::3]} | {r.record.id for r in rows[1::3][:300]}

    for start in range(0, 1_500, 100):  # removed in several calls, as forgets and moves come
        index.remove([r.record.id for r in rows[start : start + 100] if r.record.id in gone])

    kept = [r for r in rows if r.record.id not in gone]
    fresh = WarmIndex(DIM)
    fresh.put(kept)
    assert index.size < 1_500  # the positions of removed rows were dropped
    assert index.live == fresh.live == len(kept)
    query = RNG.normal(size=DIM).astype(np.float32)
    terms = ["t1", "t7", "t30", "t39"]
    assert by_id(index, index.bm25(terms)) == pytest.approx(by_id(fresh, fresh.bm25(terms)))
    assert by_id(index, index.cosine(query)) == pytest.approx(by_id(fresh, fresh.cosine(query)))
    scope = Scope(tags=("g1",))
    assert by_id(index, index.mask(scope)) == by_id(fresh, fresh.mask(scope))
    for r in kept[::50]:
        assert index.neighbours(r.record.id, 2) == fresh.neighbours(r.record.id, 2)


def test_the_mask_keeps_rows_with_any_asked_tag_and_within_since_and_until() -> None:
    index = WarmIndex(DIM)
    index.put(
        [
            row(1, "a", day=0, tags=("work",)),
            row(2, "b", day=5, tags=("home", "garden")),
            row(3, "c", day=10, tags=("garden",)),
            row(4, "d", day=15),
        ]
    )

    def kept(scope: Scope) -> set[str]:
        mask = index.mask(scope)
        return {index.record(p).id for p in np.flatnonzero(mask)}

    def micros(day: int) -> int:
        return int((T0 + timedelta(days=day)).timestamp() * 1_000_000)

    assert kept(Scope()) == {rid(1), rid(2), rid(3), rid(4)}
    assert kept(Scope(tags=("garden", "work"))) == {rid(1), rid(2), rid(3)}
    assert kept(Scope(since_us=micros(5))) == {rid(2), rid(3), rid(4)}
    assert kept(Scope(until_us=micros(10))) == {rid(1), rid(2), rid(3)}
    assert kept(Scope(tags=("garden",), since_us=micros(6), until_us=micros(15))) == {rid(3)}
    index.remove([rid(3)])
    assert kept(Scope(tags=("garden",))) == {rid(2)}


def test_a_bulk_load_of_the_table_indexes_exactly_as_rows_put_one_by_one() -> None:
    rows = [
        row(1, "pottery class §time §y2026 §d2026-01-05", source="chat", minute=1),
        row(2, "kiln kiln glaze", source="chat", minute=2, kind=Kind.HEALTH, protected=True),
        row(3, "pottery market", source="chat", minute=3, tags=("a",)),
        row(4, "glaze recipe", day=2),
        row(5, "unrelated words here", source="mail", minute=1),
    ]
    one_by_one = WarmIndex(DIM)
    one_by_one.put(rows)
    loaded = WarmIndex(DIM)
    loaded.load(_table(rows, DIM))

    for query in (["pottery"], ["kiln", "glaze"], ["§time"], ["missing"]):
        assert np.allclose(loaded.bm25(query), one_by_one.bm25(query))
    assert loaded.positions == one_by_one.positions and loaded.by_hash == one_by_one.by_hash
    assert loaded.prev[:5].tolist() == one_by_one.prev[:5].tolist()
    assert loaded.next[:5].tolist() == one_by_one.next[:5].tolist()
    assert loaded.lengths[:5].tolist() == one_by_one.lengths[:5].tolist()
    assert loaded.durable[:5].tolist() == one_by_one.durable[:5].tolist()
    assert [loaded.record(p) for p in range(5)] == [r.record for r in rows]
    assert loaded.mask(Scope(tags=("a",))).tolist() == [False, False, True, False, False]


def test_rows_put_after_a_bulk_load_and_removals_keep_scores_and_links_right() -> None:
    rows = [row(i, f"word{i % 3} common", source="chat", minute=i) for i in range(6)]
    loaded = WarmIndex(DIM)
    loaded.load(_table(rows[:4], DIM))
    loaded.put(rows[4:])
    loaded.remove([rows[1].record.id])
    fresh = WarmIndex(DIM)
    fresh.put([r for r in rows if r is not rows[1]])

    assert by_id(loaded, loaded.bm25(["common", "word0"])) == pytest.approx(
        by_id(fresh, fresh.bm25(["common", "word0"]))
    )
    assert loaded.neighbours(rows[0].record.id, 2) == ((), (rows[2].record.id, rows[3].record.id))
    assert loaded.neighbours(rows[4].record.id, 1) == ((rows[3].record.id,), (rows[5].record.id,))


def test_sign_codes_are_made_when_first_asked_and_kept_right_through_loads_puts_and_repacks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(signs, "PRESELECT", 30)
    rows = [row(n, f"w{n % 5}", source="s", minute=n) for n in range(1_500)]
    index = WarmIndex(DIM)
    index.load(_table(rows[:600], DIM))
    query = RNG.normal(size=(1, DIM)).astype(np.float32)

    def nearest_as_exact_codes_say(idx: WarmIndex) -> set[str]:
        everything = np.ones(idx.size, dtype=bool)
        found = idx.nearest(query, [idx.alive[: idx.size] & everything], 30)
        # the same cut made from codes packed afresh from the vectors now held
        distance = np.zeros(idx.size, dtype=np.int64)
        for code, form in zip(signs.pack(idx.vectors[: idx.size]).T, signs.pack(query)[0], strict=True):
            distance += np.bitwise_count(code ^ form)
        distance[~idx.alive[: idx.size]] = 10**6
        cut = np.sort(distance)[29]
        assert set(found.tolist()) == set(np.flatnonzero(distance <= cut).tolist())
        return {idx.ids[p] for p in found}  # type: ignore[misc]

    nearest_as_exact_codes_say(index)  # codes made for the loaded rows
    index.put(rows[600:1_200])  # grown past the capacity the codes were made for
    nearest_as_exact_codes_say(index)
    index.remove([r.record.id for r in rows[:900]])  # past half removed: repacked, positions renumbered
    assert index.size == 300
    index.put(rows[1_200:])
    found = nearest_as_exact_codes_say(index)
    assert found <= {r.record.id for r in rows[900:]}


def test_a_tag_scope_reads_the_loaded_rows_tags_in_bulk_and_the_replaced_ones_from_their_new_fields() -> None:
    rows = [row(n, f"w{n}", minute=n, tags=(("a",) if n % 3 == 0 else ("b",))) for n in range(30)]
    index = WarmIndex(DIM)
    index.load(_table(rows[:20], DIM))
    index.put(rows[20:])
    index.replace_record(replace(rows[1].record, tags=("a", "c")))  # a loaded row that gains the tag
    index.replace_record(replace(rows[3].record, tags=()))  # and one that loses it
    index.remove([rows[6].record.id])

    wanted = {r.record.id for r in rows if "a" in r.record.tags} - {rows[3].record.id, rows[6].record.id}
    wanted |= {rows[1].record.id}
    assert {index.ids[p] for p in np.flatnonzero(index.mask(Scope(tags=("a",))))} == wanted
    # the added rows and the two replaced: no loaded row was made to read its tags
    assert len(index.rows.made) == 10 + 2


def test_every_live_row_is_read_in_batches_without_keeping_the_loaded_ones_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(warm_module, "_ROW_BATCH", 7)  # several batches, the last one short
    rows = [row(n, f"w{n} common", source="s", minute=n) for n in range(40)]
    index = WarmIndex(DIM)
    index.load(_table(rows[:30], DIM))
    index.put(rows[30:])
    index.replace_record(replace(rows[2].record, tags=("new",)))
    index.remove([rows[n].record.id for n in (0, 13, 35)])

    live = list(index.live_rows())
    expected = [r for n, r in enumerate(rows) if n not in (0, 13, 35)]
    assert [r.record.id for r in live] == [r.record.id for r in expected]
    assert live[1].record.tags == ("new",)  # the replaced fields, not the loaded ones
    assert [r.record.content for r in live] == [r.record.content for r in expected]
    assert all(np.allclose(a.vector, b.vector) for a, b in zip(live, expected, strict=True))
    assert len(index.rows.made) == 10 - 1 + 1  # the added rows (one removed) and the replaced one


def test_each_rows_cosine_to_the_next_in_its_episode_is_kept_while_that_link_is() -> None:
    index = WarmIndex(DIM)
    first, third = row(1, "word1", source="chat", minute=1), row(3, "word3", source="chat", minute=3)
    index.put([first, third])
    at = index.positions[rid(1)]
    assert index.next_similarity(np.array([at]))[0] == pytest.approx(float(first.vector @ third.vector))

    second = row(2, "word2", source="chat", minute=2)  # stored between them: the first row's next changes
    index.put([second])
    assert index.next_similarity(np.array([at]))[0] == pytest.approx(float(first.vector @ second.vector))
    middle = index.positions[rid(2)]
    assert index.next_similarity(np.array([middle]))[0] == pytest.approx(float(second.vector @ third.vector))
