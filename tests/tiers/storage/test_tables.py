"""One tier's LanceDB table: rows in and out, filters, compaction and scrubbing, mapped errors."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tests.helpers import T0, files_containing
from tiers.errors import InvalidInput, StorageError
from tiers.model.embedder import FastEmbedder
from tiers.records import content_hash
from tiers.storage import tables
from tiers.storage.tables import Connection, Table, check_id, quote, schema
from tiers.text.terms import document_terms

DIM = 384


def open_table(folder: Path, name: str = "cold") -> Table:
    uri = str(folder / "lance")
    return Table(Connection(uri), name, DIM, uri, folder / "read.lock", indexed=True)


def rows(embedder: FastEmbedder, texts: Sequence[str], start: int = 0, **fields: Any) -> pa.Table:
    """Rows of the table's schema for these texts, with real vectors and terms; ids count up from `start`."""
    vectors = embedder.embed(list(texts))
    data = [
        {
            "id": f"{start + i:012x}",
            "hash": content_hash(text),
            "content": text,
            "tier": "cold",
            "kind": "note",
            "protected": False,
            "tags": list(fields.get("tags", ())),
            "metadata": json.dumps(fields.get("metadata", {})),
            "source": fields.get("source"),
            "occurred_at": T0,
            "created_at": T0,
            "forget_after": None,
            "superseded_by": None,
            "superseded_at": None,
            "before": [],
            "after": [],
            "terms": document_terms(text, T0),
            "vector": vector.tolist(),
        }
        for i, (text, vector) in enumerate(zip(texts, vectors, strict=True))
    ]
    return pa.Table.from_pylist(data, schema=schema(DIM))


def rid(n: int) -> str:
    return f"{n:012x}"


def contents(found: pa.Table) -> list[str]:
    return found["content"].to_pylist()


GARDEN = [
    "the tomatoes in the greenhouse need water every morning",
    "my sister Ingrid lives in Trondheim",
    "the invoice for the roof repair is due in March",
    "the cat refuses to eat the cheap kibble",
]


def test_rows_added_come_back_by_id_updated_in_place_and_gone_once_deleted(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    table = open_table(tmp_path)
    table.add(rows(embedder, GARDEN))

    got = table.get([rid(1), rid(3)], ["id", "content"])
    assert sorted(got["content"].to_pylist()) == sorted([GARDEN[1], GARDEN[3]])
    assert table.get([rid(99)]).num_rows == 0

    table.update([rid(1)], {"tags": ["family"], "protected": True})
    [updated] = table.get([rid(1)]).to_pylist()
    assert (updated["tags"], updated["protected"], updated["content"]) == (["family"], True, GARDEN[1])

    table.delete([rid(0), rid(2)])
    assert table.count() == 2
    assert table.ids() == {rid(1), rid(3)}


def test_find_hashes_maps_stored_content_hashes_to_their_ids_and_skips_unknown_ones(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    table = open_table(tmp_path)
    table.add(rows(embedder, GARDEN))

    found = table.find_hashes([content_hash(GARDEN[2]), content_hash("never stored"), content_hash(GARDEN[0])])

    assert found == {content_hash(GARDEN[2]): rid(2), content_hash(GARDEN[0]): rid(0)}


def test_a_tag_with_a_quote_is_escaped_and_never_widens_the_filter(tmp_path: Path, embedder: FastEmbedder) -> None:
    table = open_table(tmp_path)
    table.add(rows(embedder, GARDEN[:1], tags=["o'brien"]))
    table.add(rows(embedder, GARDEN[1:], start=1, tags=["other"]))
    table.compact()

    assert table.count("array_has_any(tags, [" + quote("o'brien") + "])") == 1
    injected = "array_has_any(tags, [" + quote("x'] ) OR true OR array_has_any(tags, ['y") + "])"
    assert table.count(injected) == 0
    table.delete(["x') OR true OR id IN ('y"])  # quoted as one id: deletes nothing
    assert table.count() == len(GARDEN)


def test_compaction_merges_small_writes_and_drops_every_older_version(tmp_path: Path, embedder: FastEmbedder) -> None:
    table = open_table(tmp_path)
    for i, text in enumerate(GARDEN):
        table.add(rows(embedder, [text], start=i))
    table.delete([rid(0)])
    assert table.versions() >= 5

    table.compact()

    assert table.versions() == 1
    assert table.ids() == {rid(1), rid(2), rid(3)}
    assert table.get([rid(3)], ["content"])["content"].to_pylist() == [GARDEN[3]]


def test_compaction_leaves_a_full_file_as_it_is_and_merges_the_small_ones_after_it(
    tmp_path: Path, embedder: FastEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A file of ROWS_PER_FILE rows is never rewritten: each compaction of a growing table costs the rows written
    # since, not the whole table (as LanceDB's own optimize, which merges every file under a million rows).
    monkeypatch.setattr(tables, "ROWS_PER_FILE", 3)
    table = open_table(tmp_path)
    table.add(rows(embedder, GARDEN[:3]))
    table.compact()
    (full,) = table._table.to_lance().get_fragments()
    full_files = [f.path for f in full.data_files()]
    table.add(rows(embedder, [GARDEN[3]], start=3))
    table.add(rows(embedder, ["The shed door sticks in wet weather."], start=4))

    table.compact()

    fragments = table._table.to_lance().get_fragments()
    assert [f.count_rows() for f in fragments] == [3, 2]
    assert [f.path for f in fragments[0].data_files()] == full_files
    assert table.versions() == 1
    assert table.ids() == {rid(i) for i in range(5)}


def test_a_quick_compaction_after_a_write_leaves_the_growing_file_to_the_full_one(
    tmp_path: Path, embedder: FastEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # After a write only the files under QUICK_FILE_ROWS are merged: the file growing towards ROWS_PER_FILE is not
    # rewritten by every write; a full compaction (the sweep's) merges it.
    monkeypatch.setattr(tables, "ROWS_PER_FILE", 10)
    monkeypatch.setattr(tables, "QUICK_FILE_ROWS", 2)
    table = open_table(tmp_path)
    table.add(rows(embedder, GARDEN[:2]))
    (growing,) = table._table.to_lance().get_fragments()
    table.add(rows(embedder, [GARDEN[2]], start=2))
    table.add(rows(embedder, [GARDEN[3]], start=3))

    table.compact(quick=True)

    fragments = table._table.to_lance().get_fragments()
    assert [f.count_rows() for f in fragments] == [2, 2]
    assert fragments[0].fragment_id == growing.fragment_id
    assert table.versions() == 1

    table.compact()

    assert [f.count_rows() for f in table._table.to_lance().get_fragments()] == [4]
    assert table.ids() == {rid(i) for i in range(4)}


def test_compaction_drops_the_full_text_and_vector_indexes_an_older_store_kept_on_its_table(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    from lancedb.index import FTS

    table = open_table(tmp_path)
    table.add(rows(embedder, GARDEN))
    table._table.create_index("terms", config=FTS(base_tokenizer="whitespace"))
    assert {c for i in table._table.list_indices() for c in i.columns} == {"terms"}

    table.compact()

    assert {c for i in table._table.list_indices() for c in i.columns} == {"id", "hash"}
    assert table.count() == len(GARDEN)


def test_scrubbing_after_a_delete_leaves_no_file_of_the_table_holding_the_deleted_text(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    table = open_table(tmp_path)
    secret = "the safe in the attic opens with the word Quagmirezebra"
    table.add(rows(embedder, [*GARDEN, secret]))
    table.compact()
    folder = tmp_path / "lance" / "cold.lance"
    assert files_containing(folder, "quagmirezebra")  # as stored
    table.delete([rid(len(GARDEN))])
    assert files_containing(folder, "quagmirezebra")  # a plain delete only marks the row

    table.compact(scrub=True)

    assert files_containing(folder, "quagmirezebra") == []
    assert files_containing(folder, "Trondheim")  # what was not deleted is all still there
    assert table.get([rid(1)], ["content"])["content"].to_pylist() == [GARDEN[1]]
    assert table.count("terms LIKE '%quagmirezebra%'") == 0


def test_scrubbing_after_deleting_the_last_row_leaves_no_index_file_holding_its_text(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    table = open_table(tmp_path)
    table.add(rows(embedder, ["the Quagmirezebra lives alone"]))
    table.compact()
    table.delete([rid(0)])

    table.compact(scrub=True)

    assert files_containing(tmp_path / "lance", "quagmirezebra") == []
    assert table.count() == 0


def test_lancedb_errors_come_back_as_storage_errors_that_name_the_table(tmp_path: Path, embedder: FastEmbedder) -> None:
    table = open_table(tmp_path)
    table.add(rows(embedder, GARDEN))
    table.compact()
    short = rows(embedder, ["x"], start=50).to_pylist()
    short[0]["vector"] = [0.5, 0.5]

    calls = {
        "writing to": lambda: table.add(pa.Table.from_pylist(short)),
        "counting": lambda: table.count("no_such_column = 1"),
        "updating": lambda: table.update([rid(1)], {"no_such_column": 1}),
    }
    for what, call in calls.items():
        with pytest.raises(StorageError, match=f"{what} the cold table in .*lance failed"):
            call()
    with pytest.raises(StorageError, match="reading the cold table"):
        list(table.scan(["id"], where="no_such_column = 1"))
    assert table.count() == len(GARDEN)


def test_an_id_that_is_not_twelve_hex_characters_is_refused_with_what_ids_look_like() -> None:
    assert check_id("0123456789ab") == "0123456789ab"
    for bad in ["0123456789AB", "' OR 1=1 --", "abc", 12]:
        with pytest.raises(InvalidInput, match="12 hex characters"):
            check_id(bad)  # type: ignore[arg-type]
