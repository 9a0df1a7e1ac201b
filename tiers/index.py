"""The in-memory search index of one store: every row's vector and BM25 postings, rebuilt when the table changes.

A LanceDB query costs 7-15 ms on these machines whatever the table size, most of a recall's time;
numpy over a few thousand vectors costs well under a millisecond, and scoring every row by both
signals lets recall fuse whole rankings instead of two top-50 lists.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

import numpy as np
import pyarrow as pa
from py_rust_stemmers import SnowballStemmer

from tiers.records import Tier

_WORD = re.compile(r"\w+")
_STEMMER = SnowballStemmer("english")
# Function words carry no topic; the list is the usual English one, shortened.
STOP_WORDS = frozenset(
    """a about after again all am an and any are as at be been before being below between both but by can
    could did do does doing down during each few for from further had has have having he her here hers
    herself him himself his how i if in into is it its itself just me more most my myself no nor not now
    of off on once only or other our ours ourselves out over own same she should so some such than that the
    their theirs them themselves then there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your yours yourself yourselves s t
    don didn doesn isn wasn""".split()  # noqa: SIM905
)
# A row that says when something happened ("yesterday", "last May", "in 2022") carries this term too,
# so that a question asking "when" can match it by words: the answer to "when" is a time said in passing.
TIME_TERM = "\x00time"
_TIME = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|ago|last (?:night|week|weekend|month|year|time|summer|winter|spring|fall)|"
    r"(?:this|next) (?:morning|week|weekend|month|year|summer|winter|spring|fall)|recently|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|"
    r"august|september|october|november|december|(?:19|20)\d\d)\b",
    re.IGNORECASE,
)
_MONTHS = [
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
]  # fmt: skip
_MONTH = "|".join(_MONTHS)
_DAY_MONTH_YEAR = re.compile(
    rf"\b(?:(\d{{1,2}})(?:st|nd|rd|th)? ({_MONTH}),? |({_MONTH}) (\d{{1,2}})(?:st|nd|rd|th)?,? )((?:19|20)\d\d)\b", re.I
)
_MONTH_YEAR = re.compile(rf"\b({_MONTH}),? ((?:19|20)\d\d)\b", re.I)
_MONTH_ALONE = re.compile(rf"\b(?:in|of|during|since|last|this|early|late|mid-?) ({_MONTH})\b", re.I)
_YEAR = re.compile(r"\b((?:19|20)\d\d)\b")
_RELATIVE = {"yesterday": 1, "last night": 1, "last week": 7, "last weekend": 7, "last month": 30, "last year": 365}
_RELATIVE_RE = re.compile(r"\b(" + "|".join(_RELATIVE) + r")\b", re.I)


def date_terms(day: date) -> list[str]:
    """The terms a date is indexed under: its year, month of year, month and day."""
    return [f"\x00y{day.year}", f"\x00m{day.year}-{day.month}", f"\x00mo{day.month}", f"\x00d{day.isoformat()}"]


def asked_dates(query: str) -> list[str]:
    """The date terms a query names: "on May 3, 2023", "in October 2023", "in June", "in 2022"."""
    out: list[str] = []
    for m in _DAY_MONTH_YEAR.finditer(query):
        day, month = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        out.append(f"\x00d{int(m.group(5)):04d}-{_MONTHS.index(month.lower()) + 1:02d}-{int(day):02d}")
    if not out:
        out += [f"\x00m{m.group(2)}-{_MONTHS.index(m.group(1).lower()) + 1}" for m in _MONTH_YEAR.finditer(query)]
    if not out:
        out += [f"\x00mo{_MONTHS.index(m.group(1).lower()) + 1}" for m in _MONTH_ALONE.finditer(query)]
        out += [f"\x00y{m.group(1)}" for m in _YEAR.finditer(query)]
    return out


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
BM25_K1 = 1.2
BM25_B = 0.75


def terms(text: str) -> list[str]:
    """Lower-cased, stemmed words of `text` without stop words."""
    words = [w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS]
    return list(_STEMMER.stem_words(words)) if words else []


@dataclass(frozen=True)
class Scope:
    """Which rows a search may return."""

    tiers: tuple[Tier, ...]
    tags: tuple[str, ...] = ()
    since_us: int | None = None
    until_us: int | None = None


class Index:
    """Vectors, BM25 postings and episode order of every row of one table version."""

    def __init__(self, version: int, table: pa.Table) -> None:
        self.version = version
        self.table = table
        n = table.num_rows
        self.size = n
        dim = table.schema.field("vector").type.list_size
        flat = table.column("vector").combine_chunks().flatten().to_numpy(zero_copy_only=False)
        self.vectors = np.asarray(flat, dtype=np.float32).reshape(n, dim) if n else np.zeros((0, dim), np.float32)
        self.tier = np.asarray(table.column("tier").to_pylist(), dtype=str)
        self.kind = np.asarray(table.column("kind").to_pylist(), dtype=str)
        protected = np.asarray(table.column("protected").to_pylist(), dtype=bool)
        current = np.asarray([s is None for s in table.column("superseded_by").to_pylist()], dtype=bool)
        self.durable = protected & current if n else np.zeros(0, dtype=bool)
        occurred = table.column("occurred_at").cast(pa.int64()).to_numpy(zero_copy_only=False)
        created = table.column("created_at").cast(pa.int64()).to_numpy(zero_copy_only=False)
        self.occurred_us = np.asarray(occurred, dtype=np.int64)
        self.tags = [tuple(t or ()) for t in table.column("tags").to_pylist()]
        sources = table.column("source").to_pylist()
        self.prev, self.next = _episode_links(self.occurred_us, np.asarray(created, np.int64), sources)
        self._postings, self._lengths = _postings(table.column("content").to_pylist(), self.occurred_us)
        self._avg_length = float(self._lengths.mean()) if n else 0.0

    def mask(self, scope: Scope) -> np.ndarray:
        keep = np.isin(self.tier, [t.value for t in scope.tiers])
        if scope.tags:
            tags = set(scope.tags)
            keep &= np.fromiter((bool(tags.intersection(t)) for t in self.tags), dtype=bool, count=self.size)
        if scope.since_us is not None:
            keep &= self.occurred_us >= scope.since_us
        if scope.until_us is not None:
            keep &= self.occurred_us <= scope.until_us
        return keep

    def cosine(self, vector: np.ndarray) -> np.ndarray:
        """Cosine similarity of every row to a unit vector, or to the closest of several (rows of a matrix)."""
        if vector.ndim == 1:
            return self.vectors @ vector.astype(np.float32)
        return (self.vectors @ vector.T.astype(np.float32)).max(axis=1)

    def bm25(self, query: str, extra: Sequence[str] = ()) -> np.ndarray:
        """BM25 score of every row for the words of `query` and the `extra` terms (0 where none occurs)."""
        scores = np.zeros(self.size, dtype=np.float32)
        if not self.size:
            return scores
        for term in dict.fromkeys([*terms(query), *extra]):
            posting = self._postings.get(term)
            if posting is None:
                continue
            rows, counts = posting
            idf = math.log(1.0 + (self.size - len(rows) + 0.5) / (len(rows) + 0.5))
            norm = BM25_K1 * (1.0 - BM25_B + BM25_B * self._lengths[rows] / self._avg_length)
            scores[rows] += idf * counts * (BM25_K1 + 1.0) / (counts + norm)
        return scores

    def rows(self, positions: Sequence[int]) -> list[dict[str, object]]:
        return self.table.take(pa.array(positions, type=pa.int64())).to_pylist()


def _postings(
    contents: list[str], occurred_us: np.ndarray
) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], np.ndarray]:
    rows: dict[str, list[int]] = defaultdict(list)
    counts: dict[str, list[int]] = defaultdict(list)
    lengths = np.zeros(len(contents), dtype=np.float32)
    for position, content in enumerate(contents):
        words = terms(content)
        if _TIME.search(content):
            words.append(TIME_TERM)
        length = max(len(words), 1)
        when = (_EPOCH + timedelta(microseconds=int(occurred_us[position]))).date()
        words += date_terms(when)
        for said in _RELATIVE_RE.findall(content):
            words += date_terms(when - timedelta(days=_RELATIVE[said.lower()]))
        lengths[position] = length
        for term, count in Counter(words).items():
            rows[term].append(position)
            counts[term].append(count)
    postings = {
        term: (np.asarray(rows[term], dtype=np.int64), np.asarray(counts[term], dtype=np.float32)) for term in rows
    }
    return postings, lengths


def _episode_links(
    occurred_us: np.ndarray, created_us: np.ndarray, sources: list[str | None]
) -> tuple[np.ndarray, np.ndarray]:
    """Previous and next row of each row within its episode (same time and source, in stored order), or -1."""
    n = len(occurred_us)
    prev = np.full(n, -1, dtype=np.int64)
    nxt = np.full(n, -1, dtype=np.int64)
    source_ids = {s: i for i, s in enumerate(dict.fromkeys(sources))}
    source_codes = np.asarray([source_ids[s] for s in sources], dtype=np.int64)
    order = np.lexsort((np.arange(n), created_us, occurred_us, source_codes))
    for a, b in itertools.pairwise(order):
        if occurred_us[a] == occurred_us[b] and source_codes[a] == source_codes[b]:
            nxt[a], prev[b] = b, a
    return prev, nxt
