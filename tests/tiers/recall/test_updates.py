"""The update rule and recall's order for updates, as pure logic on records and vectors given by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from tiers.model import scale
from tiers.recall import updates
from tiers.records import Kind, Record, Tier

JAN = datetime(2026, 1, 1, tzinfo=UTC)


def record(rid: str, content: str, at: datetime, stored: datetime | None = None, by: str | None = None) -> Record:
    return Record(rid, content, Tier.WARM, Kind.NOTE, False, at, stored or at, superseded_by=by)


def unit(*values: float) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_a_newer_memory_sharing_a_word_may_update_an_older_one_when_close_or_saying_it_changed() -> None:
    old = record("a" * 12, "I live in Berlin", JAN)
    moved = record("b" * 12, "I moved to Lisbon; I live there now", JAN + timedelta(days=90))
    plain = record("c" * 12, "I live near the river", JAN + timedelta(days=90))

    assert updates.may_update(moved, old, 0.41)  # not close, but it says it changed
    assert not updates.may_update(plain, old, 0.41)  # as far, and saying nothing changed
    assert updates.may_update(plain, old, 0.7)  # close enough alone
    assert not updates.may_update(old, moved, 0.7)  # never the older as the later word
    assert not updates.may_update(record("d" * 12, "Lunch was great", moved.occurred_at), old, 0.9)  # no shared word
    assert not updates.may_update(plain, old, 0.99)  # the same thing said again


def test_two_memories_said_in_the_first_person_share_their_subject() -> None:
    """The speaker is a stop word ("I", "my"): two first-person memories share a subject with no other word."""
    old = record("a" * 12, "I'm vegetarian", JAN)
    new = record("b" * 12, "I've been vegan since January", JAN + timedelta(days=90))
    other = record("c" * 12, "Ana is vegetarian", JAN)

    assert updates.said_by_me("My manager is Sarah") and not updates.said_by_me("Ana is vegetarian")
    assert updates.may_update(new, old, 0.69)
    assert not updates.may_update(new, other, 0.69)  # someone else's diet


def test_the_same_fact_about_another_person_is_not_a_later_word_on_it() -> None:
    """Alike in every word but the name they begin with, two memories are one fact about two subjects; a fact that
    holds the other's name, or says that something changed (a new owner named for a team), may still update."""
    carla = record("a" * 12, "Carla lives in Seattle.", JAN)
    greta = record("b" * 12, "Greta lives in Seattle.", JAN + timedelta(days=90))
    moved = record("c" * 12, "New address for Carla: a flat in Porto.", JAN + timedelta(days=90))
    owner = record("d" * 12, "Isabel is the product owner of the mobile team.", JAN)
    took_over = record("e" * 12, "Chen took over as product owner of the mobile team.", JAN + timedelta(days=90))

    assert updates.begins_with_a_name("Kenji's usual drink is a cortado.") == "kenji"
    assert updates.begins_with_a_name("I moved to Lisbon") is None
    assert updates.begins_with_a_name("The billing team's lead is Priya") is None
    assert updates.other_subjects(greta.content, carla.content)
    assert not updates.may_update(greta, carla, 0.9)  # close, but another person's
    assert updates.may_update(moved, carla, 0.62)  # begins otherwise, but holds her name
    assert updates.may_update(took_over, owner, 0.62)  # says it changed
    assert not updates.other_subjects("I moved to Lisbon", "I live in Berlin")  # the speaker is one subject
    assert not updates.other_subjects("The search team's lead is Omar", "The billing team's lead is Priya")


def test_dates_that_move_the_same_day_follow_the_order_they_were_stored_in() -> None:
    day = JAN + timedelta(days=30)
    planned = record("a" * 12, "The launch is on April 2", day, day)
    moved = record("b" * 12, "The launch moved to April 14", day, day + timedelta(hours=3))

    assert updates.may_update(moved, planned, 0.8) and not updates.may_update(planned, moved, 0.8)


def test_later_first_lifts_the_later_word_into_the_older_ones_place_and_leaves_the_rest() -> None:
    old = record("a" * 12, "Our database is MySQL", JAN)
    other = record("b" * 12, "The offsite is in Porto", JAN + timedelta(days=10))
    new = record("c" * 12, "We migrated the database to PostgreSQL", JAN + timedelta(days=100))
    vectors = np.stack([unit(1, 0.2, 0), unit(0, 0, 1), unit(1, 0.8, 0)])  # old and new close, other apart

    placed, marks = updates.later_first([old, other, new], vectors)

    assert placed == [2, 1, 0]  # the pair trades places (0 and 2); the other keeps place 1
    assert marks == {0: updates.Later(new.id, new.occurred_at)}
    # Asked about the past, the order is recall's, the older still marked.
    assert updates.later_first([old, other, new], vectors, past=True) == ([0, 1, 2], marks)
    assert updates.asks_past("Which database did we use before PostgreSQL?")
    assert not updates.asks_past("Which database do we use?")


def test_the_later_word_goes_above_hits_less_close_to_the_query_than_its_fact() -> None:
    """Another fact about the same person ranked first (a note that shares the query's name) is less close to the
    query than the older memory of the update: the later word goes above it, the rest keep their order."""
    note = record("a" * 12, "Lunch with Ana at a pizza place", JAN + timedelta(days=120))
    old = record("b" * 12, "Ana writes code in Vim", JAN)
    new = record("c" * 12, "Ana switched to Zed for editing", JAN + timedelta(days=150))
    far = record("d" * 12, "The offsite is in Porto", JAN + timedelta(days=10))
    vectors = np.stack([unit(0, 1, 0), unit(1, 0.2, 0), unit(1, 0.6, 0), unit(0, 0, 1)])
    relevance = [0.56, 0.72, 0.6, 0.3]  # each one's cosine to "which editor does Ana use?"

    placed, marks = updates.later_first([note, old, new, far], vectors, relevance)

    assert placed == [2, 0, 1, 3] and set(marks) == {1}
    # Nothing moves above a hit closer to the query than the fact, nor for a question about the past.
    assert updates.later_first([note, old, new, far], vectors, [0.9, 0.72, 0.6, 0.3])[0] == [0, 2, 1, 3]
    assert updates.later_first([note, old, new, far], vectors, relevance, past=True)[0] == [0, 1, 2, 3]
    # An order a cross-encoder read keeps its first hit: the later word only trades places with its older one.
    assert updates.later_first([note, old, new, far], vectors, relevance, lift=False)[0] == [0, 2, 1, 3]
    # A later memory that does not say that something changed is paired on likeness alone: where a model's
    # cosines say little (a language it was not trained on), that is a guess, so it only trades places too.
    unsaid = record("c" * 12, "Ana uses Zed for editing", JAN + timedelta(days=150))
    assert updates.later_first([note, old, unsaid, far], vectors, relevance)[0] == [0, 2, 1, 3]


def test_each_memory_is_paired_once_with_the_update_most_alike_and_relevant() -> None:
    """Three newer notes share the older one's words; only the one most like it is its later word, and the note
    that is like that update (a sibling saying another team changed too) neither marks it nor moves it."""
    old = record("a" * 12, "The billing team's manager is Kofi", JAN)
    new = record("b" * 12, "Kofi left; the billing team's manager is now Mei", JAN + timedelta(days=100))
    sibling = record("c" * 12, "The mobile team's manager is now Chen", JAN + timedelta(days=120))
    vectors = np.stack([unit(1, 0.2, 0), unit(1, 0.6, 0.1), unit(0.5, 0.7, 0.5)])
    relevance = [0.8, 0.7, 0.5]  # each one's cosine to "who manages the billing team?"

    placed, marks = updates.later_first([old, new, sibling], vectors, relevance)

    assert placed == [1, 0, 2]
    assert set(marks) == {0} and marks[0].id == new.id  # the update is not itself marked by the sibling


def test_a_later_memory_far_less_relevant_to_the_query_is_not_lifted_above_the_older_one() -> None:
    old = record("a" * 12, "The billing team's manager is Kofi", JAN)
    new = record("b" * 12, "Kofi left; the billing team's manager is now Mei", JAN + timedelta(days=100))
    vectors = np.stack([unit(1, 0.2), unit(1, 0.6)])

    assert updates.later_first([old, new], vectors, [0.8, 0.8 - updates.GAP - 0.05]) == ([0, 1], {})
    placed, marks = updates.later_first([old, new], vectors, [0.8, 0.8 - updates.GAP + 0.05])
    assert placed == [1, 0] and marks[0].id == new.id


def test_a_query_in_the_older_memorys_own_words_keeps_it_in_place() -> None:
    """Its cosine to the query may stop short of SAME (a queries' graph that is not the memories'): the words say it."""
    old = record("a" * 12, "The lantern survey needs 11 more readings", JAN)
    new = record("b" * 12, "The lantern survey needs 8 more readings", JAN + timedelta(days=5))
    vectors = np.stack([unit(1, 0), unit(0.95, np.sqrt(1 - 0.95**2))])

    assert updates.later_first([old, new], vectors, [0.96, 0.9])[0] == [1, 0]  # asked otherwise: the later first
    asked = "the lantern survey  needs 11 more readings"
    assert updates.later_first([old, new], vectors, [0.96, 0.9], query=asked) == ([0, 1], {})


def test_a_confirmed_update_pairs_whatever_the_words() -> None:
    old = record("a" * 12, "Standup at nine", JAN, by="b" * 12)
    new = record("b" * 12, "Daily sync at ten", JAN + timedelta(days=5))
    vectors = np.stack([unit(1, 0), unit(0, 1)])  # nothing in common but the agent's word

    placed, marks = updates.later_first([old, new], vectors)

    assert placed == [1, 0] and marks[0].id == new.id
    assert updates.later_first([old], vectors[:1]) == ([0], {})


def test_memories_said_together_or_a_question_are_not_the_later_word() -> None:
    """Turns of one conversation stored in one write (a microsecond apart, the same time) are said together, and a
    memory that asks says no new value: neither is an update, however close."""
    day = JAN + timedelta(days=30)
    first = record("a" * 12, "Joanna: my cork board is full of quotes", day, day)
    next_turn = record("b" * 12, "Joanna: my cork board has photos now", day, day + timedelta(microseconds=1))
    written_later = record("c" * 12, "Joanna: my cork board has photos now", day, day + timedelta(minutes=5))
    asking = record("d" * 12, "Nate: is your cork board still full of quotes now?", day + timedelta(days=9))

    assert not updates.may_update(next_turn, first, 0.8)
    assert updates.may_update(written_later, first, 0.8)
    assert not updates.may_update(asking, first, 0.8)
    assert updates.asks('Nate: what is it called?"') and not updates.asks("It is called Pixel.")


def test_a_question_in_the_past_tense_asks_what_happened_then() -> None:
    for past in ("Where did Goran live before Austin?", "When was the release planned?", "What were the limits?"):
        assert updates.asks_past(past), past
    for now in ("Where does Goran live?", "What is our rate limit?", "Atlas offsite date", "my diet"):
        assert not updates.asks_past(now), now


def test_the_later_word_chosen_is_the_one_that_answers_the_query_before_the_one_most_alike() -> None:
    """Two later memories may update the older one: one nearly its twin in meaning (another service's lead, in the
    same words) and one less alike that answers the question asked. Closeness to the query weighs more."""
    old = record("a" * 12, "The billing service's on-call lead is Priya", JAN)
    twin = record("b" * 12, "The search service's on-call lead is Omar", JAN + timedelta(days=30))
    answer = record("c" * 12, "The billing service's on-call is led by Marek", JAN + timedelta(days=150))
    vectors = np.stack([unit(1, 0, 0), unit(0.9, np.sqrt(1 - 0.81), 0), unit(0.62, 0, np.sqrt(1 - 0.62**2))])
    relevance = [0.8, 0.55, 0.75]  # each one's cosine to "who leads the billing on-call?"

    placed, marks = updates.later_first([old, twin, answer], vectors, relevance)

    assert marks[0].id == answer.id and placed[0] == 2


def test_a_later_memory_that_says_it_changed_goes_before_a_note_as_close() -> None:
    old = record("a" * 12, "The billing service's on-call lead is Priya", JAN)
    note = record("b" * 12, "Priya reviewed the billing service dashboards", JAN + timedelta(days=60))
    update = record("c" * 12, "Priya went on leave; Marek leads the billing on-call now", JAN + timedelta(days=150))
    vectors = np.stack([unit(1, 0, 0), unit(0.7, np.sqrt(1 - 0.49), 0), unit(0.65, 0, np.sqrt(1 - 0.65**2))])

    placed, marks = updates.later_first([old, note, update], vectors, [0.7, 0.6, 0.6])

    assert marks == {0: updates.Later(update.id, update.occurred_at)} and placed == [2, 1, 0]


def test_everyday_words_that_say_something_changed() -> None:
    for said in (
        "Done: the service is on Kafka, the move finished Friday",
        "New address for Ana, since the move",
        "Ana has settled in Porto",
        "Say hi to Miso, the cat we took in last month",
        "Hugo went keto in March",
        "She went part-time after the baby",
    ):
        assert updates.says_change(said), said
    for plain in (
        "The cat is called Miso",
        "Lunch with Ana in Porto",
        "The service is built on RabbitMQ",
        "The demo to the data team went well",
        "We went to Rome for the weekend",
        "The release went out on Friday",
    ):
        assert not updates.says_change(plain), plain


def test_two_memories_of_one_language_read_by_its_own_stretch_where_the_scale_has_one() -> None:
    """A model whose unrelated texts of one language sit closer than English ones reads their pairs by that
    language's stretch: two Chinese notes as alike as an English memory and its update are not paired."""
    fact = record("a" * 12, "我父母住在杭州。", JAN)
    note = record("b" * 12, "马超的父母这周末从武汉过来。", JAN + timedelta(days=30))
    vectors = np.stack([unit(1, 0.4, 0), unit(1, 0.5, 0.05)])  # 0.996: 0.82 read on 40, 0.47 on 120
    cosine = float(vectors[0] @ vectors[1])
    english = scale.CosineScale(memories=40.0)
    own = scale.CosineScale(memories=40.0, memories_in=(("zh", 120.0),))

    assert english.between_memories(cosine) >= updates.CLOSE > own.between_memories(cosine, "zh")
    assert updates.later_first([fact, note], vectors, scale=english)[1]  # paired on the English stretch
    assert updates.later_first([fact, note], vectors, scale=own) == ([0, 1], {})
    # A pair of two languages, or of a language without its own, keeps the scale's `memories`.
    assert own.between_memories(cosine, "ko") == own.between_memories(cosine) == english.between_memories(cosine)
    cosines = np.full((3, 3), cosine, dtype=np.float32)
    read = own.between(cosines, ["zh", "en", "zh"])
    assert read[0, 2] == own.between_memories(cosine, "zh") and read[0, 1] == own.between_memories(cosine)
    assert scale.CosineScale().between(cosines, ["zh", "en", "zh"]) is cosines  # the default model's: as they are
