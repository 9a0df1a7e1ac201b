"""The benchmark's rules: a question asked in keywords or as a topic, as agents often do; a session kept whole;
settings changed for a tuning run; a flat baseline shown by excerpts; the rank of a question's last evidence
turn (pure logic)."""

from datetime import UTC, datetime
from types import SimpleNamespace

from tests.bench.ceiling import MISSING, last_evidence_rank, within
from tests.bench.locomo import FORMS, Turn, baseline_pack, keywords, session_parts, topic, with_values
from tiers.recall.rank import RecallSettings
from tiers.records import MAX_CONTENT_CHARS, Kind, Record, Tier
from tiers.text.terms import words


def test_a_question_in_keywords_keeps_its_content_words_in_order_and_drops_question_and_function_words() -> None:
    assert keywords("When did Ada move to the coast?") == "Ada move coast"
    assert keywords("What is Bo's favourite kind of tea?") == "Bo's favourite kind tea"
    assert keywords("Why?") == "Why?"  # nothing left: asked as it was
    assert FORMS["question"]("Where was it?") == "Where was it?"


def test_a_question_as_a_topic_is_the_last_three_of_its_keywords() -> None:
    assert topic("When did Ada go to the pottery class downtown?") == "pottery class downtown"
    assert topic("When did Ada move to the coast?") == "Ada move coast"  # three keywords or fewer: all of them
    assert FORMS["topic"]("Why?") == "Why?"


def test_a_session_is_kept_whole_unless_one_memory_would_pass_the_content_limit() -> None:
    at = datetime(2023, 5, 8, tzinfo=UTC)
    short = [Turn(f"D1:{i}", f"turn {i}", at) for i in range(5)]
    assert session_parts(short) == [short]
    long = [Turn(f"D2:{i}", "x" * 3_000, at) for i in range(5)]
    parts = session_parts(long)
    assert [t for part in parts for t in part] == long  # every turn once, in order
    assert all(len("\n".join(t.content for t in part)) <= MAX_CONTENT_CHARS for part in parts)
    assert [len(part) for part in parts] == [2, 2, 1]


def test_settings_given_as_name_and_value_take_each_settings_own_type() -> None:
    changed = with_values(RecallSettings(), ["reach=3", "neighbours=0.5", "grouped=false", "perspective=1"])
    assert (changed.reach, changed.neighbours, changed.grouped, changed.perspective) == (3, 0.5, False, True)
    assert with_values(RecallSettings(), []) == RecallSettings()


def test_a_flat_baseline_given_the_query_s_words_shows_a_long_memory_by_the_pieces_holding_them() -> None:
    at = datetime(2023, 5, 8, tzinfo=UTC)
    text = " ".join(f"w{i}" for i in range(800)) + " pottery"  # the last piece holds the asked word
    hit = SimpleNamespace(record=Record("0" * 12, text, Tier.WARM, Kind.NOTE, False, at, at), score=1.0)

    whole_only = baseline_pack([hit], 10, 300, grouped=True)
    excerpted = baseline_pack([hit], 10, 300, grouped=True, terms=words("the pottery class"))

    assert whole_only.hits == [] and whole_only.left_out == 1  # as a flat store shows it: whole, or not at all
    cut = excerpted.hits[0].excerpt
    assert cut is not None and cut.last == 801 and "pottery" in excerpted.text and excerpted.tokens <= 300


def test_the_ceiling_reads_the_rank_of_a_questions_last_evidence_turn() -> None:
    covers = {"r1": {"D1:1"}, "r2": {"D1:2", "D1:3"}, "r3": {"D2:1"}}
    ranked = ["r3", "r1", "r2"]
    assert last_evidence_rank(ranked, covers, {"D1:1"}) == 2
    assert last_evidence_rank(ranked, covers, {"D1:3", "D2:1"}) == 3  # a record covering two turns: its rank
    assert last_evidence_rank(ranked, covers, {"D1:1", "D9:9"}) == MISSING  # one not returned: never within
    assert within([2, 3, MISSING, 30], 3) == 0.5
    assert within([], 10) == 0.0
