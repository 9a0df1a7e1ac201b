"""Write-time classification by rules: durable first-person facts are protected, the rest are notes."""

from __future__ import annotations

import pytest

from tiers.lifecycle.classify import Classified, classify
from tiers.records import Kind


@pytest.mark.parametrize(
    ("content", "kind"),
    [
        ("I am allergic to peanuts", Kind.HEALTH),
        ("I can't eat gluten, I'm celiac", Kind.HEALTH),
        ("Never push to main on a Friday, we agreed", Kind.CONSTRAINT),
        ("I work at Acme as a data engineer", Kind.IDENTITY),
        ("I live in Lisbon", Kind.IDENTITY),
        ("My sister Marta visits in May", Kind.RELATIONSHIP),
        ("I prefer tabs over spaces", Kind.PREFERENCE),
        ("I'm vegetarian", Kind.PREFERENCE),
        ("The user is allergic to shellfish", Kind.HEALTH),
    ],
)
def test_first_person_durable_facts_are_classified_and_protected(content: str, kind: Kind) -> None:
    found = classify(content)

    assert (found.kind, found.durable) == (kind, True)


@pytest.mark.parametrize(
    "content",
    [
        "The build takes 12 minutes on CI",
        "Peanuts are legumes, not nuts",
        "Marta prefers tabs",
        "I went to the shop",
        "We shipped release 4.2",
    ],
)
def test_statements_that_are_not_durable_first_person_facts_are_unprotected_notes(content: str) -> None:
    assert classify(content) == Classified(Kind.NOTE, False)


def test_my_name_is_yields_a_profile_name_with_its_capitalised_words() -> None:
    found = classify("Hi! My name is Ana Sofia Costa and I like tea")

    assert found == Classified(Kind.IDENTITY, True, key="name", value="Ana Sofia Costa")


def test_the_agents_kind_hint_wins_over_the_rules() -> None:
    assert classify("I am allergic to peanuts", Kind.NOTE) == Classified(Kind.NOTE, False)
    assert classify("Deploys happen on Tuesdays", Kind.CONSTRAINT) == Classified(Kind.CONSTRAINT, True)
    assert classify("My name is Ana", Kind.IDENTITY).key is None
