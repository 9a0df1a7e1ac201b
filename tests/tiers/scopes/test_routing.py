"""Which scope a memory or a profile key belongs to: the person's facts to the user scope, the rest to the project."""

from __future__ import annotations

import pytest

from tiers.records import Kind, MemoryIn
from tiers.scopes.routing import Scope, of_key, of_memory


@pytest.mark.parametrize(
    "content",
    [
        "I am allergic to peanuts",
        "My name is Ada Lovelace",
        "My sister Lena lives in Porto",
        "I prefer answers in British English",
        "The user is vegetarian and cannot eat gelatine",
        "My new phone number is 555-0199",
        "I'm a night person, never book meetings before 10 for me",
    ],
)
def test_a_fact_about_the_person_goes_to_the_user_scope(content: str) -> None:
    assert of_memory(MemoryIn(content=content)) is Scope.USER


@pytest.mark.parametrize(
    "content",
    [
        "The billing service deploys every Tuesday",
        "We decided to use Postgres 16 for the new cluster",
        "I prefer tabs in this repo",  # the person's preference, said of a project: the project's
        "Never push to main in this project",
        "Remind Ana about the offsite",
        "Please always run the linter before a commit",  # a standing rule said of no one
    ],
)
def test_a_fact_about_a_project_or_no_one_stays_in_the_project(content: str) -> None:
    assert of_memory(MemoryIn(content=content)) is Scope.PROJECT


def test_a_profile_key_decides_by_its_first_part_and_an_unknown_one_says_nothing() -> None:
    assert [of_key(k) for k in ("name", "diet.allergy", "family/sister", "timezone")] == [Scope.USER] * 4
    assert [of_key(k) for k in ("current_project", "project.shop.db", "repo")] == [Scope.PROJECT] * 3
    assert of_key("deploy_target") is None and of_key("coffee") is None


def test_a_key_outweighs_what_the_content_says_and_a_kind_hint_is_trusted() -> None:
    assert of_memory(MemoryIn(content="Europe/Lisbon", key="timezone")) is Scope.USER
    assert of_memory(MemoryIn(content="I like Postgres", key="project.shop.db")) is Scope.PROJECT
    assert of_memory(MemoryIn(content="Tall, wears glasses", kind=Kind.IDENTITY)) is Scope.USER
