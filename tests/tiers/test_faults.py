"""Faults a user can meet come back as readable errors naming the file, and lose nothing already stored."""

from __future__ import annotations

import json
import multiprocessing
import random
import resource
import shutil
import signal
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from tests.helpers import T0, count_rows
from tiers.errors import CorruptFile, MemtiersError, ModelMismatch, StorageError
from tiers.index.cold_reads import ColdScope
from tiers.index.columns import rows_table as _table
from tiers.index.meta import SCHEMA_VERSION
from tiers.index.rows import new_row
from tiers.index.store import Store
from tiers.index.warm import Row
from tiers.memory import Memory
from tiers.model.embedder import FastEmbedder
from tiers.records import Kind, MemoryIn, Record, Tier
from tiers.storage.ledger import Ledger, Move
from tiers.storage.tables import Connection, Table
from tiers.transfer.reembed import reembed

BEFORE = [f"Fact {i}: the {w} team meets on floor {i + 2}" for i, w in enumerate(["data", "web", "ops", "ml", "qa"])]


def seeded(folder: Path, embedder: FastEmbedder) -> dict[str, str]:
    """Five memories stored and closed: the ones that must survive whatever comes next."""
    memory = Memory(folder, embedder)
    try:
        return {
            s.id: c for s, c in zip(memory.remember([MemoryIn(content=c) for c in BEFORE], T0), BEFORE, strict=True)
        }
    finally:
        memory.close()


def assert_all_there(folder: Path, embedder: FastEmbedder, stored: dict[str, str]) -> None:
    memory = Memory(folder, embedder)
    try:
        assert {rid: r.content for rid, r in memory.store.get(list(stored)).items()} == stored
        for rid, content in stored.items():
            assert rid in [h.record.id for h in memory.recall(content, T0, limit=3).hits], content
        [after] = memory.remember([MemoryIn(content="Stored after the fault, and found")], T0)
        assert memory.get(after.id).tier is Tier.WARM
    finally:
        memory.close()


# store.json


def test_store_json_is_written_whole_with_no_temporary_file_left(tmp_path: Path, embedder: FastEmbedder) -> None:
    seeded(tmp_path / "ns", embedder)

    assert json.loads((tmp_path / "ns" / "store.json").read_text()) == {
        "model": embedder.name,
        "dim": embedder.dim,
        "schema": SCHEMA_VERSION,
        "pieces": 2,  # a new store: every long memory has its pieces (tiers/namespace/backfill.py has nothing to do)
    }
    assert [p.name for p in (tmp_path / "ns").iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.parametrize("damage", ["", "{not json", "[1, 2]", '{"dim": 384}', "\xff\xfe"])
def test_a_corrupt_store_json_is_a_readable_error_naming_it_and_is_never_overwritten(
    tmp_path: Path, embedder: FastEmbedder, damage: str
) -> None:
    folder = tmp_path / "ns"
    stored = seeded(folder, embedder)
    meta = folder / "store.json"
    meta.write_bytes(damage.encode("latin-1"))
    memory = Memory(folder, embedder)
    try:
        with pytest.raises(CorruptFile) as failed:
            memory.remember([MemoryIn(content="anything")], T0)
    finally:
        memory.close()

    message = str(failed.value)
    assert f"{meta} is corrupt" in message
    assert "left untouched" in message
    assert f'"model": "{embedder.name}", "dim": {embedder.dim}' in message  # how to write it again
    assert meta.read_bytes() == damage.encode("latin-1")
    meta.write_text(json.dumps({"model": embedder.name, "dim": embedder.dim, "schema": SCHEMA_VERSION}))
    assert_all_there(folder, embedder, stored)


def test_another_model_recorded_in_store_json_is_still_a_model_mismatch(tmp_path: Path, embedder: FastEmbedder) -> None:
    folder = tmp_path / "ns"
    seeded(folder, embedder)
    (folder / "store.json").write_text(json.dumps({"model": "other/model", "dim": 768, "schema": SCHEMA_VERSION}))
    ledger = Ledger(folder / "ledger.sqlite")

    try:
        with pytest.raises(ModelMismatch, match="embedded with 'other/model' \\(dim 768\\)"):
            Store(folder, embedder.name, embedder.dim, ledger)
    finally:
        ledger.close()


def test_reembed_of_a_namespace_with_no_memories_says_so_and_creates_nothing(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    with pytest.raises(StorageError, match=r"nothing to re-embed in .*: no memory has been stored in this namespace"):
        reembed(tmp_path / "never-used", embedder)

    assert not (tmp_path / "never-used").exists()


# ledger


def test_a_corrupt_ledger_is_a_readable_error_naming_it_and_saying_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    path.write_bytes(b"this is not an SQLite database, it was overwritten by mistake" * 100)

    with pytest.raises(CorruptFile) as failed:
        Ledger(path)

    assert f"cannot open the ledger {path} (file is not a database)" in str(failed.value)
    assert "move it aside" in str(failed.value)
    assert path.read_bytes().startswith(b"this is not an SQLite database")


LEDGER_READS: dict[str, Callable[[Ledger], Any]] = {
    "usage": lambda ledger: ledger.usage(),
    "usage of ids": lambda ledger: ledger.usage(["0123456789ab"]),
    "moves": lambda ledger: ledger.moves(),
    "linked": lambda ledger: ledger.linked("name"),
    "get_state": lambda ledger: ledger.get_state("rows_written"),
    "last_change": lambda ledger: ledger.last_change(),
    "changes_since": lambda ledger: ledger.changes_since(0),
    "pending_moves": lambda ledger: ledger.pending_moves(),
}


@pytest.mark.parametrize("read", LEDGER_READS.values(), ids=list(LEDGER_READS))
def test_every_ledger_read_maps_an_sqlite_error_to_a_storage_error_naming_the_file(
    tmp_path: Path, read: Callable[[Ledger], Any]
) -> None:
    ledger = Ledger(tmp_path / "ledger.sqlite")
    ledger.close()  # a real sqlite3.Error on the next read: the connection is gone

    with pytest.raises(StorageError, match=f"reading the ledger {tmp_path / 'ledger.sqlite'} failed") as failed:
        read(ledger)

    assert isinstance(failed.value.__cause__, sqlite3.Error)


# LanceDB: a real failure underneath an open table (its folder removed), through every Table method

VECTOR = np.full(4, 0.5, dtype=np.float32)


def _row(rid: str, dim: int = 4) -> Row:
    record = Record(id=rid, content=f"x {rid}", tier=Tier.WARM, kind=Kind.NOTE, protected=False, occurred_at=T0,
                    created_at=T0)  # fmt: skip
    return new_row(record, rid, np.full(dim, 0.5, dtype=np.float32))


def _rows(*rids: str, dim: int = 4) -> pa.Table:
    return _table([_row(rid, dim) for rid in rids], dim)


TABLE_CALLS: dict[str, Callable[[Table], Any]] = {
    "count": lambda table: table.count(),
    "get": lambda table: table.get(["0123456789ab"]),
    "find_hashes": lambda table: table.find_hashes(["0123456789ab"]),
    "scan": lambda table: list(table.scan()),
    "ids": lambda table: table.ids(),
    "add": lambda table: table.add(_rows("fedcba987654")),
    "delete": lambda table: table.delete(["0123456789ab"]),
    "update": lambda table: table.update(["0123456789ab"], {"protected": True}),
    "compact": lambda table: table.compact(),
    "compact and scrub": lambda table: table.compact(scrub=True),
    "overwrite": lambda table: table.overwrite(iter(_rows("0123456789ab", dim=5).to_batches()), 4),  # wrong size
    "versions": lambda table: table.versions(),
}


def assert_storage_error_naming(failed: pytest.ExceptionInfo[StorageError], table: str, where: Path) -> None:
    message = str(failed.value)
    assert f"the {table} table in {where}" in message, message
    assert ".rs:" not in message  # LanceDB's Rust source locations are cut
    assert isinstance(failed.value.__cause__, OSError | RuntimeError | ValueError)


@pytest.mark.parametrize("operation", TABLE_CALLS.values(), ids=list(TABLE_CALLS))
def test_every_table_method_maps_a_backend_error_to_a_storage_error_naming_the_table(
    tmp_path: Path, operation: Callable[[Table], Any]
) -> None:
    uri = tmp_path / "lance"
    table = Table(Connection(str(uri)), "cold", 4, str(uri), tmp_path / "read.lock", indexed=True)
    table.add(_rows("0123456789ab", "00000000000a"))
    table.compact()
    shutil.rmtree(uri / "cold.lance")

    with pytest.raises(StorageError) as failed:
        operation(table)

    assert_storage_error_naming(failed, "cold", uri)


def _searched(store: Store) -> Any:
    return store.cold_reads.search(np.stack([VECTOR]), ["x"], 3, ColdScope())


STORE_CALLS: dict[str, Callable[[Store, Record], Any]] = {
    "get": lambda store, record: store.get([record.id]),
    "find_hashes": lambda store, record: store.find_hashes(["0" * 32]),
    "count": lambda store, record: store.count(),
    "cold_search": lambda store, record: _searched(store),
    "cold_records": lambda store, record: store.cold_reads.records([record.id]),
    "lifecycle_rows": lambda store, record: store.lifecycle_rows([record.id]),
    "add": lambda store, record: store.add([]) or store.add([_row("fedcba987654")]),
    "restore": lambda store, record: store.restore([_row("fedcba987654")]),
    "update": lambda store, record: store.update([record], {"protected": True}),
    "move": lambda store, record: store.move([Move(T0, record.id, "warm", "cold", "test")]),
    "delete": lambda store, record: store.delete(record),
    "after_write": lambda store, record: store.after_write(99, 100),
    "compact": lambda store, record: store.compact(),
    "overwrite": lambda store, record: store.overwrite(
        Tier.WARM, iter(_rows("0123456789ab", dim=5).to_batches()), "other/model", 4
    ),  # vectors of the wrong size
    "versions": lambda store, record: store.versions(),
    "recover": lambda store, record: (
        store.ledger.begin_moves([Move(T0, record.id, "warm", "cold", "test")]) or store.recovery.recover()
    ),
}


@pytest.mark.parametrize("operation", STORE_CALLS.values(), ids=list(STORE_CALLS))
def test_every_store_read_and_write_maps_a_backend_error_to_a_storage_error_naming_the_table(
    tmp_path: Path, operation: Callable[[Store, Record], Any]
) -> None:
    folder = tmp_path / "ns"
    ledger = Ledger(folder / "ledger.sqlite")
    store = Store(folder, "test/dim-4", 4, ledger)
    try:
        store.add([_row("0123456789ab"), _row("00000000000a")])
        record = store.get(["0123456789ab"])["0123456789ab"]
        store.move([Move(T0, "00000000000a", "warm", "cold", "test")])
        store.compact()
        reopened = Store(folder, "test/dim-4", 4, ledger)  # nothing read yet: the warm tier is not in memory
        for name in ("warm", "cold"):
            shutil.rmtree(folder / "lance" / f"{name}.lance")

        with pytest.raises(StorageError) as failed:
            operation(reopened, record)

        assert_storage_error_naming(
            failed, "warm" if "the warm table" in str(failed.value) else "cold", folder / "lance"
        )
    finally:
        store.close()
        ledger.close()


# the disk full


def write_past_the_limit(folder: str, cache: str, limit: int, results: Any) -> None:
    """In its own process: no file may grow past `limit` bytes (writes get EFBIG); try to store a large batch."""
    embedder = FastEmbedder(cache_dir=Path(cache))
    embedder.load()
    memory = Memory(Path(folder), embedder)
    letters = random.Random(7).choices("abcdefghijklmnopqrstuvwxyz", k=280_000)  # incompressible, unlike prose
    words = [" ".join("".join(letters[j : j + 7]) for j in range(i * 7000, i * 7000 + 7000, 7)) for i in range(40)]
    batch = [MemoryIn(content=f"Imported page {i}: {text}"[:8000]) for i, text in enumerate(words)]
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    try:
        memory.remember(batch, T0)
        results.put(("stored", ""))
    except MemtiersError as exc:
        results.put((type(exc).__name__, str(exc)))
    except BaseException as exc:  # reported, so the test can say what was not mapped
        results.put((f"unmapped {type(exc).__name__}", str(exc)))
    finally:
        memory.close()


def test_a_write_past_a_file_size_limit_is_a_readable_error_and_every_memory_stored_before_is_kept(
    tmp_path: Path, model_cache: Path, embedder: FastEmbedder
) -> None:
    folder = tmp_path / "ns"
    stored = seeded(folder, embedder)
    biggest = max(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    child = context.Process(
        target=write_past_the_limit, args=(str(folder), str(model_cache), max(biggest * 2, 128 * 1024), results)
    )
    child.start()
    kind, message = results.get(timeout=300)
    child.join(timeout=60)

    assert child.exitcode == 0
    assert kind == "StorageError", (kind, message)
    assert "File too large" in message or "too large" in message.lower(), message
    assert "free space and retry" in message
    assert count_rows(folder) == len(stored)
    assert_all_there(folder, embedder, stored)


def test_compaction_never_deletes_the_files_of_a_write_that_holds_the_write_lock(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    """A sweep compacts outside the write lock, so remember is not held up by it; but dropping the files no
    version lists (`delete_unverified`) would also drop those a write has made and not yet committed. That step
    waits for the write lock: here a writer holding it has put such a file, as LanceDB does before it commits."""
    folder = tmp_path / "ns"
    stored = seeded(folder, embedder)
    memory = Memory(folder, embedder)
    try:
        memory.store.warm_table.add(memory.store.warm_table.get(list(stored)).slice(0, 0))  # open for writes
        data = folder / "lance" / "warm.lance" / "data"
        uncommitted = data / "0000-being-written.lance"
        holding, release = threading.Event(), threading.Event()

        def writer() -> None:
            with memory.parts.locked():
                shutil.copyfile(next(data.glob("*.lance")), uncommitted)  # a data file no version lists yet
                holding.set()
                release.wait(30)
                uncommitted.unlink()  # the write gives up: nothing of it was committed

        held = threading.Thread(target=writer)
        held.start()
        assert holding.wait(30)
        compacting = threading.Thread(target=memory.store.compact)
        compacting.start()
        compacting.join(2.0)
        assert uncommitted.exists()  # the compaction waits for the write
        release.set()
        held.join(30)
        compacting.join(60)
        assert not compacting.is_alive()
    finally:
        memory.close()
    assert_all_there(folder, embedder, stored)
