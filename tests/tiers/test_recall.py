"""Recall: ranking over the in-memory index, packing under a budget, and the real path end to end."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pyarrow as pa
import pytest

from tiers.embedder import FastEmbedder
from tiers.hot import Entry
from tiers.index import Index, Scope, terms
from tiers.memory import Memory
from tiers.recall import (
    Packed,
    Ranked,
    RecallSettings,
    _lend_to_neighbours,
    first_person,
    pack,
    query_forms,
    rank,
)
from tiers.records import DURABLE_KINDS, Kind, MemoryIn, Record, Tier, tokens_of
from tiers.store import schema

DAY = datetime(2026, 3, 1, 12, tzinfo=UTC)
DIM = 4


def _row(
    i: int, content: str, vector: list[float], day: int = 0, tier: Tier = Tier.WARM, kind: Kind = Kind.NOTE
) -> dict[str, object]:
    return {
        "id": f"{i:012x}",
        "hash": str(i),
        "content": content,
        "tier": tier.value,
        "kind": kind.value,
        "protected": kind in DURABLE_KINDS,
        "tags": [],
        "metadata": json.dumps({}),
        "source": None,
        "occurred_at": DAY + timedelta(days=day),
        "created_at": DAY + timedelta(microseconds=i),
        "forget_after": None,
        "superseded_by": None,
        "superseded_at": None,
        "vector": (np.asarray(vector, np.float32) / np.linalg.norm(vector)).tolist(),
    }


def _index(rows: list[dict[str, object]]) -> Index:
    return Index(1, pa.Table.from_pylist(rows, schema=schema(DIM)))


def _record(i: int, content: str, day: int = 0, tier: Tier = Tier.WARM) -> Record:
    when = DAY + timedelta(days=day)
    return Record(f"{i:012x}", content, tier, Kind.NOTE, False, when, DAY + timedelta(microseconds=i))


def _all(index: Index) -> np.ndarray:
    return index.mask(Scope((Tier.WARM, Tier.COLD)))


def test_terms_drop_stop_words_and_stem() -> None:
    assert terms("The groups were running to the painting") == ["group", "run", "paint"]


def test_bm25_ranks_the_row_with_the_rare_word_first() -> None:
    index = _index([_row(0, "we talked about the weather", [1, 0, 0, 0]), _row(1, "the pottery class", [0, 1, 0, 0])])
    scores = index.bm25("pottery weather class")
    assert scores[1] > scores[0] > 0


def test_episode_links_follow_the_stored_order_within_one_day() -> None:
    rows = [_row(0, "a", [1, 0, 0, 0]), _row(1, "b", [0, 1, 0, 0]), _row(2, "c", [0, 0, 1, 0], day=1)]
    index = _index(rows)
    assert index.next.tolist() == [1, -1, -1]
    assert index.prev.tolist() == [-1, 0, -1]


def test_a_hit_lends_its_neighbour_a_share_of_its_score() -> None:
    rows = [
        _row(0, "did you go to the pottery class", [1, 0, 0, 0]),
        _row(1, "yes, last friday", [0, 1, 0, 0]),
        _row(2, "unrelated chatter", [0, 0.9, 0.1, 0]),
    ]
    index = _index(rows)
    query = np.asarray([1, 0, 0, 0], np.float32)
    settings = RecallSettings(neighbours=0.7)
    with_neighbours = [p for p, _, _ in rank(index, query, "pottery class", _all(index), settings, 3, True)]
    without = [
        p for p, _, _ in rank(index, query, "pottery class", _all(index), settings.without("neighbours"), 3, True)
    ]
    assert with_neighbours[:2] == [0, 1]
    assert without[0] == 0


def test_default_tiers_rank_a_cold_row_just_below_an_equal_warm_one() -> None:
    rows = [_row(0, "pottery class", [1, 0, 0, 0], tier=Tier.COLD), _row(1, "pottery class!", [1, 0, 0, 0])]
    index = _index(rows)
    found = rank(index, np.asarray([1, 0, 0, 0], np.float32), "pottery", _all(index), RecallSettings(), 2, True)
    assert [p for p, _, _ in found] == [1, 0]
    assert found[1][1] > 0


def test_near_duplicates_drop_out_when_diversity_is_on() -> None:
    rows = [_row(0, "pottery", [1, 0, 0, 0]), _row(1, "pottery", [1, 0.01, 0, 0]), _row(2, "kiln", [0.5, 0.5, 0, 0])]
    index = _index(rows)
    settings = RecallSettings(diversity=0.99, neighbours=0.0)
    found = rank(index, np.asarray([1, 0, 0, 0], np.float32), "pottery", _all(index), settings, 3, True)
    assert [p for p, _, _ in found] == [0, 2]


def test_scope_keeps_only_the_asked_tiers_and_times() -> None:
    rows = [_row(0, "a", [1, 0, 0, 0]), _row(1, "b", [1, 0, 0, 0], day=5, tier=Tier.COLD)]
    index = _index(rows)
    assert index.mask(Scope((Tier.WARM,))).tolist() == [True, False]
    since = int((DAY + timedelta(days=1)).timestamp() * 1_000_000)
    assert index.mask(Scope((Tier.WARM, Tier.COLD), since_us=since)).tolist() == [False, True]


def _hits(count: int, length: int = 80) -> list[Ranked]:
    return [Ranked(_record(i, f"memory {i} " + "x" * length, day=i % 3), 1.0 - i / 100, 0.5) for i in range(count)]


def test_pack_never_passes_the_budget_and_says_how_many_it_left_out() -> None:
    for budget in (32, 64, 100, 256, 512):
        packed = pack(_hits(60), {}, 50, budget, grouped=True)
        assert packed.tokens <= budget
        assert packed.left_out == 50 - len(packed.hits)
        assert packed.text.endswith(f"more left out by the {budget}-token budget)")


def test_pack_groups_hits_by_day_oldest_first_under_one_header_each() -> None:
    packed = pack(_hits(6, 10), {}, 10, None, grouped=True)
    lines = packed.text.splitlines()
    assert lines[0] == DAY.date().isoformat() + ":"
    headers = [line for line in lines if not line.startswith("[")]
    assert headers == sorted(headers) and len(headers) == 3
    assert f"[{0:012x}] memory 0" in lines[1]


def test_pack_names_the_tier_of_cold_days() -> None:
    packed = pack([Ranked(_record(1, "old note", tier=Tier.COLD), 1.0, 0.5)], {}, 10, None, grouped=True)
    assert packed.text.splitlines()[0].endswith(" cold:")


def test_pack_without_hits_says_so() -> None:
    assert pack([], {}, 10, 100).text == "no memories match"


def test_packed_tokens_count_the_whole_text() -> None:
    packed = Packed(text="x" * 9)
    assert packed.tokens == tokens_of("x" * 9) == 3


def test_recall_finds_a_cold_memory_and_the_answer_stored_after_the_question(
    memory: Memory, embedder: FastEmbedder
) -> None:
    when = "2023-05-08T13:56:00+00:00"
    turns = [
        "Melanie: How did the adoption agency interview go?",
        "Caroline: It went great, they approved my application last week!",
        "Melanie: I painted a sunrise over the lake.",
        "Caroline: I am thinking of learning the violin.",
    ]
    stored = memory.remember([MemoryIn(content=t, occurred_at=when) for t in turns], DAY)
    memory.store.set_tier([s.id for s in stored], Tier.COLD)
    packed = memory.recall("how did the adoption agency interview go", DAY, limit=2)
    assert [h.record.id for h in packed.hits] == [stored[0].id, stored[1].id]
    assert packed.text.splitlines()[0] == "2023-05-08 cold:"
    budgeted = memory.recall("adoption agency", DAY, max_tokens=40)
    assert budgeted.tokens <= 40 and budgeted.hits[0].record.id == stored[0].id


def test_the_lent_share_shrinks_with_each_step_and_stops_at_the_reach() -> None:
    index = _index([_row(i, f"turn {i}", [1, 0, 0, 0]) for i in range(4)])
    fused = np.asarray([1.0, 0.0, 0.0, 0.0])
    lent = _lend_to_neighbours(index, fused, _all(index), 0.5, 2)
    assert lent.tolist() == [1.0, 0.5, 0.25, 0.0]


@pytest.mark.parametrize("max_tokens", [32, 33, 40, 57, 100, 1_000])
@pytest.mark.parametrize("with_profile", [False, True])
@pytest.mark.parametrize("grouped", [False, True])
def test_packed_text_never_passes_the_budget_for_any_mix_of_line_lengths(
    max_tokens: int, with_profile: bool, grouped: bool
) -> None:
    when = datetime(2026, 3, 1, tzinfo=UTC)
    profile = {"name": Entry("Ana", when), "diet": Entry("vegetarian", when)} if with_profile else {}
    for count in (1, 2, 3, 12, 150):
        for length in range(1, 200, 7):
            hits = [Ranked(_record(i, "x" * length, day=i % 4), 1.0, 0.9) for i in range(count)]

            packed = pack(hits, profile, 200, max_tokens, grouped=grouped)

            assert len(packed.text) <= max_tokens * 4, (count, length, packed.text)
            assert len(packed.hits) + packed.left_out == count
            if packed.left_out:
                assert packed.text.endswith(f"({packed.left_out} more left out by the {max_tokens}-token budget)")


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ("what health conditions does the user have?", "what health conditions do I have?"),
        ("what is the user allergic to?", "what am I allergic to?"),
        ("which foods can the user not eat?", "which foods can I not eat?"),
        ("what is the user's blood type?", "what is my blood type?"),
        ("the user prefers tea", "I prefers tea"),
        ("remind the user about the dentist", "remind me about the dentist"),
        ("what did we decide about the user table?", None),
        ("What did Caroline paint?", None),
    ],
)
def test_a_query_about_the_user_is_also_said_in_the_first_person(query: str, said: str | None) -> None:
    assert first_person(query) == said
    assert query_forms(query, RecallSettings()) == ([query, said] if said else [query])
    assert query_forms(query, RecallSettings(perspective=False)) == [query]


def test_a_row_scores_its_best_cosine_over_the_query_forms() -> None:
    index = _index([_row(0, "a", [1, 0, 0, 0]), _row(1, "b", [0, 1, 0, 0])])
    forms = np.asarray([[1, 0, 0, 0], [0, 1, 0, 0]], np.float32)
    assert index.cosine(forms).tolist() == [1.0, 1.0]


def test_a_query_about_the_user_keeps_room_for_its_best_durable_facts() -> None:
    chatter = [_row(i, f"User mentioned the weather, day {i}", [1, 0.1 * i, 0, 0]) for i in range(6)]
    fact = _row(9, "I have type 1 diabetes", [0.5, 0, 1, 0], kind=Kind.HEALTH)
    index = _index([*chatter, fact])
    query = np.asarray([1, 0, 0.2, 0], np.float32)
    query /= np.linalg.norm(query)
    settings = RecallSettings(neighbours=0.0)
    about_user = [p for p, _, _ in rank(index, query, "what do I have", _all(index), settings, 3, True)]
    about_other = [p for p, _, _ in rank(index, query, "what does Ana have", _all(index), settings, 3, True)]
    off = RecallSettings(neighbours=0.0, durable=0)
    assert 6 in about_user and len(about_user) == 3
    assert 6 not in about_other
    assert 6 not in [p for p, _, _ in rank(index, query, "what do I have", _all(index), off, 3, True)]
    assert [p for p, _, _ in rank(index, query, "what do I have", _all(index), settings, 1, True)] == about_other[:1]


def test_a_query_about_a_durable_kind_lists_its_facts_first() -> None:
    rows = [_row(i, f"User felt sleepy on day {i}", [1, 0, 0, 0]) for i in range(4)]
    rows.append(_row(4, "I have epilepsy", [0, 1, 0, 0], kind=Kind.HEALTH))
    rows.append(_row(5, "I like tea", [0, 0, 1, 0], kind=Kind.PREFERENCE))
    index = _index(rows)
    query = np.asarray([1, 0, 0, 0], np.float32)
    settings = RecallSettings(neighbours=0.0, durable=0)
    found = [p for p, _, _ in rank(index, query, "conditions", _all(index), settings, 2, True, kinds=["health"])]
    assert found[0] == 4 and 5 not in found


def test_a_when_question_matches_the_rows_that_say_a_time() -> None:
    rows = [_row(0, "we went to the lake", [1, 0, 0, 0]), _row(1, "we went to the lake yesterday", [1, 0, 0, 0])]
    index = _index(rows)
    query = np.asarray([1, 0, 0, 0], np.float32)
    on = RecallSettings(neighbours=0.0, when=True)
    found = rank(index, query, "when did they go to the lake?", _all(index), on, 2, True)
    assert [p for p, _, _ in found] == [1, 0]
    assert index.bm25("lake")[0] > 0 and index.bm25("when")[1] == 0


def test_a_health_fact_said_once_answers_the_agents_question_among_third_person_chatter(memory: Memory) -> None:
    feelings = ["sleepy", "a bit stressed", "great", "tired", "fine", "energetic"]
    chatter = [MemoryIn(content=f"User is feeling {f} today, day {i}") for i, f in enumerate(feelings * 3)]
    facts = [
        MemoryIn(content="I have type 1 diabetes, so meals need to be on time", kind=Kind.HEALTH),
        MemoryIn(content="I'm lactose intolerant"),
        MemoryIn(content="My blood type is O negative"),
        MemoryIn(content="I'm allergic to peanuts, even traces"),
        MemoryIn(content="I prefer metric units"),
    ]
    memory.remember([*chatter, *facts], DAY)
    found = memory.recall("what health conditions does the user have?", DAY, limit=5).text
    assert "diabetes" in found
    memory.settings = replace(memory.settings, recall=RecallSettings(perspective=False, durable=0, kind_match=0.0))
    assert "diabetes" not in memory.recall("what health conditions does the user have?", DAY, limit=5).text
