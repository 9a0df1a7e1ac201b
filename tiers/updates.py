"""Updates: which of two memories may be the later word on the same question, and recall's order for them.

Two memories may answer the same question about the same subject when they share a word and are close in
meaning: close enough alone, or less close when the newer says in words that something changed ("now",
"moved", "switched", "no longer"). The later one (by when it happened, then by when it was stored) is the
current word; the older one is kept, ranked after it and marked, never superseded by this guess: only the
agent's `supersedes` (or a profile change) marks a memory superseded.

The same rule serves `remember` (the earlier memories a new one may update, named in its answer) and
`recall` (among its best hits, those that may update one another are shown newest first). The change words
are English; in other languages the closer-meaning rule alone applies.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from tiers.records import Record
from tiers.terms import words

# Close in meaning without change words: one memory restating the other's subject with another value.
CLOSE = 0.6
# Close enough when the newer says that something changed.
CLOSE_WITH_CHANGE = 0.3
SAME = 0.98  # closer than this is the same thing said again, not an update
WINDOW = 10  # recall's best this many hits are ordered among themselves

_CHANGE = re.compile(
    r"\b(?:now|new|newer|no longer|not any more|anymore|instead|moved|moving|switched|switching|changed|"
    r"changing|replaced|migrated|migrating|left|quit|became|become|renamed|updated|slipped|postponed|"
    r"delayed|rescheduled|pushed back|brought forward|raised|lowered|increased|reduced|cut|dropped|"
    r"stopped|started|from now on|these days|currently|since|latest|went up|went down|is up to|is down to)\b",
    re.IGNORECASE,
)
# A question about what was true before: its older memories are not put after the newer ones.
_PAST = re.compile(
    r"\b(?:before|previous|previously|used to|originally|first|earlier|former|formerly|prior|initially|"
    r"back then|in the past)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Later:
    """The later memory that may replace one shown: its id and when it happened."""

    id: str
    occurred_at: datetime


def says_change(text: str) -> bool:
    """Whether a memory says in words that something changed."""
    return bool(_CHANGE.search(text))


def asks_past(query: str) -> bool:
    """Whether a query asks what was true before (its older memories keep their place)."""
    return bool(_PAST.search(query))


def when(record: Record) -> tuple[datetime, datetime]:
    """The order of two memories in time: when each happened, then when it was stored."""
    return (record.occurred_at, record.created_at)


def may_update(newer: Record, older: Record, cosine: float, newer_terms: set[str] | None = None) -> bool:
    """Whether `newer` may be a later word on what `older` says (their vectors' cosine given)."""
    if newer.id == older.id or cosine >= SAME or when(newer) <= when(older):
        return False
    if not (newer_terms if newer_terms is not None else set(words(newer.content))) & set(words(older.content)):
        return False
    if cosine >= CLOSE:
        return True
    return cosine >= CLOSE_WITH_CHANGE and says_change(newer.content)


def later_first(
    records: Sequence[Record], vectors: np.ndarray, past: bool = False
) -> tuple[list[int], dict[int, Later]]:
    """An order of these hits (best first) with the later word of each group of updates first, and the marks.

    Returns positions into `records` and, for each older memory that a later one among them may replace, that
    later one. A group of memories that may update one another takes the places its members held, newest
    first, so what is not in a group keeps its place and the set of hits is unchanged. `past`: the query asks
    what was true before, and the order stays as ranked (the marks are still given).
    """
    n = len(records)
    order = list(range(n))
    if n < 2:
        return order, {}
    vectors = np.asarray(vectors, dtype=np.float32)
    cosines = vectors @ vectors.T
    terms = [set(words(r.content)) for r in records]
    group = list(range(n))

    def root(i: int) -> int:
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    linked = False
    for i in range(n):
        for j in range(n):
            confirmed = records[j].superseded_by == records[i].id
            if i != j and (confirmed or may_update(records[i], records[j], float(cosines[i, j]), terms[i])):
                group[root(j)] = root(i)
                linked = True
    if not linked:
        return order, {}
    members: dict[int, list[int]] = {}
    for i in range(n):
        members.setdefault(root(i), []).append(i)
    marks: dict[int, Later] = {}
    placed = order[:]
    for rows in members.values():
        if len(rows) < 2:
            continue
        newest_first = sorted(rows, key=lambda i: when(records[i]), reverse=True)
        latest = records[newest_first[0]]
        for i in newest_first[1:]:
            marks[i] = Later(latest.id, latest.occurred_at)
        if not past:
            for place, i in zip(sorted(rows), newest_first, strict=True):
                placed[place] = i
    return placed, marks
