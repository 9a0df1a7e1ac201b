"""The warm tier in memory: every warm record's vector, BM25 postings and episode order, kept up to date
row by row as records are written, moved and forgotten, never rebuilt from the table.

The warm tier is small by design (the timer sends what goes stale to cold), so it is searched
exactly: numpy over its vectors and BM25 over its postings cost a millisecond or two. A tier past
signs.EXACT_UP_TO rows (a store that takes thousands of memories a day) has its cosine computed
only on the rows its sign codes put nearest (tiers/index/signs.py, tiers/namespace/search.py's
`_WarmPart`). When a process opens it, the whole tier is read once in bulk (`load`: Arrow and numpy, no
Python per word); a record's full fields are made only when something asks for them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tiers.index import bm25, signs
from tiers.index.episodes import Episodes
from tiers.index.pieces import Pieces
from tiers.index.postings import Postings
from tiers.index.rows import Row, Rows, micros, pieces_of, rows_of, vectors_of
from tiers.records import Record
from tiers.storage.tables import PIECES
from tiers.text.terms import length

__all__ = ["Row", "Scope", "WarmIndex", "micros", "pieces_of", "rows_of", "vectors_of"]

_ROW_BATCH = 4_096  # rows made at a time when every live row is read


@dataclass(frozen=True)
class Scope:
    """Which rows a search may return."""

    tags: tuple[str, ...] = ()
    since_us: int | None = None
    until_us: int | None = None


class WarmIndex:
    """Vectors, postings and episode links of the warm records, addressed by position."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._reset()

    def _reset(self) -> None:
        self.size = 0  # positions used, live or not
        self.live = 0
        self.vectors = np.zeros((0, self.dim), dtype=np.float32)
        self.occurred_us = np.zeros(0, dtype=np.int64)
        self.created_us = np.zeros(0, dtype=np.int64)
        self.alive = np.zeros(0, dtype=bool)
        self.durable = np.zeros(0, dtype=bool)
        self.kind = np.zeros(0, dtype="<U12")
        self.lengths = np.zeros(0, dtype=np.float32)
        self.length_sum = 0.0
        self._norms = bm25.Norms()  # positions are only appended until the next reset (a repack)
        self.postings = Postings()
        self.episodes = Episodes()
        self.pieces = Pieces(self.dim)  # the long rows' pieces, scored beside their own vectors (tiers/index/pieces.py)
        self.rows = Rows()
        self.positions: dict[str, int] = {}
        self.by_hash: dict[str, str] = {}
        self.ids: list[str | None] = []
        self.hashes: list[str] = []
        self.sources: list[str | None] = []
        self._codes = np.zeros((signs.words_for(self.dim), 0), dtype=np.uint64)  # sign codes, made when first needed
        self._coded = 0  # positions whose sign codes are made
        self.saved_seen = 0  # opened from a saved copy: the change feed's position when it was made

    @property
    def prev(self) -> np.ndarray:
        """The position stored just before each one in its episode (-1: none)."""
        return self.episodes.prev

    @property
    def next(self) -> np.ndarray:
        """The position stored just after each one in its episode (-1: none)."""
        return self.episodes.next

    # the first read: every warm row at once

    def load(self, table: pa.Table) -> None:
        """Fill an empty index with every row of the warm table, in bulk."""
        assert self.size == 0, "load fills an empty index"
        n = table.num_rows
        if not n:
            return
        self._grow(n)
        at = 0
        for chunk in table["vector"].chunks:  # straight into the matrix, chunk by chunk: one copy
            flat = chunk.flatten().to_numpy(zero_copy_only=False)
            self.vectors[at : at + len(chunk)] = flat.reshape(len(chunk), self.dim)
            at += len(chunk)
        if PIECES in table.column_names:
            self.pieces.add_column(table[PIECES], 0)
            table = table.drop_columns([PIECES])
        table = table.drop_columns(["vector"]).combine_chunks()
        self.rows.load(table)  # rows are made from it; their vectors are self.vectors
        self.occurred_us[:n] = table["occurred_at"].cast(pa.int64()).to_numpy(zero_copy_only=False)
        self.created_us[:n] = table["created_at"].cast(pa.int64()).to_numpy(zero_copy_only=False)
        self.alive[:n] = True
        protected = table["protected"].to_numpy(zero_copy_only=False).astype(bool)
        current = pc.is_null(table["superseded_by"]).to_numpy(zero_copy_only=False).astype(bool)
        self.durable[:n] = protected & current
        self.kind[:n] = np.asarray(table["kind"].to_pylist(), dtype="<U12")
        self.ids = list(table["id"].to_pylist())
        self.hashes = list(table["hash"].to_pylist())
        self.sources = list(table["source"].to_pylist())
        self.index_ids()
        self.lengths[:n] = self.postings.load(table["terms"], n)
        self.length_sum = float(self.lengths[:n].sum())
        self.episodes.load(self.sources, self.occurred_us, self.created_us, n)
        self.size = self.live = n

    def index_ids(self) -> None:
        """Find every loaded row by its id and its content hash (the first row of a hash)."""
        self.positions = {rid: i for i, rid in enumerate(self.ids) if rid is not None}
        for rid, digest in zip(self.ids, self.hashes, strict=True):
            self.by_hash.setdefault(digest, rid)  # type: ignore[arg-type]

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
            row = self.rows.kept(position)
            self.rows.drop(position)
            self.ids[position] = None
            self.alive[position] = False
            self.live -= 1
            self.length_sum -= float(self.lengths[position])
            if self.by_hash.get(row.hash) == rid:
                del self.by_hash[row.hash]
            self.episodes.unlink(self.sources, self.occurred_us, self.created_us, position)
            self.postings.changed(set(row.terms.split()))
        if self.size > 1_000 and self.live < self.size // 2:
            self._repack()

    def replace_record(self, record: Record) -> None:
        """New field values of a stored record (tags, protection, supersession); its text is unchanged."""
        position = self.positions.get(record.id)
        if position is None:
            return
        row = self.rows.kept(position)
        self.rows.made[position] = replace(row, record=record)
        self.durable[position] = record.protected and not record.superseded_by
        self.kind[position] = record.kind.value

    def _add(self, row: Row) -> None:
        position = self.size
        self.size += 1
        record = row.record
        self.rows.put(position, row)
        self.ids.append(record.id)
        self.hashes.append(row.hash)
        self.sources.append(record.source)
        self.positions[record.id] = position
        self.by_hash.setdefault(row.hash, record.id)
        self.vectors[position] = row.vector
        if row.pieces is not None and len(row.pieces):
            self.pieces.add(np.full(len(row.pieces), position, dtype=np.int64), row.pieces)
        occurred, created = micros(record)
        self.occurred_us[position] = occurred
        self.created_us[position] = created
        self.alive[position] = True
        self.live += 1
        self.durable[position] = record.protected and not record.superseded_by
        self.kind[position] = record.kind.value
        terms = row.terms.split()
        self.lengths[position] = length(terms)
        self.length_sum += float(self.lengths[position])
        self.postings.add(position, terms)
        self.episodes.link(self.sources, self.occurred_us, self.created_us, position)

    def _grow(self, needed: int) -> None:
        capacity = len(self.alive)
        if needed <= capacity:
            return
        new = max(needed, capacity * 2, 64)

        def grown(array: np.ndarray, fill: object | None) -> np.ndarray:
            shape = (new, *array.shape[1:])
            out = np.empty(shape, dtype=array.dtype) if fill is None else np.full(shape, fill, dtype=array.dtype)
            out[:capacity] = array
            return out

        self.vectors = grown(self.vectors, None)  # rows past `size` are never read
        self.occurred_us = grown(self.occurred_us, 0)
        self.created_us = grown(self.created_us, 0)
        self.alive = grown(self.alive, False)
        self.durable = grown(self.durable, False)
        self.kind = grown(self.kind, "")
        self.lengths = grown(self.lengths, 0.0)
        self.episodes.grow(new)

    def _repack(self) -> None:
        """Drop the positions of removed rows (from memory alone, no table read)."""
        live = list(self.live_rows())
        if self.pieces.count:
            live = [replace(row, pieces=self.pieces.of(self.positions[row.record.id])) for row in live]
        self._reset()
        self.put(live)

    # episodes: rows of the same time and source, in the order they were stored (tiers/index/episodes.py)

    def neighbours(self, rid: str, reach: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Ids of the `reach` records stored just before and just after `rid` in its episode, nearest first."""
        before, after = self.episodes.near(self.positions[rid], reach)
        return tuple(self._id(p) for p in before), tuple(self._id(p) for p in after)

    def _id(self, position: int) -> str:
        rid = self.ids[position]
        assert rid is not None
        return rid

    def next_similarity(self, positions: np.ndarray) -> np.ndarray:
        """The cosine of each of these rows to the row stored just after it in its episode (each has one)."""
        return self.episodes.next_similarity(self.vectors, positions)

    # search

    def mask(self, scope: Scope) -> np.ndarray:
        keep = self.alive[: self.size].copy()
        if scope.tags:
            keep &= self.rows.tagged(scope.tags, self.size)
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

    def cosine_at(self, vectors: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """`cosine` of the rows at these positions alone."""
        if not len(positions):
            return np.zeros(0, dtype=np.float32)
        rows = np.take(self.vectors, positions, axis=0)  # np.take, not fancy indexing: the same values, faster
        return (rows @ np.atleast_2d(vectors).T.astype(np.float32)).max(axis=1)

    def nearest(self, vectors: np.ndarray, scopes: Sequence[np.ndarray], keep: int) -> np.ndarray:
        """Positions worth a cosine: the `keep` nearest the query's forms in each scope by sign codes (signs.py)."""
        return signs.nearest(self._signs(), self.size, np.atleast_2d(vectors).astype(np.float32), scopes, keep)

    def prepare(self) -> None:
        """Make now what the first search of a large tier would make: the sign codes, so it is not kept waiting."""
        if self.live > signs.EXACT_UP_TO:
            self._signs()

    def _signs(self) -> np.ndarray:
        """Sign codes (words, capacity) of every position, made from the vectors of those added since the last call.

        Made on first use, not on load or write: only a tier past signs.EXACT_UP_TO rows is searched by them.
        """
        self._codes = signs.extended(self._codes, self._coded, self.vectors, self.size, len(self.alive))
        self._coded = self.size
        return self._codes

    def bm25(self, terms: Sequence[str]) -> np.ndarray:
        """BM25 score of every row for these terms (0 where none occurs)."""
        scores = np.zeros(self.size, dtype=np.float32)
        if not self.live:
            return scores
        norms = self._norms.of(self.lengths, self.size, self.live, self.length_sum)
        for term in dict.fromkeys(terms):
            posting = self.postings.posting(term, self.alive)
            if posting is None:
                continue
            rows, counts = posting
            bm25.add(scores, rows, counts, np.take(norms, rows), bm25.idf(self.live, len(rows)))
        return scores

    def common(self, terms: Sequence[str], share: float, least: int) -> set[str]:
        """The terms more than `share` of the live rows hold (none while fewer than `least` rows are live)."""
        if self.live < least:
            return set()
        held = ((t, self.postings.posting(t, self.alive)) for t in dict.fromkeys(terms))
        return {t for t, p in held if p is not None and len(p[0]) > share * self.live}

    def query_weight(self, terms: Sequence[str]) -> float:
        """These terms' weight in this tier, which its BM25 scores are divided by to meet the cold tier's."""
        postings = (self.postings.posting(term, self.alive) for term in dict.fromkeys(terms))
        return bm25.query_weight(self.live, (0 if p is None else len(p[0]) for p in postings))

    # records, made when asked for (tiers/index/rows.py)

    def row(self, position: int) -> Row:
        """The row at a live position, with its vector."""
        return self._with_vector(self.rows.kept(position), position)

    def _with_vector(self, row: Row, position: int) -> Row:
        return Row(row.record, row.hash, row.terms, self.vectors[position], row.before, row.after)

    def id_at(self, position: int) -> str | None:
        """The id of the record at a position (None: a removed one)."""
        return self.ids[position]

    def record(self, position: int) -> Record:
        return self.rows.kept(position).record

    def make_rows(self, positions: Iterable[int]) -> None:
        """Make the rows of these positions that are not made yet, in one pass (a recall's hits)."""
        self.rows.make(p for p in positions if self.ids[p] is not None)

    def get(self, rid: str) -> Row | None:
        position = self.positions.get(rid)
        return None if position is None else self.row(position)

    def live_rows(self) -> Iterator[Row]:
        """Every live row in position order, with its vector. Rows of the load not made yet are made a batch at
        a time and not kept: a sweep reads them all once, and made one by one they took most of a large sweep's
        time."""
        for start in range(0, self.size, _ROW_BATCH):
            positions = (np.flatnonzero(self.alive[start : min(self.size, start + _ROW_BATCH)]) + start).tolist()
            unmade = [p for p in positions if p not in self.rows.made]
            made = dict(zip(unmade, self.rows.from_base(unmade), strict=True))
            for position in positions:
                row = self.rows.made.get(position)
                yield self._with_vector(row if row is not None else made[position], position)
