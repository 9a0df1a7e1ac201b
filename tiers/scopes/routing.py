"""Which scope a memory or a profile key belongs to: the person's facts go to the user scope, the rest stays in the
project. Pure rules, decided at write time; an explicit scope always wins, and where the rules cannot tell, the
project keeps it (what stays in a project never shows up in another)."""

from __future__ import annotations

import re
from enum import StrEnum

from tiers.lifecycle.classify import classify, first_person
from tiers.records import Kind, MemoryIn


class Scope(StrEnum):
    """Where a memory or a profile entry lives: the project's namespace, or the user scope every project reads."""

    PROJECT = "project"
    USER = "user"


# Kinds that state who the person is: theirs in every project, unless said of a project.
PERSONAL_KINDS = frozenset({Kind.IDENTITY, Kind.RELATIONSHIP, Kind.HEALTH})
# Kinds that may be the person's or a project's ("I prefer tabs" / "the repo uses tabs"): the person's when said
# of themselves, the project's otherwise.
LEANING_KINDS = frozenset({Kind.PREFERENCE, Kind.CONSTRAINT})
# The person's own things, said in the first person ("my new phone number is ..."): the classifier's relationship
# rule reads "my manager" but not "my new manager", and a phone number or an address is no durable kind, yet both
# are the person's in every project, and an update of one must land beside the fact it updates.
_MY_OWN = re.compile(
    r"\bmy (?:new |old |current |former |previous |usual |home |work |personal |mobile )?"
    r"(?:phone|mobile|cell|number|email|e-mail|address|home|flat|apartment|house|birthday|name|surname|nickname|"
    r"pronouns|doctor|dentist|therapist|manager|boss|employer|job|role|title|salary|wife|husband|partner|spouse|"
    r"boyfriend|girlfriend|son|daughter|kids?|children|mom|mother|dad|father|brother|sister|friend|dog|cat|"
    r"diet|allerg\w*|medication|timezone|time zone|language|native language|hometown|city|country)\b",
    re.IGNORECASE,
)
_SPEAKS_OF_ME = re.compile(r"\b(?:i|i'm|i am|i've|i'd|my|me|myself|mine)\b", re.IGNORECASE)
_OF_A_PROJECT = re.compile(
    r"\b(?:this|that|the|our|in|for) (?:project|repo|repository|codebase|code base|branch|service|app|api|module|"
    r"package|crate|library|file|folder|directory|pr|pull request|ticket|sprint|build|pipeline|workspace|monorepo|"
    r"deployment|cluster|database|schema)s?\b",
    re.IGNORECASE,
)
# Profile keys about the person, by their first part (`diet.allergy` -> `diet`).
PERSON_KEYS = frozenset(
    {
        "name", "full_name", "nickname", "pronouns", "age", "birthday", "language", "languages", "locale",
        "timezone", "location", "city", "country", "home", "hometown", "email", "phone", "job", "role",
        "occupation", "profession", "employer", "diet", "allergy", "allergies", "health", "medical", "medication",
        "family", "partner", "spouse", "children", "kids", "pet", "pets", "preference", "preferences", "prefs",
        "likes", "dislikes", "hobby", "hobbies", "tone", "communication", "accessibility", "user", "me", "person",
        "personal", "identity",
    }
)  # fmt: skip
PROJECT_KEYS = frozenset({"current_project", "project", "projects", "repo", "repository", "build", "deploy", "team"})


def of_a_project(text: str) -> bool:
    """Whether a memory says it is about a project, a repository, a service or the like: the project's."""
    return bool(_OF_A_PROJECT.search(text))


def of_key(key: str) -> Scope | None:
    """The scope a profile key names by itself (`name`, `diet.allergy`: the user's; `project.x.y`: the project's),
    or None when its name does not say."""
    first = re.split(r"[.:/]", key, maxsplit=1)[0].lower()
    if first in PERSON_KEYS:
        return Scope.USER
    if first in PROJECT_KEYS:
        return Scope.PROJECT
    return None


def of_memory(item: MemoryIn) -> Scope:
    """The scope a memory belongs to: its profile key's when that says, else what it states (classified as
    `remember` classifies it): who the person is, or a preference or constraint they state of themselves, and
    said of no project, goes to the user scope; everything else stays in the project."""
    if item.key is not None and (by_key := of_key(item.key)) is not None:
        return by_key
    found = classify(item.content, item.kind)
    if _OF_A_PROJECT.search(item.content):
        return Scope.PROJECT
    if found.kind in PERSONAL_KINDS or _MY_OWN.search(first_person(item.content)):
        return Scope.USER
    if found.kind in LEANING_KINDS and _SPEAKS_OF_ME.search(first_person(item.content)):
        return Scope.USER
    return Scope.PROJECT
