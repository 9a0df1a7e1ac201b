"""Opening a store with another model is refused; `reembed` switches models without losing a record."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import lancedb
import numpy as np
import pytest

from tests.helpers import count_rows, files_containing
from tiers.errors import ModelMismatch, StorageError
from tiers.memory import Memory
from tiers.model.embedder import FastEmbedder
from tiers.model.multilingual import MultilingualEmbedder
from tiers.records import MemoryIn, Tier
from tiers.storage.ledger import Move
from tiers.transfer.reembed import reembed

NOW = datetime(2026, 3, 1, tzinfo=UTC)


class LetterEmbedder:
    """A deterministic stand-in model of another dimension: the subject here is bookkeeping, not meaning."""

    name = "test/letters-32"
    dim = 32

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = []
        for text in texts:
            digest = hashlib.sha256(text.encode()).digest()
            rows.append(np.frombuffer(digest, dtype=np.uint8).astype(np.float32) + 1)
        vectors = np.stack(rows) if rows else np.zeros((0, self.dim), np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_opening_a_store_with_another_model_is_refused_with_how_to_reembed(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    memory = Memory(tmp_path / "ns", embedder)
    memory.remember([MemoryIn(content="the deploy runs on Fridays")], NOW)
    memory.close()

    other = Memory(tmp_path / "ns", LetterEmbedder())
    with pytest.raises(ModelMismatch, match="memtiers reembed"):
        other.store.count()
    other.close()


def test_reembed_keeps_every_record_its_tier_and_id_and_search_works_with_the_new_model(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    memory = Memory(tmp_path / "ns", embedder)
    stored = memory.remember(
        [MemoryIn(content=f"note {i} about the garden", tags=["g"]) for i in range(30)]
        + [MemoryIn(content="I am allergic to peanuts")],
        NOW,
    )
    with memory.parts.locked():
        memory.store.move([Move(NOW, stored[0].id, "warm", "cold", "test")])
    memory.close()

    assert reembed(tmp_path / "ns", LetterEmbedder()) == 31

    switched = Memory(tmp_path / "ns", LetterEmbedder())
    records = switched.store.get([s.id for s in stored])
    assert set(records) == {s.id for s in stored}
    assert records[stored[0].id].tier is Tier.COLD
    assert records[stored[-1].id].protected
    found = switched.recall("note 7 about the garden", NOW, tiers=[Tier.WARM, Tier.COLD])
    assert "note 7 about the garden" in found.text
    switched.close()

    with pytest.raises(ModelMismatch):
        Memory(tmp_path / "ns", embedder).store.count()


def test_reembed_while_a_server_in_another_process_holds_the_folder_is_refused_and_changes_nothing(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    folder = tmp_path / "ns"
    memory = Memory(folder, embedder)
    memory.remember([MemoryIn(content="the deploy runs on Fridays")], NOW)
    memory.close()
    meta = (folder / "store.json").read_text()
    script = (
        "import sys; from pathlib import Path; from tiers.storage.locking import serving_lock\n"
        "with serving_lock(Path(sys.argv[1])):\n    print('serving', flush=True); sys.stdin.read()"
    )
    with subprocess.Popen(
        [sys.executable, "-c", script, str(folder)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as server:
        assert server.stdin is not None and server.stdout is not None
        assert server.stdout.readline().strip() == "serving"
        with pytest.raises(StorageError, match=r"a memtiers server \(or another reembed\) is using"):
            reembed(folder, LetterEmbedder())
        server.stdin.close()  # the server stops
        assert server.wait(timeout=30) == 0
    assert (folder / "store.json").read_text() == meta
    assert count_rows(folder) == 1

    assert reembed(folder, LetterEmbedder()) == 1  # once the server is gone it runs


def test_reembed_of_a_namespace_where_nothing_was_stored_says_so(tmp_path: Path, embedder: FastEmbedder) -> None:
    with pytest.raises(StorageError, match=f"nothing to re-embed in {tmp_path / 'new'}: no memory has been stored"):
        reembed(tmp_path / "new", LetterEmbedder())
    assert not (tmp_path / "new").exists()

    opened = Memory(tmp_path / "opened", embedder)
    assert opened.store.count() == 0  # the store exists, empty
    opened.close()
    assert reembed(tmp_path / "opened", LetterEmbedder()) == 0
    switched = Memory(tmp_path / "opened", LetterEmbedder())
    assert switched.store.count() == 0
    switched.remember([MemoryIn(content="a first memory with the new model")], NOW)
    assert "first memory" in switched.recall("first memory with the new model", NOW).text
    switched.close()


class FailingEmbedder(LetterEmbedder):
    """The new model, failing after a number of batches (as a killed or crashed run would stop)."""

    def __init__(self, batches: int) -> None:
        self.left = batches

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.left == 0:
            raise RuntimeError("the model went away")
        self.left -= 1
        return super().embed(texts)


def stored_ids(folder: Path) -> dict[str, list[str]]:
    """The ids in each tier's table as named by store.json, read with LanceDB directly (duplicates kept)."""
    names = json.loads((folder / "store.json").read_text()).get("tables", {"warm": "warm", "cold": "cold"})
    db = lancedb.connect(folder / "lance")
    return {tier: sorted(db.open_table(name).to_arrow()["id"].to_pylist()) for tier, name in names.items()}


def test_an_interrupted_reembed_resumes_without_duplicates_and_ends_with_every_id_tier_and_the_new_model(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    folder = tmp_path / "ns"
    memory = Memory(folder, embedder)
    stored = memory.remember([MemoryIn(content=f"garden note {i}: the roses by wall {i}") for i in range(40)], NOW)
    with memory.parts.locked():
        memory.store.move([Move(NOW, s.id, "warm", "cold", "test") for s in stored[30:]])
    memory.store.compact()  # as a sweep does: opening the store later then has nothing to finish
    memory.close()
    before = stored_ids(folder)

    with pytest.raises(RuntimeError, match="the model went away"):
        reembed(folder, FailingEmbedder(batches=2), batch=8)

    meta = json.loads((folder / "store.json").read_text())
    assert (meta["model"], meta["reembedding"]["model"]) == (embedder.name, LetterEmbedder.name)
    still = Memory(folder, embedder)  # the old model still serves everything while the run is unfinished
    assert still.store.count() == 40
    still.close()

    progress: list[tuple[int, int]] = []
    assert reembed(folder, LetterEmbedder(), batch=8, progress=lambda done, total: progress.append((done, total))) == 40

    assert stored_ids(folder) == before
    meta = json.loads((folder / "store.json").read_text())
    assert (meta["model"], meta["dim"], "reembedding" in meta) == (LetterEmbedder.name, 32, False)
    assert progress[0] == (24, 40) and progress[-1] == (40, 40)  # 16 were kept from the first run
    switched = Memory(folder, LetterEmbedder())
    records = switched.store.get([s.id for s in stored])
    assert [records[s.id].tier for s in stored] == [Tier.WARM] * 30 + [Tier.COLD] * 10
    assert "garden note 35" in switched.recall("garden note 35: the roses by wall 35", NOW).text
    switched.close()


def test_a_resumed_reembed_carries_the_writes_moves_and_forgets_made_since_it_was_interrupted(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    folder = tmp_path / "ns"
    memory = Memory(folder, embedder)
    stored = memory.remember([MemoryIn(content=f"garden note {i}: the roses by wall {i}") for i in range(30)], NOW)
    memory.close()
    with pytest.raises(RuntimeError):
        reembed(folder, FailingEmbedder(batches=2), batch=8)
    copied = sorted(lancedb.connect(folder / "lance").open_table("warm_2").to_arrow()["id"].to_pylist())
    assert len(copied) == 16
    moved, gone, repeated = copied[:3]
    text_of = {s.id: f"garden note {i}: the roses by wall {i}" for i, s in enumerate(stored)}

    between = Memory(folder, embedder)  # a server ran in between, with the old model
    with between.parts.locked():
        between.store.move([Move(NOW, moved, "warm", "cold", "test")])
    between.forget(gone, NOW)
    between.remember([MemoryIn(content=text_of[repeated], tags=["roses"])], NOW)
    [new] = between.remember([MemoryIn(content="the quince tree was planted in autumn")], NOW)
    between.close()

    assert reembed(folder, LetterEmbedder(), batch=8) == 30

    expected = sorted({s.id for s in stored} - {gone, moved} | {new.id})
    assert stored_ids(folder) == {"warm": expected, "cold": [moved]}
    switched = Memory(folder, LetterEmbedder())
    assert switched.get(repeated).tags == ("roses",)
    assert switched.get(moved).tier is Tier.COLD
    switched.close()
    assert files_containing(folder, text_of[gone]) == []  # nor in the copies the first run made
    assert files_containing(folder, text_of[moved])


def test_a_store_of_the_default_model_refuses_the_multilingual_one_and_back_naming_both(
    tmp_path: Path, embedder: FastEmbedder, multilingual: MultilingualEmbedder
) -> None:
    for made_by, other, folder in ((embedder, multilingual, tmp_path / "a"), (multilingual, embedder, tmp_path / "b")):
        memory = Memory(folder, made_by)
        memory.remember([MemoryIn(content="the deploy runs on Fridays")], NOW)
        memory.close()

        opened = Memory(folder, other)
        with pytest.raises(ModelMismatch) as refused:
            opened.store.count()
        opened.close()

        assert f"embedded with {made_by.name!r}" in str(refused.value)
        assert f"not the configured {other.name!r}" in str(refused.value)
        assert "memtiers reembed" in str(refused.value)


def test_reembed_from_the_default_model_to_the_multilingual_one_and_back_keeps_ids_tiers_and_history(
    tmp_path: Path, embedder: FastEmbedder, multilingual: MultilingualEmbedder
) -> None:
    folder = tmp_path / "ns"
    memory = Memory(folder, embedder)
    stored = memory.remember(
        [MemoryIn(content=f"garden note {i}: the roses by wall {i}") for i in range(12)]
        + [MemoryIn(content="我对花生过敏。"), MemoryIn(content="I am allergic to penicillin")],
        NOW,
    )
    with memory.parts.locked():
        memory.store.move([Move(NOW, s.id, "warm", "cold", "test") for s in stored[:4]])
    memory.store.compact()
    history = memory.moves(limit=100)
    memory.close()
    before = stored_ids(folder)

    assert reembed(folder, multilingual) == 14

    assert stored_ids(folder) == before
    assert json.loads((folder / "store.json").read_text())["model"] == multilingual.name
    switched = Memory(folder, multilingual)
    try:
        assert switched.moves(limit=100) == history
        assert [switched.get(s.id).tier for s in stored] == [Tier.COLD] * 4 + [Tier.WARM] * 10
        assert switched.get(stored[-1].id).protected
        assert switched.recall("What am I allergic to?", NOW, limit=3).hits[0].record.content in {
            "我对花生过敏。",
            "I am allergic to penicillin",
        }
        assert switched.recall("我对什么过敏？", NOW, limit=1).hits[0].record.content == "我对花生过敏。"
    finally:
        switched.close()

    assert reembed(folder, embedder) == 14

    assert stored_ids(folder) == before
    back = Memory(folder, embedder)
    try:
        assert back.moves(limit=100) == history
        assert [back.get(s.id).tier for s in stored] == [Tier.COLD] * 4 + [Tier.WARM] * 10
        assert back.get(stored[-1].id).protected
        assert "garden note 7" in back.recall("garden note 7: the roses by wall 7", NOW, limit=1).text
    finally:
        back.close()
