"""The LanceDB tier on tmp_path with the real model: vector and full-text search, filters, tier moves, compaction."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import T0
from tiers.embedder import FastEmbedder
from tiers.errors import InvalidInput, ModelMismatch
from tiers.records import Tier, content_hash
from tiers.store import Filters, Store, check_id


class Rows:
    """Builds stored rows the way Memory does, with real vectors."""

    def __init__(self, embedder: FastEmbedder) -> None:
        self.embedder = embedder

    def __call__(
        self, content: str, *, tier: str = "warm", tags: tuple[str, ...] = (), at: datetime = T0
    ) -> dict[str, Any]:
        return {
            "id": secrets.token_hex(6),
            "hash": content_hash(content),
            "content": content,
            "tier": tier,
            "kind": "note",
            "protected": False,
            "tags": list(tags),
            "metadata": json.dumps({"n": 1}),
            "source": None,
            "occurred_at": at,
            "created_at": at,
            "forget_after": None,
            "superseded_by": None,
            "superseded_at": None,
            "vector": self.embedder.embed([content])[0].tolist(),
        }


@pytest.fixture
def rows(embedder: FastEmbedder) -> Rows:
    return Rows(embedder)


@pytest.fixture
def store(tmp_path: Path, embedder: FastEmbedder) -> Iterator[Store]:
    yield Store(tmp_path / "ns", embedder.name, embedder.dim)


@pytest.fixture
def filled(store: Store, rows: Rows) -> dict[str, dict[str, Any]]:
    made = {
        "cat": rows("The cat sleeps on the warm windowsill", tags=("pets",)),
        "dog": rows("Our dog barks at the postman every morning", tags=("pets", "noise")),
        "tax": rows("The tax return is due at the end of April", tier="cold", at=T0 - timedelta(days=300)),
        "car": rows("Winter tyres go on the car in November", tags=("car",), at=T0 + timedelta(days=30)),
    }
    store.add(list(made.values()))
    store.compact()  # builds the full-text index
    return made


def ids(hits: list[Any]) -> list[str]:
    return [hit.record.id for hit in hits]


def test_vector_search_ranks_by_meaning(
    store: Store, filled: dict[str, dict[str, Any]], embedder: FastEmbedder
) -> None:
    query = embedder.embed(["which pet naps in the sun?"])[0]

    hits = store.vector_search(query, 4, Filters())

    assert ids(hits)[0] == filled["cat"]["id"]
    assert hits[0].score > hits[-1].score
    assert hits[0].record.metadata == {"n": 1}


def test_text_search_finds_the_words(store: Store, filled: dict[str, dict[str, Any]]) -> None:
    hits = store.text_search("postman", 4, Filters())

    assert ids(hits) == [filled["dog"]["id"]]


def test_text_search_of_only_symbols_returns_nothing_instead_of_failing(
    store: Store, filled: dict[str, dict[str, Any]]
) -> None:
    assert store.text_search("?!", 4, Filters()) == []


def test_filters_limit_search_by_tier_tag_and_time(
    store: Store, filled: dict[str, dict[str, Any]], embedder: FastEmbedder
) -> None:
    query = embedder.embed(["things to remember"])[0]

    def found(filters: Filters) -> set[str]:
        return {key for key, row in filled.items() if row["id"] in ids(store.vector_search(query, 10, filters))}

    assert found(Filters()) == {"cat", "dog", "tax", "car"}
    assert found(Filters(tiers=(Tier.COLD,))) == {"tax"}
    assert found(Filters(tags=("pets",))) == {"cat", "dog"}
    assert found(Filters(tags=("noise", "car"))) == {"dog", "car"}
    assert found(Filters(since=T0)) == {"cat", "dog", "car"}
    assert found(Filters(until=T0)) == {"cat", "dog", "tax"}
    assert found(Filters(since=T0 + timedelta(days=1), until=T0 + timedelta(days=60))) == {"car"}


def test_a_tag_with_a_quote_is_escaped_not_injected(store: Store, filled: dict[str, dict[str, Any]]) -> None:
    assert store.text_search("cat", 4, Filters(tags=("x') OR ('1'='1",))) == []


def test_set_tier_moves_records_and_counts_follow(store: Store, filled: dict[str, dict[str, Any]]) -> None:
    store.set_tier([filled["cat"]["id"], filled["dog"]["id"]], Tier.COLD)

    assert (store.count(Tier.WARM), store.count(Tier.COLD), store.count()) == (1, 3, 4)
    assert store.get([filled["cat"]["id"]])[filled["cat"]["id"]].tier is Tier.COLD


def test_find_hashes_returns_the_id_and_tier_of_stored_content(store: Store, filled: dict[str, dict[str, Any]]) -> None:
    found = store.find_hashes([content_hash("the TAX return is due at the end of april"), content_hash("unknown")])

    assert found == {content_hash("The tax return is due at the end of April"): (filled["tax"]["id"], Tier.COLD)}


def test_supersede_and_delete_change_only_their_record(store: Store, filled: dict[str, dict[str, Any]]) -> None:
    store.supersede([filled["cat"]["id"]], "profile:pet", T0 + timedelta(days=1))
    store.delete(filled["dog"]["id"])

    got = store.get([filled["cat"]["id"], filled["dog"]["id"], filled["car"]["id"]])
    assert set(got) == {filled["cat"]["id"], filled["car"]["id"]}
    assert got[filled["cat"]["id"]].superseded_by == "profile:pet"
    assert got[filled["cat"]["id"]].superseded_at == T0 + timedelta(days=1)
    assert got[filled["car"]["id"]].superseded_by is None
    assert store.text_search("postman", 4, Filters()) == []


def fragments(store: Store) -> int:
    stats: dict[str, Any] = dict(store._table.stats())  # type: ignore[call-overload]
    return int(stats["fragment_stats"]["num_fragments"])


def test_compaction_folds_many_small_writes_into_one_fragment_and_drops_old_versions(store: Store, rows: Rows) -> None:
    for i in range(12):
        store.add([rows(f"Small write number {i}")])
    versions_before = store.versions()
    assert fragments(store) == 12

    store.compact()

    assert fragments(store) == 1
    assert store.versions() < versions_before
    assert store.versions() <= 2  # every older version dropped: readers are fenced off by the read lock
    assert store.count() == 12
    assert len(store.text_search("number", 20, Filters())) == 12


def test_after_write_compacts_each_time_the_row_counter_passes_a_multiple_once_the_index_exists(
    tmp_path: Path, embedder: FastEmbedder, rows: Rows
) -> None:
    store = Store(tmp_path / "ns", embedder.name, embedder.dim, compact_every=5)
    store.add([rows("first")])
    store.after_write(0, 1)  # no full-text index yet: compacts at once, building it
    assert ids(store.text_search("first", 5, Filters())) != []
    for i in range(2, 5):
        store.add([rows(f"write {i}")])
        store.after_write(i - 1, i)
    assert fragments(store) == 4

    store.add([rows("fifth"), rows("sixth")])
    store.after_write(4, 6)  # a batch that passes 5 counts too

    assert fragments(store) < 4  # merged (LanceDB may keep an index-covered fragment apart)
    assert len(store.text_search("fifth sixth write first", 10, Filters())) == 6


def test_a_store_opened_with_another_model_is_refused_pointing_at_reembed(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    Store(tmp_path / "ns", embedder.name, embedder.dim)

    with pytest.raises(ModelMismatch, match="run `memtiers reembed`"):
        Store(tmp_path / "ns", "some/other-model", 768)


@pytest.mark.parametrize("rid", ["", "0123456789a", "0123456789abc", "0123456789AB", "01234567'9ab"])
def test_an_id_that_is_not_12_lowercase_hex_characters_is_refused(rid: str) -> None:
    with pytest.raises(InvalidInput, match="is not a memory id"):
        check_id(rid)
