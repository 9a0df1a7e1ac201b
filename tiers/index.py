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
        occurred = table.column("occurred_at").cast(pa.int64()).to_numpy(zero_copy_only=False)
        created = table.column("created_at").cast(pa.int64()).to_numpy(zero_copy_only=False)
        self.occurred_us = np.asarray(occurred, dtype=np.int64)
        self.tags = [tuple(t or ()) for t in table.column("tags").to_pylist()]
        sources = table.column("source").to_pylist()
        self.prev, self.next = _episode_links(self.occurred_us, np.asarray(created, np.int64), sources)
        self._postings, self._lengths = _postings(table.column("content").to_pylist())
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
        """Cosine similarity of every row to a unit vector."""
        return self.vectors @ vector.astype(np.float32)

    def bm25(self, query: str) -> np.ndarray:
        """BM25 score of every row for the words of `query` (0 where none occurs)."""
        scores = np.zeros(self.size, dtype=np.float32)
        if not self.size:
            return scores
        for term in dict.fromkeys(terms(query)):
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


def _postings(contents: list[str]) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], np.ndarray]:
    rows: dict[str, list[int]] = defaultdict(list)
    counts: dict[str, list[int]] = defaultdict(list)
    lengths = np.zeros(len(contents), dtype=np.float32)
    for position, content in enumerate(contents):
        words = terms(content)
        lengths[position] = max(len(words), 1)
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
