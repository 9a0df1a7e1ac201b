"""Opening a store for writing finishes what a crash left: a move half done is finished or dropped, and a
folder of the previous version (one table) is migrated into warm and cold, keeping every row and id."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import lancedb
import pyarrow as pa

from tests.helpers import T0, count_rows
from tests.tiers.index.test_store import remember, warm_texts
from tiers.index.meta import read_meta
from tiers.memory import Memory
from tiers.model.embedder import FastEmbedder
from tiers.records import MemoryIn, Tier, content_hash
from tiers.storage.ledger import Move
from tiers.storage.tables import schema


def test_reopening_finishes_a_move_a_crash_left_half_done_and_drops_one_that_never_reached_its_destination(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    folder = tmp_path / "ns"
    crashed = Memory(folder, embedder)
    copied = remember(crashed, "the passport expires in August")
    never = remember(crashed, "the lawnmower needs a new blade")
    bystander = Memory(folder, embedder)
    assert "lawnmower" in warm_texts(bystander, "lawnmower blade")  # another process, its warm index loaded
    store = crashed.store
    with crashed.parts.locked():  # what a move does, up to the crash: both begun, one copied, none deleted
        crashed.ledger.begin_moves(
            [Move(T0, copied, "warm", "cold", "heat", 0.05), Move(T0, never, "warm", "cold", "heat", 0.04)]
        )
        row = store.warm_table.get([copied])
        store.cold_table.add(row.set_column(row.schema.get_field_index("tier"), "tier", pa.array(["cold"])))
    crashed.close()

    reopened = Memory(folder, embedder)
    try:
        assert reopened.store.count(Tier.COLD) == 1
        assert (count_rows(folder, "warm"), count_rows(folder, "cold")) == (1, 1)
        assert reopened.get(copied).tier is Tier.COLD
        assert reopened.get(never).tier is Tier.WARM
        newest = reopened.moves(copied)[0]
        assert (newest.src, newest.dst, newest.rule, newest.heat) == ("warm", "cold", "heat", 0.05)
        assert [m.dst for m in reopened.moves(never)] == ["warm"]
        assert reopened.ledger.pending_moves() == []
        assert "passport" not in warm_texts(bystander, "when does the passport expire")
        assert "passport" in bystander.recall("when does the passport expire", T0).text
    finally:
        reopened.close()
        bystander.close()


def old_schema(dim: int) -> pa.Schema:
    """The single table's schema the previous version wrote: today's, less the episode links and terms."""
    new = schema(dim)
    return pa.schema([f for f in new if f.name not in ("before", "after", "terms")])


def test_a_folder_of_the_previous_version_is_migrated_on_open_into_warm_and_cold_keeping_every_row_and_id(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    folder = tmp_path / "ns"
    (folder / "lance").mkdir(parents=True)
    texts = [f"old memory {i}: the allotment plot {i} grows {crop}" for i, crop in enumerate(["kale", "leeks"] * 6)]
    vectors = embedder.embed(texts)
    rows = [
        {
            "id": f"{i:012x}",
            "hash": content_hash(text),
            "content": text,
            "tier": "cold" if i % 3 == 0 else "warm",
            "kind": "health" if i == 1 else "note",
            "protected": i == 1,
            "tags": ["plot", f"p{i}"],
            "metadata": json.dumps({"n": i}),
            "source": f"notes/{i}.md",
            "occurred_at": T0 - timedelta(days=i),
            "created_at": T0,
            "forget_after": T0 + timedelta(days=90) if i == 2 else None,
            "superseded_by": "profile:plot" if i == 4 else None,
            "superseded_at": T0 if i == 4 else None,
            "vector": vector.tolist(),
        }
        for i, (text, vector) in enumerate(zip(texts, vectors, strict=True))
    ]
    db = lancedb.connect(folder / "lance")
    db.create_table("memories", data=pa.Table.from_pylist(rows, schema=old_schema(embedder.dim)))
    (folder / "store.json").write_text(json.dumps({"model": embedder.name, "dim": embedder.dim, "schema": 1}))

    memory = Memory(folder, embedder)
    try:
        got = memory.store.get([r["id"] for r in rows])
        assert set(got) == {r["id"] for r in rows}
        for r in rows:
            record = got[r["id"]]
            assert (record.content, record.tier.value, record.kind.value) == (r["content"], r["tier"], r["kind"])
            assert (record.tags, record.metadata, record.source) == (
                tuple(r["tags"]),
                {"n": int(r["id"], 16)},
                r["source"],
            )
            assert (record.occurred_at, record.forget_after, record.superseded_by) == (
                r["occurred_at"], r["forget_after"], r["superseded_by"],
            )  # fmt: skip
        assert memory.store.count(Tier.COLD) == 4 and memory.store.count(Tier.WARM) == 8
        assert "memories" not in lancedb.connect(folder / "lance").list_tables().tables
        assert read_meta(folder / "store.json")["schema"] == 2
        assert "plot 3 grows leeks" in memory.recall("old memory 3: the allotment plot 3 grows leeks", T0).text
        again = memory.remember([MemoryIn(content=texts[5])], T0)[0]
        assert again.duplicate_of == f"{5:012x}"  # hashes came along: a repeat is still a repeat
    finally:
        memory.close()
