"""Write-time classification: does a memory state a durable fact about the user?

Rules only (no model call): statements of identity, preference, hard constraint, relationship or
health, said in the first person ("I'm allergic to …") or, as agents often write them, about the
user in the third person ("The user prefers …"), plus imperative standing rules ("Never …"). What
someone of the user's has ("My colleague Priya is allergic to kiwi") is not the user's own fact. The same
rules in Chinese, Japanese, Spanish, German, French, Russian and Arabic are in other_languages.py.
The agent's own `kind` or `key` hint always wins over these rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tiers.lifecycle import other_languages
from tiers.records import DURABLE_KINDS, MAX_BATCH, Kind
from tiers.text import measure
from tiers.text.terms import remembered

_I = r"\b(?:i|i'm|i am|i've|i'd|my|me|we|our)\b"
_PROFESSIONS = (
    r"engineer|developer|programmer|designer|architect|manager|teacher|professor|lecturer|doctor|physician|"
    r"nurse|surgeon|dentist|pharmacist|student|lawyer|attorney|accountant|scientist|researcher|analyst|"
    r"writer|journalist|editor|artist|musician|photographer|consultant|founder|freelancer|contractor|"
    r"entrepreneur|chef|farmer|pilot|therapist|translator|librarian|mechanic|electrician|parent|"
    r"mother|father|mom|dad|veteran|retiree"
)
_RULES: list[tuple[Kind, re.Pattern[str]]] = [
    (
        Kind.HEALTH,
        re.compile(
            r"\b(allerg\w*|anaphyla\w*|intoleran\w*|diabet\w*|asthma\w*|epilep\w*|celiac|coeliac|"
            r"medication|prescri\w*|diagnos\w*|disorder|pregnan\w*|blood type|insulin|epipen|"
            r"can(?:no|')t (?:eat|drink|have|take))\b",
            re.I,
        ),
    ),
    (
        Kind.CONSTRAINT,
        re.compile(
            r"\b(?:never|always|must(?: not)?|do not|don't|under no circumstances|make sure to|"
            r"not allowed|forbidden|required to)\b.{0,80}\b(?:use|run|push|deploy|commit|call|send|"
            r"share|eat|drink|book|schedule|contact|email|touch|delete|include|mention|merge|give|"
            r"disturb|fly|drive|cc|suggest|invite)(?:s|es)?\b",
            re.I,
        ),
    ),
    (
        Kind.IDENTITY,
        re.compile(
            r"\b(?:my name is|call me (?-i:[A-Z])|i work (?:at|for|as)|i live in|i moved to|i(?: am|'m) from|"
            r"my pronouns|my (?:job|role|title) is|i was born|my birthday|i(?: am|'m) (?:a|an) (?:[a-z-]+ ){0,2}"
            rf"(?:{_PROFESSIONS})s?)\b",
            re.I,
        ),
    ),
    (
        Kind.RELATIONSHIP,
        re.compile(
            r"\bmy (?:wife|husband|partner|spouse|boyfriend|girlfriend|fianc[ée]e?|son|daughter|kids?|children|"
            r"mom|mother|dad|father|brother|sister|boss|manager|friend|dog|cat|grandma|grandpa|grandmother|"
            r"grandfather|cousin|aunt|uncle|niece|nephew)\b",
            re.I,
        ),
    ),
    (
        Kind.PREFERENCE,
        re.compile(
            r"\b(?:i (?:really |much |strongly )?(?:prefer|like|love|hate|dislike|enjoy|can't stand|detest)"
            r"(?! (?:this|that|it|these|those|the idea|the plan|your)\b)|"
            r"my favou?rite|i(?: am|'m) (?:a )?(?:vegan|vegetarian|pescatarian)|i(?: would|'d) rather|"
            r"please (?:always|never|use|don't)|i(?: am|'m) a (?:morning|night) person)\b",
            re.I,
        ),
    ),
]
# A durable fact is a statement. Past this many words (a Chinese or Japanese character counting as one) a memory
# is notes or a transcript, however much of it is said in the first person: one "I love hiking" or "my name is
# ..." in it (perhaps said by someone else) would keep it warm for good, give it a durable fact's place in every
# recall about the user, or name the user. The agent's `kind` hint still makes a long memory durable.
STATEMENT_WORDS = 150
_NAME = re.compile(r"\b(?i:my name is|call me) ([A-Z][\w'-]+(?: [A-Z][\w'-]+){0,3})")
# Someone of the user's, with a name where one is given: what they have or do is theirs ("My colleague Priya is
# allergic to kiwi" is not the user's health); only the relationship rule reads it.
_SOMEONE = re.compile(
    r"\b(?i:my (?:[a-z-]+ )?(?:wife|husband|partner|spouse|boyfriend|girlfriend|fianc[ée]e?|son|daughter|kids?|"
    r"child(?:ren)?|mom|mum|mother|dad|father|parents|brother|sister|boss|manager|friend|colleague|co-?worker|"
    r"neighbou?r|room-?mate|flatmate|dog|cat|grandma|grandpa|grandmother|grandfather|cousin|aunt|uncle|niece|"
    r"nephew|doctor|dentist|teacher|client|landlord|[a-z]+-in-law)s?(?:'s)?)\b(?: [A-Z][\w'-]+)*"
)
_FIRST_PERSON = re.compile(_I, re.I)
_STANDING_RULE = re.compile(
    r"^\s*(?:never|always|do not|don't|please never|please always|under no circumstances)\b", re.I
)
# Agents often write memories about the user in the third person; the rules read them as first person.
_THIRD_PERSON = [
    (re.compile(r"\b(?:the )?user's\b", re.I), "my"),
    (
        re.compile(
            r"\b(?:the )?user (is|was|has|prefers|likes|loves|hates|dislikes|enjoys|works|lives|moved|"
            r"can't|cannot|can|must|never|always|would|'d)\b",
            re.I,
        ),
        "I \\1",
    ),
]
_BASE_FORM = {
    "is": "am",
    "has": "have",
    "prefers": "prefer",
    "likes": "like",
    "loves": "love",
    "hates": "hate",
    "dislikes": "dislike",
    "enjoys": "enjoy",
    "works": "work",
    "lives": "live",
}


@dataclass(frozen=True)
class Classified:
    """The kind of a memory, whether it is protected from going cold, and a profile key if one is plain."""

    kind: Kind
    durable: bool
    key: str | None = None
    value: str | None = None


def first_person(content: str) -> str:
    """`content` with third-person statements about the user ("The user prefers …") turned first person."""
    text = _THIRD_PERSON[0][0].sub(_THIRD_PERSON[0][1], content)
    return _THIRD_PERSON[1][0].sub(lambda m: "I " + _BASE_FORM.get(m.group(1).lower(), m.group(1)), text)


def classify(content: str, hint: Kind | None = None) -> Classified:
    """Classify `content`; a hint from the agent is trusted as given.

    A write classifies each memory twice (the scope it goes to, then how it is stored): a short text's
    classification is remembered, as its words are (tiers/text/terms.py).
    """
    if hint is not None:
        return Classified(hint, hint in DURABLE_KINDS)
    return _classify(content)


@remembered(2 * MAX_BATCH)  # a whole batch, between its two passes
def _classify(content: str) -> Classified:
    if measure.count(content) > STATEMENT_WORDS:
        return Classified(Kind.NOTE, False)
    text = first_person(content)
    own = _SOMEONE.sub("someone", text)  # what the user says of themselves
    about_user = bool(_FIRST_PERSON.search(own) or _STANDING_RULE.search(own))
    if about_user or _FIRST_PERSON.search(text):
        for kind, pattern in _RULES:
            if pattern.search(text if kind is Kind.RELATIONSHIP else own) and (about_user or kind is Kind.RELATIONSHIP):
                name = _NAME.search(own) if kind is Kind.IDENTITY else None
                if name:
                    return Classified(kind, True, key="name", value=name.group(1))
                return Classified(kind, True)
    said = other_languages.durable_kind(content)  # the same rules in other languages
    if said is not None:
        kind, given = said
        return Classified(kind, True, key="name", value=given) if given else Classified(kind, True)
    return Classified(Kind.NOTE, False)
