"""The cold tier on object storage: the contract of a local cold tier, against moto's S3 server on 127.0.0.1.

Hot and warm stay in the data folder; cold lives in `s3://<bucket>/<prefix>`. Every check of where a row is
reads LanceDB or the bucket directly, not through the code under test.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import lancedb
import pytest

from server.cli import main
from server.settings import Settings
from tests.helpers import count_rows
from tests.s3 import S3Server
from tiers.index.cold_reads import ColdScope
from tiers.index.meta import PIECES_DONE
from tiers.memory import Memory, MemorySettings
from tiers.model.embedder import FastEmbedder
from tiers.records import Kind, MemoryIn, Tier
from tiers.text.terms import words

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
STAGING = "The staging database lives on host db-stage-3"
ZEPPELIN = "The zeppelin hangar key hides under the blue doormat"
MARMALADE = "The marmalade recipe needs Seville oranges and a long simmer"


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


@pytest.fixture
def prefix() -> str:
    """A key prefix of the bucket no other test uses."""
    return f"cold-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def cold(s3: S3Server, prefix: str) -> MemorySettings:
    return MemorySettings(cold_uri=s3.uri(f"{prefix}/ns"), storage_options=s3.storage_options)


@pytest.fixture
def memory(tmp_path: Path, embedder: FastEmbedder, cold: MemorySettings) -> Iterator[Memory]:
    mem = Memory(tmp_path / "ns", embedder, cold)
    yield mem
    mem.close()


def remember(memory: Memory, content: str, at: datetime = T0) -> str:
    return memory.remember([MemoryIn(content=content, kind=Kind.NOTE)], at)[0].id


def gone_cold(memory: Memory, *contents: str) -> list[str]:
    """Store notes on T0 and sweep two months later: the sweep sends them cold."""
    ids = [remember(memory, c) for c in contents]
    moved = memory.sweep(day(60)).moves
    assert sorted(m.rid for m in moved if m.dst is Tier.COLD) == sorted(ids)
    return ids


def s3_ids(s3: S3Server, settings: MemorySettings, table: str = "cold") -> set[str]:
    """Ids in the cold table on the S3 server, read with LanceDB directly."""
    assert settings.cold_uri is not None
    db = lancedb.connect(settings.cold_uri, storage_options=s3.storage_options)
    if table not in db.list_tables().tables:
        return set()
    return set(db.open_table(table).to_arrow()["id"].to_pylist())


def test_a_sweep_moves_warm_records_into_the_cold_table_on_s3_and_none_stays_local(
    memory: Memory, s3: S3Server, cold: MemorySettings, prefix: str
) -> None:
    ids = gone_cold(memory, STAGING, ZEPPELIN, MARMALADE)

    assert s3_ids(s3, cold) == set(ids)
    assert all(memory.get(rid).tier is Tier.COLD for rid in ids)
    local = lancedb.connect(memory.folder / "lance")
    assert "cold" not in local.list_tables().tables
    assert count_rows(memory.folder) == 0  # the local warm table is empty, and there is no local cold one
    assert any("/cold.lance/data/" in key for key in s3.keys(prefix))
    stats = memory.stats()
    assert (stats["warm"], stats["cold"]) == (0, 3)


def test_stats_count_the_files_and_bytes_of_the_cold_table_in_the_bucket(
    memory: Memory, s3: S3Server, prefix: str
) -> None:
    gone_cold(memory, STAGING, ZEPPELIN)
    remember(memory, MARMALADE, day(60))

    objects = s3.objects(prefix)
    local = [p for p in (memory.folder / "lance").rglob("*") if p.is_file()]
    stats = memory.stats()
    assert memory.store.cold_table.files() == (len(objects), sum(objects.values()))
    assert stats["lance_files"] == len(objects) + len(local)
    assert stats["lance_bytes"] == sum(objects.values()) + sum(p.stat().st_size for p in local)


def test_recall_reaches_cold_on_s3_by_meaning_and_by_words_with_default_tiers_and_with_cold_only(
    memory: Memory,
) -> None:
    staging, zeppelin, _ = gone_cold(memory, STAGING, ZEPPELIN, MARMALADE)

    by_default = memory.recall("which machine hosts the staging DB?", day(61), max_tokens=1024)
    cold_only = memory.recall("where is the key to the airship shed?", day(61), tiers=[Tier.COLD])
    assert by_default.hits[0].record.id == staging
    assert by_default.hits[0].record.tier is Tier.COLD
    assert cold_only.hits[0].record.id == zeppelin
    query = "zeppelin doormat"
    hits = memory.store.cold_reads.search(memory.embedder.embed([query]), words(query), 10, ColdScope())
    assert hits is not None
    scored = {candidate.id: candidate.words for candidate in hits.candidates}
    assert scored[zeppelin] > 0  # found by its words, read from S3 into the cold index, not only by meaning
    assert scored.get(staging, 0.0) == 0.0


def test_promote_brings_a_record_back_from_cold_on_s3_to_warm(
    memory: Memory, s3: S3Server, cold: MemorySettings
) -> None:
    staging, zeppelin = gone_cold(memory, STAGING, ZEPPELIN)

    done = memory.promote(staging, day(61), to=Tier.WARM)

    assert (done.outcome, done.src, memory.get(staging).tier) == ("promoted", Tier.COLD, Tier.WARM)
    assert s3_ids(s3, cold) == {zeppelin}
    assert count_rows(memory.folder, "warm") == 1
    assert [h.record.id for h in memory.recall("staging database host", day(61), tiers=[Tier.WARM]).hits] == [staging]


def test_saying_a_cold_memory_again_brings_it_back_warm_from_s3(
    memory: Memory, s3: S3Server, cold: MemorySettings
) -> None:
    staging, zeppelin = gone_cold(memory, STAGING, ZEPPELIN)

    again = memory.remember([MemoryIn(content="the staging database lives on host  db-stage-3")], day(70))[0]

    assert again.duplicate_of == staging
    assert memory.get(staging).tier is Tier.WARM
    assert (memory.moves(staging)[0].src, memory.moves(staging)[0].rule) == ("cold", "repeated")
    assert s3_ids(s3, cold) == {zeppelin}


def test_forget_of_a_cold_record_leaves_no_byte_of_it_in_the_bucket(
    memory: Memory, s3: S3Server, cold: MemorySettings, prefix: str
) -> None:
    zeppelin, marmalade = gone_cold(memory, ZEPPELIN, MARMALADE)
    assert s3.containing(prefix, b"zeppelin")  # the check below can see a word where it is

    done = memory.forget(zeppelin, day(61))

    assert done.tier is Tier.COLD
    assert s3_ids(s3, cold) == {marmalade}
    assert s3.containing(prefix, b"zeppelin") == []
    assert s3.containing(prefix, b"marmalade")
    assert [h.record.id for h in memory.recall("zeppelin hangar key", day(61), tiers=[Tier.COLD]).hits] != [zeppelin]


OTHER_PROCESS = """
import json, sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from tiers.model.embedder import FastEmbedder
from tiers.memory import Memory, MemorySettings
from tiers.records import Kind, MemoryIn, Tier

folder, cache, cold_uri, options, content, query = sys.argv[1:]
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
embedder = FastEmbedder(cache_dir=Path(cache))
memory = Memory(Path(folder), embedder, MemorySettings(cold_uri=cold_uri, storage_options=json.loads(options)))
try:
    seen = [h.record.id for h in memory.recall(query, T0 + timedelta(days=61), tiers=[Tier.COLD]).hits]
    [stored] = memory.remember([MemoryIn(content=content, kind=Kind.NOTE)], T0)
    moved = [m.rid for m in memory.sweep(T0 + timedelta(days=62)).moves]
    memory.promote(seen[0], T0 + timedelta(days=62), to=Tier.WARM)
    print(json.dumps({"seen": seen, "stored": stored.id, "moved": moved}))
finally:
    memory.close()
"""


def test_two_processes_on_one_folder_and_one_cold_uri_see_each_others_writes_and_moves(
    memory: Memory, s3: S3Server, cold: MemorySettings, model_cache: Path
) -> None:
    [staging] = gone_cold(memory, STAGING)
    assert cold.cold_uri is not None
    memory.recall("anything", day(60), tiers=[Tier.WARM])  # this process's view is loaded before the other writes

    other = subprocess.run(
        [sys.executable, "-c", OTHER_PROCESS, str(memory.folder), str(model_cache), cold.cold_uri,
         json.dumps(cold.storage_options), ZEPPELIN, "staging database host"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip

    assert other.returncode == 0, other.stderr
    report = json.loads(other.stdout)
    assert report["seen"] == [staging]  # the other process found this one's move to cold on S3
    zeppelin = report["stored"]
    assert report["moved"] == [zeppelin]
    assert memory.get(zeppelin).tier is Tier.COLD  # and this one sees the other's write and move
    assert s3_ids(s3, cold) == {zeppelin}
    assert memory.get(staging).tier is Tier.WARM
    assert [h.record.id for h in memory.recall("staging database host", day(62), tiers=[Tier.WARM]).hits] == [staging]
    assert [h.record.id for h in memory.recall("zeppelin hangar key", day(62), tiers=[Tier.COLD]).hits] == [zeppelin]


def test_memtiers_reembed_rewrites_the_cold_table_on_s3_and_recall_still_reaches_it(
    tmp_path: Path, embedder: FastEmbedder, s3: S3Server, prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {"MEMTIERS_HOME": str(tmp_path / "home"), "MEMTIERS_COLD_URI": s3.uri(prefix), **s3.env}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = Settings.from_env(env)
    memory = Memory(settings.folder, embedder, settings.memory)
    try:
        zeppelin, marmalade = gone_cold(memory, ZEPPELIN, MARMALADE)
        kept = remember(memory, "I am allergic to peanuts", day(59))
    finally:
        memory.close()

    assert main(["reembed"]) == 0

    keys = s3.keys(prefix)
    assert keys and all(key.startswith(f"{prefix}/default/cold_2.lance/") for key in keys), keys
    memory = Memory(settings.folder, embedder, settings.memory)
    try:
        assert memory.get(zeppelin).tier is Tier.COLD and memory.get(kept).tier is Tier.WARM
        assert memory.recall("where is the key to the airship shed?", day(61)).hits[0].record.id == zeppelin
        assert memory.recall("marmalade", day(61), tiers=[Tier.COLD]).hits[0].record.id == marmalade
    finally:
        memory.close()


def long_note_cold_before_pieces(
    tmp_path: Path, embedder: FastEmbedder, s3: S3Server, cold: MemorySettings
) -> tuple[str, str]:
    """A long note gone cold on S3 in the folder `ns`, its cold table then as a store made before pieces were kept
    has it (no `pieces` column); its id and text."""
    note = " ".join(f"Item {i}: the {word} list was read out and agreed." for i, word in enumerate(["long"] * 40))
    note += " Last item: the zeppelin hangar key now hides under the red doormat."
    memory = Memory(tmp_path / "ns", embedder, cold)
    [rid] = gone_cold(memory, note)
    memory.close()
    assert cold.cold_uri is not None
    table = lancedb.connect(cold.cold_uri, storage_options=s3.storage_options).open_table("cold")
    table.drop_columns(["pieces"])
    return rid, note


def test_a_long_note_on_s3_stored_before_pieces_gets_them_from_the_sweep(
    tmp_path: Path, embedder: FastEmbedder, s3: S3Server, cold: MemorySettings
) -> None:
    rid, note = long_note_cold_before_pieces(tmp_path, embedder, s3, cold)
    meta = json.loads((tmp_path / "ns" / "store.json").read_text())
    meta.pop("pieces")
    (tmp_path / "ns" / "store.json").write_text(json.dumps(meta))

    old = Memory(tmp_path / "ns", embedder, cold)
    try:
        assert old.sweep(day(61)).pieces_filled == 1
        assert old.sweep(day(61)).pieces_filled == 0
        with old.store.cold() as index:  # what recall scores its pieces from
            assert index.pieces.of(index.position(rid)) is not None
    finally:
        old.close()
    assert json.loads((tmp_path / "ns" / "store.json").read_text())["pieces"] == PIECES_DONE
    rows = lancedb.connect(cold.cold_uri, storage_options=s3.storage_options).open_table("cold").to_arrow()
    [row] = rows.to_pylist()
    assert row["id"] == rid and row["content"] == note and len(row["pieces"]) >= 2


def test_a_new_data_folder_on_a_cold_table_from_before_pieces_gives_its_long_notes_pieces(
    tmp_path: Path, embedder: FastEmbedder, s3: S3Server, cold: MemorySettings
) -> None:
    """A data folder made anew (another machine, a lost folder) over a cold table already in the bucket cannot say
    that every long note there has its pieces: the sweep looks, and gives them."""
    rid, _ = long_note_cold_before_pieces(tmp_path, embedder, s3, cold)

    fresh = Memory(tmp_path / "elsewhere", embedder, cold)
    try:
        assert not fresh.store.unpieced.complete()
        assert fresh.sweep(day(61)).pieces_filled == 1
        assert fresh.sweep(day(61)).pieces_filled == 0
        hits = fresh.recall("where does the zeppelin hangar key hide now?", day(61), max_tokens=120)
        assert hits.hits[0].record.id == rid and "red doormat" in hits.text  # by its last piece, as an excerpt
    finally:
        fresh.close()
    assert json.loads((tmp_path / "elsewhere" / "store.json").read_text())["pieces"] == PIECES_DONE


def test_a_new_data_folder_with_a_local_cold_tier_says_at_once_that_it_lacks_no_pieces(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    memory = Memory(tmp_path / "ns", embedder)
    try:
        assert memory.store.unpieced.complete()
        assert memory.sweep(day(1)).pieces_filled == 0
    finally:
        memory.close()
