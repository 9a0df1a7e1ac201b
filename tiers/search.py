"""Search: one query against the warm tier in memory and, when it can help, the cold tier on disk.

The cold searches (by meaning and by words) start first and run while the warm tier is ranked; the
cold rows found join the warm ones in one pool, ranked together, and the rows stored just before and
after the best cold hits are fetched so they can be lent a share of their score as warm ones are.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from tiers import recall as ranking
from tiers.errors import InvalidInput
from tiers.hot import Entry
from tiers.parts import Parts
from tiers.records import Tier
from tiers.rules import hot_rid
from tiers.store import ColdHits, where_clause
from tiers.terms import words
from tiers.timeparse import as_utc
from tiers.warm import Row, Scope, WarmIndex

PROFILE_MATCH = 0.35
COLD_DEPTH = 100  # cold rows each cold search returns to the pool


@dataclass(frozen=True)
class Query:
    """A query as searched: its forms, their vectors, its terms, and what it may return."""

    text: str
    forms: list[str]
    vectors: np.ndarray
    terms: list[str]
    tiers: tuple[Tier, ...]
    tags: tuple[str, ...]
    since: datetime | None
    until: datetime | None
    default: bool  # default tiers: cold joins, a little below equally good warm rows


class Search:
    """Recall over one namespace."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts

    def recall(
        self,
        query: str,
        now: datetime,
        limit: int = 10,
        max_tokens: int | None = None,
        tiers: Sequence[Tier] | None = None,
        tags: Sequence[str] = (),
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> ranking.Packed:
        """The memories that best answer `query`, packed into `max_tokens`; each one returned counts as a use."""
        parsed = self.parse(query, tiers, tags, since, until)
        ranked = self.rank(parsed, limit) if parsed.tiers else []
        wanted = parsed.default or Tier.HOT in (tiers or ())
        profile = self._matching_profile(query, parsed.vectors[0]) if wanted else {}
        packed = ranking.pack(ranked, profile, limit, max_tokens, self.parts.settings.recall.grouped)
        self.parts.ledger.touch([h.record.id for h in packed.hits], now)
        self.parts.ledger.touch([hot_rid(k) for k in packed.profile], now)
        return packed

    def parse(
        self,
        query: str,
        tiers: Sequence[Tier] | None,
        tags: Sequence[str] = (),
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> Query:
        if not query.strip():
            raise InvalidInput("query is blank; say what to look for")
        settings = self.parts.settings.recall
        chosen = tuple(dict.fromkeys(tiers)) if tiers else (Tier.WARM, Tier.COLD)
        forms = ranking.query_forms(query, settings)
        vectors = self.parts.embedder.embed(forms)
        terms = words(forms[-1]) + ranking.wants_time(query, settings)
        searched = tuple(t for t in chosen if t is not Tier.HOT)
        return Query(query, forms, vectors, terms, searched, tuple(tags), since, until, tiers is None)

    def rank(self, query: Query, limit: int) -> list[ranking.Ranked]:
        """The best `limit` records for a parsed query; counts no use."""
        parts = self.parts
        settings = parts.settings.recall
        store = parts.store
        cold: Future[ColdHits] | None = None
        if Tier.COLD in query.tiers:
            where = where_clause(query.tags, query.since, query.until)
            depth = max(COLD_DEPTH, 2 * limit)
            cold = store._searches.submit(store.search_cold, query.vectors, " ".join(query.terms), depth, where)
        kinds = ranking.asked_kinds(
            parts.vectors_of(list(ranking.KIND_NAMES.values())), query.vectors, settings.kind_match
        )
        with store.warm() as index:
            warm = _WarmPart(index, query, Tier.WARM in query.tiers)
            hits = cold.result() if cold is not None else ColdHits([], [])
            pool = _PoolBuilder(warm, index, query)
            pool.add_cold(hits.rows, hits.words)
            found = ranking.rank(pool.build(), query.text, settings, limit, query.default, kinds)
            missing = pool.missing_neighbours([i for i, _, _ in found], settings.reach)
            if missing:
                lent = store.cold_rows(missing)  # a forgotten neighbour is still named by the rows beside it
                pool.add_cold(lent, [0.0] * len(lent))
                found = ranking.rank(pool.build(), query.text, settings, limit, query.default, kinds)
            return [ranking.Ranked(pool.record(i), score, similarity) for i, score, similarity in found]

    def _matching_profile(self, query: str, vector: np.ndarray) -> dict[str, Entry]:
        entries = self.parts.hot.entries()
        if not entries:
            return {}
        texts = {key: f"{key.replace('_', ' ').replace('.', ' ')}: {e.value}" for key, e in entries.items()}
        vectors = self.parts.vectors_of(list(texts.values()))
        query_words = {w for w in query.lower().split() if len(w) > 3}
        matched = {}
        for (key, text), entry_vector in zip(texts.items(), vectors, strict=True):
            similar = float(np.dot(entry_vector, vector)) >= PROFILE_MATCH
            if similar or query_words & set(text.lower().replace(":", " ").split()):
                matched[key] = entries[key]
        return matched


class _WarmPart:
    """The warm tier's share of a pool: its scores for the query, computed once."""

    def __init__(self, index: WarmIndex, query: Query, searched: bool) -> None:
        size = index.size
        self.size = size
        if not searched or not size:
            self.mask = np.zeros(size, dtype=bool)
            self.cosine = np.zeros(size, dtype=np.float32)
            self.words = np.zeros(size, dtype=np.float32)
            return
        scope = Scope(query.tags, _micros(query.since), _micros(query.until))
        self.mask = index.mask(scope)
        self.cosine = index.cosine(query.vectors)
        self.words = index.bm25(query.terms)


class _PoolBuilder:
    """Warm rows by their index position, then cold rows after them, as ranking arrays."""

    def __init__(self, warm: _WarmPart, index: WarmIndex, query: Query) -> None:
        self.warm = warm
        self.index = index
        self.query = query
        self.cold: list[Row] = []
        self.cold_words: list[float] = []
        self.position: dict[str, int] = {}

    def add_cold(self, rows: Sequence[Row], scores: Sequence[float]) -> None:
        for row, score in zip(rows, scores, strict=True):
            rid = row.record.id
            if rid in self.position or rid in self.index.positions:
                continue
            self.position[rid] = self.warm.size + len(self.cold)
            self.cold.append(row)
            self.cold_words.append(score)

    def build(self) -> ranking.Pool:
        size = self.warm.size
        index = self.index
        n = len(self.cold)
        if n:
            vectors = np.stack([row.vector for row in self.cold])
            cold_cosine = (vectors @ np.atleast_2d(self.query.vectors).T).max(axis=1)
        else:
            cold_cosine = np.zeros(0, dtype=np.float32)
        prev = np.concatenate([index.prev[:size], np.full(n, -1, dtype=np.int64)])
        nxt = np.concatenate([index.next[:size], np.full(n, -1, dtype=np.int64)])
        for offset, row in enumerate(self.cold):
            at = size + offset
            prev[at] = self._at(row.before)
            nxt[at] = self._at(row.after)
        return ranking.Pool(
            cosine=np.concatenate([self.warm.cosine, cold_cosine.astype(np.float32)]),
            words=np.concatenate([self.warm.words, np.asarray(self.cold_words, dtype=np.float32)]),
            mask=np.concatenate([self.warm.mask, np.ones(n, dtype=bool)]),
            cold=np.concatenate([np.zeros(size, dtype=bool), np.ones(n, dtype=bool)]),
            durable=np.concatenate(
                [index.durable[:size], [r.record.protected and not r.record.superseded_by for r in self.cold]]
            ).astype(bool),
            kind=np.concatenate([index.kind[:size], np.asarray([r.record.kind.value for r in self.cold], "<U12")]),
            prev=prev,
            next=nxt,
        )

    def _at(self, links: tuple[str, ...]) -> int:
        """The pool position of the nearest linked record, if it is in the pool (warm or cold)."""
        if not links:
            return -1
        rid = links[0]
        if rid in self.position:
            return self.position[rid]
        warm = self.index.positions.get(rid, -1)
        return warm if warm >= 0 and self.warm.mask[warm] else -1

    def missing_neighbours(self, best: Sequence[int], reach: int) -> list[str]:
        """Ids of the cold rows linked to the best cold hits that are not in the pool yet."""
        out: list[str] = []
        for position in best:
            if position < self.warm.size:
                continue
            row = self.cold[position - self.warm.size]
            for rid in (*row.before[:reach], *row.after[:reach]):
                if rid not in self.position and rid not in self.index.positions and rid not in out:
                    out.append(rid)
        return out

    def record(self, position: int) -> ranking.Record:
        if position < self.warm.size:
            return self.index.record(position)
        return self.cold[position - self.warm.size].record


def _micros(value: datetime | None) -> int | None:
    return None if value is None else int(as_utc(value).timestamp() * 1_000_000)
