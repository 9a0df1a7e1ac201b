"""Two processes writing to one data folder at once lose nothing and store a shared memory once; waits are bounded."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import T0, count_rows
from tiers.errors import LockTimeout, StorageError
from tiers.memory import Memory, MemorySettings
from tiers.model.embedder import FastEmbedder
from tiers.records import MemoryIn
from tiers.storage.locking import file_lock, shared_lock

EACH = 15
SHARED = [f"Shared fact {i}: the release checklist lives in the ops wiki, page {i}" for i in range(5)]


def writer(folder: str, cache: str, name: str, start: Any, results: Any) -> None:
    """One process: load the model, wait for the other, then remember one memory at a time."""
    embedder = FastEmbedder(cache_dir=Path(cache))
    embedder.load()
    memory = Memory(Path(folder), embedder)
    done: list[tuple[str, str, str | None]] = []
    try:
        start.wait(timeout=120)
        for i in range(EACH):
            contents = [f"{name} writes its own note number {i}"]
            if i % 3 == 0:
                contents.append(SHARED[i // 3])
            for content in contents:
                [stored] = memory.remember([MemoryIn(content=content)], T0 + timedelta(seconds=i))
                done.append((content, stored.id, stored.duplicate_of))
    finally:
        memory.close()
        results.put((name, done))


def test_two_processes_remembering_at_once_lose_nothing_and_dedupe_across_processes(
    tmp_path: Path, model_cache: Path, embedder: FastEmbedder
) -> None:
    folder = tmp_path / "ns"
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(2)
    results = context.Queue()
    workers = [
        context.Process(target=writer, args=(str(folder), str(model_cache), name, start, results))
        for name in ("alpha", "beta")
    ]
    for worker in workers:
        worker.start()
    reports = dict(results.get(timeout=300) for _ in workers)
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0

    assert sorted(reports) == ["alpha", "beta"]
    assert [len(done) for done in reports.values()] == [EACH + len(SHARED)] * 2
    assert count_rows(folder) == 2 * EACH + len(SHARED)
    shared_ids = {
        content: {rid for done in reports.values() for c, rid, _ in done if c == content} for content in SHARED
    }
    assert all(len(ids) == 1 for ids in shared_ids.values()), shared_ids
    duplicates = [dup for done in reports.values() for c, _, dup in done if c in SHARED]
    assert sum(dup is not None for dup in duplicates) == len(SHARED)  # exactly one of each pair was a repeat
    every_id = {rid for done in reports.values() for _, rid, _ in done}
    memory = Memory(folder, embedder)
    try:
        found = memory.store.get(sorted(every_id))
        assert set(found) == every_id
        assert {r.content for r in found.values()} == {c for done in reports.values() for c, _, _ in done}
        assert sum(u.repeats for u in memory.ledger.usage().values()) == len(SHARED)
    finally:
        memory.close()


HOLDER = """
import sys
from pathlib import Path
from tiers.storage.locking import file_lock, shared_lock
path, mode = Path(sys.argv[1]), sys.argv[2]
lock = file_lock(path) if mode == "exclusive" else shared_lock(path, exclusive=mode == "compacting")
with lock:
    print("held", flush=True)
    sys.stdin.readline()
"""


@contextmanager
def held_by_another_process(path: Path, mode: str = "exclusive") -> Iterator[subprocess.Popen[str]]:
    """A second process that holds the lock on `path` until the block ends (it says when it holds it)."""
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path), mode], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as child:
        assert child.stdout is not None and child.stdin is not None
        try:
            assert child.stdout.readline() == "held\n"
            yield child
        finally:
            child.stdin.close()
            assert child.wait(timeout=30) == 0


def test_a_lock_held_by_another_process_is_given_up_after_the_timeout_naming_the_file_and_its_holder(
    tmp_path: Path,
) -> None:
    path = tmp_path / "write.lock"
    with held_by_another_process(path) as child:
        assert path.read_text() == f"{child.pid}\n"
        start = time.monotonic()
        with pytest.raises(LockTimeout) as waited, file_lock(path, timeout=0.3):
            pass
        took = time.monotonic() - start

    message = str(waited.value)
    assert 0.3 <= took < 5
    assert isinstance(waited.value, StorageError)
    assert f"waiting 0.3 s for the lock {path}, held by process {child.pid}" in message
    assert "tiers.storage.locking" in message  # what the holder runs, from /proc
    assert "retry in a moment, or stop that process" in message
    with file_lock(path, timeout=5):  # released by the holder: had at once, and the file names this process
        assert path.read_text().split() == [str(os.getpid())]
    assert path.read_text() == ""


def test_a_compaction_holding_the_read_lock_bounds_a_readers_wait(tmp_path: Path) -> None:
    path = tmp_path / "read.lock"
    with (
        held_by_another_process(path, "compacting") as child,
        pytest.raises(LockTimeout) as waited,
        shared_lock(path, timeout=0.2),
    ):
        pass
    assert f"held by process {child.pid}" in str(waited.value)
    with held_by_another_process(path, "reading"), shared_lock(path, timeout=0.2):
        pass  # readers share it


def test_remember_while_another_process_holds_the_write_lock_fails_readably_and_stores_nothing(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    folder = tmp_path / "ns"
    memory = Memory(folder, embedder, MemorySettings(lock_timeout=0.2))
    try:
        with held_by_another_process(folder / "write.lock"), pytest.raises(LockTimeout, match=r"write\.lock"):
            memory.remember([MemoryIn(content="The office closes at 6 on Fridays")], T0)
        assert count_rows(folder) == 0
        [stored] = memory.remember([MemoryIn(content="The office closes at 6 on Fridays")], T0)
        assert stored.duplicate_of is None
    finally:
        memory.close()
