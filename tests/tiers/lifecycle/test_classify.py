"""Write-time classification: durable facts about the user are protected, chit-chat and work notes are not."""

from __future__ import annotations

import pytest

from tiers.lifecycle.classify import STATEMENT_WORDS, Classified, classify, first_person
from tiers.records import Kind

DURABLE = [
    ("I'm allergic to peanuts, even traces", Kind.HEALTH),
    ("I have type 1 diabetes so lunch meetings need to be flexible", Kind.HEALTH),
    ("The user is allergic to shellfish", Kind.HEALTH),
    ("I can't eat gluten, I'm celiac", Kind.HEALTH),
    ("Never schedule calls with me on Sundays", Kind.CONSTRAINT),
    ("Never push directly to main", Kind.CONSTRAINT),
    ("Don't ever share my phone number with anyone", Kind.CONSTRAINT),
    ("We must not deploy on Fridays", Kind.CONSTRAINT),
    ("Always cc Priya on emails about the budget", Kind.CONSTRAINT),
    ("Under no circumstances send invoices to the old billing address", Kind.CONSTRAINT),
    ("My name is Ana Ruiz", Kind.IDENTITY),
    ("I work at Fjord Analytics as a data engineer", Kind.IDENTITY),
    ("I'm a software engineer", Kind.IDENTITY),
    ("I live in Lisbon", Kind.IDENTITY),
    ("The user works for a hospital in Porto", Kind.IDENTITY),
    ("My daughter Lea turns seven in March", Kind.RELATIONSHIP),
    ("My wife is called Marta", Kind.RELATIONSHIP),
    ("I prefer tabs over spaces", Kind.PREFERENCE),
    ("The user prefers dark mode in every editor", Kind.PREFERENCE),
    ("I'm vegetarian", Kind.PREFERENCE),
    ("I'd rather get short answers without the preamble", Kind.PREFERENCE),
    ("My favourite coffee is a flat white", Kind.PREFERENCE),
]


@pytest.mark.parametrize(("content", "kind"), DURABLE)
def test_durable_facts_are_classified_and_protected(content: str, kind: Kind) -> None:
    found = classify(content)
    assert found.kind is kind
    assert found.durable


CHIT_CHAT = [
    "Thanks, that worked!",
    "haha nice one",
    "I'm a bit tired today",
    "I'm a little under the weather",
    "I like this idea, let's go with it",
    "I love that, thanks",
    "Call me when the build is green",
    "Never mind, it works now",
    "Always happy to help",
    "The weather in Lisbon is awful today",
    "Meeting notes: billing sync, agreed to ship the invoice export next sprint",
    "Decided to use Postgres for the billing service",
    "The user table needs an index on email",
    "I want to grab lunch soon",
    "lol my bad, typo",
]


@pytest.mark.parametrize("content", CHIT_CHAT)
def test_chit_chat_and_work_notes_are_not_protected(content: str) -> None:
    found = classify(content)
    assert not found.durable, found


def test_a_name_becomes_the_profile_key_name() -> None:
    found = classify("Hi! My name is Ana Ruiz, nice to meet you")
    assert (found.kind, found.key, found.value) == (Kind.IDENTITY, "name", "Ana Ruiz")


def test_a_third_person_name_becomes_the_profile_key_name() -> None:
    assert classify("The user's name is Bo Chen").value == "Bo Chen"


def test_the_agents_kind_hint_wins_over_the_rules() -> None:
    assert classify("I'm allergic to peanuts", Kind.NOTE) == classify("anything", Kind.NOTE)
    assert not classify("I'm allergic to peanuts", Kind.NOTE).durable
    assert classify("lol", Kind.HEALTH).durable


def test_third_person_statements_are_read_in_the_first_person() -> None:
    assert first_person("The user prefers tea and the user's cat is Miso") == "I prefer tea and my cat is Miso"


def test_a_long_transcript_is_a_note_however_much_of_it_is_said_in_the_first_person() -> None:
    """Past STATEMENT_WORDS words: no durable kind, no protection, no profile key; the agent's hint still counts."""
    chatter = "Dana: We talked about the garden, the weather and the new bus timetable for a while. " * 12
    transcript = f"{chatter}Sam: My name is Sam Reyes and I love hiking in the hills."
    assert len(transcript.split()) > STATEMENT_WORDS

    assert classify(transcript) == Classified(Kind.NOTE, False)
    assert classify("My name is Sam Reyes and I love hiking in the hills.").durable  # alone, a statement
    assert classify(transcript, Kind.PREFERENCE) == Classified(Kind.PREFERENCE, True)
