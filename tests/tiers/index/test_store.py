"""The warm and cold tables of a namespace: the warm index follows every process, moves keep every field,
crashes mid-move are finished, an old single-table folder is migrated, store.json is read and written safely."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import lancedb
import pyarrow as pa
import pytest

from tests.helpers import T0, count_rows
from tiers.errors import StorageError
from tiers.index.meta import read_meta, write_meta
from tiers.memory import Memory
from tiers.model.embedder import FastEmbedder
from tiers.records import MemoryIn, Tier, content_hash
from tiers.storage.ledger import Move
from tiers.storage.tables import schema

REPO = Path(__file__).resolve().parents[3]


def remember(memory: Memory, content: str, **fields: object) -> str:
    [stored] = memory.remember([MemoryIn(content=content, **fields)], T0)  # type: ignore[arg-type]
    return stored.id


def warm_texts(memory: Memory, query: str) -> str:
    return memory.recall(query, T0, tiers=[Tier.WARM]).text


def move(memory: Memory, rid: str, src: str, dst: str) -> None:
    with memory.parts.locked():
        memory.store.move([Move(T0, rid, src, dst, "test")])


def test_a_second_memory_on_the_folder_sees_each_write_move_and_forget_of_the_first_at_once(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    writer, reader = Memory(tmp_path / "ns", embedder), Memory(tmp_path / "ns", embedder)
    try:
        remember(writer, "the boiler was serviced by Halvorsen Heating")
        assert "Halvorsen" in warm_texts(reader, "who serviced the boiler")  # the reader's index is loaded now

        rid = remember(writer, "the kayak is stored in the boathouse loft")
        assert "boathouse loft" in warm_texts(reader, "where is the kayak")

        move(writer, rid, "warm", "cold")
        assert "boathouse" not in warm_texts(reader, "where is the kayak")
        assert reader.store.count(Tier.WARM) == 1 and reader.get(rid).tier is Tier.COLD

        move(writer, rid, "cold", "warm")
        assert "boathouse loft" in warm_texts(reader, "where is the kayak")

        writer.forget(rid, T0)
        assert "boathouse" not in reader.recall("where is the kayak", T0).text
        assert reader.store.count() == 1
    finally:
        writer.close()
        reader.close()


def test_a_memory_remembered_by_another_process_is_recalled_here_at_once(
    tmp_path: Path, embedder: FastEmbedder, model_cache: Path
) -> None:
    folder = tmp_path / "ns"
    here = Memory(folder, embedder)
    try:
        remember(here, "the spare tyre is in the garage")
        assert "heron" not in warm_texts(here, "where does the heron nest")  # the warm index is loaded

        script = (
            "import sys; from pathlib import Path; from tests.helpers import T0; "
            "from tiers.model.embedder import FastEmbedder; from tiers.memory import Memory; "
            "from tiers.records import MemoryIn; "
            "m = Memory(Path(sys.argv[1]), FastEmbedder(cache_dir=Path(sys.argv[2]))); "
            "[s] = m.remember([MemoryIn(content='the grey heron nests by the old mill pond')], T0); "
            "print(s.id); m.close()"
        )
        done = subprocess.run(
            [sys.executable, "-c", script, str(folder), str(model_cache)],
            cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        rid = done.stdout.strip()

        found = here.recall("where does the heron nest", T0, tiers=[Tier.WARM])
        assert found.hits[0].record.id == rid
        assert here.get(rid).content == "the grey heron nests by the old mill pond"
    finally:
        here.close()


def test_a_move_to_cold_and_back_keeps_every_field_and_the_rows_going_cold_carry_their_episode_links(
    memory: Memory,
) -> None:
    episode = [
        MemoryIn(
            content=text,
            tags=["trip", "norway"],
            metadata={"turn": i, "speaker": "me"},
            source="chat:42",
            occurred_at="2025-12-30T18:00:00Z",
            forget_after="P400D",
        )
        for i, text in enumerate(
            ["we drove to Ålesund at dawn", "the ferry to Geiranger was cancelled", "so we hiked up to Dalsnibba"]
        )
    ]
    ids = [s.id for s in memory.remember(episode, T0)]
    as_warm = {rid: memory.get(rid) for rid in ids}

    with memory.parts.locked():
        memory.store.move([Move(T0, rid, "warm", "cold", "test") for rid in ids])

    for rid in ids:
        assert memory.get(rid) == replace(as_warm[rid], tier=Tier.COLD)
    links = {r["id"]: (r["before"], r["after"]) for r in memory.store.cold_table.get(ids).to_pylist()}
    assert links == {
        ids[0]: ([], [ids[1], ids[2]]),
        ids[1]: ([ids[0]], [ids[2]]),
        ids[2]: ([ids[1], ids[0]], []),
    }
    assert count_rows(memory.folder, "warm") == 0

    with memory.parts.locked():
        memory.store.move([Move(T0, rid, "cold", "warm", "test") for rid in ids])

    for rid in ids:
        assert memory.get(rid) == as_warm[rid]
    with memory.store.warm() as index:
        assert index.neighbours(ids[1], 2) == ((ids[0],), (ids[2],))
    assert (count_rows(memory.folder, "warm"), count_rows(memory.folder, "cold")) == (3, 0)


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


@pytest.mark.parametrize("body", ["{not json", '{"model": "memtiers/all-MiniLM-L6-v2-int8"}', ""])
def test_a_corrupt_store_json_is_a_storage_error_naming_the_file_and_is_left_as_it_was(
    tmp_path: Path, embedder: FastEmbedder, body: str
) -> None:
    folder = tmp_path / "ns"
    folder.mkdir()
    meta = folder / "store.json"
    meta.write_text(body)
    memory = Memory(folder, embedder)
    try:
        with pytest.raises(StorageError, match=f"{meta}.*corrupt.*Restore it"):
            memory.remember([MemoryIn(content="the gate code changed")], T0)
        with pytest.raises(StorageError, match=str(meta)):
            memory.recall("gate code", T0)
    finally:
        memory.close()
    assert meta.read_text() == body


def test_store_json_is_replaced_whole_so_a_concurrent_reader_never_sees_part_of_it(tmp_path: Path) -> None:
    path = tmp_path / "store.json"
    write_meta(path, {"model": "m", "dim": 1, "schema": 2})
    with open(path, "rb") as first:  # held open, so its inode cannot be reused by a later file
        first_inode = os.fstat(first.fileno()).st_ino
        big = {"model": "m", "dim": 1, "schema": 2, "tables": {f"t{i}": "x" * 200 for i in range(2_000)}}
        torn: list[str] = []
        writing = threading.Event()

        def writer() -> None:
            writing.set()
            for _ in range(40):
                write_meta(path, big)
                write_meta(path, {"model": "m", "dim": 1, "schema": 2})

        thread = threading.Thread(target=writer)
        thread.start()
        writing.wait()
        reads = 0
        while thread.is_alive() and reads < 20_000:
            try:
                read_meta(path)
            except StorageError as exc:
                torn.append(str(exc))
            reads += 1
        thread.join()

        assert torn == []
        assert reads > 10
        assert path.stat().st_ino != first_inode  # a new file took the old one's name
        assert os.fstat(first.fileno()).st_nlink == 0  # and the first one was never written over, only unlinked
        assert sorted(os.listdir(tmp_path)) == ["store.json"]  # no partial file left behind


PLACES = ["the canoe paddles hang in the shed", "the spare key is under the blue pot",
          "Marta's phone number ends in 4417", "the wifi router is in the attic", "ferry leaves at 7"]  # fmt: skip


@pytest.fixture
def copies_from_three(monkeypatch: pytest.MonkeyPatch) -> None:
    """A full read of 3 or more rows saves its copy (1,000 in use), so small stores exercise the copies."""
    from tiers.index import synced as synced_module

    monkeypatch.setattr(synced_module, "SAVED_FROM", 3)


@pytest.mark.usefixtures("copies_from_three")
def test_forgetting_a_memory_that_was_once_cold_lets_every_process_go_of_the_copy_and_its_fields(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    folder = tmp_path / "ns"
    first = Memory(folder, embedder)
    other = Memory(folder, embedder)
    try:
        texts = ["the kayak is in the boathouse", "the spare fuse sits in the red box",
                 "Iris's locker code is 3141", "the bike pump hangs by the door"]  # fmt: skip
        ids = [remember(first, text) for text in texts]
        for rid in ids:
            move(first, rid, "warm", "cold")
        first.recall("where is the kayak", T0)  # the full read, saved and mapped
        other.recall("where is the kayak", T0)  # the second process maps the same copy
        move(first, ids[2], "cold", "warm")  # back to warm: a dead position in both cold indexes
        other.recall("locker code", T0)
        with other.store.cold() as index:
            assert index.mapped_from is not None and texts[2] in index.fields()["content"].to_pylist()

        first.forget(ids[2], T0)  # a warm record now, but its words are in the cold copies

        assert not (folder / "cold-index").exists()
        assert texts[2] not in other.recall("locker code", T0).text
        with other.store.cold() as index:
            assert index.mapped_from is None
            assert texts[2] not in index.fields()["content"].to_pylist()
            assert {r.content for r in index.records(ids)} == {texts[0], texts[1], texts[3]}
    finally:
        first.close()
        other.close()
