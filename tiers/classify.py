"""Write-time classification: does a memory state a durable fact about the user?

Rules only (no model call): first-person statements of identity, preference, hard constraint,
relationship or health. The agent's own `kind` or `key` hint always wins over these rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tiers.records import DURABLE_KINDS, Kind

_I = r"\b(?:i|i'm|i am|i've|my|me|we|our)\b"
_RULES: list[tuple[Kind, re.Pattern[str]]] = [
    (
        Kind.HEALTH,
        re.compile(
            r"\b(allerg\w*|anaphyla\w*|intoleran\w*|diabet\w*|asthma\w*|epilep\w*|celiac|coeliac|"
            r"medication|prescri\w*|diagnos\w*|disorder|pregnan\w*|blood type|insulin|epipen|"
            r"can(?:no|')t (?:eat|drink|have))\b",
            re.I,
        ),
    ),
    (
        Kind.CONSTRAINT,
        re.compile(
            r"\b(?:never|always|must(?: not)?|do not|don't|under no circumstances|make sure to|"
            r"not allowed|forbidden|required to)\b.{0,80}\b(?:use|run|push|deploy|commit|call|send|"
            r"share|eat|drink|book|schedule|contact|email|touch|delete|include|mention)\b",
            re.I,
        ),
    ),
    (
        Kind.IDENTITY,
        re.compile(
            r"\b(?:my name is|call me|i(?: am|'m) (?:a|an) \w+|i work (?:at|for|as)|i live in|"
            r"i(?: am|'m) from|my pronouns|my (?:job|role|title) is|i was born)\b",
            re.I,
        ),
    ),
    (
        Kind.RELATIONSHIP,
        re.compile(
            r"\bmy (?:wife|husband|partner|spouse|boyfriend|girlfriend|son|daughter|kids?|children|"
            r"mom|mother|dad|father|brother|sister|boss|manager|friend|dog|cat)\b",
            re.I,
        ),
    ),
    (
        Kind.PREFERENCE,
        re.compile(
            r"\b(?:i (?:really )?(?:prefer|like|love|hate|dislike|enjoy|can't stand|want)|"
            r"my favou?rite|i(?: am|'m) (?:a )?(?:vegan|vegetarian|pescatarian)|i(?: would|'d) rather|"
            r"please (?:always|never|use|don't))\b",
            re.I,
        ),
    ),
]
_NAME = re.compile(r"\b(?i:my name is) ([A-Z][\w'-]+(?: [A-Z][\w'-]+){0,3})")
_FIRST_PERSON = re.compile(_I, re.I)


@dataclass(frozen=True)
class Classified:
    """The kind of a memory, whether it is protected from going cold, and a profile key if one is plain."""

    kind: Kind
    durable: bool
    key: str | None = None
    value: str | None = None


def classify(content: str, hint: Kind | None = None) -> Classified:
    """Classify `content`; a hint from the agent is trusted as given."""
    if hint is not None:
        return Classified(hint, hint in DURABLE_KINDS)
    if not _FIRST_PERSON.search(content) and not content.lower().startswith(("user ", "the user")):
        return Classified(Kind.NOTE, False)
    for kind, pattern in _RULES:
        if pattern.search(content):
            name = _NAME.search(content) if kind is Kind.IDENTITY else None
            if name:
                return Classified(kind, True, key="name", value=name.group(1))
            return Classified(kind, True)
    return Classified(Kind.NOTE, False)
