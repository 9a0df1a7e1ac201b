"""The warm and cold tables of a namespace: the indexes follow every process, moves keep every field and carry
their episode links, and a forget lets every process go of the saved copies and the fields."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from tests.helpers import T0, count_rows
from tiers.memory import Memory
from tiers.model.embedder import FastEmbedder
from tiers.records import MemoryIn, Tier
from tiers.storage.ledger import Move

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
