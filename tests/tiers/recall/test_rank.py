"""Recall: ranking over the in-memory index, packing under a budget, and the real path end to end."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from tiers.index.cold import ColdHits, ColdIndex, ColdScope
from tiers.index.columns import rows_table as store_table
from tiers.index.warm import Row, Scope, WarmIndex
from tiers.memory import Memory, MemorySettings
from tiers.model.embedder import FastEmbedder, embed_queries
from tiers.namespace.search import Query, _PoolBuilder, _WarmPart
from tiers.recall import rank as ranking
from tiers.recall.rank import (
    Packed,
    Pool,
    Ranked,
    RecallSettings,
    _lend_to_neighbours,
    first_person,
    in_context,
    pack,
    query_forms,
    rank,
    wants_time,
)
from tiers.records import DURABLE_KINDS, Kind, MemoryIn, Record, Tier, tokens_of
from tiers.storage.hot import Entry
from tiers.storage.ledger import Move
from tiers.text.terms import document_terms, words

DAY = datetime(2026, 3, 1, 12, tzinfo=UTC)
DIM = 4


def _row(
    i: int, content: str, vector: list[float], day: int = 0, tier: Tier = Tier.WARM, kind: Kind = Kind.NOTE
) -> Row:
    when = DAY + timedelta(days=day)
    record = Record(f"{i:012x}", content, tier, kind, kind in DURABLE_KINDS, when, DAY + timedelta(microseconds=i))
    unit = np.asarray(vector, np.float32) / np.linalg.norm(vector)
    return Row(record, str(i), document_terms(content, when), unit)


def _index(rows: list[Row]) -> WarmIndex:
    index = WarmIndex(DIM)
    index.put(rows)
    return index


def _query(text: str, vector: np.ndarray | list[float], settings: RecallSettings | None = None) -> Query:
    vectors = np.atleast_2d(np.asarray(vector, np.float32))
    terms = words(text) + wants_time(text, settings or RecallSettings())
    return Query(text, [text], vectors, terms, (Tier.WARM, Tier.COLD), (), None, None, True)


def _pool(rows: list[Row], query: Query) -> Pool:
    """The pool a search builds: the warm rows from the index, the cold ones as a cold search returns them."""
    index = _index([r for r in rows if r.record.tier is Tier.WARM])
    builder = _PoolBuilder(_WarmPart(index, query, True, 2), index, query)
    cold = [r for r in rows if r.record.tier is Tier.COLD]
    if cold:
        cold_index = ColdIndex(DIM)
        cold_index.put(store_table(cold, DIM))
        found = ColdHits(cold_index, query.vectors, np.zeros(len(cold), np.float32), 0.0).lookup(
            [r.record.id for r in cold]
        )
        found.cosine = np.asarray([(query.vectors @ r.vector).max() for r in cold], np.float32)  # exact, not int8
        builder.add_candidates(found)
    builder.add_records([r.record for r in cold])
    return builder.build()


def _rank(
    rows: list[Row], text: str, vector: list[float], settings: RecallSettings, limit: int, **kw: object
) -> list[int]:
    query = _query(text, vector, settings)
    return [p for p, _, _ in rank(_pool(rows, query), text, settings, limit, True, **kw)]  # type: ignore[arg-type]


def _record(i: int, content: str, day: int = 0, tier: Tier = Tier.WARM) -> Record:
    when = DAY + timedelta(days=day)
    return Record(f"{i:012x}", content, tier, Kind.NOTE, False, when, DAY + timedelta(microseconds=i))


def test_terms_drop_stop_words_and_stem() -> None:
    assert words("The groups were running to the painting") == ["group", "run", "paint"]


def test_bm25_ranks_the_row_with_the_rare_word_first() -> None:
    index = _index([_row(0, "we talked about the weather", [1, 0, 0, 0]), _row(1, "the pottery class", [0, 1, 0, 0])])
    scores = index.bm25(words("pottery weather class"))
    assert scores[1] > scores[0] > 0


def test_episode_links_follow_the_stored_order_within_one_day() -> None:
    rows = [_row(0, "a", [1, 0, 0, 0]), _row(1, "b", [0, 1, 0, 0]), _row(2, "c", [0, 0, 1, 0], day=1)]
    index = _index(rows)
    assert index.next[:3].tolist() == [1, -1, -1]
    assert index.prev[:3].tolist() == [-1, 0, -1]


def test_episode_links_close_the_gap_when_a_row_leaves_the_warm_index() -> None:
    index = _index([_row(i, f"turn {i}", [1, 0, 0, 0]) for i in range(3)])
    index.remove([f"{1:012x}"])
    assert index.next[0] == 2 and index.prev[2] == 0
    assert index.neighbours(f"{0:012x}", 2) == ((), (f"{2:012x}",))


def test_a_hit_lends_its_neighbour_a_share_of_its_score() -> None:
    rows = [
        _row(0, "did you go to the pottery class", [1, 0, 0, 0]),
        _row(1, "yes, last friday", [0, 1, 0, 0]),
        _row(2, "unrelated chatter", [0, 0.9, 0.1, 0]),
    ]
    settings = RecallSettings(neighbours=0.7)
    with_neighbours = _rank(rows, "pottery class", [1, 0, 0, 0], settings, 3)
    without = _rank(rows, "pottery class", [1, 0, 0, 0], settings.without("neighbours"), 3)
    assert with_neighbours[:2] == [0, 1]
    assert without[0] == 0


def test_a_cold_hit_lends_to_the_neighbour_it_carries_a_link_to() -> None:
    question = _row(0, "did you go to the pottery class", [1, 0, 0, 0], tier=Tier.COLD)
    answer = _row(1, "yes, last friday", [0, 1, 0, 0], tier=Tier.COLD)
    chatter = _row(2, "unrelated chatter", [0, 0.9, 0.1, 0], tier=Tier.COLD)
    question = replace(question, after=(answer.record.id,))
    answer = replace(answer, before=(question.record.id,))
    found = _rank([question, answer, chatter], "pottery class", [1, 0, 0, 0], RecallSettings(neighbours=0.7), 2)
    assert found == [0, 1]


def test_a_warm_hit_lends_to_the_cold_row_stored_after_it() -> None:
    # After a sweep the question stays warm (say, as a durable fact) and its answer goes cold: the warm index
    # no longer links the question to anything after it, but the cold answer still names it as before.
    question = _row(0, "did you go to the pottery class", [1, 0, 0, 0])
    answer = _row(1, "yes, last friday", [0, 1, 0, 0], tier=Tier.COLD)
    chatter = _row(2, "unrelated chatter", [0, 0.9, 0.1, 0], tier=Tier.COLD)
    answer = replace(answer, before=(question.record.id,))
    found = _rank([question, answer, chatter], "pottery class", [1, 0, 0, 0], RecallSettings(neighbours=0.7), 2)
    assert found == [0, 1]
    pool = _pool([question, answer, chatter], _query("pottery class", [1, 0, 0, 0]))
    assert pool.next[0] == 1 and pool.prev[1] == 0


def test_a_pool_of_a_few_cold_hits_scales_from_the_medians_of_every_cold_row() -> None:
    # 400 cold rows, of which the search returns its best 10 by meaning: the median cosine of those alone is
    # far above the tier's, which would squeeze every found row's score toward the bottom of the scale.
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(400, DIM))
    cold = [_row(i, f"entry {i}", list(v), tier=Tier.COLD) for i, v in enumerate(vectors)]
    index = _index([])
    query = _query("chores", [1, 0, 0, 0])
    cold_index = ColdIndex(DIM)
    cold_index.put(store_table(cold, DIM))
    hits = cold_index.search(query.vectors, query.terms, 10, ColdScope())
    builder = _PoolBuilder(_WarmPart(index, query, True, 2), index, query, hits=hits)
    builder.add_candidates(hits.found)
    pool = builder.build()
    assert len(pool.cosine) == 10
    every = [float(query.vectors[0] @ r.vector) for r in cold]
    assert pool.medians is not None
    assert pool.medians[0] == pytest.approx(np.median(every), abs=0.03)
    assert np.median(pool.cosine) > np.median(every) + 0.3


def test_default_tiers_rank_a_cold_row_just_below_an_equal_warm_one() -> None:
    rows = [_row(0, "pottery class", [1, 0, 0, 0], tier=Tier.COLD), _row(1, "pottery class!", [1, 0, 0, 0])]
    query = _query("pottery", [1, 0, 0, 0])
    pool = _pool(rows, query)
    found = rank(pool, "pottery", RecallSettings(), 2, True)
    assert [bool(pool.cold[p]) for p, _, _ in found] == [False, True]
    assert found[1][1] > 0


def test_default_tiers_rank_a_cold_row_that_answers_better_above_a_warm_one() -> None:
    # After a sweep most of a conversation is cold and the rows left warm are durable facts, not its evidence:
    # a cold row that matches the query better is not pushed below a weaker warm one by its tier (with a
    # tenth of its score taken, as recall did before, it was).
    rows = [
        _row(0, "pottery class", [1, 0, 0, 0], tier=Tier.COLD),
        _row(1, "pottery lesson", [1, 0.3, 0, 0]),
        _row(2, "groceries list", [0, 0, 1, 0], day=3),
        _row(3, "weather talk", [0, 0, 0, 1], day=6),
    ]
    query = _query("ceramics", [1, 0, 0, 0])
    pool = _pool(rows, query)
    found = rank(pool, query.text, RecallSettings(), 3, True)
    assert [bool(pool.cold[p]) for p, _, _ in found][:2] == [True, False]
    found = rank(pool, query.text, RecallSettings(cold_penalty=0.1), 3, True)
    assert [bool(pool.cold[p]) for p, _, _ in found][:2] == [False, True]


def test_scope_keeps_only_the_asked_times() -> None:
    index = _index([_row(0, "a", [1, 0, 0, 0]), _row(1, "b", [1, 0, 0, 0], day=5)])
    since = int((DAY + timedelta(days=1)).timestamp() * 1_000_000)
    assert index.mask(Scope()).tolist() == [True, True]
    assert index.mask(Scope(since_us=since)).tolist() == [False, True]


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
    memory.sweep(DAY + timedelta(days=200))
    later = DAY + timedelta(days=200)
    packed = memory.recall("how did the adoption agency interview go", later, limit=2)
    assert [h.record.id for h in packed.hits] == [stored[0].id, stored[1].id]
    assert packed.text.splitlines()[0] == "2023-05-08 cold:"
    budgeted = memory.recall("adoption agency", later, max_tokens=40)
    assert budgeted.tokens <= 40 and budgeted.hits[0].record.id == stored[0].id


def test_the_lent_share_shrinks_with_each_step_and_stops_at_the_reach() -> None:
    rows = [_row(i, f"turn {i}", [1, 0, 0, 0]) for i in range(4)]
    pool = _pool(rows, _query("turn", [1, 0, 0, 0]))
    fused = np.asarray([1.0, 0.0, 0.0, 0.0])
    lent = _lend_to_neighbours(pool, fused, 0.5, 2)
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
    rows = [*chatter, fact]
    vector = [1 / 1.0198, 0, 0.2 / 1.0198, 0]
    settings = RecallSettings(neighbours=0.0)
    about_user = _rank(rows, "what do I have", vector, settings, 3)
    about_other = _rank(rows, "what does Ana have", vector, settings, 3)
    off = RecallSettings(neighbours=0.0, durable=0)
    assert 6 in about_user and len(about_user) == 3
    assert 6 not in about_other
    assert 6 not in _rank(rows, "what do I have", vector, off, 3)
    assert _rank(rows, "what do I have", vector, settings, 1) == about_other[:1]


def test_the_durable_facts_keep_their_room_among_the_first_ten_whatever_the_limit() -> None:
    # Under a token budget recall asks for 50 and shows what fits: room at places 47-50 would never be read.
    chatter = [_row(i, f"User mentioned the weather, day {i}", [1, 0.02 * i, 0, 0]) for i in range(30)]
    fact = _row(30, "I have type 1 diabetes", [0.5, 0, 1, 0], kind=Kind.HEALTH)
    vector = [1 / 1.0198, 0, 0.2 / 1.0198, 0]
    settings = RecallSettings(neighbours=0.0)
    at_ten = _rank([*chatter, fact], "what do I have", vector, settings, 10)
    at_fifty = _rank([*chatter, fact], "what do I have", vector, settings, 50)
    assert at_ten[-1] == 30 and len(at_ten) == 10
    assert at_fifty[:10] == at_ten  # the same first ten, the fact among them
    assert sorted(at_fifty) == list(range(31))  # and every other row after them: none lost to the fact's place


def _read_in_context(own: list[float], cosine: list[float], durable: list[bool], kinds: list[str]) -> Pool:
    """A pool of rows alone in their episodes, each row's cosine read in context given beside its own."""
    n = len(own)
    return Pool(
        cosine=np.asarray(cosine, np.float32),
        words=np.zeros(n, np.float32),
        mask=np.ones(n, bool),
        cold=np.zeros(n, bool),
        durable=np.asarray(durable),
        kind=np.asarray(kinds, "<U12"),
        prev=np.full(n, -1),
        next=np.full(n, -1),
        own=np.asarray(own, np.float32),
    )


def test_the_durable_facts_a_query_keeps_room_for_are_chosen_by_their_own_meaning() -> None:
    # Rows 2 and 3 are durable; row 3 reads closer in context (lifted by what was said beside it), row 2 by
    # itself: a durable fact says all it means, so the one kept is row 2, as it is with context off.
    own, read = [0.9, 0.8, 0.5, 0.3], [0.9, 0.8, 0.5, 0.6]
    durable, kinds = [False, False, True, True], ["event", "event", "health", "preference"]
    settings = RecallSettings(neighbours=0.0, durable=1)
    pool = _read_in_context(own, read, durable, kinds)
    assert [p for p, _, _ in rank(pool, "what can I eat", settings, 2, True)] == [0, 2]
    listed = rank(pool, "my conditions", settings, 2, True, kinds=["health", "preference"])
    assert [p for p, _, _ in listed] == [2, 3]
    alone = replace(pool, own=None)  # without context the cosine it has is its own
    assert [p for p, _, _ in rank(alone, "what can I eat", settings, 2, True)] == [0, 3]


def test_a_query_about_a_durable_kind_lists_its_facts_first() -> None:
    rows = [_row(i, f"User felt sleepy on day {i}", [1, 0, 0, 0]) for i in range(4)]
    rows.append(_row(4, "I have epilepsy", [0, 1, 0, 0], kind=Kind.HEALTH))
    rows.append(_row(5, "I like tea", [0, 0, 1, 0], kind=Kind.PREFERENCE))
    settings = RecallSettings(neighbours=0.0, durable=0)
    found = _rank(rows, "conditions", [1, 0, 0, 0], settings, 2, kinds=["health"])
    assert found[0] == 4 and 5 not in found


def test_a_when_question_matches_the_rows_that_say_a_time() -> None:
    rows = [_row(0, "we went to the lake", [1, 0, 0, 0]), _row(1, "we went to the lake yesterday", [1, 0, 0, 0])]
    on = RecallSettings(neighbours=0.0, when=True)
    assert _rank(rows, "when did they go to the lake?", [1, 0, 0, 0], on, 2) == [1, 0]
    index = _index(rows)
    assert index.bm25(words("lake"))[0] > 0 and index.bm25(words("when"))[1] == 0


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


_CHORES = [
    "Renew the car insurance before the end of the month.",
    "Buy printer paper and envelopes for the office.",
    "Call the plumber about the dripping kitchen tap.",
    "Book a dentist check-up for the spring.",
    "Pay the electricity bill online.",
    "Return the library books on Friday.",
]


@pytest.mark.parametrize("shared", [True, False])
def test_a_name_rare_among_cold_rows_does_not_outrank_a_warm_row_that_matches_more_of_the_query(
    tmp_path: Path, embedder: FastEmbedder, shared: bool
) -> None:
    """Among 300 cold chores one names Caroline: her name weighs far more there than among her own warm turns.

    Each tier's BM25 as a share of the query's weight in that tier ranks the turn that answers first; raw
    scores (`shared_words` off, the premise checked) put the cold row with the name alone above it.
    """
    memory = Memory(tmp_path / "ns", embedder, MemorySettings(recall=RecallSettings(shared_words=shared)))
    try:
        old = [MemoryIn(content=f"{_CHORES[i % len(_CHORES)]} (list {i})") for i in range(300)]
        stray = memory.remember([*old, MemoryIn(content="Caroline from accounts sent over the invoice.")], DAY)[-1]
        later = DAY + timedelta(days=400)
        memory.sweep(later)
        assert memory.store.get([stray.id])[stray.id].tier is Tier.COLD
        said = ["I went hiking with my dog.", "The weather was lovely.", "I painted a sunset over the lake."]
        turns = memory.remember([MemoryIn(content=f"Caroline: {t}") for t in said], later)
        first = memory.recall("What did Caroline paint?", later, limit=3).hits[0].record.id
        assert first == (turns[2].id if shared else stray.id)
    finally:
        memory.close()


def test_a_row_read_in_context_takes_its_share_from_the_better_of_itself_and_itself_beside_a_neighbour() -> None:
    rng = np.random.default_rng(11)

    def unit(n: int) -> np.ndarray:
        v = rng.normal(size=(n, 16)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    query, rows, before, after = unit(1)[0], unit(5), unit(5), unit(5)
    own = rows @ query
    sides = [(before @ query, np.sum(rows * before, axis=1)), (after @ query, np.sum(rows * after, axis=1))]
    sides[1][0][2] = sides[1][1][2] = np.nan  # row 2 has no row after it
    sides[0][0][4] = sides[1][0][4] = np.nan  # row 4 has neither

    got = in_context(own, sides, 0.5)

    for i in range(4):
        joined = [rows[i] + before[i]] + ([rows[i] + after[i]] if i != 2 else [])
        best = max(float(v @ query) / float(np.linalg.norm(v)) for v in joined)
        assert got[i] == pytest.approx(0.5 * float(own[i]) + 0.5 * max(best, float(own[i])), abs=1e-5)
        assert got[i] >= own[i] - 1e-6  # never read worse for its neighbours
    assert got[4] == pytest.approx(float(own[4]))


EPISODE = [
    "I signed up for a pottery class at the community centre last month.",
    "Honestly it's like therapy for me, I feel so calm afterwards.",
]
ELSEWHERE = [
    "The quarterly budget review moved to Thursday.",
    "Bought new running shoes, the old ones were worn out.",
    "My sister is visiting from Lisbon in June.",
    "The train to the airport was delayed by forty minutes.",
    "We picked PostgreSQL for the billing service.",
    "Watered the tomatoes and fixed the greenhouse door.",
]


def _stored_beside_notes(folder: Path, embedder: FastEmbedder, episode: list[str], cold: bool = False) -> list[str]:
    """Store `episode` as one batch of one source, then the unrelated notes; the episode's ids (`cold`: moved cold)."""
    memory = Memory(folder, embedder)
    try:
        stored = memory.remember(
            [MemoryIn(content=t, source="chat-1", occurred_at=DAY.isoformat()) for t in episode], DAY
        )
        memory.remember([MemoryIn(content=t, source=f"note-{i}") for i, t in enumerate(ELSEWHERE)], DAY)
        if cold:
            with memory.parts.locked():
                rows = memory.store.lifecycle_rows()
                memory.store.move([Move(DAY, r["id"], "warm", "cold", "test") for r in rows])
            assert memory.store.count(Tier.WARM) == 0
    finally:
        memory.close()
    return [s.id for s in stored]


def _ranked_as(
    folder: Path, embedder: FastEmbedder, settings: RecallSettings, query: str, rid: str
) -> tuple[float, int]:
    """The similarity and rank of one stored record among every record of `folder`, ranked with `settings`."""
    opened = Memory(folder, embedder, MemorySettings(recall=settings))
    try:
        ranked = opened.rank(query, 20)
    finally:
        opened.close()
    at = [r.record.id for r in ranked].index(rid)
    return ranked[at].similarity, at


@pytest.mark.parametrize("tier", ["warm", "cold"])
def test_a_reply_is_also_found_by_what_the_turn_before_it_said(
    tmp_path: Path, embedder: FastEmbedder, tier: str
) -> None:
    folder = tmp_path / "ns"
    reply = _stored_beside_notes(folder, embedder, EPISODE, cold=tier == "cold")[1]
    query = "What does the pottery class do for how the user feels?"
    alone, alone_at = _ranked_as(folder, embedder, RecallSettings(context=0.0), query, reply)
    read, read_at = _ranked_as(folder, embedder, RecallSettings(context=0.5), query, reply)
    assert read > alone + 0.05  # its neighbour says what the query asks about
    assert read_at <= alone_at


# One day's facts as an agent stores them: one batch, one episode, about unrelated things.
DAY_BATCH = [
    "We watched the new sci-fi series last night, it was fun.",
    "I'm celiac, so nothing with gluten for me.",
    "The printer on the third floor is jammed again.",
]


def test_a_fact_stored_beside_unrelated_lines_is_not_read_worse_in_context(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    folder = tmp_path / "ns"
    fact = _stored_beside_notes(folder, embedder, DAY_BATCH)[1]
    query = "What foods can the user not eat?"
    alone, alone_at = _ranked_as(folder, embedder, RecallSettings(context=0.0), query, fact)
    read, read_at = _ranked_as(folder, embedder, RecallSettings(context=0.5), query, fact)
    assert read >= alone - 1e-6  # its neighbours are about something else: they take nothing from it
    assert read_at <= alone_at


def test_a_long_hit_over_the_budget_is_shown_by_its_nearest_piece_marked_as_an_excerpt() -> None:
    words = [f"w{i}" for i in range(400)]  # pieces start at words 0, 120, 240 and 360 (150 words, 30 shared)
    long = Ranked(_record(1, " ".join(words)), 1.0, 0.5, piece_cosines=(0.1, 0.2, 0.9, 0.3))  # the third nearest
    short = Ranked(_record(2, "a short note"), 0.9, 0.5)

    packed = pack([long, short], {}, 10, 300, grouped=True)

    assert [h.record.id for h in packed.hits] == [long.record.id, short.record.id] and packed.left_out == 0
    cut = packed.hits[0].excerpt
    assert cut is not None and (cut.first, cut.last, cut.words) == (241, 390, 400)
    assert cut.text == " ".join(words[240:390]) and cut.text in packed.text
    assert "w239 " not in packed.text and "w390" not in packed.text
    assert f"(excerpt: words 241-390 of 400; the whole is {cut.whole_tokens} tokens)" in packed.text
    assert cut.whole_tokens > 300 >= packed.tokens


def test_a_long_chinese_hit_over_the_budget_is_shown_by_an_excerpt_cut_on_characters() -> None:
    chars = [chr(0x4E00 + i) for i in range(400)]  # one word each: pieces start at characters 0, 120, 240, 360
    long = Ranked(_record(1, "".join(chars)), 1.0, 0.5, piece_cosines=(0.1, 0.2, 0.9, 0.3))

    packed = pack([long], {}, 10, 300, grouped=True)

    cut = packed.hits[0].excerpt
    assert cut is not None and (cut.first, cut.last, cut.words) == (241, 390, 400)
    assert cut.text == "".join(chars[240:390]) and cut.text in packed.text
    assert cut.whole_tokens >= 400 and packed.tokens <= 300


@pytest.mark.parametrize("max_tokens", [32, 57, 256])
@pytest.mark.parametrize("line", ["我对花生过敏。", "У меня аллергия на арахис.", "لدي حساسية من الفول السوداني."])
def test_packed_text_in_another_script_never_passes_the_budget_counted_by_script(max_tokens: int, line: str) -> None:
    when = datetime(2026, 3, 1, tzinfo=UTC)
    profile = {"名字": Entry("王伟", when)}
    for count in (1, 3, 40):
        hits = [Ranked(_record(i, line * (1 + i % 5), day=i % 4), 1.0, 0.9) for i in range(count)]

        packed = pack(hits, profile, 50, max_tokens, grouped=True)

        assert packed.tokens <= max_tokens and len(packed.hits) + packed.left_out == count
        assert packed.tokens > -(-len(packed.text) // 4)  # more than its characters counted as English


def test_an_excerpt_takes_in_the_nearer_neighbouring_piece_where_the_budget_left_holds_both() -> None:
    words = [f"w{i}" for i in range(800)]  # ~1,200 tokens in 7 pieces: words 1-150, 121-270, 241-390, ...
    cosines = (0.1, 0.6, 0.9, 0.3, 0.1, 0.1, 0.1)  # the third nearest, then the second
    long = Ranked(_record(1, " ".join(words)), 1.0, 0.5, piece_cosines=cosines)

    roomy = pack([long], {}, 10, 500, grouped=True, excerpt_span=2)
    tight = pack([long], {}, 10, 250, grouped=True, excerpt_span=2)
    alone = pack([long], {}, 10, 500, grouped=True, excerpt_span=1)

    assert roomy.hits[0].excerpt is not None and (roomy.hits[0].excerpt.first, roomy.hits[0].excerpt.last) == (121, 390)
    assert " ".join(words[120:390]) in roomy.text and "(excerpt: words 121-390 of 800;" in roomy.text
    assert roomy.tokens <= 500
    for one in (tight, alone):  # two pieces do not fit 250 tokens; one piece asked for
        assert one.hits[0].excerpt is not None and (one.hits[0].excerpt.first, one.hits[0].excerpt.last) == (241, 390)


def test_an_excerpt_takes_in_the_other_neighbour_where_only_it_fits() -> None:
    words = [f"w{i}" for i in range(800)]  # the sixth piece is words 601-750, the seventh and last 721-800
    long = Ranked(_record(1, " ".join(words)), 1.0, 0.5, piece_cosines=(0.1, 0.1, 0.1, 0.1, 0.6, 0.9, 0.3))

    spans = {}
    for budget in (260, 320, 400):  # the fifth piece (481-630) is nearer, but 150 words, and the last 80
        cut = pack([long], {}, 10, budget, grouped=True, excerpt_span=2).hits[0].excerpt
        assert cut is not None
        spans[budget] = (cut.first, cut.last)

    assert spans == {260: (601, 750), 320: (601, 800), 400: (481, 750)}


def test_an_excerpt_is_the_piece_holding_the_query_s_words_where_they_outweigh_meaning() -> None:
    words = [f"w{i}" for i in range(400)]
    long = Ranked(_record(1, " ".join(words)), 1.0, 0.5, piece_cosines=(0.9, 0.2, 0.2, 0.2))

    by_meaning = pack([long], {}, 10, 300, grouped=True, terms=["w200"], excerpt_words=0.0)
    by_words = pack([long], {}, 10, 300, grouped=True, terms=["w200"], excerpt_words=1.0)

    assert by_meaning.hits[0].excerpt is not None and by_meaning.hits[0].excerpt.first == 1  # words 1-150
    assert by_words.hits[0].excerpt is not None and by_words.hits[0].excerpt.first == 121  # 121-270 alone hold w200
    assert "w200" in by_words.text and "w200" not in by_meaning.text


def test_a_long_hit_that_fits_whole_is_shown_whole_and_one_without_pieces_is_left_out() -> None:
    text_ = " ".join(f"w{i}" for i in range(400))
    with_piece = Ranked(_record(1, text_), 1.0, 0.5, piece_cosines=(0.9, 0.1, 0.1, 0.1))

    whole = pack([with_piece], {}, 10, 2_000, grouped=True)
    assert whole.hits[0].excerpt is None and text_ in whole.text

    old = Ranked(_record(1, text_), 1.0, 0.5)  # stored before pieces were kept: no piece to show
    left = pack([old], {}, 10, 300, grouped=True)
    assert left.hits == [] and left.left_out == 1


def test_the_users_facts_of_a_kind_are_listed_only_for_a_query_about_the_user(memory: Memory) -> None:
    """ "The identity team" comes close to the kind "my identity", but a question that names no user is not about
    the user's identity: the team's fact ranks first, and the user's identity facts are listed only when asked."""
    facts = [
        MemoryIn(content="I work at Globex as a data engineer", kind=Kind.IDENTITY),
        MemoryIn(content="I was born in Porto", kind=Kind.IDENTITY),
    ]
    notes = [MemoryIn(content=c) for c in _CHORES] + [
        MemoryIn(content="Amara took over as product owner of the identity team."),
        MemoryIn(content="The billing team's product owner is Kofi."),
    ]
    memory.remember([*facts, *notes], DAY)
    team = "Who is the product owner of the identity team?"
    names = memory.parts.vectors_of(list(ranking.KIND_NAMES.values()))
    vectors = embed_queries(memory.parts.embedder, [team])
    assert ranking.asked_kinds(names, vectors, memory.settings.recall.kind_match)  # the premise: it sounds like one
    assert memory.recall(team, DAY, limit=3).hits[0].record.content.startswith("Amara")
    mine = memory.recall("what is my identity?", DAY, limit=3).hits
    assert {h.record.content for h in mine[:2]} == {f.content for f in facts}


def test_the_names_a_query_writes_with_a_capital_letter_are_what_it_asks_about_as_terms_and_as_written() -> None:
    assert ranking.named("Where does Ana live?") == {"ana"}
    assert ranking.named("Atlas web framework") == {"atlas"}
    assert ranking.named("When did Caroline go to the LGBTQ support group?") == {*words("Caroline LGBTQ"), "caroline"}
    assert ranking.named("Where do I live? I'm asking for my records") == set()  # "I" and question words: no names
    assert ranking.named("what is my usual drink") == set()


def test_capitals_name_nothing_in_german_and_not_a_question_word_in_other_languages() -> None:
    assert ranking.named("Wo wohnt Anna jetzt mit ihrem Hund?") == set()  # German capitalises every noun
    assert ranking.named("¿Dónde vive Ana ahora?") == set(words("Ana"))  # "Dónde" opens the question
    assert ranking.named("Où habite Marie maintenant ?") == {*words("Marie"), "marie"}
    assert ranking.named("安娜住在哪里？") == set()  # no capitals in the script


def test_the_hits_holding_the_querys_names_go_first_each_part_in_its_order() -> None:
    def hit(i: int, content: str) -> Ranked:
        return Ranked(Record(f"{i:012x}", content, Tier.WARM, Kind.NOTE, False, DAY, DAY), 1.0 - i / 20, 0.5)

    ranked = [
        hit(0, "Sam's usual drink is a cortado."),
        hit(1, "Noor's usual drink is a flat white."),
        hit(2, "Ana only orders chai lately."),
        hit(3, "Lunch with Sam near the office."),
        hit(4, "Ana's bike is a Brompton."),
        *[hit(i, f"Chore {i}: pay the bills.") for i in range(5, 12)],
        hit(12, "Ana joined the choir."),  # past the window: stays where it is
    ]
    moved = ranking.named_first("Ana usual drink", ranked)
    assert [h.record.content for h in moved[:3]] == [
        "Ana only orders chai lately.",
        "Ana's bike is a Brompton.",
        "Sam's usual drink is a cortado.",
    ]
    assert moved[10:] == ranked[10:]
    assert ranking.named_first("usual drink", ranked) == ranked  # no name asked: nothing moves
    assert ranking.named_first("Zed usual drink", ranked) == ranked  # no hit holds it: nothing moves


def test_a_name_asked_in_one_language_is_found_in_a_fact_said_in_another_where_their_stems_differ() -> None:
    def hit(i: int, content: str) -> Ranked:
        return Ranked(Record(f"{i:012x}", content, Tier.WARM, Kind.NOTE, False, DAY, DAY), 1.0 - i / 20, 0.5)

    ranked = [
        hit(0, "My colleague Priya is allergic to kiwi."),
        hit(1, "Mi compañero Javier es alérgico a los frutos secos."),  # "Javier": "javi" to the Spanish stemmer
        hit(2, "Mon collègue Thomas est allergique aux fruits de mer."),  # "thom" in French, "thoma" in English
    ]

    assert "javi" not in ranking.named("What is Javier allergic to?")  # the premise: the stems differ
    assert ranking.named_first("What is Javier allergic to?", ranked)[0] == ranked[1]
    assert ranking.named_first("What is Thomas allergic to?", ranked)[0] == ranked[2]


def test_another_persons_fact_in_the_query_s_words_does_not_answer_for_the_person_asked_about(
    memory: Memory,
) -> None:
    """Two of the query's three words match Sam's and Noor's facts; the person asked about says it in other words."""
    facts = [
        "Sam's usual drink is a cortado.",
        "Noor's usual drink is a flat white.",
        "Ana only orders chai lately.",
        "Ana's bike is a Brompton.",
    ]
    memory.remember([MemoryIn(content=c) for c in [*facts, *_CHORES]], DAY)
    asked = "Ana usual drink"
    assert memory.recall(asked, DAY, limit=3).hits[0].record.content == "Ana only orders chai lately."
    memory.settings = replace(memory.settings, recall=replace(memory.settings.recall, names_first=False))
    assert memory.recall(asked, DAY, limit=3).hits[0].record.content != "Ana only orders chai lately."
