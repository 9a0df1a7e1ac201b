"""One namespace's memory end to end, on real LanceDB and the real model, with time as a parameter."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from tests.helpers import T0, count_rows
from tiers.errors import InvalidInput, NotFound
from tiers.lifecycle.rules import hot_rid
from tiers.memory import Memory, MemorySettings
from tiers.model.embedder import FastEmbedder
from tiers.recall.rank import Ranked, pack
from tiers.records import Kind, MemoryIn, Tier
from tiers.storage.hot import Entry


def remember(memory: Memory, content: str, **fields: object) -> str:
    [stored] = memory.remember([MemoryIn(content=content, **fields)], T0)  # type: ignore[arg-type]
    return stored.id


def test_the_same_memory_said_again_refreshes_the_stored_one_and_adds_no_row(memory: Memory) -> None:
    rid = remember(memory, "The wifi password is on the fridge")

    [again] = memory.remember([MemoryIn(content="the WiFi password is on the  fridge")], T0 + timedelta(days=1))

    assert again.duplicate_of == rid
    assert count_rows(memory.folder) == 1
    assert memory.ledger.usage([rid])[rid].repeats == 1
    assert memory.heat_of(rid, T0 + timedelta(days=1)) == pytest.approx(3.0)


def test_a_cold_memory_said_again_comes_back_to_warm(memory: Memory) -> None:
    rid = remember(memory, "The spare key is under the blue pot")
    memory.sweep(T0 + timedelta(days=60))
    assert memory.get(rid).tier is Tier.COLD

    [again] = memory.remember([MemoryIn(content="The spare key is under the blue pot")], T0 + timedelta(days=61))

    assert (again.duplicate_of, again.tier) == (rid, Tier.WARM)
    assert memory.get(rid).tier is Tier.WARM
    newest = memory.moves(rid)[0]
    assert (newest.src, newest.dst, newest.rule) == ("cold", "warm", "repeated")


def test_a_changed_profile_value_keeps_the_old_one_as_a_superseded_warm_record(memory: Memory) -> None:
    memory.set_profile({"project": "memtiers"}, T0)

    change = memory.set_profile({"project": "lancebench"}, T0 + timedelta(days=3))

    [history_id] = change.demoted
    old = memory.get(history_id)
    assert (old.content, old.tier, old.kind) == ("project: memtiers", Tier.WARM, Kind.HISTORY)
    assert old.superseded_by == "profile:project"
    assert old.superseded_at == T0 + timedelta(days=3)
    assert old.occurred_at == T0
    assert old.metadata["profile_key"] == "project"
    assert memory.profile()["project"].value == "lancebench"
    found = memory.recall("project memtiers", T0 + timedelta(days=3), tiers=[Tier.WARM])
    assert "(superseded by profile:project on 2026-01-08)" in found.text


def test_setting_the_same_profile_value_again_writes_no_history(memory: Memory) -> None:
    memory.set_profile({"name": "Ana"}, T0)

    change = memory.set_profile({"name": "Ana"}, T0 + timedelta(days=1))

    assert change.demoted == ()
    assert count_rows(memory.folder) == 0


def test_forget_removes_a_memory_from_vector_and_text_search(memory: Memory) -> None:
    rid = remember(memory, "My bank PIN hint is the year we met")
    remember(memory, "The bank opens at nine")
    assert rid in [h.record.id for h in memory.recall("bank PIN hint", T0).hits]

    gone = memory.forget(rid, T0)

    assert (gone.id, gone.tier) == (rid, Tier.WARM)
    every_tier = [Tier.HOT, Tier.WARM, Tier.COLD]
    assert rid not in [h.record.id for h in memory.recall("bank PIN hint", T0, tiers=every_tier).hits]
    with memory.store.warm() as index:
        assert index.bm25(["pin"]).max(initial=0.0) == 0.0
    with pytest.raises(NotFound):
        memory.get(rid)
    assert memory.ledger.usage([rid]) == {}


def test_my_name_is_goes_to_the_profile_with_the_memory_as_its_source(memory: Memory) -> None:
    [stored] = memory.remember([MemoryIn(content="Hello, my name is Ana Costa")], T0)

    assert (stored.tier, stored.profile_key, stored.kind) == (Tier.HOT, "name", Kind.IDENTITY)
    assert memory.profile()["name"].value == "Ana Costa"
    assert memory.profile()["name"].sources == (stored.id,)


def test_a_key_past_the_profile_cap_keeps_the_memory_warm_and_protected_with_a_note(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    small = Memory(tmp_path / "ns", embedder, MemorySettings(cap_tokens=5))
    try:
        [stored] = small.remember([MemoryIn(content="a value far too long for a tiny profile", key="bio")], T0)
        candidates = small.candidates()
    finally:
        small.close()

    assert (stored.tier, stored.protected) == (Tier.WARM, True)
    assert stored.note is not None and stored.note.startswith("kept warm and protected") and "full" in stored.note
    assert [c["id"] for c in candidates] == [stored.id]


def test_recall_counts_as_a_use_and_a_used_record_stays_warm_longer(memory: Memory) -> None:
    used = remember(memory, "The greenhouse thermostat is set to 18 degrees")
    idle = remember(memory, "The shed roof was repainted green")
    found = memory.recall("greenhouse thermostat", T0 + timedelta(days=10), limit=1)
    assert [h.record.id for h in found.hits] == [used]

    report = memory.sweep(T0 + timedelta(days=50))

    assert memory.ledger.usage([used])[used].uses == 1
    assert [(m.rid, m.dst) for m in report.moves] == [(idle, Tier.COLD)]


def test_a_year_of_sweeps_keeps_durable_facts_warm_and_lets_notes_go_cold(memory: Memory) -> None:
    note = remember(memory, "Lunch today was a tuna sandwich")
    allergy = remember(memory, "I am allergic to penicillin")
    keyed = remember(memory, "Lisbon", key="city")
    expiring = remember(memory, "Gate code for the event: 2291", forget_after="P10D")

    for day in range(0, 366, 7):
        memory.sweep(T0 + timedelta(days=day))

    tiers = {rid: memory.get(rid).tier for rid in (note, allergy, keyed, expiring)}
    assert tiers == {note: Tier.COLD, allergy: Tier.WARM, keyed: Tier.WARM, expiring: Tier.COLD}
    assert [m.rule for m in memory.moves(expiring) if m.dst == "cold"] == ["forget_after"]
    assert "city" not in memory.profile()  # unpinned and unused for 90 days: down to warm
    assert count_rows(memory.folder) == 5  # nothing deleted; the city value became a history record


def test_a_dry_run_sweep_reports_moves_but_makes_none(memory: Memory) -> None:
    rid = remember(memory, "The plumber came on Monday")

    report = memory.sweep(T0 + timedelta(days=90), dry_run=True)

    assert report.dry_run
    assert [(m.rid, m.dst) for m in report.moves] == [(rid, Tier.COLD)]
    assert memory.get(rid).tier is Tier.WARM
    assert memory.moves(rid)[0].rule == "remember:note"


def test_promote_from_cold_to_hot_rewarms_the_record_and_sources_the_entry(memory: Memory) -> None:
    rid = remember(memory, "Prefers window seats on trains")
    memory.sweep(T0 + timedelta(days=60))

    done = memory.promote(rid, T0 + timedelta(days=61), Tier.HOT, key="seat")

    assert (done.outcome, done.tier, done.key) == ("promoted", Tier.HOT, "seat")
    assert memory.get(rid).tier is Tier.WARM
    assert memory.profile()["seat"].sources == (rid,)


def test_promote_to_cold_is_refused(memory: Memory) -> None:
    rid = remember(memory, "Anything at all")

    with pytest.raises(InvalidInput, match="records go cold by the timer"):
        memory.promote(rid, T0, Tier.COLD)


def test_remember_refuses_an_empty_batch_and_one_over_1000(memory: Memory) -> None:
    with pytest.raises(InvalidInput, match="at least one"):
        memory.remember([], T0)
    with pytest.raises(InvalidInput, match="at most 1000"):
        memory.remember([MemoryIn(content=f"m{i}") for i in range(1_001)], T0)
    assert count_rows(memory.folder) == 0


def test_an_unset_profile_entry_can_be_promoted_back_from_its_history_record(memory: Memory) -> None:
    memory.set_profile({"city": "Lisbon"}, T0)
    [history_id] = memory.set_profile({}, T0 + timedelta(days=1), unset=["city"]).demoted
    assert "city" not in memory.profile()

    done = memory.promote(history_id, T0 + timedelta(days=2))

    assert (done.outcome, done.key) == ("promoted", "city")
    assert memory.profile()["city"].value == "Lisbon"
    assert memory.profile()["city"].sources == (history_id,)


def test_a_much_used_record_becomes_a_candidate_until_promoted_or_forgotten(memory: Memory) -> None:
    staging = remember(memory, "The staging host is stg-3")
    prod = remember(memory, "The production host is prd-1")
    for hour in range(4):
        memory.recall("staging host", T0 + timedelta(hours=hour), limit=1)
        memory.recall("production host", T0 + timedelta(hours=hour), limit=1)

    report = memory.sweep(T0 + timedelta(days=1))

    assert {rid for rid, _ in report.hot_candidates} == {staging, prod}
    assert {c["id"] for c in memory.candidates()} == {staging, prod}
    assert memory.get(staging).tier is Tier.WARM  # a candidate is only proposed, never moved
    memory.promote(staging, T0 + timedelta(days=1), key="staging")
    memory.forget(prod, T0 + timedelta(days=1))
    assert memory.candidates() == ()


NOTES = ["I moved to Lisbon in March", "the Lisbon flat has a balcony", "the Lisbon office is near the river"]


def _lisbon(memory: Memory) -> str:
    keyed = remember(memory, "I live in Lisbon", key="city")
    for note in NOTES:
        remember(memory, note)
    return keyed


def test_recall_never_repeats_the_memory_a_profile_entry_it_shows_was_made_from(memory: Memory) -> None:
    keyed = _lisbon(memory)

    found = memory.recall("where do I live in Lisbon", T0, limit=3)

    assert "city" in found.profile and found.text.startswith("profile: city=I live in Lisbon")
    assert keyed not in [h.record.id for h in found.hits]
    assert sorted(h.record.content for h in found.hits) == sorted(NOTES)  # the limit is filled by the others
    # An entry too long for the budget is not shown: then its memory is, if it ranks.
    long = Entry("I live in Lisbon, " + "in the old town near the castle, " * 20, T0, sources=(keyed,))
    ranked = [Ranked(memory.get(keyed), 1.0, 1.0)]
    tight = pack(ranked, {"city": long}, 3, 60)
    assert tight.profile == {} and [h.record.id for h in tight.hits] == [keyed]


def test_a_word_most_profile_entries_hold_shows_none_of_them_and_counts_no_use(memory: Memory) -> None:
    projects = {
        "project.atlas.database": "Postgres 16 on the managed cluster",
        "project.atlas.queue": "RabbitMQ with quorum queues",
        "project.borealis.frontend": "Svelte",
        "project.borealis.hosting": "Fly.io in two regions",
        "project.cobalt.auth": "OAuth2 client credentials",
    }
    others = {"editor": "Helix", "name": "Ana Ruiz", "city": "Berlin", "coffee": "a double espresso", "theme": "dark"}
    memory.set_profile(projects | others, T0)
    later = T0 + timedelta(days=1)

    # "project" is in half the entries: it says nothing of which one is asked about, and counts no use of any.
    uses = {key: memory.ledger.usage()[hot_rid(key)].uses for key in projects}
    assert memory.recall("who reviews pull requests on the project this week?", later, limit=3).profile == {}
    assert {key: memory.ledger.usage()[hot_rid(key)].uses for key in projects} == uses
    # A word few entries hold still matches: the entry asked about is shown, and only it.
    assert list(memory.recall("what did the cobalt project pick for auth?", later, limit=3).profile) == [
        "project.cobalt.auth"
    ]
    assert list(memory.recall("is Helix installed on the new laptop?", later, limit=3).profile) == ["editor"]


def test_recall_shows_the_entries_nearest_the_query_first_as_many_as_its_limit_and_budget_hold(
    memory: Memory,
) -> None:
    memory.set_profile(
        {
            "project.cobalt.auth": "OAuth2 client credentials for every service",
            "project.cobalt.database": "Postgres 16 on the managed cluster",
            "name": "Ana Ruiz",
            "editor": "Helix",
        },
        T0,
    )
    query = "which database did the cobalt project pick?"
    every = memory.recall(query, T0, limit=10).profile
    assert set(every) == {"project.cobalt.auth", "project.cobalt.database"}  # both name cobalt
    assert list(memory.recall(query, T0, limit=1).profile) == ["project.cobalt.database"]
    # Under a budget the line of the best `limit` is shown whole or not at all: the budget goes to the hits.
    tight = memory.recall(query, T0, limit=1, max_tokens=40)
    assert list(tight.profile) == ["project.cobalt.database"] and tight.tokens <= 40
    assert "Postgres 16" in tight.text
    assert memory.recall(query, T0, max_tokens=40).profile == {}  # both entries (limit 50) do not fit


def test_under_a_budget_the_profile_line_never_takes_the_best_memorys_place(memory: Memory) -> None:
    memory.remember([MemoryIn(content="I prefer a double espresso, no sugar", key="coffee")], T0)
    [machine] = memory.remember([MemoryIn(content="The espresso machine on floor 3 is broken since Monday")], T0)
    query = "is the espresso machine on floor 3 working?"
    roomy = memory.recall(query, T0, max_tokens=60)
    assert "coffee" in roomy.profile and roomy.hits[0].record.id == machine.id
    # 40 tokens hold the line or the best memory, not both: the memory is shown, the entry's source may follow it
    tight = memory.recall(query, T0, max_tokens=40)
    assert tight.profile == {} and tight.hits[0].record.id == machine.id and tight.tokens <= 40


def test_in_a_small_profile_entries_on_one_topic_are_both_shown_and_a_lone_digit_matches_none(memory: Memory) -> None:
    memory.set_profile({"pets.dog": "Bruno, a beagle", "pets.cat": "Miso", "name": "Ana", "floor": "2"}, T0)

    assert sorted(memory.recall("remind me about the pets", T0, limit=3).profile) == ["pets.cat", "pets.dog"]
    assert "floor" not in memory.recall("remind me in 2 days", T0, limit=3).profile


def test_a_host_that_carries_the_profile_gets_none_of_it_again_from_recall(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    from tiers.recall.rank import RecallSettings

    memory = Memory(tmp_path / "ns", embedder, MemorySettings(recall=RecallSettings(profile_carried=True)))
    try:
        keyed = _lisbon(memory)
        found = memory.recall("where do I live in Lisbon", T0, limit=3)
        assert found.profile == {} and "profile:" not in found.text and "I live in Lisbon" not in found.text
        assert sorted(h.record.content for h in found.hits) == sorted(NOTES)
        before = memory.ledger.usage()[hot_rid("city")].uses
        memory.recall("where do I live in Lisbon", T0, limit=3)
        assert memory.ledger.usage()[hot_rid("city")].uses == before + 1  # the entry it matched still counts a use
        assert keyed in [h.record.id for h in memory.recall("Lisbon", T0, tiers=[Tier.WARM]).hits]  # not default
    finally:
        memory.close()
