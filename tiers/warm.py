"""The warm tier in memory: every warm record's vector, BM25 postings and episode order, kept up to date
row by row as records are written, moved and forgotten, never rebuilt from the table.

The warm tier is small by design (the timer sends what goes stale to cold), so it is searched
exactly: numpy over its vectors and BM25 over its postings cost a millisecond or two.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from tiers.records import Record
from tiers.terms import length

BM25_K1 = 1.2
BM25_B = 0.75


@dataclass(frozen=True)
class Scope:
    """Which rows a search may return."""

    tags: tuple[str, ...] = ()
    since_us: int | None = None
    until_us: int | None = None


@dataclass(frozen=True)
class Row:
    """A record with what it is found by: its content hash, terms and vector, and its stored neighbours."""

    record: Record
    hash: str
    terms: str
    vector: np.ndarray
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()


def micros(record: Record) -> tuple[int, int]:
    return int(record.occurred_at.timestamp() * 1_000_000), int(record.created_at.timestamp() * 1_000_000)


class WarmIndex:
    """Vectors, postings and episode links of the warm records, addressed by position."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._reset()

    def _reset(self) -> None:
        dim = self.dim
        self.size = 0  # positions used, live or not
        self.live = 0
        self.vectors = np.zeros((0, dim), dtype=np.float32)
        self.occurred_us = np.zeros(0, dtype=np.int64)
        self.created_us = np.zeros(0, dtype=np.int64)
        self.alive = np.zeros(0, dtype=bool)
        self.durable = np.zeros(0, dtype=bool)
        self.kind = np.zeros(0, dtype="<U12")
        self.lengths = np.zeros(0, dtype=np.float32)
        self.prev = np.zeros(0, dtype=np.int64)
        self.next = np.zeros(0, dtype=np.int64)
        self.rows: list[Row | None] = []
        self.positions: dict[str, int] = {}
        self.by_hash: dict[str, str] = {}
        self._length_sum = 0.0
        self._postings: dict[str, tuple[list[int], list[int]]] = {}
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._episodes: dict[tuple[str | None, int], list[tuple[int, int]]] = {}

    # changes

    def put(self, rows: Iterable[Row]) -> None:
        """Add rows, replacing any with the same id."""
        rows = list(rows)
        self.remove([r.record.id for r in rows if r.record.id in self.positions])
        if not rows:
            return
        self._grow(self.size + len(rows))
        for row in rows:
            self._add(row)

    def remove(self, ids: Iterable[str]) -> None:
        for rid in ids:
            position = self.positions.pop(rid, None)
            if position is None:
                continue
            row = self.rows[position]
            assert row is not None
            self.rows[position] = None
            self.alive[position] = False
            self.live -= 1
            self._length_sum -= float(self.lengths[position])
            if self.by_hash.get(row.hash) == rid:
                del self.by_hash[row.hash]
            self._unlink(row, position)
            for term in set(row.terms.split()):
                self._arrays.pop(term, None)
        if self.size > 1_000 and self.live < self.size // 2:
            self._repack()

    def replace_record(self, record: Record) -> None:
        """New field values of a stored record (tags, protection, supersession); its text is unchanged."""
        position = self.positions.get(record.id)
        if position is None:
            return
        row = self.rows[position]
        assert row is not None
        self.rows[position] = Row(record, row.hash, row.terms, row.vector, row.before, row.after)
        self.durable[position] = record.protected and not record.superseded_by
        self.kind[position] = record.kind.value

    def _add(self, row: Row) -> None:
        position = self.size
        self.size += 1
        record = row.record
        self.rows.append(row)
        self.positions[record.id] = position
        self.by_hash.setdefault(row.hash, record.id)
        self.vectors[position] = row.vector
        occurred, created = micros(record)
        self.occurred_us[position] = occurred
        self.created_us[position] = created
        self.alive[position] = True
        self.live += 1
        self.durable[position] = record.protected and not record.superseded_by
        self.kind[position] = record.kind.value
        terms = row.terms.split()
        self.lengths[position] = length(terms)
        self._length_sum += float(self.lengths[position])
        for term, count in Counter(terms).items():
            posting = self._postings.setdefault(term, ([], []))
            posting[0].append(position)
            posting[1].append(count)
            self._arrays.pop(term, None)
        self._link(record, position, created)

    def _grow(self, needed: int) -> None:
        capacity = len(self.alive)
        if needed <= capacity:
            return
        new = max(needed, capacity * 2, 64)

        def grown(array: np.ndarray, fill: object) -> np.ndarray:
            out = np.full((new, *array.shape[1:]), fill, dtype=array.dtype)
            out[:capacity] = array
            return out

        self.vectors = grown(self.vectors, 0.0)
        self.occurred_us = grown(self.occurred_us, 0)
        self.created_us = grown(self.created_us, 0)
        self.alive = grown(self.alive, False)
        self.durable = grown(self.durable, False)
        self.kind = grown(self.kind, "")
        self.lengths = grown(self.lengths, 0.0)
        self.prev = grown(self.prev, -1)
        self.next = grown(self.next, -1)

    def _repack(self) -> None:
        """Drop the positions of removed rows (from memory alone, no table read)."""
        live = [row for row in self.rows if row is not None]
        self._reset()
        self.put(live)

    # episodes: rows of the same time and source, in the order they were stored

    def _link(self, record: Record, position: int, created: int) -> None:
        episode = self._episodes.setdefault((record.source, int(self.occurred_us[position])), [])
        entry = (created, position)
        at = bisect.bisect(episode, entry)
        episode.insert(at, entry)
        before = episode[at - 1][1] if at > 0 else -1
        after = episode[at + 1][1] if at + 1 < len(episode) else -1
        self.prev[position], self.next[position] = before, after
        if before >= 0:
            self.next[before] = position
        if after >= 0:
            self.prev[after] = position

    def _unlink(self, row: Row, position: int) -> None:
        key = (row.record.source, int(self.occurred_us[position]))
        episode = self._episodes.get(key, [])
        entry = (int(self.created_us[position]), position)
        at = bisect.bisect_left(episode, entry)
        if at < len(episode) and episode[at] == entry:
            episode.pop(at)
        if not episode:
            self._episodes.pop(key, None)
        before, after = int(self.prev[position]), int(self.next[position])
        if before >= 0:
            self.next[before] = after
        if after >= 0:
            self.prev[after] = before
        self.prev[position] = self.next[position] = -1

    def neighbours(self, rid: str, reach: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Ids of the `reach` records stored just before and just after `rid` in its episode, nearest first."""
        position = self.positions[rid]
        out: list[tuple[str, ...]] = []
        for links in (self.prev, self.next):
            found: list[str] = []
            at = position
            for _ in range(reach):
                at = int(links[at])
                if at < 0:
                    break
                row = self.rows[at]
                assert row is not None
                found.append(row.record.id)
            out.append(tuple(found))
        return out[0], out[1]

    # search

    def mask(self, scope: Scope) -> np.ndarray:
        keep = self.alive[: self.size].copy()
        if scope.tags:
            tags = set(scope.tags)
            for position in np.flatnonzero(keep):
                row = self.rows[position]
                if row is None or not tags.intersection(row.record.tags):
                    keep[position] = False
        if scope.since_us is not None:
            keep &= self.occurred_us[: self.size] >= scope.since_us
        if scope.until_us is not None:
            keep &= self.occurred_us[: self.size] <= scope.until_us
        return keep

    def cosine(self, vectors: np.ndarray) -> np.ndarray:
        """Each row's best cosine similarity to the query's unit vectors (rows of `vectors`)."""
        if not self.size:
            return np.zeros(0, dtype=np.float32)
        matrix = self.vectors[: self.size]
        return (matrix @ np.atleast_2d(vectors).T.astype(np.float32)).max(axis=1)

    def bm25(self, terms: Sequence[str]) -> np.ndarray:
        """BM25 score of every row for these terms (0 where none occurs)."""
        scores = np.zeros(self.size, dtype=np.float32)
        if not self.live:
            return scores
        average = self._length_sum / self.live
        for term in dict.fromkeys(terms):
            posting = self._posting(term)
            if posting is None:
                continue
            rows, counts = posting
            idf = math.log(1.0 + (self.live - len(rows) + 0.5) / (len(rows) + 0.5))
            norm = BM25_K1 * (1.0 - BM25_B + BM25_B * self.lengths[rows] / average)
            scores[rows] += idf * counts * (BM25_K1 + 1.0) / (counts + norm)
        return scores

    def _posting(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        cached = self._arrays.get(term)
        if cached is not None:
            return cached
        raw = self._postings.get(term)
        if raw is None:
            return None
        rows = np.asarray(raw[0], dtype=np.int64)
        counts = np.asarray(raw[1], dtype=np.float32)
        live = self.alive[rows]
        if not live.all():  # postings of removed rows are dropped the first time they are read
            rows, counts = rows[live], counts[live]
            raw[0][:] = rows.tolist()
            raw[1][:] = counts.astype(int).tolist()
        if not len(rows):
            del self._postings[term]
            return None
        self._arrays[term] = (rows, counts)
        return rows, counts

    def record(self, position: int) -> Record:
        row = self.rows[position]
        assert row is not None
        return row.record

    def get(self, rid: str) -> Row | None:
        position = self.positions.get(rid)
        return None if position is None else self.rows[position]
