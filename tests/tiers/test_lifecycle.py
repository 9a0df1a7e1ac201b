"""Tier moves end to end on a real LanceDB and the real model: each move logged, reversible, nothing lost."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from tiers.memory import Memory, MemorySettings
from tiers.model.embedder import FastEmbedder
from tiers.records import Kind, MemoryIn, Tier

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


def remember(memory: Memory, content: str, at: datetime = T0, **fields: object) -> str:
    return memory.remember([MemoryIn(content=content, **fields)], at)[0].id  # type: ignore[arg-type]


def test_a_new_memory_is_logged_as_new_to_warm_with_its_rule_and_heat(memory: Memory) -> None:
    rid = remember(memory, "Lunch with the design team went well")
    (move,) = memory.moves(rid)
    assert (move.src, move.dst, move.rule, move.heat, move.at) == ("new", "warm", "remember:note", 1.0, T0)


def test_chit_chat_goes_cold_by_heat_and_a_health_fact_said_once_never_does(memory: Memory) -> None:
    chat = remember(memory, "haha that meme was great")
    allergy = remember(memory, "I'm allergic to peanuts, even traces")
    report = memory.sweep(day(60))
    assert [(m.rid, m.dst, m.rule) for m in report.moves] == [(chat, Tier.COLD, "heat")]
    assert memory.get(chat).tier is Tier.COLD
    assert memory.moves(chat)[0].heat is not None and memory.moves(chat)[0].heat < 0.1
    memory.sweep(day(365))
    assert memory.get(allergy).tier is Tier.WARM
    assert memory.get(allergy).protected


def test_a_dry_run_shows_the_moves_and_changes_nothing(memory: Memory) -> None:
    chat = remember(memory, "the coffee machine is broken again")
    report = memory.sweep(day(60), dry_run=True)
    assert report.dry_run and [m.rid for m in report.moves] == [chat]
    assert memory.get(chat).tier is Tier.WARM
    assert [m.rule for m in memory.moves(chat)] == ["remember:note"]


def test_a_record_gone_cold_comes_back_warm_by_promote_and_both_moves_are_logged(memory: Memory) -> None:
    chat = remember(memory, "the office plants need watering on Mondays")
    memory.sweep(day(60))
    done = memory.promote(chat, day(61), to=Tier.WARM)
    assert (done.outcome, done.src, memory.get(chat).tier) == ("promoted", Tier.COLD, Tier.WARM)
    assert [(m.src, m.dst, m.rule) for m in memory.moves(chat)] == [
        ("cold", "warm", "promote"),
        ("warm", "cold", "heat"),
        ("new", "warm", "remember:note"),
    ]


def test_forget_after_sends_even_a_protected_fact_cold(memory: Memory) -> None:
    rid = remember(memory, "I prefer window seats on this trip", forget_after="P10D")
    moves = memory.sweep(day(11)).moves
    assert [(m.rid, m.rule) for m in moves] == [(rid, "forget_after")]


def test_used_cold_records_come_back_warm_by_heat(memory: Memory) -> None:
    rid = remember(memory, "The staging database lives on host db-stage-3")
    memory.sweep(day(60))
    assert memory.get(rid).tier is Tier.COLD
    for _ in range(3):
        hits = memory.recall("which host is the staging database on?", day(61), tiers=[Tier.COLD]).hits
        assert [h.record.id for h in hits] == [rid]
    report = memory.sweep(day(62))
    assert [(m.rid, m.dst, m.rule) for m in report.moves] == [(rid, Tier.WARM, "heat")]


def test_saying_a_cold_memory_again_brings_it_back_warm(memory: Memory) -> None:
    rid = remember(memory, "The staging database lives on host db-stage-3")
    memory.sweep(day(60))
    again = memory.remember([MemoryIn(content="the staging database lives on host  db-stage-3")], day(70))[0]
    assert again.duplicate_of == rid
    assert memory.get(rid).tier is Tier.WARM
    assert (memory.moves(rid)[0].src, memory.moves(rid)[0].rule) == ("cold", "repeated")


def test_a_replaced_value_keeps_the_old_one_as_superseded_history_with_its_source(memory: Memory) -> None:
    old = remember(memory, "I'm vegetarian", key="diet")
    new = remember(memory, "I'm vegan now", at=day(100), key="diet")
    entry = memory.profile()["diet"]
    assert (entry.value, entry.sources) == ("I'm vegan now", (new,))
    assert memory.get(old).superseded_by == new
    assert memory.get(old).superseded_at == day(100)
    history = [m for m in memory.moves("diet") if m.rule == "superseded"]
    assert len(history) == 1 and (history[0].src, history[0].dst) == ("hot", "warm")
    record = memory.get(history[0].rid)
    assert record.content == "diet: I'm vegetarian"
    assert record.kind is Kind.HISTORY
    assert record.metadata["profile_key"] == "diet" and record.metadata["sources"] == old
    assert record.superseded_by == new
    packed = memory.recall("am I vegetarian?", day(101), tiers=[Tier.WARM])
    assert f"(superseded by {new} on {day(100).date().isoformat()})" in packed.text


def test_a_superseded_preference_may_go_cold_while_the_current_one_stays_warm(memory: Memory) -> None:
    old = remember(memory, "I prefer vim for everything", key="editor")
    new = remember(memory, "I prefer VS Code these days", at=day(30), key="editor")
    memory.sweep(day(200))
    assert memory.get(old).tier is Tier.COLD
    assert memory.get(new).tier is Tier.WARM


def test_a_replacement_is_undone_by_promoting_the_history_record_back_to_hot(memory: Memory) -> None:
    old = remember(memory, "I'm vegetarian", key="diet")
    new = remember(memory, "I'm vegan now", at=day(10), key="diet")
    history = next(m.rid for m in memory.moves("diet") if m.rule == "superseded")
    done = memory.promote(history, day(11))
    assert (done.outcome, done.key) == ("promoted", "diet")
    entry = memory.profile()["diet"]
    assert entry.value == "I'm vegetarian"
    assert entry.sources == (history, old)
    assert memory.get(old).superseded_by is None
    assert memory.get(history).superseded_by is None
    assert memory.get(new).superseded_by == history
    assert memory.moves(history)[0].rule == "promote"


def test_an_unused_profile_entry_goes_warm_after_the_idle_time_unless_pinned(memory: Memory) -> None:
    source = remember(memory, "I work at Fjord Analytics as a data engineer", key="employer")
    memory.set_profile({"timezone": "Europe/Lisbon"}, T0, pin=["timezone"])
    report = memory.sweep(day(91))
    assert [(m.key, m.rule) for m in report.moves if m.src is Tier.HOT] == [("employer", "hot_idle")]
    assert set(memory.profile()) == {"timezone"}
    move = next(m for m in memory.moves("employer") if m.rule == "hot_idle")
    assert move.heat == pytest.approx(2 * 0.5 ** (91 / 14), abs=1e-4)  # one use: being set
    history = memory.get(move.rid)
    assert history.protected and history.metadata["sources"] == source
    memory.sweep(day(400))
    assert memory.get(history.id).tier is Tier.WARM
    memory.promote(history.id, day(401))
    assert memory.profile()["employer"].value == "I work at Fjord Analytics as a data engineer"


def test_a_used_profile_entry_is_not_idle(memory: Memory) -> None:
    remember(memory, "I live in Lisbon", key="city")
    memory.recall("where do I live?", day(80))
    assert not [m for m in memory.sweep(day(120)).moves if m.src is Tier.HOT]


def test_a_keyed_fact_that_does_not_fit_stays_a_visible_candidate(tmp_path: Path, embedder: FastEmbedder) -> None:
    memory = Memory(tmp_path / "ns", embedder, MemorySettings(cap_tokens=14))
    try:
        memory.set_profile({"name": "Ana Ruiz", "city": "Lisbon"}, T0)
        stored = memory.remember([MemoryIn(content="I'm allergic to shellfish", key="allergy")], T0)[0]
        assert stored.tier is Tier.WARM and stored.protected
        assert stored.note is not None and "candidate" in stored.note
        assert [(c["id"], c["key"], c["reason"]) for c in memory.candidates()] == [
            (stored.id, "allergy", "profile full")
        ]
        assert "allergy" not in memory.profile()
        memory.sweep(day(1))
        assert [c["id"] for c in memory.candidates()] == [stored.id]
        memory.set_profile({}, day(2), unset=["city"])
        memory.promote(stored.id, day(2))
        assert memory.profile()["allergy"].sources == (stored.id,)
        assert memory.candidates() == ()
    finally:
        memory.close()


def test_a_forgotten_candidate_is_no_longer_proposed(tmp_path: Path, embedder: FastEmbedder) -> None:
    memory = Memory(tmp_path / "ns", embedder, MemorySettings(cap_tokens=5))
    try:
        memory.set_profile({"name": "Ana Ruiz"}, T0)
        rid = remember(memory, "My daughter Lea was born in March", key="family.daughter")
        assert [c["id"] for c in memory.candidates()] == [rid]
        memory.forget(rid, day(1))
        assert memory.candidates() == ()
        assert (memory.moves(rid)[0].dst, memory.moves(rid)[0].rule) == ("gone", "forget")
    finally:
        memory.close()


def test_a_record_recalled_often_becomes_a_heat_candidate_until_promoted(memory: Memory) -> None:
    rid = remember(memory, "Deploys go through the release-train pipeline every Tuesday")
    remember(memory, "Coffee beans are in the left cupboard")
    for hour in range(5):
        memory.recall("how do deploys work?", T0 + timedelta(hours=hour + 1), limit=1)
    report = memory.sweep(day(1))
    assert [rid] == [r for r, _ in report.hot_candidates]
    assert [(c["id"], c["reason"]) for c in memory.candidates()] == [(rid, "heat")]
    memory.promote(rid, day(1), key="deploys")
    assert memory.candidates() == ()
    memory.sweep(day(2))
    assert memory.candidates() == ()


def test_a_records_log_shows_the_profile_moves_it_caused(memory: Memory) -> None:
    rid = remember(memory, "I'm vegetarian", key="diet")
    moves = memory.moves(rid)
    assert {(m.src, m.dst, m.key) for m in moves} == {("new", "warm", None), ("warm", "hot", "diet")}


def test_forget_is_the_only_delete_and_it_is_logged(memory: Memory) -> None:
    rid = remember(memory, "Old note about the printer")
    memory.sweep(day(400))
    assert memory.get(rid).tier is Tier.COLD
    done = memory.forget(rid, day(401))
    assert done.tier is Tier.COLD
    latest = memory.moves(rid)[0]
    assert (latest.src, latest.dst, latest.rule) == ("cold", "gone", "forget")


def test_recall_still_answers_after_forgetting_a_cold_record_whose_cold_neighbour_names_it(memory: Memory) -> None:
    gone = remember(memory, "The zeppelin hangar key hides under the blue doormat")
    kept = remember(memory, "The marmalade recipe needs Seville oranges and a long simmer")
    memory.sweep(day(60))
    memory.forget(gone, day(61))
    hits = memory.recall("zeppelin hangar key", day(61), tiers=[Tier.COLD]).hits
    assert [h.record.id for h in hits] == [kept]


class _HashEmbedder:
    """Random unit vectors seeded by the text: the subject below is storage, not meaning."""

    name = "test/hash"
    dim = 384

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        seeds = [int(hashlib.sha256(t.encode()).hexdigest()[:8], 16) for t in texts]
        vectors = np.stack([np.random.default_rng(s).standard_normal(self.dim) for s in seeds]).astype(np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_a_sweep_over_thousands_of_records_is_batched_and_fast(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "ns", _HashEmbedder())
    try:
        for batch in range(4):
            memory.remember([MemoryIn(content=f"note {batch}-{i} about the build") for i in range(1_000)], T0)
        versions = memory.stats()["lance_versions"]
        started = time.perf_counter()
        report = memory.sweep(day(60))
        elapsed = time.perf_counter() - started
        assert len(report.moves) == 4_000
        assert memory.stats()["cold"] == 4_000
        assert len(memory.moves(limit=10_000)) == 8_000  # 4,000 births and 4,000 moves: none lost
        # One update per destination, then a compaction: single-row updates would take minutes here.
        assert memory.stats()["lance_versions"] <= versions + 3
        assert elapsed < 20, elapsed
    finally:
        memory.close()


def test_a_value_that_comes_back_and_then_idles_is_one_protected_current_record(memory: Memory) -> None:
    memory.set_profile({"diet": "vegan"}, T0)
    memory.set_profile({"diet": "vegetarian"}, day(1))
    vegan = next(m.rid for m in memory.moves("diet") if m.rule == "superseded")
    assert memory.get(vegan).superseded_by == "profile:diet"
    memory.set_profile({"diet": "vegan"}, day(2))
    assert memory.get(vegan).superseded_by is None
    memory.sweep(day(2 + 91))
    idle = next(m for m in memory.moves("diet") if m.rule == "hot_idle")
    assert idle.rid == vegan
    assert memory.get(vegan).protected
    memory.sweep(day(500))
    assert memory.get(vegan).tier is Tier.WARM


def test_a_name_the_rules_found_is_pinned_so_it_never_idles_out(memory: Memory) -> None:
    remember(memory, "Hi, my name is Ana Ruiz")
    assert memory.profile()["name"].pinned
    memory.sweep(day(200))
    assert memory.profile()["name"].value == "Ana Ruiz"
