"""Moves between tiers: the sweep decides and applies under one lock, forget leaves no file holding the text,
promote brings a cold record back warm and the timer sends it down again."""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import T0, count_rows, files_containing
from tiers.errors import InvalidInput
from tiers.memory import Memory
from tiers.model.embedder import FastEmbedder
from tiers.records import Kind, MemoryIn, Tier

LATER = T0 + timedelta(days=60)


def remember(memory: Memory, content: str, **fields: object) -> str:
    [stored] = memory.remember([MemoryIn(content=content, **fields)], T0)  # type: ignore[arg-type]
    return stored.id


def test_a_record_recalled_by_another_memory_while_the_sweep_waits_for_the_lock_is_not_sent_cold(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    folder = tmp_path / "ns"
    sweeper, other = Memory(folder, embedder), Memory(folder, embedder)
    try:
        kept = remember(sweeper, "the canoe paddles hang in the shed")
        stale = remember(sweeper, "the lunch special was lentil soup")
        other.store.count()
        waiting = threading.Event()
        locked = sweeper.parts.locked

        @contextmanager
        def announced() -> Iterator[None]:
            waiting.set()  # the sweep asks for the lock: anything it read before this is stale
            with locked():
                yield

        sweeper.parts.locked = announced  # type: ignore[method-assign]
        reports: list[Any] = []
        with other.parts.locked():
            sweeping = threading.Thread(target=lambda: reports.append(sweeper.sweep(LATER)))
            sweeping.start()
            assert waiting.wait(timeout=30)
            found = other.recall("where do the canoe paddles hang", LATER, limit=1)
            assert [h.record.id for h in found.hits] == [kept]
        sweeping.join(timeout=60)

        [report] = reports
        assert [(m.rid, m.dst) for m in report.moves] == [(stale, Tier.COLD)]
        assert sweeper.get(kept).tier is Tier.WARM
        assert sweeper.get(stale).tier is Tier.COLD
    finally:
        sweeper.close()
        other.close()


def sweeper_process(folder: str, cache: str, start: Any, results: Any) -> None:
    """One process: open the folder, wait for the other, sweep as of LATER, report the moves it made."""
    memory = Memory(Path(folder), FastEmbedder(cache_dir=Path(cache)))  # a sweep embeds nothing: no model load
    try:
        memory.store.count()
        start.wait(timeout=120)
        report = memory.sweep(LATER)
        results.put([(m.rid, m.src.value, m.dst.value) for m in report.moves])
    finally:
        memory.close()


def test_two_processes_sweeping_at_once_move_each_record_once_and_the_log_agrees_with_the_tiers(
    tmp_path: Path, embedder: FastEmbedder, model_cache: Path
) -> None:
    folder = tmp_path / "ns"
    memory = Memory(folder, embedder)
    notes = [
        s.id for s in memory.remember([MemoryIn(content=f"passing note {i} about the weather") for i in range(30)], T0)
    ]
    facts = [s.id for s in memory.remember([MemoryIn(content=f"I am allergic to {x}") for x in ("bees", "kiwi")], T0)]
    memory.close()

    context = multiprocessing.get_context("spawn")
    start = context.Barrier(2)
    results = context.Queue()
    workers = [
        context.Process(target=sweeper_process, args=(str(folder), str(model_cache), start, results)) for _ in range(2)
    ]
    for worker in workers:
        worker.start()
    made = [results.get(timeout=180) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0

    moved = sorted(rid for moves in made for rid, _, _ in moves)
    assert moved == sorted(notes)  # each note moved by exactly one of the two
    assert (count_rows(folder, "warm"), count_rows(folder, "cold")) == (len(facts), len(notes))
    after = Memory(folder, embedder)
    try:
        records = after.store.get(notes + facts)
        assert set(records) == set(notes + facts)
        for rid, record in records.items():
            log = [(m.src, m.dst) for m in reversed(after.moves(rid))]
            assert log[0] == ("new", "warm")
            assert log[-1][1] == record.tier.value
            assert log.count(("warm", "cold")) == (1 if rid in notes else 0)
        assert after.ledger.pending_moves() == []
    finally:
        after.close()


@pytest.mark.parametrize("copies", [False, True], ids=["", "with saved copies"])
@pytest.mark.parametrize("path", ["warm", "cold", "cold and back"])
def test_forget_leaves_no_file_in_the_namespace_holding_a_word_of_the_text_while_other_memories_stay(
    memory: Memory, path: str, copies: bool, embedder: FastEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    if copies:  # every full read of an index saves its copy (from 1,000 rows in use), text included
        from tiers.index import synced as synced_module

        monkeypatch.setattr(synced_module, "SAVED_FROM", 1)
    folder = memory.folder
    # Durable facts that stay warm, enough that the two notes leaving are under a tenth of the warm file's rows.
    allergies = [MemoryIn(content=f"I am allergic to the pollen of tree species {i}") for i in range(24)]
    notes = [
        MemoryIn(content="the Pemberley estate cottage is rented until June"),
        MemoryIn(content="the Zorblax keycard opens the north gate of the depot"),
    ]
    *facts, kept, gone = [s.id for s in memory.remember([*allergies, *notes], T0)]  # one write: one data file
    if copies:  # a process that opens the store now reads the warm tier whole, and saves its copy
        memory.close()
        memory = Memory(folder, embedder)
    memory.recall("which keycard opens the north gate", T0)  # counters and caches touched too
    if path != "warm":
        memory.sweep(LATER + timedelta(days=60))  # notes go cold, the allergies stay warm beside where they were
        assert memory.get(gone).tier is Tier.COLD
    if path == "cold and back":
        memory.promote(gone, LATER, to=Tier.WARM)
        assert memory.get(gone).tier is Tier.WARM
    assert files_containing(folder, "zorblax")  # the text is on disk before: the grep can see it
    assert (folder / "warm-index" / "current").exists() is copies  # saved by the first recall's full read

    forgotten = memory.forget(gone, LATER)

    assert forgotten.tier is (Tier.COLD if path == "cold" else Tier.WARM)
    assert files_containing(folder, "zorblax") == []
    assert files_containing(folder, "keycard") == []
    assert files_containing(folder, "pemberley")
    assert memory.get(kept).content.startswith("the Pemberley")
    assert [memory.get(f).tier for f in facts] == [Tier.WARM] * len(facts)
    assert "Zorblax" not in memory.recall("which keycard opens the north gate", LATER).text
    assert "Pemberley" in memory.recall("who rents the Pemberley cottage", LATER).text
    assert memory.moves(gone)[0].dst == "gone"
    if copies:
        assert (folder / "warm-index").exists() is False  # the forget removed the copies
        other = Memory(folder, embedder)  # a new process reads both tiers whole and saves new copies
        try:
            assert "Pemberley" in other.recall("who rents the Pemberley cottage", LATER).text
            assert (folder / "warm-index" / "current").exists()
            assert path == "warm" or (folder / "cold-index" / "current").exists()
            assert files_containing(folder, "zorblax") == []
        finally:
            other.close()
            memory.close()


def test_recall_still_answers_after_the_episode_neighbour_of_a_cold_record_is_forgotten(memory: Memory) -> None:
    turns = ["we booked the ferry to Orkney", "the cabin number is 14", "we land in Kirkwall at noon"]
    ids = [s.id for s in memory.remember([MemoryIn(content=t, source="chat:3") for t in turns], T0)]
    memory.sweep(LATER)
    assert [memory.get(rid).tier for rid in ids] == [Tier.COLD] * 3

    memory.forget(ids[1], LATER)

    found = memory.recall("when do we land in Kirkwall", LATER)
    assert found.hits[0].record.id == ids[2]
    assert "cabin number" not in found.text


def test_forgetting_the_history_record_of_a_replaced_profile_value_leaves_the_old_value_in_no_file(
    memory: Memory,
) -> None:
    folder = memory.folder
    memory.set_profile({"car": "a Zorblax Roadster in teal"}, T0)
    change = memory.set_profile({"car": "a grey Volvo estate"}, T0 + timedelta(days=3))
    [history] = change.demoted
    assert memory.get(history).kind is Kind.HISTORY
    assert files_containing(folder, "zorblax")

    memory.forget(history, T0 + timedelta(days=4))

    assert files_containing(folder, "zorblax") == []
    assert files_containing(folder, "volvo")
    assert memory.profile()["car"].value == "a grey Volvo estate"
    assert [m.dst for m in memory.moves("hot:car")] == ["hot", "hot"]  # that it was set stays, not to what


def test_promote_brings_a_cold_record_back_warm_with_every_field_and_the_timer_sends_it_cold_again(
    memory: Memory,
) -> None:
    rid = remember(memory, "the ladder is on loan to the neighbours", tags=["house"], source="chat:9")
    as_stored = memory.get(rid)
    memory.sweep(LATER)
    assert memory.get(rid).tier is Tier.COLD
    assert "ladder" not in memory.recall("where is the ladder", LATER, tiers=[Tier.WARM]).text

    done = memory.promote(rid, LATER + timedelta(days=1), to=Tier.WARM)

    assert (done.outcome, done.src, done.tier) == ("promoted", Tier.COLD, Tier.WARM)
    assert memory.get(rid) == as_stored
    assert "ladder" in memory.recall("where is the ladder", LATER + timedelta(days=1), tiers=[Tier.WARM]).text
    assert memory.promote(rid, LATER + timedelta(days=1), to=Tier.WARM).outcome == "already_warm"

    memory.sweep(LATER + timedelta(days=200))

    assert memory.get(rid).tier is Tier.COLD
    assert [(m.src, m.dst, m.rule) for m in reversed(memory.moves(rid))] == [
        ("new", "warm", "remember:note"),
        ("warm", "cold", "heat"),
        ("cold", "warm", "promote"),
        ("warm", "cold", "heat"),
    ]
    assert (count_rows(memory.folder, "warm"), count_rows(memory.folder, "cold")) == (0, 1)


def test_a_sweep_moves_in_batches_and_reports_its_progress_after_each(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tiers.namespace.moves

    monkeypatch.setattr(tiers.namespace.moves, "MOVE_BATCH", 2)
    memory.remember([MemoryIn(content=f"passing remark number {i}", kind=Kind.NOTE) for i in range(5)], T0)
    seen: list[tuple[int, int]] = []

    report = memory.sweep(T0 + timedelta(days=120), progress=lambda done, total: seen.append((done, total)))

    assert len(report.moves) == 5
    assert seen == [(2, 5), (4, 5), (5, 5)]
    assert count_rows(memory.folder, "cold") == 5


def test_a_record_demoted_by_hand_goes_cold_is_still_found_and_undo_brings_it_back(memory: Memory) -> None:
    rid = remember(memory, "the spare key is under the blue flowerpot")

    demoted = memory.demote(rid, T0)
    assert (demoted.outcome, memory.get(rid).tier) == ("demoted", Tier.COLD)
    assert memory.demote(rid, T0).outcome == "already_cold"
    assert rid in [h.record.id for h in memory.rank("where is the spare key?", 5, [Tier.COLD])]

    undone = memory.undo(rid, LATER)

    assert (undone.tier, undone.changes, undone.undid) == (Tier.WARM, ("cold back to warm",), "demote")
    assert [(m.src, m.dst, m.rule) for m in memory.moves(rid, 2)] == [
        ("cold", "warm", "undo"),
        ("warm", "cold", "demote"),
    ]


def test_undoing_a_promotion_from_cold_takes_the_entry_out_of_the_profile_and_the_record_back_to_cold(
    memory: Memory,
) -> None:
    rid = remember(memory, "I am allergic to peanuts")
    memory.demote(rid, T0)
    memory.promote(rid, LATER, Tier.HOT, "diet.allergy")
    assert "diet.allergy" in memory.profile()

    undone = memory.undo(rid, LATER + timedelta(hours=1))

    assert "diet.allergy" not in memory.profile()
    assert memory.get(rid).tier is Tier.COLD
    assert set(undone.changes) == {"diet.allergy out of the profile", "warm back to cold"}
    assert any(m.rule == "undo" and m.src == "hot" for m in memory.moves("diet.allergy", 10))


def test_a_record_never_moved_has_nothing_to_undo(memory: Memory) -> None:
    rid = remember(memory, "the bus leaves at nine")  # its one step, new -> warm, has no undo

    with pytest.raises(InvalidInput, match="has no undo"):
        memory.undo(rid, LATER)
