"""store.json: a damaged one is a storage error naming it, left as it was; it is replaced whole, so a
concurrent reader never sees part of it."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from tests.helpers import T0
from tiers.errors import StorageError
from tiers.index.meta import read_meta, write_meta
from tiers.memory import Memory
from tiers.model.embedder import FastEmbedder
from tiers.records import MemoryIn


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
