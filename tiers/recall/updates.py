"""Updates: which of two memories may be the later word on the same question, and recall's order for them.

Two memories may answer the same question about the same subject when they share a word (two in the first person
share their subject) and are close in meaning: close enough alone, or less close when the newer says in words
that something changed ("now", "moved", "switched", "no longer"); two that each begin with a name the other does
not hold are one fact about two subjects, and pair only by those words. The later one (said later: it happened
later, or was stored in a later write) is the current word; the older one is kept, ranked after it and marked,
never superseded by this guess: only the agent's `supersedes` (or a profile change) marks a memory superseded.

The same rule serves `remember` (the earlier memories a new one may update, named in its answer) and
`recall` (among its best hits, each older one is paired with the one later memory most like it and most
relevant to the query, and that one is shown above it). The change words and the past tense of a question are
English; in other languages the closer-meaning rule alone applies, and every question is taken as about now.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from tiers.model.scale import AS_THEY_ARE, CosineScale
from tiers.records import Record
from tiers.text.terms import STOP_WORDS, language, remembered, words

# Close in meaning without change words: one memory restating the other's subject with another value.
CLOSE = 0.6
# Close enough when the newer says that something changed.
CLOSE_WITH_CHANGE = 0.3
SAID_APART = timedelta(seconds=1)  # stored this far apart, two memories of the same time were two writes
SAME = 0.98  # closer than this is the same thing said again, not an update
WINDOW = 10  # recall's best this many hits are ordered among themselves
GAP = 0.5  # a later memory this much less close to the query than the older one answers another question
# How a pair is chosen among those that may update one another: each one's closeness to the query weighs this much
# against the pair's own closeness (the pair must answer the query, not only resemble each other) ...
RELEVANCE = 2.0
# ... and a later memory that says something changed is preferred by this much over one only close in meaning
# (a note about the same person or thing, a sibling fact in the same words).
SAYS_CHANGE = 0.2
# A word more than this share of the warm memories hold (once there are COMMON_FROM) is not a shared subject.
COMMON_SHARE = 0.05
COMMON_FROM = 100

_CHANGE = re.compile(
    r"\b(?:now|new|newer|no longer|not any more|anymore|instead|moved|moving|switched|switching|changed|"
    r"changing|replaced|migrated|migrating|left|quit|became|become|renamed|updated|slipped|postponed|"
    r"delayed|rescheduled|pushed back|brought forward|raised|lowered|increased|reduced|cut|dropped|"
    r"stopped|started|from now on|these days|currently|since|latest|went up|went down|is up to|is down to|"
    r"relocated|relocating|took over|taking over|takes over|joined|joining|hired|lately|gave up|giving up|"
    r"adopted|bought|sold|retired|resigned|promoted|passed away|from this week|from this month|from today|"
    r"move|settled|took in|taken in|"
    r"went(?! (?:well|badly|fine|smoothly|great|ok|okay|wrong|to|for|out|on|into|through|with|by|home|there|over|"
    r"back|away|off|in|at|around|ahead|along|after|and|the|a|an|as|from|up|down|live)\b))\b",
    re.IGNORECASE,
)
# A question about what was true before, or asked in the past tense ("when did ...", "what was ..."): it asks what
# happened then, not what is true now, and its older memories are not put after the newer ones.
_PAST = re.compile(
    r"\b(?:before|previous|previously|used to|originally|first|earlier|former|formerly|prior|initially|"
    r"back then|in the past|did|was|were|had|didn't|wasn't|weren't|hadn't)\b",
    re.IGNORECASE,
)

_WORD = re.compile(r"\w+")
_ME = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|(?i:my|me|mine|myself))\b")


@dataclass(frozen=True)
class Later:
    """The later memory that may replace one shown: its id and when it happened."""

    id: str
    occurred_at: datetime


def mark(later: Later) -> str:
    """What the model reads after an older memory a later one among the hits may replace."""
    # Short on purpose: the mark is paid in every budget it is shown in, and a long form ("earlier: <id> of
    # <date> may replace this") cost recall measurably where this cost nothing (docs/recall.md).
    return f" (later: {later.id})"


def says_change(text: str) -> bool:
    """Whether a memory says in words that something changed (remembered for a short text: a recall asks it of
    each pair among its best hits, and the same memories come back from one recall to the next)."""
    return _says_change(text)


@remembered(4_096)
def _says_change(text: str) -> bool:
    return bool(_CHANGE.search(text))


def asks_past(query: str) -> bool:
    """Whether a query asks what was true before (its older memories keep their place)."""
    return bool(_PAST.search(query))


def said_by_me(text: str) -> bool:
    """Whether a memory is said in the first person singular: its subject is the speaker, a word of every one of
    them that the stop words leave out ("I'm vegetarian", "I've been vegan since January")."""
    return _said_by_me(text)


@remembered(4_096)
def _said_by_me(text: str) -> bool:
    return bool(_ME.search(text))


def begins_with_a_name(text: str) -> str | None:
    """The word a memory begins with, lower-cased, where it is written with a capital letter and is no stop word
    ("Kenji's usual drink is a cortado": "kenji"): what the fact is said about. None where it begins otherwise
    ("The billing team's lead is Priya", "I live in Berlin")."""
    return _begins_with_a_name(text)


@remembered(4_096)
def _begins_with_a_name(text: str) -> str | None:
    first = _WORD.search(text)
    if first is None or not first.group()[0].isupper() or first.group().lower() in STOP_WORDS:
        return None
    return first.group().lower()


def other_subjects(newer: str, older: str) -> bool:
    """Whether two memories are said about different people or things: each begins with a name the other does not
    hold ("Carla lives in Seattle", "Greta lives in Seattle": one fact about two people, not a later word on one).
    A fact that begins with what it is about and names a person last ("The billing team's lead is Priya") is
    left to the rest of the rule."""
    ours, theirs = begins_with_a_name(newer), begins_with_a_name(older)
    if ours is None or theirs is None or ours == theirs:
        return False
    return ours not in set(_WORD.findall(older.lower())) and theirs not in set(_WORD.findall(newer.lower()))


def _as_said(text: str) -> str:
    """A text as compared with another for being the same words: spaces collapsed, case folded."""
    return " ".join(text.split()).casefold()


def asks(text: str) -> bool:
    """Whether a memory ends in a question: it asks, and says no new value of anything."""
    return text.rstrip().rstrip("\"')]").endswith("?")


def said_later(newer: Record, older: Record) -> bool:
    """Whether `newer` was said after `older`: it happened later, or it happened at the same time and was stored
    in a later write. Memories of one write (a batch, each a microsecond apart) that happened at the same time
    were said together: one is not the later word on the other (turns of one conversation, an import)."""
    if newer.occurred_at != older.occurred_at:
        return newer.occurred_at > older.occurred_at
    return newer.created_at - older.created_at >= SAID_APART


def may_update(
    newer: Record,
    older: Record,
    cosine: float,
    newer_terms: set[str] | None = None,
    common: frozenset[str] | set[str] = frozenset(),
) -> bool:
    """Whether `newer` may be a later word on what `older` says (their vectors' cosine given); `common`: words
    too common in the store to say the two share a subject."""
    if newer.id == older.id or cosine >= SAME or not said_later(newer, older) or asks(newer.content):
        return False
    shared = (newer_terms if newer_terms is not None else set(words(newer.content))) & set(words(older.content))
    if not shared - common and not (said_by_me(newer.content) and said_by_me(older.content)):
        return False
    if not says_change(newer.content):
        return cosine >= CLOSE and not other_subjects(newer.content, older.content)
    return cosine >= CLOSE_WITH_CHANGE


def later_first(
    records: Sequence[Record],
    vectors: np.ndarray,
    relevance: Sequence[float] | None = None,
    past: bool = False,
    common: frozenset[str] | set[str] = frozenset(),
    scale: CosineScale = AS_THEY_ARE,
    lift: bool = True,
    query: str = "",
) -> tuple[list[int], dict[int, Later]]:
    """An order of these hits (best first) with the later word of each update above the older one, and the marks.

    Returns positions into `records` and, for each older memory a later one among them may replace, that later
    one. Each memory is paired at most once: the pairs that may update one another are taken best first, by their
    cosine plus RELEVANCE times each one's `relevance` (its cosine to the query), plus SAYS_CHANGE where the later
    one says that something changed: a memory is never marked by a note that only shares its wording with the
    update it is paired with, and a pair that answers the query goes before one that only resembles itself (a
    sibling fact about another subject). A later one ranked below its older one trades places with it, and then
    goes above the hits less close to the query than the closer of the two (another fact about the same person
    ranked first by its words), where it says that something changed (or the agent confirmed it): a pair made on
    likeness alone only trades places, since a model's cosines say little in a language it was not trained on;
    every other hit keeps its order. A later one far less relevant to the query than the older one (by more than
    GAP) is not paired, nor one above an older one the query says in its own words (`query` written as its text,
    spaces and case aside, or a cosine of SAME: a model whose queries' graph is not its memories' stops short of
    SAME for the same words). `past`: the query asks what was true before, and the order stays as ranked (the
    marks are still given). `scale`: how the model's cosines read against these thresholds (tiers/model/scale.py),
    two memories of one language by that language's own where it has one. `lift` False: the later one only trades
    places with its older one, for an order a cross-encoder read (its judgement is not the cosine's).
    """
    n = len(records)
    order = list(range(n))
    if n < 2:
        return order, {}
    vectors = np.asarray(vectors, dtype=np.float32)
    said_in = [language(r.content) for r in records] if scale.memories_in else []
    cosines = scale.between(vectors @ vectors.T, said_in)
    near = [scale.to_memory(c) for c in relevance] if relevance is not None else [0.0] * n
    terms = [set(words(r.content)) for r in records]
    asked = _as_said(query)
    repeated = [bool(asked) and _as_said(r.content) == asked for r in records]
    pairs: list[tuple[bool, float, int, int]] = []  # (confirmed, how alike and relevant, older, later)
    for older in range(n):
        for newer in range(n):
            if newer == older:
                continue
            confirmed = records[older].superseded_by == records[newer].id
            cosine = float(cosines[newer, older])
            if confirmed or (
                near[older] < SAME  # a query that is the older memory's own words asks for that memory
                and not repeated[older]
                and near[newer] >= near[older] - GAP
                and may_update(records[newer], records[older], cosine, terms[newer], common)
            ):
                score = cosine + RELEVANCE * (near[newer] + near[older])
                score += SAYS_CHANGE if says_change(records[newer].content) else 0.0
                pairs.append((confirmed, score, older, newer))
    pairs.sort(key=lambda pair: (pair[0], pair[1]), reverse=True)
    paired: set[int] = set()
    marks: dict[int, Later] = {}
    later_of: dict[int, int] = {}
    lifted: dict[int, int] = {}  # the pairs whose later word may also go above other hits: older -> later
    for confirmed, _, older, newer in pairs:
        if older in paired or newer in paired:
            continue
        paired |= {older, newer}
        later_of[older] = newer
        marks[older] = Later(records[newer].id, records[newer].occurred_at)
        if confirmed or says_change(records[newer].content):
            lifted[older] = newer
    if not past:
        for older in sorted(later_of):
            newer = later_of[older]
            above, below = order.index(older), order.index(newer)
            if below > above:
                order[above], order[below] = newer, older
        if relevance is not None and lift:
            # The fact is as close to the query as the closer of its two words: a hit above it less close to the
            # query (another fact about the same person, a note that shares the query's words) answers it less.
            closeness = list(near)
            for older, newer in lifted.items():
                closeness[newer] = max(near[older], near[newer])
            for newer in sorted(lifted.values(), key=lambda i: -closeness[i]):
                at = order.index(newer)
                to = next((i for i in range(at) if closeness[order[i]] < closeness[newer]), at)
                order.insert(to, order.pop(at))
    return order, marks
