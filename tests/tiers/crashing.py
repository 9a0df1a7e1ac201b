"""What the processes that tests/tiers/test_crashes.py kills run: `python -m tests.tiers.crashing MODE FOLDER ...`.

Each mode appends a line to a status file after every step that returned, flushed at once, so the
test knows what was acknowledged before it sent SIGKILL.
  remember STATUS CACHE ROUND  single remembers in a loop; "ack ID CONTENT" after each returns
  compact STATUS CACHE ROUND   remember two, then "compacting", a compaction of both tiers, "compacted"
  sweep STATUS AT              open (finishing what a crash left), "sweeping", one sweep as of AT, "swept N"
  race STATUS AT               as sweep, but first "ready", then wait for a line on stdin: two start at once
  cut STATUS RID BY            open, "writing", then mark RID superseded by BY and die by SIGKILL (sent to itself)
                               after the table write and before its change feed entry: the one window a kill
                               from outside cannot aim at
"""

from __future__ import annotations

import os
import signal
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TextIO

from tiers.memory import Memory, MemorySettings
from tiers.model.embedder import FastEmbedder
from tiers.records import MemoryIn, Tier

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)  # tests.helpers.T0, without importing mcp (2 s a process)
# Compaction every few writes, so a kill during `remember` also lands in the compactions it triggers.
COMPACT_EVERY = 4
WORDS = ["harbour", "lantern", "orchard", "quarry", "meadow", "glacier", "canyon", "delta"]


SYLLABLES = ["ba", "ko", "ri", "mu", "te", "ln", "sa", "vo", "xi", "pe", "du", "ga"]


def note(round_: int, i: int) -> str:
    """A note of its own: its code word is found by words even among hundreds of look-alikes."""
    code = "".join(SYLLABLES[(i // 12**k + round_ * 5) % 12] for k in range(3)) + SYLLABLES[(round_ + 3) % 12]
    return f"Round {round_} note {i}, code {code}: the {WORDS[i % len(WORDS)]} survey needs {i * 7 % 13} more readings"


def say(status: TextIO, line: str) -> None:
    status.write(line + "\n")
    status.flush()


def remember_loop(memory: Memory, status: TextIO, round_: int, compact: bool) -> None:
    for i in range(100_000):
        batch = [note(round_, 2 * i), note(round_, 2 * i + 1)] if compact else [note(round_, i)]
        for content in batch:
            [stored] = memory.remember([MemoryIn(content=content)], T0 + timedelta(minutes=i))
            say(status, f"ack {stored.id} {content}")
        if compact:
            say(status, f"compacting {i}")
            with memory.parts.locked():
                memory.store.compact()
            say(status, f"compacted {i}")


def main(argv: list[str]) -> None:
    mode, folder, status_path = argv[0], Path(argv[1]), argv[2]
    with open(status_path, "a", encoding="utf-8") as status:
        if mode in ("remember", "compact"):
            embedder = FastEmbedder(cache_dir=Path(argv[3]))
            embedder.load()
            memory = Memory(folder, embedder, MemorySettings(compact_every=COMPACT_EVERY))
            remember_loop(memory, status, int(argv[4]), compact=mode == "compact")
            return
        memory = Memory(folder, FastEmbedder())  # a sweep embeds nothing here: the model is never loaded
        memory.store.count(Tier.WARM)  # opened, and what a crash left half done finished, before "sweeping"
        if mode == "cut":
            record = memory.get(argv[3])
            memory.parts.ledger.changed = lambda *_, **__: os.kill(os.getpid(), signal.SIGKILL)  # type: ignore[method-assign]
            say(status, "writing")
            with memory.parts.locked():
                memory.store.update([record], {"superseded_by": argv[4], "superseded_at": T0})
            say(status, "not killed")
            return
        if mode == "race":
            say(status, "ready")
            sys.stdin.readline()
        say(status, "sweeping")
        report = memory.sweep(datetime.fromisoformat(argv[3]))
        say(status, f"swept {len(report.moves)}")
        memory.close()


if __name__ == "__main__":
    main(sys.argv[1:])
