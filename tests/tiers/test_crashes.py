"""SIGKILL of a real process during remember, compaction and a sweep, and two sweeps at once, lose nothing.

Each child (tests/tiers/crashing.py) notes every step that returned; after the kill the folder is
reopened and checked: every acknowledged memory there with its text, no id or text twice, each record
in exactly one tier table, no move left under way, the move log's last word on each record its tier,
recall finding what was acknowledged, and a new memory stored. Kills land after a random short delay,
a few rounds each, every wait bounded.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import lancedb
import pytest

from tests.tiers.crashing import T0, note
from tiers.memory import Memory
from tiers.model.embedder import FastEmbedder
from tiers.records import MemoryIn, Tier

REPO = Path(__file__).resolve().parents[2]
WAIT = 90.0  # seconds any child may take to reach a step (a process start loads lancedb and the model: ~4 s)
STALE = timedelta(days=50)  # a note never used is below the demotion line after ~46.5 days


@dataclass
class Child:
    process: subprocess.Popen[str]
    status: Path
    errors: Path

    def lines(self) -> list[str]:
        return self.status.read_text(encoding="utf-8").splitlines() if self.status.exists() else []

    def wait_for(self, done: Callable[[list[str]], bool]) -> list[str]:
        """Poll the status file (every 5 ms) until `done` holds; the child ending first is a failure."""
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            lines = self.lines()
            if done(lines):
                return lines
            if self.process.poll() is not None:
                raise AssertionError(f"child ended ({self.process.returncode}): {self.errors.read_text()[-3000:]}")
            time.sleep(0.005)
        raise AssertionError(f"child took more than {WAIT} s: {self.lines()[-3:]}")

    def kill(self) -> list[str]:
        """SIGKILL now; what it had acknowledged by then."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)
        return self.lines()


@contextmanager
def child(tmp_path: Path, mode: str, folder: Path, *args: str) -> Iterator[Child]:
    name = f"{mode}-{len(list(tmp_path.glob('*.stderr')))}"  # the stderr file is made at once
    status, errors = tmp_path / f"{name}.status", tmp_path / f"{name}.stderr"
    with open(errors, "w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.tiers.crashing", mode, str(folder), str(status), *args],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            text=True,
        )
    try:
        yield Child(process, status, errors)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)
        if process.stdin:
            process.stdin.close()


def said_swept(lines: list[str]) -> bool:
    return any(line.startswith("swept") for line in lines)


def acks(lines: list[str]) -> dict[str, str]:
    return {line.split(" ", 2)[1]: line.split(" ", 2)[2] for line in lines if line.startswith("ack ")}


def tier_rows(folder: Path) -> dict[str, list[tuple[str, str]]]:
    """(id, content) of every row of each tier table, read with LanceDB directly, not through memtiers."""
    db = lancedb.connect(folder / "lance")
    names = json.loads((folder / "store.json").read_text()).get("tables", {})
    out: dict[str, list[tuple[str, str]]] = {}
    for tier in ("warm", "cold"):
        table = db.open_table(names.get(tier, tier))
        rows = table.to_arrow().select(["id", "content"]).to_pylist()
        out[tier] = [(r["id"], r["content"]) for r in rows]
    return out


def assert_whole(folder: Path, embedder: FastEmbedder, acked: dict[str, str]) -> dict[str, str]:
    """Reopen the folder after a crash and check everything a user could lose or see doubled; the tier of each id."""
    memory = Memory(folder, embedder)
    try:
        memory.store.count()  # opened for writing: a move a crash interrupted is finished or dropped here
        rows = tier_rows(folder)
        every = rows["warm"] + rows["cold"]
        assert [rid for rid, n in Counter(rid for rid, _ in every).items() if n > 1] == []  # one row, one tier
        assert [text for text, n in Counter(text for _, text in every).items() if n > 1] == []
        tier_of = {rid: tier for tier in rows for rid, _ in rows[tier]}
        content_of = dict(every)
        assert {rid: content_of.get(rid) for rid in acked} == acked  # every acknowledged memory, with its text
        assert memory.ledger.pending_moves() == []
        last_move: dict[str, str] = {}
        for move in memory.ledger.all_moves():
            if not move.rid.startswith("hot:"):
                last_move[move.rid] = move.dst
        disagree = {rid: (dst, tier_of.get(rid)) for rid, dst in last_move.items() if tier_of.get(rid) != dst}
        assert disagree == {}, disagree
        unlogged = {rid for rid in tier_of if rid not in last_move}
        assert {tier_of[rid] for rid in unlogged} <= {"warm"}  # a row written just before the kill, never logged
        for rid in random.sample(sorted(acked), min(3, len(acked))):
            hits = memory.recall(acked[rid], T0, limit=5, tiers=[Tier.WARM, Tier.COLD]).hits
            assert rid in [h.record.id for h in hits], acked[rid]
        [after] = memory.remember([MemoryIn(content=f"Stored after crash {len(acked)} and found")], T0)
        assert memory.get(after.id).tier is Tier.WARM
        return tier_of
    finally:
        memory.close()


def seed(folder: Path, embedder: FastEmbedder, contents: list[str], days: list[int]) -> dict[str, str]:
    memory = Memory(folder, embedder)
    try:
        stored = {}
        for day in sorted(set(days)):
            batch = [c for c, d in zip(contents, days, strict=True) if d == day]
            done = memory.remember([MemoryIn(content=c) for c in batch], T0 + timedelta(days=day))
            stored.update({s.id: c for s, c in zip(done, batch, strict=True)})
        return stored
    finally:
        memory.close()


def test_sigkill_during_single_remembers_loses_no_acknowledged_memory_and_doubles_none(
    tmp_path: Path, model_cache: Path, embedder: FastEmbedder
) -> None:
    folder = tmp_path / "ns"
    chance = random.Random(11)
    acked: dict[str, str] = {}
    for round_ in range(2):
        with child(tmp_path, "remember", folder, str(model_cache), str(round_)) as running:
            target = chance.randint(2, 12)  # compaction runs every 4 rows: some kills land in one
            running.wait_for(lambda lines, n=target: len(acks(lines)) >= n)
            time.sleep(chance.uniform(0, 0.05))  # somewhere inside the next remember
            got = acks(running.kill())
        assert len(got) >= target
        acked |= got
        assert_whole(folder, embedder, acked)
    assert len(acked) >= 4


def test_sigkill_during_compaction_loses_nothing_and_the_store_opens(
    tmp_path: Path, model_cache: Path, embedder: FastEmbedder
) -> None:
    folder = tmp_path / "ns"
    acked = seed(folder, embedder, [note(-1, i) for i in range(40)], [0] * 40)
    memory = Memory(folder, embedder)
    memory.sweep(T0 + STALE)  # a cold table with its indexes, so compaction has both tiers to do
    memory.close()
    chance = random.Random(5)
    inside = 0
    for round_ in range(3):  # two, or three when neither kill landed inside a compaction
        with child(tmp_path, "compact", folder, str(model_cache), str(round_)) as running:
            nth = chance.randint(1, 2)
            running.wait_for(lambda lines, n=nth: sum(line.startswith("compacting") for line in lines) >= n)
            time.sleep(chance.uniform(0, 0.02))  # a compaction here takes 0.03 to 0.1 s
            lines = running.kill()
        inside += lines[-1].startswith("compacting")  # killed before it said the compaction ended
        acked |= acks(lines)
        tiers = assert_whole(folder, embedder, acked)
        assert sum(t == "cold" for t in tiers.values()) == 40
        if round_ >= 1 and inside:
            break
    assert inside >= 1


def test_sigkill_during_a_sweep_leaves_each_record_in_one_tier_and_the_log_agreeing(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    folder = tmp_path / "ns"
    slices = 3
    days = [5 * (i // 60) for i in range(60 * slices)]  # a slice of 60 notes goes stale each round
    acked = seed(folder, embedder, [note(-2, i) for i in range(len(days))], days)
    chance = random.Random(3)
    inside = 0
    for round_ in range(slices):  # two, or three when neither kill landed inside the sweep
        at = (T0 + STALE + timedelta(days=5 * round_)).isoformat()
        with child(tmp_path, "sweep", folder, at) as running:
            running.wait_for(lambda lines: "sweeping" in lines)
            time.sleep(chance.uniform(0, 0.06))  # a sweep of 60 records takes about 0.05 to 0.1 s here
            lines = running.kill()
        inside += lines[-1] == "sweeping"
        tiers = assert_whole(folder, embedder, acked)
        assert sum(tiers[rid] == "cold" for rid in acked) <= 60 * (round_ + 1)  # only the slices gone stale
        if round_ >= 1 and inside:
            break
    assert inside >= 1
    memory = Memory(folder, embedder)
    try:  # a later sweep finishes the job (late enough for the notes the checks recalled too): all cold, none twice
        memory.sweep(T0 + STALE + timedelta(days=90))
    finally:
        memory.close()
    tiers = assert_whole(folder, embedder, acked)
    assert {tiers[rid] for rid in acked} == {"cold"}


def test_two_processes_sweeping_at_once_move_each_record_once_and_lose_none(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    folder = tmp_path / "ns"
    acked = seed(folder, embedder, [note(-3, i) for i in range(100)], [0] * 100)
    at = (T0 + STALE).isoformat()
    with child(tmp_path, "race", folder, at) as one, child(tmp_path, "race", folder, at) as two:
        for running in (one, two):
            running.wait_for(lambda lines: "ready" in lines)
        for running in (one, two):
            assert running.process.stdin is not None
            running.process.stdin.write("go\n")
            running.process.stdin.flush()
        swept = [int(running.wait_for(said_swept)[-1].split()[1]) for running in (one, two)]
        for running in (one, two):
            assert running.process.wait(timeout=WAIT) == 0, running.errors.read_text()

    assert sorted(swept) == [0, 100]  # the second found, under the lock, nothing left to move
    tiers = assert_whole(folder, embedder, acked)
    assert {tiers[rid] for rid in acked} == {"cold"}
    memory = Memory(folder, embedder)
    try:
        to_cold = Counter(m.rid for m in memory.ledger.all_moves() if (m.src, m.dst) == ("warm", "cold"))
    finally:
        memory.close()
    assert set(to_cold) == set(acked) and set(to_cold.values()) == {1}


@pytest.fixture(autouse=True)
def _repeatable() -> Iterator[None]:
    """The recall samples in assert_whole are drawn the same way on every run."""
    state = random.getstate()
    random.seed(1)
    yield
    random.setstate(state)


def test_a_write_killed_before_its_feed_entry_still_reaches_every_open_index(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    """A supersede whose table write landed and whose change feed entry never did (the writer killed between
    them) reaches the index of a process that was open all along: at its next sweep, or at its next write."""
    folder = tmp_path / "ns"
    memory = Memory(folder, embedder)
    try:
        said = memory.remember(
            [
                MemoryIn(content="The team's database is MySQL"),
                MemoryIn(content="The team moved its database to Postgres"),
                MemoryIn(content="The deploy window is Tuesday"),
                MemoryIn(content="The deploy window moved to Thursday"),
            ],
            T0,
        )
        old_db, new_db, old_window, new_window = (s.id for s in said)
        assert memory.get(old_db).superseded_by is None  # this process's warm index is loaded
        for old, new, recovered_by in ((old_db, new_db, "sweep"), (old_window, new_window, "write")):
            with child(tmp_path, "cut", folder, old, new) as cut:
                cut.process.wait(timeout=WAIT)
                assert cut.process.returncode == -signal.SIGKILL, cut.errors.read_text()[-2000:]
                assert cut.lines() == ["writing"]
            assert dict(superseded_in_table(folder))[old] == new  # the table write landed
            if recovered_by == "sweep":
                memory.sweep(T0 + timedelta(hours=1))  # the timer of a server that only reads
            else:
                memory.remember([MemoryIn(content="Standup moved to 9:30")], T0 + timedelta(hours=2))
            assert memory.get(old).superseded_by == new, recovered_by
            hits = memory.recall("which database does the team use" if old == old_db else "deploy window", T0)
            assert f"(superseded by {new}" in hits.text
    finally:
        memory.close()
    reopened = Memory(folder, embedder)
    try:
        assert reopened.get(old_db).superseded_by == new_db
        assert reopened.get(old_window).superseded_by == new_window
    finally:
        reopened.close()


def superseded_in_table(folder: Path) -> list[tuple[str, str | None]]:
    """(id, superseded_by) of every warm row, read with LanceDB directly, not through memtiers."""
    db = lancedb.connect(folder / "lance")
    name = json.loads((folder / "store.json").read_text()).get("tables", {}).get("warm", "warm")
    rows = db.open_table(name).to_arrow().select(["id", "superseded_by"]).to_pylist()
    return [(row["id"], row["superseded_by"]) for row in rows]


def test_a_write_killed_before_its_feed_entry_reaches_the_index_a_restart_opens_from_its_saved_copy(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    """From 1,000 warm records a full read saves the index for the next process, which opens it and catches up
    from the feed: a supersede killed before its feed entry would stay unseen there for good (the copy still adds
    up to the table), so opening the store feeds what such a write left."""
    folder = tmp_path / "ns"
    memory = Memory(folder, embedder)
    try:
        for start in range(0, 1_000, 250):
            memory.remember([MemoryIn(content=note(7, i)) for i in range(start, start + 250)], T0)
        old, new = (
            s.id
            for s in memory.remember(
                [MemoryIn(content="The office is in Leeds"), MemoryIn(content="The office moved to York")], T0
            )
        )
    finally:
        memory.close()
    reader = Memory(folder, embedder)  # a full read of 1,002 warm records: saves the index
    try:
        assert reader.get(old).superseded_by is None
    finally:
        reader.close()
    assert (folder / "warm-index").exists()
    with child(tmp_path, "cut", folder, old, new) as cut:
        cut.process.wait(timeout=WAIT)
        assert cut.process.returncode == -signal.SIGKILL, cut.errors.read_text()[-2000:]
    restarted = Memory(folder, embedder)
    try:
        assert restarted.get(old).superseded_by == new
        assert restarted.store.count(Tier.WARM) == 1_002
    finally:
        restarted.close()
