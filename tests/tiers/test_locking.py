"""Two processes writing to one data folder at once lose nothing and store a shared memory once."""

from __future__ import annotations

import multiprocessing
from datetime import timedelta
from pathlib import Path
from typing import Any

from tests.helpers import T0, count_rows
from tiers.embedder import FastEmbedder
from tiers.memory import Memory
from tiers.records import MemoryIn

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
