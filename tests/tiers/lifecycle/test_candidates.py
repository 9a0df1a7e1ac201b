"""Profile candidates proposed by two processes at once are all kept: each change is one ledger transaction."""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

from tests.helpers import T0
from tiers.memory import Memory
from tiers.model.embedder import FastEmbedder
from tiers.records import MemoryIn

EACH = 40


def proposer(folder: str, cache: str, rids: list[str], start: Any) -> None:
    """One process: wait for the other, then propose each record for the profile, one at a time."""
    memory = Memory(Path(folder), FastEmbedder(cache_dir=Path(cache)))
    try:
        start.wait(timeout=120)
        for rid in rids:
            memory.parts.candidates.add(rid, None, "profile full", value=rid)
    finally:
        memory.close()


def test_two_processes_proposing_at_once_lose_no_candidate(
    tmp_path: Path, model_cache: Path, embedder: FastEmbedder
) -> None:
    folder = tmp_path / "ns"
    memory = Memory(folder, embedder)
    try:
        stored = memory.remember([MemoryIn(content=f"standing fact number {i}") for i in range(2 * EACH)], T0)
    finally:
        memory.close()
    rids = [s.id for s in stored]
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(2)
    workers = [
        context.Process(target=proposer, args=(str(folder), str(model_cache), half, start))
        for half in (rids[:EACH], rids[EACH:])
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=300)
        assert worker.exitcode == 0

    memory = Memory(folder, embedder)
    try:
        listed = memory.candidates()
        assert sorted(c["id"] for c in listed) == sorted(rids)
        assert all(c["value"] == c["id"] and c["reason"] == "profile full" for c in listed)
        memory.parts.candidates.drop(rids[:3])
        assert sorted(c["id"] for c in memory.candidates()) == sorted(rids[3:])
    finally:
        memory.close()
